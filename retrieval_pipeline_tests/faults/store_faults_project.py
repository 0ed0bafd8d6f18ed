"""A real project for the store's fault-injection tests: a JSONL set, run-file retrievers, a result store,
and the `retrieval-eval` console script started as a child process, as a user or a CI job starts it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import yaml

from retrieval_pipeline.core.scoring.results import RunResult
from retrieval_pipeline.core.services.configuration.project import load_config
from retrieval_pipeline.core.services.configuration.settings import EvaluationSettings
from retrieval_pipeline.core.services.evaluation.record import evaluate_and_record
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore, StoredRun

SET_IDENTIFIER = "faults.store"
CHECKOUT = Path(__file__).resolve().parents[2]
TIMEOUT = 120


@dataclass(frozen=True)
class FaultProject:
    root: Path
    config: Path
    store: Path

    def key(self, retriever: str = "alpha") -> HistoryKey:
        return HistoryKey(SET_IDENTIFIER, retriever)

    def folder(self, side: str, retriever: str = "alpha") -> Path:
        return self.store / side / self.key(retriever).parts

    def result_store(self, store: Path | None = None) -> ResultStore:
        return ResultStore(str(store or self.store), on_skip=lambda skipped: None)

    def record(self, retriever: str = "alpha") -> RunResult:
        """One run evaluated and saved in this process, exactly as `run` does it."""
        config = load_config(self.config)
        evaluation = evaluate_and_record(
            config.question_set(SET_IDENTIFIER),
            config.retriever(retriever),
            self.result_store(),
            EvaluationSettings.from_config(config),
        )
        return evaluation.run

    def copy_store(self, target: Path) -> Path:
        shutil.copytree(self.store, target)
        return target

    def start(self, *args: str, store: Path | None = None) -> subprocess.Popen:
        """`retrieval-eval ARGS --config ... --store ...` in a child process; read with `finish`."""
        command = [*console_script(), *args, "--config", str(self.config), "--store", str(store or self.store)]
        return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=child_env())

    def cli(self, *args: str, store: Path | None = None) -> subprocess.CompletedProcess:
        return finish(self.start(*args, store=store))


def finish(process: subprocess.Popen) -> subprocess.CompletedProcess:
    try:
        stdout, stderr = process.communicate(timeout=TIMEOUT)
    finally:
        process.kill()
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def write_project(root: Path, questions: int) -> FaultProject:
    """`alpha` hits two questions in three at top-1; `beta` answers every question with its expected document."""
    root.mkdir(parents=True)
    with (root / "set.jsonl").open("w", encoding="utf-8") as handle:
        handle.write(json.dumps({"identifier": SET_IDENTIFIER, "name": "Store faults"}) + "\n")
        for number in range(questions):
            form = "match" if number % 2 else "gap"
            question = {
                "id": f"q{number}",
                "question": f"question {number}",
                "form": form,
                "expected_document_ids": [f"d{number}"],
            }
            handle.write(json.dumps(question) + "\n")
    for name, ranking in (("alpha", lambda n: [f"d{n}" if n % 3 else "x", "y", f"d{n}"]), ("beta", lambda n: [f"d{n}"])):
        with (root / f"{name}.jsonl").open("w", encoding="utf-8") as handle:
            for number in range(questions):
                handle.write(json.dumps({"query_id": f"q{number}", "document_ids": ranking(number)}) + "\n")
    config = {
        "store": "results",
        "question_sets": [{"file": "set.jsonl"}],
        "retrievers": {
            name: {"kind": "run_file", "path": f"{name}.jsonl", "question_set": SET_IDENTIFIER} for name in ("alpha", "beta")
        },
    }
    (root / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return FaultProject(root, root / "config.yaml", root / "results")


def later_run_id(run: RunResult, milliseconds: int = 1) -> str:
    """A run id stamped just after `run`: newer than every saved run, older than any run made later."""
    return f"{(run.run_at + timedelta(milliseconds=milliseconds)).strftime('%Y%m%dT%H%M%S%fZ')}-0badf11e"


def loads_whole(store: ResultStore, stored: StoredRun) -> bool:
    try:
        store.load(stored)
    except Exception:  # noqa: BLE001 - the question asked is only whether it loads
        return False
    return True


def console_script() -> list[str]:
    script = Path(sys.executable).with_name("retrieval-eval")
    return [str(script)] if script.exists() else [sys.executable, "-c", "from retrieval_pipeline.cli import main; main()"]


def child_env() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "RETRIEVAL_EVAL_CONFIG"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(CHECKOUT), env.get("PYTHONPATH")]))
    env["COLUMNS"] = "200"
    return env
