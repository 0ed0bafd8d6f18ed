"""A callable generator that answers its first `$STALL_AFTER` requests at once and then hangs, as a model
that stops answering does; each call is counted as a line of `$GENERATOR_CALLS`, so a test knows when
the hanging request is in flight. Imported by the command under test, in a process of its own."""

from __future__ import annotations

import os
import time
from pathlib import Path


def stalling(document: str, form: str, examples: tuple[str, ...]) -> str:
    calls = Path(os.environ["GENERATOR_CALLS"])
    with calls.open("a", encoding="utf-8") as log:
        log.write("call\n")
    if len(calls.read_text(encoding="utf-8").splitlines()) > int(os.environ.get("STALL_AFTER", "1000000")):
        time.sleep(60)
    return f"what does {' '.join(document.split()[:3])} report on cooling?"
