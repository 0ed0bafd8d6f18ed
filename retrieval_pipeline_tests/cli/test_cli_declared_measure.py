"""A measure declared once (scoring/measures.py), with no other edit, shows in every output of `run` and
`compare`: the JSON document, the terminal lines and tables, and the Markdown summary."""

from __future__ import annotations

import json

import pytest
from cli_helpers import HALF
from measure_helpers import declare, throwaway_measure


@pytest.fixture
def throwaway(monkeypatch):
    """`throwaway@3` (0.5 a question hit within the cut-off), declared beside the built-in measures."""
    declare(monkeypatch, throwaway_measure())


def run(cli, project, *options):
    return cli("run", "cli.small", "good", "--config", str(project.config), *options)


def test_a_declared_measure_is_in_the_json_document(cli, project, throwaway):
    run(cli, project)
    project.rankings("good", HALF)

    document = json.loads(run(cli, project, "--json").stdout)

    assert document["metrics"]["throwaway@3"] == 0.25
    assert [q["metrics"]["throwaway@3"] for q in document["questions"]] == [0.5, 0.0]
    assert document["by_form"]["gap"]["metrics"]["throwaway@3"] == 0.0
    assert document["regression"]["metric_deltas"]["throwaway@3"] == -0.25


def test_a_declared_measure_is_in_the_terminal_lines_and_tables(cli, project, throwaway):
    run(cli, project)
    project.rankings("good", HALF)

    out = run(cli, project).stdout

    assert "· Throwaway@3 0.250" in next(line for line in out.splitlines() if line.startswith("Ranking: "))
    assert "Throwaway@3 -0.250" in next(line for line in out.splitlines() if line.startswith("Ranking against"))
    header = next(line for line in out.splitlines() if line.startswith("┃ form"))
    assert "nDCG@3 ┃ Judged@3 ┃ Throwaway@3 ┃" in header


def test_a_declared_measure_is_a_row_of_the_markdown_summary(cli, project, throwaway, tmp_path):
    run(cli, project)
    project.rankings("good", HALF)
    summary = tmp_path / "summary.md"

    run(cli, project, "--markdown", str(summary))

    assert "| Throwaway@3 | 0.250 | 0.500 | -0.250 |" in summary.read_text(encoding="utf-8").splitlines()


def test_a_declared_measure_is_a_column_of_the_comparison(cli, project, throwaway):
    out = cli("compare", "cli.small", "good", "half", "--config", str(project.config), env={"COLUMNS": "200"}).stdout

    assert "nDCG@3 ┃ Judged@3 ┃ Throwaway@3 ┃" in next(line for line in out.splitlines() if "┃ retriever" in line)
