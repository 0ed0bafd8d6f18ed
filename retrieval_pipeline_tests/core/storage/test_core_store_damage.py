"""A store holding damaged, foreign or hostile names: nothing blocks a key, every skipped file is named
once, no key or run id reaches outside the store, and a saved run is on disk before it is visible."""

from __future__ import annotations

import logging
import os
import shutil
import uuid

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from core_helpers import run_from_codes, utc

from retrieval_pipeline.core.base.errors import InvalidInputError, StoreError
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore, StoredRun

KEY = HistoryKey("demo.set", "fixed")
NEWER = "20250601T120000000000Z-0badf11e"


@pytest.fixture
def skipped():
    return []


@pytest.fixture
def store(tmp_path, skipped):
    return ResultStore(str(tmp_path / "results"), on_skip=skipped.append)


@pytest.fixture
def saved(store):
    """Two complete runs; the later one is the baseline."""
    runs = [run_from_codes("11", run_at=utc(2025, 5, day)) for day in (1, 2)]
    for run in runs:
        store.save(run)
    return runs


def folder(tmp_path, side: str = "summaries"):
    return tmp_path / "results" / side / KEY.parts


def plant_summary(tmp_path, kind: str, saved) -> str:
    """A file beside the runs, named like a run newer than them (or like the AppleDouble of one)."""
    summaries = folder(tmp_path)
    latest = (summaries / f"{saved[1].run_id}.parquet").read_bytes()
    planted = summaries / (f"._{saved[1].run_id}.parquet" if kind == "apple double" else f"{NEWER}.parquet")
    if kind == "empty":
        planted.write_bytes(b"")
    elif kind == "truncated":
        planted.write_bytes(latest[: len(latest) // 2])
    elif kind == "apple double":
        planted.write_bytes(b"\x00\x05\x16\x07\x00\x02\x00\x00" + bytes(72))
    elif kind == "another run's summary":
        shutil.copy(summaries / f"{saved[0].run_id}.parquet", planted)
    else:  # "not a summary": some other Parquet table
        pq.write_table(pa.table({"x": [1, 2]}), planted)
    return str(planted)


@pytest.mark.parametrize("kind", ["empty", "truncated", "apple double", "another run's summary", "not a summary"])
def test_an_unreadable_summary_is_skipped_named_once_and_the_baseline_is_the_latest_readable_run(
    store, saved, skipped, tmp_path, kind
):
    planted = plant_summary(tmp_path, kind, saved)

    readable = [stored.run_id for stored, _ in store.summaries(store.history(KEY))]
    assert store.baseline(KEY) == saved[1]
    assert readable == [saved[1].run_id, saved[0].run_id]
    assert [skip.path for skip in skipped] == [planted]
    assert str(skipped[0]).startswith(f"skipped {planted}: ")


def test_a_run_whose_question_file_is_empty_is_passed_over_as_baseline(store, saved, skipped, tmp_path):
    table = pq.read_table(folder(tmp_path) / f"{saved[1].run_id}.parquet")
    pq.write_table(
        table.set_column(table.column_names.index("run_id"), "run_id", [[NEWER]]), folder(tmp_path) / f"{NEWER}.parquet"
    )
    (folder(tmp_path, "questions") / f"{NEWER}.parquet").write_bytes(b"")

    assert store.baseline(KEY) == saved[1]
    assert [skip.path for skip in skipped] == [str(folder(tmp_path, "questions") / f"{NEWER}.parquet")]
    with pytest.raises(StoreError, match=f"{NEWER}.parquet: not a readable Parquet file"):
        store.baseline(KEY, NEWER)


def test_files_and_folders_the_store_does_not_own_are_neither_read_nor_reported(store, saved, skipped, tmp_path):
    (folder(tmp_path) / "acceptances.jsonl").write_text('{"run_id": "x"}\n')
    (folder(tmp_path) / ".DS_Store").write_bytes(b"\x00\x00\x00\x01Bud1")
    (folder(tmp_path) / "notes").mkdir()

    assert [run.run_id for run in store.history(KEY)] == [saved[1].run_id, saved[0].run_id]
    assert store.baseline(KEY) == saved[1] and skipped == []


def test_summary_columns_added_later_are_read_past(store, saved, tmp_path):
    path = folder(tmp_path) / f"{saved[1].run_id}.parquet"
    table = pq.read_table(path)
    pq.write_table(table.append_column("added_by_a_later_version", pa.array(["abc123"])), path)
    assert store.baseline(KEY) == saved[1]
    assert next(store.summaries(store.history(KEY)))[1]["added_by_a_later_version"] == "abc123"


def test_a_folder_that_is_no_identifier_is_not_a_key(store, saved, skipped, tmp_path):
    (tmp_path / "results" / "summaries" / "Not A Set" / "fixed" / KEY.grader).mkdir(parents=True)
    assert store.keys() == [KEY]
    assert [skip.path for skip in skipped] == [str(tmp_path / "results" / "summaries" / "Not A Set" / "fixed" / KEY.grader)]


def test_without_a_channel_skipped_files_go_to_python_logging(tmp_path, saved, caplog):
    plant_summary(tmp_path, "empty", saved)
    with caplog.at_level(logging.WARNING, logger="retrieval_pipeline.core.storage.store"):
        assert ResultStore(str(tmp_path / "results")).baseline(KEY) == saved[1]
    [record] = caplog.records
    assert record.getMessage().startswith(f"skipped {folder(tmp_path)}/{NEWER}.parquet: not a readable Parquet file")


@pytest.mark.parametrize("part", ["../../etc", "a/b", "", "Upper", "x y", ".hidden", "a..b"])
def test_a_key_with_a_part_that_could_leave_the_store_is_refused(part):
    for parts in ((part, "fixed"), ("demo.set", part), ("demo.set", "fixed", part)):
        with pytest.raises(InvalidInputError, match="must match"):
            HistoryKey(*parts)


@pytest.mark.parametrize("run_id", ["../../x", "20250601T120000000000Z-0BADF11E", "latest", "20250601-0badf11e", ""])
def test_a_run_id_not_in_the_stores_format_is_refused_before_any_path_is_built(store, saved, run_id):
    with pytest.raises(InvalidInputError, match="is not a run id of this store"):
        store.baseline(KEY, run_id)
    with pytest.raises(InvalidInputError):
        StoredRun(KEY, run_id, True)


def test_a_saved_file_is_synced_before_its_rename_and_its_folder_after(store, tmp_path, monkeypatch):
    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(os.readlink(f"/proc/self/fd/{fd}")) or real_fsync(fd))
    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("needs /proc to name the synced files")

    run = run_from_codes("1")
    store.save(run)

    summaries, questions = str(folder(tmp_path)), str(folder(tmp_path, "questions"))
    assert f"{questions}/.partial-{run.run_id}.parquet" in synced
    assert synced.index(f"{summaries}/.partial-{run.run_id}.parquet") < synced.index(summaries) == len(synced) - 1
    assert str(tmp_path / "results") in synced  # a folder made by the save is synced into its parent


def test_the_latest_run_as_a_table_is_the_latest_readable_run(store, saved, skipped, tmp_path):
    planted = plant_summary(tmp_path, "truncated", saved)
    table = store.latest_run_table(KEY)
    assert set(table.column("run_id").to_pylist()) == {saved[1].run_id}
    assert [skip.path for skip in skipped] == [planted]


def test_a_skipped_file_is_one_line_even_when_its_name_holds_a_line_break(store, saved, skipped, tmp_path):
    (folder(tmp_path) / "evil\nname.parquet").write_bytes(b"")
    store.history(KEY)
    assert str(skipped[0]).count("\n") == 0 and "evil\\nname.parquet" in str(skipped[0])


def test_an_object_store_skips_an_empty_run_file_too(skipped):
    uri = f"memory://store-damage-{uuid.uuid4().hex}/results"
    remote = ResultStore(uri, on_skip=skipped.append)
    runs = [run_from_codes("11", run_at=utc(2025, 5, day)) for day in (1, 2)]
    for run in runs:
        remote.save(run)
    with fsspec.open(f"{uri}/summaries/{KEY.parts}/{NEWER}.parquet", "wb"):
        pass

    assert remote.baseline(KEY) == runs[1]
    assert [skip.path for skip in skipped] == [f"{uri}/summaries/{KEY.parts}/{NEWER}.parquet"]
