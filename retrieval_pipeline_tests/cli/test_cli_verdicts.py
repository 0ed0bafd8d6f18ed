"""`verdicts` fails closed: the gate CI reads passes only on verdicts it could read, from a store that holds
some; a latest run that cannot be read, a store that is a file and a store holding nothing never pass."""

from __future__ import annotations

import json

from cli_helpers import HALF, PERFECT


def regressed(cli, project) -> None:
    """cli.small × good: a perfect run, then a run missing q2, stored with a regression verdict."""
    for rankings in (PERFECT, HALF):
        project.rankings("good", rankings)
        result = cli("run", "cli.small", "good", "--config", str(project.config))
        assert result.exit_code == 0, result.output


def test_a_pair_whose_latest_run_cannot_be_read_fails_instead_of_showing_an_older_verdict(cli, project):
    regressed(cli, project)
    newest = max(project.stored_summaries(), key=lambda path: path.name)
    newest.write_bytes(newest.read_bytes()[:40])  # a copy or a sync cut short

    result = cli("verdicts", "--config", str(project.config), "--json")

    assert result.exit_code == 1
    [good] = [pair for pair in json.loads(result.stdout)["pairs"] if pair["retriever_identifier"] == "good"]
    assert good["status"] == "unreadable" and good["run_id"] in newest.name
    assert "cli.small × good (unreadable): its latest run" in result.stderr and "cannot be read" in result.stderr
    assert len(project.stored_summaries()) == 2  # the damaged file is reported, never removed


def test_a_store_that_is_a_file_is_refused_in_one_line_with_exit_2(cli, project):
    stray = project.root / "results.txt"
    stray.write_text("not a store", encoding="utf-8")

    result = cli("verdicts", "--config", str(project.config), "--store", str(stray))

    assert result.exit_code == 2
    assert result.stderr.strip() == f"error: the result store {stray} is a file, not a folder: name the store's folder"


def test_a_store_holding_no_run_fails_the_gate_unless_allowed_to_be_empty(cli, project):
    regressed(cli, project)
    mistyped = project.root / "stroe"

    result = cli("verdicts", "--config", str(project.config), "--store", str(mistyped))

    assert result.exit_code == 1
    assert result.stderr.strip() == (
        f"error: no pair of the 3 configured has a stored run in {mistyped}: nothing was evaluated there "
        "(is it the right store?); pass --allow-empty when none is expected yet"
    )
    assert not mistyped.exists()
    allowed = cli("verdicts", "--config", str(project.config), "--store", str(mistyped), "--allow-empty", "--json")
    assert allowed.exit_code == 0 and json.loads(allowed.stdout)["passed"] is True
