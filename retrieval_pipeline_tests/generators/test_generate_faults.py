"""What a failing generator leaves: each failed request counted by cause in one line (exit 3), the questions
already paid for cached and their candidates written, a second run asking only for the rest; replies that
arrive but are no question dropped and counted; the key never written; Ctrl-C and sys.exit losing nothing
gathered."""

from __future__ import annotations

import json

import pytest
from generation_project import by_question, generate, generation_project
from generation_service import SECRET, openai_generator
from local_servers import closed_port_url

from retrieval_pipeline.core.services.labels.judging_files import read_judging_file

pytestmark = pytest.mark.slow  # real BM25 over the demo's corpus for every command, a server on 127.0.0.1


def test_an_endpoint_failing_midway_keeps_what_was_paid_for_and_a_second_run_asks_only_the_rest(cli, tmp_path, service):
    config = generation_project(tmp_path, {"chat": openai_generator(service.url(), concurrency=1)})
    out = tmp_path / "candidates.csv"
    service.fail_after = 3

    failed = generate(cli, config, "--from", "corpus", "--count", "8", "--generator", "chat", "--out", str(out), "--json")

    assert failed.exit_code == 3
    assert failed.stderr.startswith("error: generator chat failed on 5 of 8 request(s)") and len(failed.stderr.splitlines()) == 1
    assert "the 3 it answered are cached and their candidates written to" in failed.stderr
    assert json.loads(failed.stdout)["asked"] == 3 and len(by_question(read_judging_file(out))) <= 3
    service.fail_after = None
    resumed = generate(cli, config, "--from", "corpus", "--count", "8", "--generator", "chat", "--out", str(out), "--json")
    assert resumed.exit_code == 0, resumed.stderr
    assert (json.loads(resumed.stdout)["asked"], json.loads(resumed.stdout)["from_cache"]) == (5, 3)
    assert service.answered == 8


@pytest.mark.parametrize(
    ("path", "options", "cause"),
    [
        ("/v1/rate-limited", {}, "failed after 2 attempts; last: HTTP 429"),
        ("/v1/overloaded", {}, "failed after 2 attempts; last: HTTP 500"),
        ("/v1/slow", {"timeout_seconds": 0.3, "retries": 0}, "timed out: no complete answer within timeout_seconds=0.3"),
        ("/v1/html", {}, "answered HTTP 200 with non-JSON"),
    ],
    ids=["429", "500", "timeout", "non-json"],
)
def test_a_failing_endpoint_is_one_error_line_with_exit_3_and_its_cause(cli, tmp_path, service, path, options, cause):
    config = generation_project(tmp_path, {"chat": openai_generator(service.url(path), **options)})
    out = tmp_path / "candidates.csv"

    result = generate(cli, config, "--from", "corpus", "--count", "3", "--generator", "chat", "--out", str(out))

    assert result.exit_code == 3
    assert result.stderr.startswith("error: generator chat failed on 3 of 3 request(s): 3 x ")
    assert cause in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert "Wrote 0 candidate questions" in result.stdout and read_judging_file(out) == []


@pytest.mark.parametrize(("path", "reason"), [("/v1/symbols", "garbled"), ("/v1/copier", "copied from its document")])
def test_a_reply_of_symbols_or_of_the_documents_own_sentence_is_dropped_and_counted(cli, tmp_path, service, path, reason):
    config = generation_project(tmp_path, {"chat": openai_generator(service.url(path))})

    result = generate(
        cli, config, "--from", "corpus", "--count", "4", "--generator", "chat", "--out", str(tmp_path / "c.csv"), "--json"
    )

    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["dropped_by_reason"][reason] == 4


def test_the_key_reaches_no_file_cache_or_output_even_when_the_endpoint_echoes_it(cli, tmp_path, service):
    config = generation_project(tmp_path, {"chat": openai_generator(service.url("/v1/echo"))})
    out = tmp_path / "candidates.csv"

    result = generate(cli, config, "--from", "corpus", "--count", "2", "--generator", "chat", "--out", str(out))

    assert result.exit_code == 3 and "HTTP 500" in result.stderr
    cache = b"".join(path.read_bytes() for path in (tmp_path / "cache" / "generations").iterdir())
    assert SECRET not in result.stdout + result.stderr + out.read_text(encoding="utf-8") and SECRET.encode() not in cache


def test_a_key_the_endpoint_writes_into_its_questions_is_masked_in_the_candidates_and_the_cache(cli, tmp_path, service):
    config = generation_project(tmp_path, {"chat": openai_generator(service.url("/v1/leaky"))})
    out = tmp_path / "candidates.csv"

    result = generate(cli, config, "--from", "corpus", "--count", "2", "--generator", "chat", "--out", str(out))

    assert result.exit_code == 0, result.stderr
    questions = {row["question"] for row in read_judging_file(out)}
    assert questions and all(question.endswith(" (Bearer ***)") for question in questions)
    cache = b"".join(path.read_bytes() for path in (tmp_path / "cache" / "generations").iterdir())
    assert SECRET not in result.stdout + result.stderr + out.read_text(encoding="utf-8") and SECRET.encode() not in cache


def test_an_unreachable_endpoint_stops_after_fail_fast_after_requests_in_one_line(cli, tmp_path):
    config = generation_project(
        tmp_path, {"down": openai_generator(closed_port_url("/v1/chat/completions"), fail_fast_after=2, concurrency=1)}
    )

    result = generate(cli, config, "--from", "corpus", "--count", "5", "--generator", "down", "--out", str(tmp_path / "c.csv"))

    assert result.exit_code == 3
    assert (
        result.stderr.strip().splitlines() == [result.stderr.strip()]
        and "generator down: the first 2 requests asked could not reach its service, stopped: connection refused" in result.stderr
    )


CALLS = {"count": 0, "stop_at": None}


def numbered(document: str, form: str, examples: tuple[str, ...]) -> str:
    """A question per document; Ctrl-C (as the terminal delivers it, in the asking thread) from call `stop_at`
    on, so a call the worker takes after it brings no question either."""
    CALLS["count"] += 1
    if CALLS["stop_at"] and CALLS["count"] >= CALLS["stop_at"]:
        raise KeyboardInterrupt
    return f"what does {' '.join(document.split()[:3])} report on cooling?"


def test_ctrl_c_keeps_every_question_already_gathered_and_a_second_run_asks_only_the_rest(cli, tmp_path):
    config = generation_project(tmp_path, {"mine": {"kind": "callable", "function": f"{__name__}:numbered"}})
    out = tmp_path / "candidates.csv"
    CALLS.update(count=0, stop_at=6)  # one at a time, gathered four by four: midway through the second batch

    stopped = generate(cli, config, "--from", "corpus", "--count", "10", "--generator", "mine", "--out", str(out))

    assert stopped.exit_code == 130 and not out.exists()
    assert stopped.stderr.strip() == (
        f"error: interrupted (Ctrl-C): the 5 question(s) mine wrote in this pass are cached; {out} was not written; "
        "run the same command again to resume"
    )
    CALLS.update(count=0, stop_at=None)
    resumed = generate(cli, config, "--from", "corpus", "--count", "10", "--generator", "mine", "--out", str(out), "--json")
    assert resumed.exit_code == 0, resumed.stderr
    assert (json.loads(resumed.stdout)["from_cache"], json.loads(resumed.stdout)["asked"], CALLS["count"]) == (5, 5, 5)


def leave(document: str, form: str, examples: tuple[str, ...]) -> str:
    """A careless function ending the process on its third call."""
    CALLS["count"] += 1
    if CALLS["count"] == 3:
        raise SystemExit(0)
    return f"what does {' '.join(document.split()[:3])} report on cooling?"


def test_a_generator_function_calling_sys_exit_stops_the_pass_in_one_line_keeping_what_it_wrote(cli, tmp_path):
    config = generation_project(tmp_path, {"mine": {"kind": "callable", "function": f"{__name__}:leave"}})
    CALLS.update(count=0)

    result = generate(cli, config, "--from", "corpus", "--count", "6", "--generator", "mine", "--out", str(tmp_path / "c.csv"))

    assert result.exit_code == 3
    assert result.stderr.strip() == (
        "error: generator mine stopped: its code called sys.exit(0); the 2 question(s) it wrote in this pass are cached; "
        "run the same command again to resume"
    )
