"""`retrieval-eval pool`: the judging file it writes never replaces a file the command reads."""

from __future__ import annotations

import json
import os

import pytest
import yaml
from cli_helpers import SMALL_SET


@pytest.fixture
def jsonl_set(cli, project):
    """cli.small as a JSONL set file (a suffix a judging file may have too), with a stored run to pool."""
    header = {key: value for key, value in SMALL_SET.items() if key != "questions"}
    set_file = project.root / "small.jsonl"
    set_file.write_text("".join(json.dumps(line) + "\n" for line in [header, *SMALL_SET["questions"]]), encoding="utf-8")
    config = yaml.safe_load(project.config.read_text(encoding="utf-8"))
    config["question_sets"] = [{"file": "small.jsonl"}]
    project.config.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    assert cli("run", "cli.small", "half", "--config", str(project.config)).exit_code in (0, 1)
    return set_file


@pytest.mark.parametrize("named", ["as configured", "by a link"])
def test_pool_refuses_an_out_that_is_the_set_file_it_reads_before_any_work(cli, project, jsonl_set, named):
    out = jsonl_set
    if named == "by a link":
        out = project.root / "pool.jsonl"
        os.symlink(jsonl_set, out)
    before = jsonl_set.read_bytes()

    result = cli("pool", "cli.small", "--out", str(out), "--config", str(project.config))

    assert result.exit_code == 2, result.stdout
    assert result.stderr.splitlines() == [
        f"error: --out {out} is the set file this command reads ({jsonl_set}): write to another file"
    ]
    assert jsonl_set.read_bytes() == before and result.stdout == ""


def test_pool_writes_its_judging_file_beside_the_set_file_it_reads(cli, project, jsonl_set):
    out = project.root / "pool.jsonl"
    result = cli("pool", "cli.small", "--out", str(out), "--config", str(project.config))
    assert result.exit_code == 0, result.stderr
    assert [json.loads(line)["question_id"] for line in out.read_text(encoding="utf-8").splitlines()] == ["q2", "q2", "q2"]
