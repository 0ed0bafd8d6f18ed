"""Ctrl-C (SIGINT) sent to the real `retrieval-eval` process: exit 130 with one line saying what was
finished, nothing half-written, and after `nightly` every complete run in the store is one Dagster
recorded (materialization and check); any other is incomplete and never a baseline."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from interrupt_helpers import interrupt, interrupt_project, slow_search, start

from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore

pytestmark = pytest.mark.slow

RETRIEVERS = ("alpha", "beta", "gamma", "delta")
QUESTIONS = 20


def stored_files(store: Path) -> list[Path]:
    return sorted(path for path in store.rglob("*") if path.is_file()) if store.exists() else []


@pytest.mark.parametrize("asked", [1, 12])
def test_an_interrupted_run_exits_130_on_one_line_and_saves_nothing(tmp_path, asked):
    with slow_search() as search:
        config = interrupt_project(tmp_path / "project", search.url, RETRIEVERS[:1], QUESTIONS)
        process = start(["run", "slow.set", "alpha", "--config", str(config)], tmp_path)
        search.wait_for(asked)
        code, stdout, stderr = interrupt(process)

    assert code == 130, stderr
    [line] = stderr.splitlines()
    assert line.startswith("error: interrupted (Ctrl-C) after ") and f"of {QUESTIONS} questions of slow.set × alpha" in line
    assert "not saved" in line and "Traceback" not in stderr and stdout == ""
    assert [path.name for path in stored_files(tmp_path / "project" / "store")] == []


def test_an_interrupted_run_leaves_the_stored_baseline_as_it_was(tmp_path):
    with slow_search(delay=0.0) as fast:
        config = interrupt_project(tmp_path / "project", fast.url, RETRIEVERS[:1], QUESTIONS)
        first = start(["run", "slow.set", "alpha", "--config", str(config)], tmp_path)
        assert first.wait(timeout=120) == 0
    before = stored_files(tmp_path / "project" / "store")
    with slow_search() as search:
        interrupt_project(tmp_path / "project", search.url, RETRIEVERS[:1], QUESTIONS)
        process = start(["run", "slow.set", "alpha", "--config", str(config)], tmp_path)
        search.wait_for(5)
        code, _, stderr = interrupt(process)

    assert code == 130 and len(stderr.splitlines()) == 1
    assert stored_files(tmp_path / "project" / "store") == before


def test_an_interrupted_compare_exits_130_on_one_line(tmp_path):
    with slow_search() as search:
        config = interrupt_project(tmp_path / "project", search.url, RETRIEVERS[:2], QUESTIONS)
        process = start(["compare", "slow.set", "alpha", "beta", "--config", str(config), "--save"], tmp_path)
        search.wait_for(QUESTIONS + 3)
        code, _, stderr = interrupt(process)

    assert code == 130, stderr
    [line] = stderr.splitlines()
    store = ResultStore(str(tmp_path / "project" / "store"))
    [alpha] = store.history(HistoryKey("slow.set", "alpha"))
    assert line == f"error: interrupted (Ctrl-C): 1 of 2 retrievers evaluated, not beta; saved whole: alpha (run {alpha.run_id})"
    assert alpha.complete and store.history(HistoryKey("slow.set", "beta")) == []


@pytest.mark.parametrize("asked", [3, 30, 47, 75, 80])  # 80: every question answered, the last saves and stages left
def test_an_interrupted_nightly_leaves_the_store_agreeing_with_dagster(tmp_path, asked):
    with slow_search() as search:
        config = interrupt_project(tmp_path / "project", search.url, RETRIEVERS, QUESTIONS)
        process = start(["nightly", "--config", str(config)], tmp_path)
        search.wait_for(asked)
        code, _, stderr = interrupt(process)

    assert code == 130, stderr
    [line] = stderr.splitlines()
    assert line.startswith("error: interrupted (Ctrl-C): ") and "evaluations finished and recorded in Dagster" in line
    store = ResultStore(str(tmp_path / "project" / "store"))
    recorded = recorded_in_dagster(tmp_path / "dagster_home", store)
    for retriever in RETRIEVERS:
        key = HistoryKey("slow.set", retriever)
        for run in store.history(key):
            assert not run.complete or run.run_id in recorded, f"{run.run_id} complete in the store, unknown to Dagster"
        baseline = store.baseline(key)
        assert baseline is None or baseline.run_id in recorded
        finished = any(run.run_id in recorded for run in store.history(key))
        assert (f"slow.set × {retriever}" in line.split("not finished:")[0]) == finished
    assert not [path for path in stored_files(tmp_path / "project" / "store") if path.name.startswith(".partial-")]


def recorded_in_dagster(home: Path, store: ResultStore) -> set[str]:
    """Store run ids Dagster recorded: in a materialization of their pair's partition or, for a pair that
    failed its check, in that check's evaluation."""
    from dagster import AssetCheckKey, AssetKey, AssetRecordsFilter, DagsterInstance, MultiPartitionKey

    previous = os.environ.get("DAGSTER_HOME")
    instance = DagsterInstance.from_config(str(home))
    evaluation = AssetKey("retrieval_evaluation")
    try:
        recorded = set()
        for retriever in RETRIEVERS:
            key = str(MultiPartitionKey({"set": "slow.set", "retriever": retriever}))
            records = instance.fetch_materializations(AssetRecordsFilter(asset_key=evaluation, asset_partitions=[key]), limit=100)
            recorded |= {r.asset_materialization.metadata["run_id"].value for r in records.records}
        check = AssetCheckKey(evaluation, "no_regression")
        for run in instance.get_runs():
            for entry in instance.all_logs(run.run_id):
                data = entry.dagster_event and entry.dagster_event.event_specific_data
                if getattr(data, "asset_check_key", None) == check and hasattr(data, "metadata"):  # an evaluation, not a plan
                    recorded.add(data.metadata["run_id"].value)
        return recorded
    finally:
        instance.dispose()
        if previous is not None:
            os.environ["DAGSTER_HOME"] = previous


@pytest.fixture
def blocking_config(tmp_path) -> Path:
    """A configuration file that is a named pipe no one writes: a command blocks reading it, deterministically."""
    fifo = tmp_path / "config.yaml"
    os.mkfifo(fifo)
    return fifo


@pytest.mark.parametrize(
    "arguments",
    [
        ["list"],
        ["history", "slow.set", "alpha"],
        ["report", "slow.set", "alpha"],
        ["prune", "--dry-run"],
        ["audit", "slow.set"],
        ["accept", "slow.set", "alpha", "20250102T030405678901Z-0123abcd"],
        ["compare", "slow.set", "alpha", "beta"],
        ["run", "slow.set", "alpha"],
        ["nightly"],
    ],
    ids=lambda arguments: arguments[0],
)
def test_every_command_interrupted_while_reading_its_configuration_exits_130_on_one_line(tmp_path, blocking_config, arguments):
    process = start([*arguments, "--config", str(blocking_config)], tmp_path)
    time.sleep(3)  # well into the blocking read: imports take about a second
    code, stdout, stderr = interrupt(process)

    assert code == 130, stderr
    [line] = stderr.splitlines()
    assert line.startswith("error: interrupted (Ctrl-C)") and "Traceback" not in stderr
    assert not (tmp_path / "dagster_home").exists() or arguments == ["nightly"]


def test_import_interrupted_while_reading_writes_no_set_file(tmp_path):
    folder = tmp_path / "beir"
    (folder / "qrels").mkdir(parents=True)
    os.mkfifo(folder / "corpus.jsonl")
    os.mkfifo(folder / "queries.jsonl")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n", encoding="utf-8")
    target = tmp_path / "set.yaml"
    process = start(["import", "beir", str(folder), "--out", str(target), "--identifier", "imported.set"], tmp_path)
    time.sleep(3)
    code, _, stderr = interrupt(process)

    assert code == 130, stderr
    assert len(stderr.splitlines()) == 1 and not target.exists()
