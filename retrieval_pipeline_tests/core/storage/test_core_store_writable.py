"""`ResultStore.check_writable`: a store that cannot take a run is refused before any work, and the probe leaves no trace."""

from __future__ import annotations

import pytest

from retrieval_pipeline.core.base.errors import StoreError
from retrieval_pipeline.core.storage.store import ResultStore


def test_a_fresh_local_store_passes_and_is_left_as_it_was_found(tmp_path):
    ResultStore(str(tmp_path / "not" / "yet" / "made")).check_writable()

    assert list(tmp_path.iterdir()) == []


def test_an_existing_store_passes_and_keeps_only_its_own_files(tmp_path):
    (tmp_path / "summaries").mkdir()

    ResultStore(str(tmp_path)).check_writable()

    assert [path.name for path in tmp_path.iterdir()] == ["summaries"]


def test_a_file_where_the_store_folder_should_be_is_one_store_error_naming_the_store(tmp_path):
    (tmp_path / "results").write_text("a file", encoding="utf-8")

    with pytest.raises(StoreError, match=f"^cannot write to the result store {tmp_path / 'results'}: .*Not a directory"):
        ResultStore(str(tmp_path / "results")).check_writable()
    assert (tmp_path / "results").read_text(encoding="utf-8") == "a file"


def test_a_file_above_the_store_folder_is_refused_too(tmp_path):
    (tmp_path / "results").write_text("a file", encoding="utf-8")

    with pytest.raises(StoreError, match="cannot write to the result store"):
        ResultStore(str(tmp_path / "results" / "runs")).check_writable()


def test_a_remote_store_is_probed_through_its_file_system_and_left_clean():
    store = ResultStore("memory://probe-bucket/runs")

    store.check_writable()

    assert store.fs.get_file_info(store.uri.removeprefix("memory://")).type.name in {"NotFound", "Directory"}
    assert store.keys() == []


def _probe_often(root: str) -> str:
    try:
        for _ in range(200):
            ResultStore(root).check_writable()
    except Exception as error:  # noqa: BLE001 - what the command would print
        return str(error)
    return "ok"


def test_commands_probing_a_store_not_made_yet_at_once_all_find_it_writable(tmp_path):
    """Two `nightly` started together: each probe may find the folder another made, which its maker then
    removes under it; that is no reason to refuse a store that can take runs."""
    from concurrent.futures import ProcessPoolExecutor

    root = str(tmp_path / "a" / "results")
    with ProcessPoolExecutor(4) as pool:
        assert list(pool.map(_probe_often, [root] * 4)) == ["ok"] * 4
