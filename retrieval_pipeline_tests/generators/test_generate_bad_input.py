"""Bad input to `generate` is one `error:` line before any request, with the exit code docs/cli.md gives:
an unknown generator or retriever (1), a count of 0, a form the generator does not write, no log to draw
from, example texts asked of the corpus, an --out that holds answers (2)."""

from __future__ import annotations

import json

import pytest
from generation_project import EXTRACTIVE, generate, generation_project

from retrieval_pipeline.core.services.labels.judging_files import read_judging_file

pytestmark = pytest.mark.slow  # real BM25 over the demo's corpus for every command, a server on 127.0.0.1


def test_an_unknown_generator_exits_1_listing_the_configured_ones(cli, tmp_path):
    config = generation_project(tmp_path, EXTRACTIVE)

    result = generate(cli, config, "--from", "corpus", "--count", "2", "--generator", "gpt", "--out", str(tmp_path / "c.csv"))

    assert result.exit_code == 1
    assert result.stderr.strip() == "error: unknown generator 'gpt'; available: extractive"


def test_a_count_of_zero_is_refused_by_the_option_parser_in_one_line(cli, tmp_path):
    config = generation_project(tmp_path, EXTRACTIVE)

    result = generate(
        cli, config, "--from", "corpus", "--count", "0", "--generator", "extractive", "--out", str(tmp_path / "c.csv")
    )

    assert result.exit_code == 2
    assert result.stderr.startswith("error: ") and "--count" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "c.csv").exists()


def test_the_extractive_kind_is_never_asked_for_gap_questions(cli, tmp_path):
    config = generation_project(tmp_path, EXTRACTIVE)

    result = generate(
        cli,
        config,
        "--from",
        "corpus",
        "--count",
        "2",
        "--form",
        "gap",
        "--generator",
        "extractive",
        "--out",
        str(tmp_path / "c.csv"),
    )

    assert result.exit_code == 2
    assert "generator extractive writes match questions only; it cannot be asked for gap" in result.stderr


def test_a_file_people_started_answering_is_never_written_over(cli, tmp_path):
    config = generation_project(tmp_path, EXTRACTIVE)
    out = tmp_path / "candidates.jsonl"
    assert (
        generate(cli, config, "--from", "corpus", "--count", "2", "--generator", "extractive", "--out", str(out)).exit_code == 0
    )
    rows = read_judging_file(out)
    rows[0]["judgement"] = "yes"
    out.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    answered = out.read_bytes()

    result = generate(cli, config, "--from", "corpus", "--count", "2", "--generator", "extractive", "--out", str(out))

    assert result.exit_code == 2 and "holds 1 answer already" in result.stderr
    assert out.read_bytes() == answered


@pytest.mark.parametrize(
    ("arguments", "code", "problem"),
    [
        (("--count", "2"), 2, "--from log needs a LOG (a query_logs name or a log file)"),
        (("--from", "corpus", "--examples", "--count", "2"), 2, "--examples goes with --from log"),
        (("--from", "corpus", "--count", "2", "--retriever", "bm26"), 1, "unknown retriever 'bm26'"),
    ],
    ids=["no-log", "examples-of-the-corpus", "unknown-retriever"],
)
def test_what_cannot_be_generated_from_is_one_line_before_any_request(cli, tmp_path, arguments, code, problem):
    config = generation_project(tmp_path, EXTRACTIVE)
    out = tmp_path / "c.csv"

    result = generate(cli, config, *arguments, "--generator", "extractive", "--out", str(out))

    assert result.exit_code == code and problem in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not out.exists() and not (tmp_path / "cache" / "generations").exists()
