"""Durable writes on a local disk: data and renames reach the disk before anyone relies on them.

A rename is atomic but not durable: after a power loss the new name can point at a file whose data
never reached the disk (a zero-byte run). Syncing the file before the rename and its folder after it
closes that window; every writer that publishes a file or folder by renaming it uses `sync`. A text
file the user asked for (a set file, a report) is written that way by `write_text_atomically`, so an
error never leaves half of it. A cache folder (an index, vectors) is published whole by `publish_folder`.
"""

from __future__ import annotations

import glob
import hashlib
import logging
import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from retrieval_pipeline.core.base.errors import InvalidInputError

LOG = logging.getLogger(__name__)


def sync(path: str | os.PathLike) -> None:
    """fsync a file or a folder (opened read-only, which Linux and macOS accept for both)."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def publish_folder(folder: Path, fill: Callable[[Path], None]) -> None:
    """`fill` writes into a staging folder beside `folder`, which appears by a rename once complete and
    synced, so another process never reads a half-written cache and a power loss never leaves empty files
    under the final name. When that fails (another process finished first, the cache is full or read-only)
    nothing is published: a cache is only a shortcut, and the caller serves what it built from memory,
    with one warning unless another process published it. Staging folders of the same key left by a
    killed process are removed first: a process still filling one then fails to publish, which costs
    nothing, as whoever publishes first serves the same content."""
    staging: Path | None = None
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        for stale in folder.parent.glob(f".{glob.escape(folder.name)}-*"):
            shutil.rmtree(stale, ignore_errors=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
        fill(staging)
        for path in [*staging.iterdir(), staging]:
            sync(path)
        os.rename(staging, folder)
        sync(folder.parent)
    except OSError as error:
        if not folder.is_dir():
            LOG.warning("cache %s not written (%s): the next run builds it again", folder, error.strerror or error)
    finally:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)


def file_sha256(path: Path) -> str:
    """A file's checksum, read a MiB at a time: what cache keys name a corpus or a model file by."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_text_atomically(path: Path, text: str) -> Path:
    """Written under a temporary name in the target folder, then renamed into place with the mode (and, as
    root, the owner) of the file it replaces; any failure removes the temporary file and leaves what was
    at `path` as it was. A file that may not be written (read-only) is refused as a folder that may not
    be written is, not replaced by the rename, which only the folder's permissions govern."""
    if path.is_dir():
        raise InvalidInputError("is a folder, not a file", source=str(path))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():
            with open(path, "a"):  # opened to write, nothing written: what the permissions allow, asked of the system
                pass
        handle = tempfile.NamedTemporaryFile(
            "w", encoding="utf-8", dir=path.parent, prefix=f".{path.name}.", suffix=".partial", delete=False
        )
    except OSError as error:
        raise InvalidInputError(f"cannot write ({error.strerror or error})", source=str(path)) from None
    try:
        with handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        _take_place(handle.name, path)
        os.replace(handle.name, path)
        sync(path.parent)  # the rename itself reaches the disk
    except BaseException as error:
        Path(handle.name).unlink(missing_ok=True)
        if isinstance(error, OSError):
            raise InvalidInputError(f"cannot write ({error.strerror or error})", source=str(path)) from None
        raise
    return path


def _take_place(staged: str, path: Path) -> None:
    """A temporary file is private; the written file gets the mode, and as root the owner, of the file it
    replaces (a set file kept 0600 stays 0600), or a new file's usual mode."""
    try:
        replaced = os.stat(path)
    except FileNotFoundError:
        os.chmod(staged, 0o666 & ~_umask())
        return
    if getattr(os, "geteuid", lambda: None)() == 0:
        os.chown(staged, replaced.st_uid, replaced.st_gid)  # before the mode: a change of owner clears set-id bits
    os.chmod(staged, stat.S_IMODE(replaced.st_mode))


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
