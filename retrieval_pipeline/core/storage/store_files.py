"""One file of the result store at a time, written and read (its name is store_names.py's).

A file is written so a crash or power loss leaves it whole or absent, and read so that a damaged or
foreign file is a reason to skip it, never an error that blocks its key.

The store speaks Arrow's file-system API: a local folder through Arrow's own, any other URI (s3://,
gs://, memory://, ...) through fsspec wrapped for Arrow. pyarrow is loaded anyway for Parquet, so only
remote stores pay for importing fsspec.
"""

from __future__ import annotations

import os
import uuid
from datetime import datetime, timedelta, timezone

from retrieval_pipeline.core.base.arrow_arrays import numbers, release_unused
from retrieval_pipeline.core.base.durable import sync
from retrieval_pipeline.core.base.errors import StoreError
from retrieval_pipeline.core.storage.store_names import PARTIAL_PREFIX, StoredRun

SUMMARY_FIELDS = (
    "set_identifier",
    "retriever_identifier",
    "grader",
    "run_id",
    "run_at",
    "complete",
    "question_count",
    "errored_count",
    "top1_hit_count",
    "top1_hit_rate",
    "top3_hit_count",
    "top3_hit_rate",
)
UNREADABLE = "not a readable Parquet file ({}); remove it or restore it from a backup"
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


class UnreadableFile(Exception):
    """A listed file that cannot be read as what its name says: skipped, never fatal to its key."""

    def __init__(self, path: str, reason: str):
        super().__init__(path, reason)
        self.path, self.reason = path, reason


def read_table(fs, path: str):
    """Any failure to read a listed file makes it unreadable: missing, empty, truncated or foreign alike
    (pyarrow reports damaged content as ValueError or OSError, whichever part it trips on)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        with fs.open_input_file(path) as source:
            return pq.ParquetFile(source).read()  # read_table would load pyarrow.dataset, which imports pandas
    except FileNotFoundError:
        raise UnreadableFile(path, "missing (removed while being read, or never written)") from None
    except (OSError, ValueError, pa.ArrowException) as error:
        raise UnreadableFile(path, UNREADABLE.format(first_line(error))) from None


def checked_summary(table, stored: StoredRun, path: str):
    """The summary, checked to be the one row of the run its name says; extra columns are welcome."""
    missing = [name for name in SUMMARY_FIELDS if name not in table.column_names]
    if missing:
        raise UnreadableFile(path, f"not a run summary (no column {', '.join(missing)}); left untouched")
    if table.num_rows != 1:
        raise UnreadableFile(path, f"not a run summary ({table.num_rows} rows instead of 1); left untouched")
    row = table.select(["run_id", "complete", "set_identifier", "retriever_identifier", "grader"]).to_pylist()[0]
    found = (row["run_id"], row["complete"], f"{row['set_identifier']}/{row['retriever_identifier']}/{row['grader']}")
    if found != (stored.run_id, stored.complete, stored.key.parts):
        raise UnreadableFile(path, f"holds run {found[0]!r} of {found[2]}, not the run its name says; left untouched")
    return table


def summary_row(summary) -> dict:
    """A run's one summary row as Python values. Its time is read as a number: pyarrow's own reading of a
    time zone asks pandas for its preference first, and that imports pandas (see arrow_arrays.py)."""
    import pyarrow as pa

    times = [name for name in summary.column_names if pa.types.is_timestamp(summary.schema.field(name).type)]
    row = summary.drop_columns(times).to_pylist()[0]
    for name in times:
        stamp = summary.column(name).cast(pa.timestamp("us", tz="UTC"))
        row[name] = None if stamp.null_count else _EPOCH + timedelta(microseconds=int(numbers(stamp.cast(pa.int64()))[0]))
    return {name: row[name] for name in summary.column_names}


def footer_problem(fs, path: str) -> str | None:
    """Why the Parquet file at `path` cannot be parsed; None when it parses or does not exist."""
    import pyarrow.parquet as pq

    try:
        with fs.open_input_file(path) as source:
            pq.read_metadata(source)
    except FileNotFoundError:
        return None
    except Exception as error:  # noqa: BLE001 - any failure is the answer sought: it cannot be parsed
        return UNREADABLE.format(first_line(error))
    return None


def write_table(fs, local: bool, path: str, table, shown: str) -> None:
    """Written under a temporary name, then renamed. On a local disk the file is synced before the
    rename and its folder after it (and a new folder into its parent), so a power loss leaves either no
    file or a whole one, never a zero-byte file under a run's name. Object stores (s3://, gs://) publish
    an object whole when its upload completes and offer no sync: there upload-then-move is all there is.
    A failed write takes back its temporary file, so a full disk leaves nothing behind."""
    import pyarrow.parquet as pq

    folder, name = path.rsplit("/", 1)
    partial = f"{folder}/{PARTIAL_PREFIX}{name}"
    try:
        _create_dir(fs, local, folder)
        with fs.open_output_stream(partial) as sink:
            pq.write_table(table, sink)
        release_unused()
        if local:
            sync(partial)
        fs.move(partial, path)
        if local:
            sync(folder)
    except OSError as error:
        discard(fs, partial)
        raise StoreError(f"cannot write to the result store: {shown}: {first_line(error)}") from None
    except BaseException:  # an interrupt (Ctrl-C) mid-write leaves no partial file either
        discard(fs, partial)
        raise


def probe_writable(fs, local: bool, root: str, shown: str) -> None:
    """Create and remove an empty file in the store's root. A local root not made yet is not made: the probe
    makes a folder of its own in the nearest folder that exists, as a first save would make the root there,
    and removes it again, so the store is left as found. Every probe touches only a name of its own, so two
    commands probing one new store at once (two `nightly` started together) never remove each other's."""
    import pyarrow as pa

    try:
        if local:
            _probe_local(root)
        else:
            _probe_remote(fs, root)
    except (OSError, pa.ArrowException) as error:
        raise StoreError(f"cannot write to the result store {shown}: {first_line(error)}") from None


def _probe_name() -> str:
    return f"{PARTIAL_PREFIX}write-probe-{uuid.uuid4().hex}"


def _probe_local(root: str) -> None:
    folder = root
    while not os.path.lexists(folder) and os.path.dirname(folder) != folder:
        folder = os.path.dirname(folder)
    if folder == root:
        probe = os.path.join(root, _probe_name())
        os.close(os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        os.remove(probe)
    else:
        probe = os.path.join(folder, _probe_name())
        os.mkdir(probe)
        os.rmdir(probe)


def _probe_remote(fs, root: str) -> None:
    probe = f"{root}/{_probe_name()}"
    try:
        fs.create_dir(root, recursive=True)
        with fs.open_output_stream(probe):
            pass
    finally:
        discard(fs, probe)


def discard(fs, path: str) -> None:
    try:
        fs.delete_file(path)
    except OSError:  # never written, or the store is gone: nothing more to take back
        pass


def _create_dir(fs, local: bool, folder: str) -> None:
    if not local or os.path.isdir(folder):
        fs.create_dir(folder, recursive=True)
        return
    parent = os.path.dirname(folder)
    _create_dir(fs, local, parent)
    try:
        os.mkdir(folder)
    except FileExistsError:  # a concurrent writer made it first
        return
    sync(parent)


def first_line(error: BaseException) -> str:
    """The reason to show after the path the message already names: the system's words for an OS error
    (Arrow repeats the path first, which on a long path left the reason itself cut off)."""
    if isinstance(error, OSError) and error.errno:
        return os.strerror(error.errno)
    return (str(error).strip().splitlines() or [type(error).__name__])[0][:200]


def file_system(uri: str, local: bool):
    """Arrow's file system for the URI and the store's root path in it."""
    from pyarrow import fs

    if local:
        return fs.LocalFileSystem(), os.path.abspath(os.path.expanduser(uri.removeprefix("file://"))).rstrip("/")
    try:
        from fsspec.core import url_to_fs

        remote, root = url_to_fs(uri)
    except (ImportError, ValueError) as error:
        raise StoreError(f"cannot open the result store {uri!r}: {error}") from None
    return fs.PyFileSystem(fs.FSSpecHandler(remote)), root.rstrip("/")
