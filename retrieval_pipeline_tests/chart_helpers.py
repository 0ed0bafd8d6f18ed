"""Reading back a chart embedded as a PNG data URI, as a browser would: the bytes must be a real PNG."""

from __future__ import annotations

import base64
import re
import struct

DATA_URI = re.compile(r"data:image/png;base64,([A-Za-z0-9+/=]+)")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def embedded_pngs(text: str) -> list[bytes]:
    return [base64.b64decode(match) for match in DATA_URI.findall(text)]


def png_size(text_or_png: str | bytes) -> tuple[int, int]:
    """(width, height) from the PNG header of the one image in `text_or_png` (markdown, HTML or bytes)."""
    if isinstance(text_or_png, str):
        (png,) = embedded_pngs(text_or_png)
    else:
        png = text_or_png
    assert png[:8] == PNG_SIGNATURE and png[12:16] == b"IHDR", "not a PNG"
    return struct.unpack(">II", png[16:24])
