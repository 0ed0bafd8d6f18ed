"""Fault injection on the result store through the real `retrieval-eval` process: unreadable and foreign
files in a key, SIGKILL during a save, a full disk, concurrent writers. Whatever happens, every earlier
run survives, the history stays readable, and a bad file costs one warning line naming it."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from store_faults_project import FaultProject, finish, later_run_id, loads_whole, write_project

from retrieval_pipeline.core.services.evaluation.history import run_history

pytestmark = pytest.mark.slow

APPLE_DOUBLE = b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X        " + bytes(64)


@pytest.fixture(scope="module")
def seeded(tmp_path_factory) -> tuple[FaultProject, list]:
    """A small project whose store holds two complete runs of alpha and one of beta."""
    project = write_project(tmp_path_factory.mktemp("faults") / "project", questions=6)
    runs = [project.record("alpha"), project.record("beta"), project.record("alpha")]
    return project, [runs[0], runs[2]]


def plant(project: FaultProject, store: Path, kind: str, first, latest) -> tuple[Path, bool]:
    """A damaged or foreign file in alpha's key; the path planted and whether `history` meets it."""
    summaries = store / "summaries" / project.key().parts
    questions = store / "questions" / project.key().parts
    newer = later_run_id(latest)
    latest_summary = (summaries / f"{latest.run_id}.parquet").read_bytes()
    if kind == "empty summary":
        path = summaries / f"{newer}.parquet"
        path.write_bytes(b"")
    elif kind == "truncated summary":
        path = summaries / f"{newer}.parquet"
        path.write_bytes(latest_summary[: len(latest_summary) // 2])
    elif kind == "AppleDouble file":
        path = summaries / f"._{latest.run_id}.parquet"
        path.write_bytes(APPLE_DOUBLE)
    elif kind == "leftover partial file":
        path = summaries / f".partial-{newer}.parquet"
        path.write_bytes(latest_summary[:100])
    elif kind == "another run's summary under a new name":
        path = summaries / f"{newer}.parquet"
        shutil.copy(summaries / f"{first.run_id}.parquet", path)
    else:  # "empty question file": its summary is fine, so only the baseline search meets it
        table = pq.read_table(summaries / f"{latest.run_id}.parquet")
        pq.write_table(table.set_column(table.column_names.index("run_id"), "run_id", [[newer]]), summaries / f"{newer}.parquet")
        path = questions / f"{newer}.parquet"
        path.write_bytes(b"")
        return path, False
    return path, True


KINDS = [
    "empty summary",
    "truncated summary",
    "AppleDouble file",
    "leftover partial file",
    "another run's summary under a new name",
    "empty question file",
]


@pytest.mark.parametrize("kind", KINDS)
def test_an_unreadable_or_foreign_file_never_blocks_history_run_compare_or_prune(seeded, tmp_path, kind):
    project, (first, latest) = seeded
    stores = {name: project.copy_store(tmp_path / name) for name in ("history", "run", "compare", "prune")}
    planted = {name: plant(project, store, kind, first, latest) for name, store in stores.items()}
    warning = f"warning: skipped {planted['run'][0]}: "

    processes = {
        "history": project.start("history", "faults.store", "alpha", "--json", store=stores["history"]),
        "run": project.start("run", "faults.store", "alpha", "--json", store=stores["run"]),
        "compare": project.start("compare", "faults.store", "alpha", "beta", "--save", "--json", store=stores["compare"]),
        "prune": project.start("prune", "--older-than-days", "0", "--json", store=stores["prune"]),
    }
    results = {name: finish(process) for name, process in processes.items()}

    for name, result in results.items():
        assert result.returncode == 0, f"{name}: {result.stderr}"
        assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    listed = [run["run_id"] for run in json.loads(results["history"].stdout)["runs"]]
    assert {first.run_id, latest.run_id} <= set(listed)
    assert (f"warning: skipped {planted['history'][0]}: " in results["history"].stderr) == planted["history"][1]
    assert json.loads(results["run"].stdout)["regression"]["baseline_run_id"] == latest.run_id
    assert results["run"].stderr.count("\n") == 1 and results["run"].stderr.startswith(warning)
    assert f"warning: skipped {planted['compare'][0]}: " in results["compare"].stderr
    compared = project.result_store(stores["compare"])
    assert len(list(compared.summaries(compared.history(project.key())))) == len(listed) + 1

    pruned = project.result_store(stores["prune"])
    removed = [run["run_id"] for run in json.loads(results["prune"].stdout)["removed"]]
    assert first.run_id in removed and latest.run_id not in removed
    assert planted["prune"][0].exists(), "prune acted on a file it cannot parse"
    assert pruned.baseline(project.key()).run_id == latest.run_id


def test_prune_dry_run_lists_the_same_runs_and_removes_nothing(seeded, tmp_path):
    project, (first, latest) = seeded
    store = project.copy_store(tmp_path / "store")
    before = sorted(path for path in store.rglob("*"))

    result = project.cli("prune", "--older-than-days", "0", "--dry-run", "--json", store=store)

    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["dry_run"] is True and [run["run_id"] for run in document["removed"]] == [first.run_id]
    assert sorted(path for path in store.rglob("*")) == before


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> tuple[FaultProject, object]:
    """A 20,000-question set, so a save lasts long enough to be killed in the middle of it."""
    project = write_project(tmp_path_factory.mktemp("faults-big") / "project", questions=20000)
    return project, project.record("alpha")


def appears(folder: Path, wanted) -> bool:
    return any(wanted(entry.name) for entry in os.scandir(folder))


MOMENTS = {
    "question file being written": ("questions", lambda name: name.startswith(".partial-")),
    "question file landed, summary not yet": ("questions", lambda name: not name.startswith(".") and name.count("-") == 1),
    "summary being written": ("summaries", lambda name: name.startswith(".partial-")),
}


@pytest.mark.parametrize("moment", [*MOMENTS, "random moment into the save 1", "random moment into the save 2"])
def test_sigkill_during_a_save_loses_no_earlier_run_and_leaves_the_history_readable(big, tmp_path, moment):
    project, earlier = big
    store = project.copy_store(tmp_path / "store")
    existing = {path.name for path in (store / "questions" / project.key().parts).iterdir()}
    side, wanted = MOMENTS.get(moment, MOMENTS["question file being written"])
    folder = store / side / project.key().parts
    process = project.start("run", "faults.store", "alpha", "--show", "none", store=store)
    try:
        while process.poll() is None and not appears(folder, lambda name: name not in existing and wanted(name)):
            time.sleep(0.0005)
        if moment not in MOMENTS:
            time.sleep(random.Random(moment).uniform(0, 0.05))
        process.send_signal(signal.SIGKILL)
    finally:
        finish(process)

    result_store = project.result_store(store)
    history = result_store.history(project.key())
    assert earlier.run_id in [run.run_id for run in history]
    assert result_store.load(history[-1]) == earlier
    assert all(loads_whole(result_store, run) for run in history)  # the killed run is whole or absent
    assert [entry.summary.run_id for entry in run_history(result_store, project.key())] == [run.run_id for run in history]
    assert result_store.baseline(project.key()).run_id == history[0].run_id


def test_concurrent_writers_on_one_key_all_land(seeded, tmp_path):
    project, (first, latest) = seeded
    store = project.copy_store(tmp_path / "store")
    processes = [project.start("run", "faults.store", "alpha", "--json", store=store) for _ in range(4)]
    results = [finish(process) for process in processes]

    assert [result.returncode for result in results] == [0] * 4, [result.stderr for result in results]
    made = {json.loads(result.stdout)["run_id"] for result in results}
    history = project.cli("history", "faults.store", "alpha", "--json", "--limit", "0", store=store)
    assert history.returncode == 0, history.stderr
    assert {run["run_id"] for run in json.loads(history.stdout)["runs"]} >= made | {first.run_id, latest.run_id}


def test_a_full_disk_fails_the_run_with_one_line_and_keeps_every_earlier_run(seeded):
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs as the full disk needs root")
    project, (first, latest) = seeded
    mount_point = Path(tempfile.mkdtemp(prefix="full-disk-"))
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount_point)], capture_output=True, text=True)
    if mounted.returncode != 0:
        mount_point.rmdir()
        pytest.skip(f"mount is not permitted here: {mounted.stderr.strip()}")
    try:
        store = mount_point / "store"
        shutil.copytree(project.store, store)
        with (mount_point / "filler").open("wb") as filler:
            try:
                while True:
                    filler.write(bytes(64 * 1024))
                    filler.flush()
            except OSError:
                pass
        before = sorted(path.name for path in store.rglob("*"))

        result = project.cli("run", "faults.store", "alpha", store=store)

        assert result.returncode == 2, result.stderr
        assert result.stderr.startswith("error: cannot write to the result store: ") and result.stderr.count("\n") == 1
        assert "No space left on device" in result.stderr
        assert sorted(path.name for path in store.rglob("*")) == before  # nothing half written left behind
        survivors = project.result_store(store)
        assert [run.run_id for run in survivors.history(project.key())][-2:] == [latest.run_id, first.run_id]
        assert survivors.baseline(project.key()) == latest
    finally:
        subprocess.run(["umount", str(mount_point)], check=False)
        mount_point.rmdir()
