"""`judge apply` refuses what would merge wrong answers, and writes the set file as it found it otherwise.

Every refusal is one line naming the judging file's line, exit 2, and leaves the set file's bytes as they were.
"""

from __future__ import annotations

import csv
import os
import stat
import subprocess
from pathlib import Path

import pytest
from cli_helpers import as_permissions_bind, console_script, subprocess_env
from desk_project import answer, apply, evaluate, pool

ANSWERS = {("q1", "n1"): "yes", ("q2", "n2"): "no", ("q3", "n3"): "yes"}


def pooled(cli, desk: Path, name: str, answers=ANSWERS, quoting: int = csv.QUOTE_MINIMAL) -> str:
    """`new`'s pool, judged: q1/n1 (line 2), q2/n2 (line 3), q2/d1 (line 4, unanswered), q3/n3 (line 5)."""
    evaluate(cli, desk, "new")
    assert pool(cli, desk, name, "new").exit_code == 0
    return answer(desk / name, answers, quoting)


def assert_refused(result, desk: Path, set_before: bytes, problem: str) -> None:
    assert result.exit_code == 2, result.stderr  # invalid input
    assert len(result.stderr.strip().splitlines()) == 1 and problem in result.stderr, result.stderr
    assert (desk / "desk.yaml").read_bytes() == set_before


@pytest.mark.parametrize(
    ("quoting", "cut_after", "problem"),
    [
        (csv.QUOTE_MINIMAL, "q2,d1,,where are inv", "pool.csv:4: 4 cells where the header has 10: the file is cut short here"),
        (csv.QUOTE_ALL, '"q2","d1","","where are inv', "pool.csv:4: the file ends inside a quoted cell: it is cut short here"),
    ],
    ids=["mid-row", "inside-a-quote"],
)
def test_a_judging_csv_cut_short_is_refused_naming_the_line_where_it_ends(cli, desk, quoting, cut_after, problem):
    text = pooled(cli, desk, "pool.csv", quoting=quoting)
    (desk / "pool.csv").write_text(text[: text.index(cut_after) + len(cut_after)], encoding="utf-8")
    set_before = (desk / "desk.yaml").read_bytes()

    assert_refused(apply(cli, desk, "pool.csv"), desk, set_before, problem)


def test_a_judging_jsonl_cut_mid_line_is_refused_naming_the_line_where_it_ends(cli, desk):
    text = pooled(cli, desk, "pool.jsonl")
    third = text.index('{"question_id": "q2", "document_id": "d1"')
    (desk / "pool.jsonl").write_text(text[: third + 60], encoding="utf-8")
    set_before = (desk / "desk.yaml").read_bytes()

    assert_refused(apply(cli, desk, "pool.jsonl"), desk, set_before, "pool.jsonl:3: invalid JSON")


def test_a_yes_for_a_document_the_pooled_retrievers_corpus_lacks_is_refused(cli, desk):
    text = pooled(cli, desk, "pool.csv")
    (desk / "pool.csv").write_text(text.replace("q3,n3,yes", "q3,n33,yes"), encoding="utf-8")  # a typo
    set_before = (desk / "desk.yaml").read_bytes()

    result = apply(cli, desk, "pool.csv")

    problem = "pool.csv:5: field 'document_id': question 'q3': document 'n33' is in no corpus of new"
    assert_refused(result, desk, set_before, problem)


def test_a_question_reworded_since_pooling_is_refused_naming_the_line_and_the_question(cli, desk):
    pooled(cli, desk, "pool.csv")
    reworded = (desk / "desk.yaml").read_text(encoding="utf-8").replace("how do I reset my password", "how do I change my email")
    (desk / "desk.yaml").write_text(reworded, encoding="utf-8")
    set_before = (desk / "desk.yaml").read_bytes()

    result = apply(cli, desk, "pool.csv")

    assert_refused(
        result, desk, set_before, "pool.csv:2: field 'question': question 'q1' was reworded since this file was pooled"
    )


def test_apply_keeps_the_set_files_mode(cli, desk):
    pooled(cli, desk, "pool.csv")
    os.chmod(desk / "desk.yaml", 0o600)

    assert apply(cli, desk, "pool.csv").exit_code == 0

    assert stat.S_IMODE((desk / "desk.yaml").stat().st_mode) == 0o600


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root can give a file to another owner")
def test_apply_as_root_keeps_the_set_files_owner(cli, desk):
    pooled(cli, desk, "pool.csv")
    os.chown(desk / "desk.yaml", 4321, 4321)

    assert apply(cli, desk, "pool.csv").exit_code == 0

    owner = (desk / "desk.yaml").stat()
    assert (owner.st_uid, owner.st_gid) == (4321, 4321)


@pytest.mark.slow
@pytest.mark.skipif(os.name != "posix", reason="folder permissions are POSIX")
def test_apply_into_a_read_only_folder_is_refused_in_one_line_naming_the_set_file(cli, desk):
    without_override = as_permissions_bind()
    pooled(cli, desk, "pool.csv")
    set_before = (desk / "desk.yaml").read_bytes()
    os.chmod(desk, 0o555)
    command = [*without_override, *console_script(), "judge", "apply", "pool.csv", "desk.yaml", "--config", "config.yaml"]
    try:
        result = subprocess.run(command, cwd=desk, env=subprocess_env(), capture_output=True, text=True, check=False)
    finally:
        os.chmod(desk, 0o755)

    assert result.returncode == 2, result.stderr  # invalid input, not an internal error
    assert result.stderr.strip().splitlines() == ["error: desk.yaml: cannot write (Permission denied)"]
    assert (desk / "desk.yaml").read_bytes() == set_before


@pytest.mark.slow
@pytest.mark.skipif(os.name != "posix", reason="file permissions are POSIX")
def test_apply_to_a_read_only_set_file_is_refused_as_a_read_only_folder_is(cli, desk):
    without_override = as_permissions_bind()
    pooled(cli, desk, "pool.csv")
    set_before = (desk / "desk.yaml").read_bytes()
    os.chmod(desk / "desk.yaml", 0o444)
    command = [*without_override, *console_script(), "judge", "apply", "pool.csv", "desk.yaml", "--config", "config.yaml"]

    result = subprocess.run(command, cwd=desk, env=subprocess_env(), capture_output=True, text=True, check=False)

    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == ["error: desk.yaml: cannot write (Permission denied)"]
    assert (desk / "desk.yaml").read_bytes() == set_before
    assert stat.S_IMODE((desk / "desk.yaml").stat().st_mode) == 0o444
    assert [path.name for path in desk.iterdir() if path.name.startswith(".desk.yaml.")] == []
