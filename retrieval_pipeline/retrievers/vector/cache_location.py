"""Where the vector cache lives: a local folder (memory-mapped, as always), or any fsspec URI (`s3://`,
`gs://`, `memory://`) that shard workers on several machines share.

A remote folder is read by downloading its files to a temporary folder of this process (then
memory-mapped there, like a local cache), and written by encoding into such a folder and uploading its
files with the checksum file last: a reader takes a folder only when its checksum file is there and
matches the vectors (cache.py), so a worker stopped mid-upload leaves nothing another worker would use,
and an upload that fails removes what it had put. A cache is a shortcut: a remote that cannot be read
(its exists-check or a download fails) costs one warning, and the run encodes in memory and stores
nothing; one that cannot be written costs one warning too. `file://` URIs are local folders.
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import shutil
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

LOG = logging.getLogger(__name__)
_DOWNLOADS: list[Path] = []


def joined(location: str | Path, *parts: str) -> str | Path:
    """A sub-folder of a cache location, a Path for a local folder, else a URI."""
    if isinstance(location, Path):
        return location.joinpath(*parts)
    return "/".join([location.rstrip("/"), *parts])


def local_folder(location: str | Path) -> Path | None:
    """The local folder a location names, None for a remote one."""
    if isinstance(location, Path):
        return location
    if "://" not in location:
        return Path(location).expanduser()
    if location.startswith("file://"):
        return Path(location.removeprefix("file://"))
    return None


def unusable(location: str | Path) -> str | None:
    """Why a remote location cannot be used here (an unknown protocol, its package not installed), or None."""
    if local_folder(location) is not None:
        return None
    from fsspec.registry import get_filesystem_class

    try:
        get_filesystem_class(str(location).split("://", 1)[0])
    except (ImportError, ValueError) as error:
        return f"{shown(location)}: {error}"
    return None


def downloaded(uri: str, names: tuple[str, ...]) -> Path | None:
    """A fresh local folder holding the remote folder's `names` that exist (none when it is absent); None,
    with one warning, when the remote cannot be read (then this run neither reads nor writes it)."""
    folder = _download_root() / hashlib.sha256(uri.encode()).hexdigest()[:24]
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    try:
        filesystem, root = _filesystem(uri)
        for name in names:
            remote = f"{root.rstrip('/')}/{name}"
            if filesystem.exists(remote):
                filesystem.get_file(remote, str(folder / name))
    except Exception as error:  # noqa: BLE001 - any file system's error: the shortcut is lost, not the run
        shutil.rmtree(folder, ignore_errors=True)  # a half-downloaded file is no one's
        LOG.warning("vector cache %s not read (%s): its vectors encoded in memory, not stored", shown(uri), _cause(error))
        return None
    return folder


def uploaded(folder: Path, uri: str, names: tuple[str, ...]) -> None:
    """The folder's `names` copied to the remote folder in that order (the checksum file goes last). A
    cache is a shortcut: when the upload fails, what it put is removed (no vectors are left without
    their checksum, which a reader would refuse), one warning, and the vectors in memory serve this run."""
    filesystem, put = None, []
    try:
        filesystem, root = _filesystem(uri)
        filesystem.makedirs(root, exist_ok=True)
        for name in names:
            put.append(f"{root.rstrip('/')}/{name}")
            filesystem.put_file(str(folder / name), put[-1])
    except Exception as error:  # noqa: BLE001 - any file system's error: the shortcut is lost, not the run
        for remote in put:
            try:
                filesystem.rm_file(remote)
            except Exception:  # noqa: BLE001, S110 - never put, or the remote is gone: nothing more to do
                pass
        LOG.warning("vector cache %s not written (%s): the next run encodes it again", shown(uri), _cause(error))


def shown(location: str | Path) -> str:
    """A location as messages name it: a URI without any user or password it carries (`ftp://user:secret@host/...`)."""
    uri = str(location)
    parts = urlsplit(uri)
    return urlunsplit(parts._replace(netloc=parts.hostname or "")) if parts.password or parts.username else uri


def _cause(error: Exception) -> str:
    """An error's type, and the system's words for an OSError (`PermissionError: Forbidden`): never its
    message, which a file system may fill with the URI and its credentials."""
    strerror = error.strerror if isinstance(error, OSError) else None
    return f"{type(error).__name__}: {strerror}" if strerror else type(error).__name__


def _filesystem(uri: str) -> tuple[Any, str]:
    from fsspec.core import url_to_fs

    return url_to_fs(uri)


def _download_root() -> Path:
    """One temporary folder per process, removed when it exits (memory maps keep reading until then)."""
    if not _DOWNLOADS:
        _DOWNLOADS.append(Path(tempfile.mkdtemp(prefix="retrieval-eval-vectors-")))
        atexit.register(shutil.rmtree, _DOWNLOADS[0], True)
    return _DOWNLOADS[0]
