"""Ctrl-C during `judge machine FILE --judge NAME`: exit 130, one line, the file whole with every batch answered
before the stop, and the same command resuming where it stopped."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from chat_service import SECRET, TOKEN_VAR, ChatService
from judge_helpers import numbered_rows, openai_judge
from local_servers import running

from retrieval_pipeline.core.services.labels.judging_files import read_judging_file, write_judging_file
from retrieval_pipeline.core.services.labels.machine_judging import BATCH_PER_WORKER

PROJECT_ROOT = Path(__file__).resolve().parents[2]
ROWS = 40


def judge_process(path: Path, config: Path, cache: Path) -> subprocess.Popen:
    python_path = os.pathsep.join(p for p in (str(PROJECT_ROOT), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": python_path, TOKEN_VAR: SECRET, "RETRIEVAL_EVAL_CACHE": str(cache)}
    command = [
        sys.executable,
        "-c",
        "from retrieval_pipeline.cli import main; main()",
        "judge",
        "machine",
        str(path),
        "--judge",
        "steady",
        "--config",
        str(config),
    ]
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.slow
def test_ctrl_c_keeps_every_batch_answered_before_it_and_the_same_command_resumes(cli, tmp_path):
    rows = numbered_rows(ROWS)
    path = write_judging_file(rows, tmp_path / "pool.csv")
    with running(ChatService(grader=None)) as server:
        server.delay = 0.1
        config = tmp_path / "config.yaml"
        config.write_text(
            yaml.safe_dump({"judges": {"steady": openai_judge(server.url("/v1/steady"), concurrency=1)}}), encoding="utf-8"
        )
        process = judge_process(path, config, tmp_path / "cache")
        try:
            deadline = time.monotonic() + 120
            while server.asked < 2 * BATCH_PER_WORKER + 2 and process.poll() is None and time.monotonic() < deadline:
                time.sleep(0.01)
            process.send_signal(signal.SIGINT)
            _, stderr = process.communicate(timeout=60)
        finally:
            process.kill()
        asked_before_resume = server.asked

        assert process.returncode == 130, stderr
        assert (
            len(stderr.strip().splitlines()) == 1 and "interrupted (Ctrl-C)" in stderr and "run the same command again" in stderr
        )
        answered = [row for row in read_judging_file(path) if row["machine_judgement"]]
        assert f"the {len(answered)} row(s) steady answered in this pass before the batch in flight are saved" in stderr
        assert len(answered) % BATCH_PER_WORKER == 0 and 2 * BATCH_PER_WORKER <= len(answered) <= asked_before_resume

        resumed = cli("judge", "machine", str(path), "--judge", "steady", "--config", str(config), "--json")

    assert resumed.exit_code == 0, resumed.output
    summary = json.loads(resumed.stdout)
    assert summary["already_judged"] == len(answered) and summary["judged"] == ROWS
    assert server.asked <= ROWS + BATCH_PER_WORKER + 1  # at most the batch being gathered and the request in flight
    assert all(row["machine_judgement"] == "yes" for row in read_judging_file(path))
