"""Odd values where `generate` reads what others wrote: an endpoint's usage too large for any count, a question
holding a lone surrogate (from the endpoint's JSON or a function), a cache row whose question is no text.
Each is absorbed with the right figures or is one clear line, never an internal error (exit 4)."""

from __future__ import annotations

import json
import sqlite3

import pytest
from generation_project import EXTRACTIVE, generate, generation_project
from generation_service import openai_generator

from retrieval_pipeline.core.services.generated.cache import FILE_NAME
from retrieval_pipeline.core.services.labels.judging_files import read_judging_file

pytestmark = pytest.mark.slow  # real BM25 over the demo's corpus for every command, a server on 127.0.0.1


def test_a_usage_of_10_to_the_30_prompt_tokens_is_left_out_as_a_malformed_one_and_the_question_is_kept(cli, tmp_path, service):
    config = generation_project(tmp_path, {"chat": openai_generator(service.url("/v1/huge-usage"), concurrency=1)})
    out = tmp_path / "candidates.csv"

    result = generate(cli, config, "--from", "corpus", "--count", "2", "--generator", "chat", "--out", str(out), "--json")

    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert (summary["asked"], summary["prompt_tokens"], summary["completion_tokens"]) == (2, 0, 2)  # 1 each, reported
    assert {row["question"] for row in read_judging_file(out)} == {"how is heat transfer measured?"}


def test_a_lone_surrogate_in_the_endpoints_reply_is_dropped_as_garbled_and_cached(cli, tmp_path, service):
    config = generation_project(tmp_path, {"chat": openai_generator(service.url("/v1/surrogate"), concurrency=1)})
    out = tmp_path / "candidates.csv"
    command = ("--from", "corpus", "--count", "3", "--generator", "chat", "--out", str(out), "--json")

    first, again = generate(cli, config, *command), generate(cli, config, *command)

    assert first.exit_code == again.exit_code == 0, first.stderr + again.stderr
    assert (
        json.loads(first.stdout)["dropped_by_reason"]["garbled"] == json.loads(again.stdout)["dropped_by_reason"]["garbled"] == 3
    )
    assert json.loads(again.stdout)["from_cache"] == 3 and service.calls["/v1/surrogate"] == 3
    assert read_judging_file(out) == []


def surrogate(document: str, form: str, examples: tuple[str, ...]) -> str:
    """A function decoding bytes with `surrogateescape` returns such text."""
    return f"what does {document.split()[0]} \udcff report?"


def test_a_lone_surrogate_from_a_generator_function_is_dropped_as_garbled(cli, tmp_path):
    config = generation_project(tmp_path, {"mine": {"kind": "callable", "function": f"{__name__}:surrogate"}})

    result = generate(
        cli, config, "--from", "corpus", "--count", "2", "--generator", "mine", "--out", str(tmp_path / "c.csv"), "--json"
    )

    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["dropped_by_reason"]["garbled"] == 2


def test_a_question_stored_as_a_blob_in_the_generation_cache_is_one_line_naming_the_cache_exit_2(cli, tmp_path):
    config = generation_project(tmp_path, EXTRACTIVE)
    command = ("--from", "corpus", "--count", "2", "--generator", "extractive", "--out", str(tmp_path / "c.csv"))
    assert generate(cli, config, *command).exit_code == 0
    cache = tmp_path / "cache" / "generations" / FILE_NAME
    with sqlite3.connect(cache) as db:
        db.execute("UPDATE questions SET question = CAST(question AS BLOB)")
    db.close()

    result = generate(cli, config, *command)

    assert result.exit_code == 2
    assert result.stderr.startswith("error: ") and str(cache) in result.stderr and "generation cache" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    with sqlite3.connect(cache) as db:
        assert db.execute("SELECT count(*) FROM questions").fetchone() == (2,)
    db.close()
