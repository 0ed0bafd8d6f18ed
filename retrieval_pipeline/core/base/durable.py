"""Durable writes on a local disk: data and renames reach the disk before anyone relies on them.

A rename is atomic but not durable: after a power loss the new name can point at a file whose data
never reached the disk (a zero-byte run). Syncing the file before the rename and its folder after it
closes that window; every writer that publishes a file or folder by renaming it uses this.
"""

from __future__ import annotations

import os


def sync(path: str | os.PathLike) -> None:
    """fsync a file or a folder (opened read-only, which Linux and macOS accept for both)."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
