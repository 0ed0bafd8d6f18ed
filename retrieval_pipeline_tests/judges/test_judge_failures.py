"""What goes wrong at an endpoint is a clear error or a counted row error, never a grade: the failure cases
the HTTP kind is tested for (unreachable, 5xx, 401, timeout, malformed replies) and a reply with no grade."""

from __future__ import annotations

import json
import socket

import pytest
from chat_service import ChatService
from judge_helpers import openai_judge
from local_servers import running

from retrieval_pipeline.core.services.labels.judging_files import write_judging_file

ROWS = [
    {
        "question_id": f"q{n}",
        "document_id": f"d{n}",
        "judgement": "",
        "question": f"question {n}",
        "title": "a title",
        "text": "a text",
    }
    for n in range(1, 4)
]


@pytest.fixture
def broken(tmp_path):
    """A failing endpoint's paths (no model is loaded: no row is ever graded) and a three-row judging file."""
    with running(ChatService(grader=None)) as server:
        yield server


@pytest.fixture
def judging_file(tmp_path):
    return write_judging_file(ROWS, tmp_path / "pool.jsonl")


def configure(tmp_path, **judges) -> str:
    import yaml

    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"store": "store", "judges": judges}), encoding="utf-8")
    return str(config)


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1/chat/completions"


@pytest.mark.parametrize(
    ("path", "options", "cause"),
    [
        ("/v1/overloaded", {}, "failed after 2 attempts; last: HTTP 500"),
        ("/v1/echo-unauthorized", {}, "answered HTTP 401"),
        ("/v1/slow", {"timeout_seconds": 0.3, "retries": 0}, "timed out: no complete answer within timeout_seconds=0.3"),
        ("/v1/html", {}, "answered HTTP 200 with non-JSON"),
        ("/v1/no-choices", {}, "the answer has no text at choices[0].message.content"),
        ("/v1/no-digit", {}, "the reply holds no grade 0-3: 'I cannot judge this document.'"),
    ],
    ids=["5xx", "401", "timeout", "non-json", "no-choices", "no-digit"],
)
def test_each_row_the_endpoint_fails_is_counted_by_cause_and_left_without_a_machine_answer(
    cli, broken, judging_file, tmp_path, path, options, cause
):
    config = configure(tmp_path, broken=openai_judge(broken.url(path), **options))
    before = judging_file.read_bytes()

    result = cli("judge", "machine", str(judging_file), "--judge", "broken", "--config", config, "--json")

    assert result.exit_code == 3, result.output  # incomplete, as a run with retriever errors
    summary = json.loads(result.stdout)
    assert (summary["errors"], summary["judged"], summary["yes"]) == (3, 0, 0)
    ((text, count),) = summary["errors_by_cause"].items()
    assert cause in text and count == 3
    assert judging_file.read_bytes() == before  # no machine column was filled


def test_an_unreachable_endpoint_stops_the_pass_after_fail_fast_after_rows_with_one_clear_line(cli, judging_file, tmp_path):
    config = configure(tmp_path, down=openai_judge(closed_port_url(), fail_fast_after=2, concurrency=1))

    result = cli("judge", "machine", str(judging_file), "--judge", "down", "--config", config)

    assert result.exit_code == 3
    assert (
        result.stderr.strip().splitlines() == [result.stderr.strip()]
        and "judge down: the first 2 rows asked could not reach its service, stopped: connection refused" in result.stderr
    )


def test_an_unreachable_endpoint_without_fail_fast_counts_every_row_as_refused(cli, judging_file, tmp_path):
    config = configure(tmp_path, down=openai_judge(closed_port_url(), fail_fast_after=0))

    result = cli("judge", "machine", str(judging_file), "--judge", "down", "--config", config)

    assert result.exit_code == 3
    assert "3 error(s): 3 x connection refused" in result.stdout


def test_a_row_without_document_text_or_question_is_an_error_and_the_endpoint_is_not_asked(cli, broken, tmp_path):
    path = write_judging_file([{**ROWS[0], "title": "", "text": ""}, {**ROWS[1], "question": ""}], tmp_path / "pool.csv")
    config = configure(tmp_path, broken=openai_judge(broken.url("/v1/overloaded")))

    result = cli("judge", "machine", str(path), "--judge", "broken", "--config", config, "--json")

    assert json.loads(result.stdout)["errors_by_cause"] == {
        "the row has no document title or text to judge (the pool's retrievers did not know the corpus)": 1,
        "the row has no question text to judge": 1,
    }
    assert broken.asked == 0


def test_a_question_holding_a_placeholder_reaches_the_prompt_as_written(cli, broken, tmp_path):
    path = write_judging_file([{**ROWS[0], "question": "what is {document} in a template?"}], tmp_path / "pool.csv")
    config = configure(tmp_path, steady=openai_judge(broken.url("/v1/steady")))

    assert cli("judge", "machine", str(path), "--judge", "steady", "--config", config).exit_code == 0

    content = broken.bodies[0]["messages"][0]["content"]
    assert "Question: what is {document} in a template?\n" in content and "Document:\na title\n\na text\n" in content


def test_a_pass_whose_every_request_failed_says_it_sent_them_and_got_no_answer(cli, judging_file, tmp_path):
    config = configure(tmp_path, down=openai_judge(closed_port_url(), fail_fast_after=0))

    result = cli("judge", "machine", str(judging_file), "--judge", "down", "--config", config)

    assert result.exit_code == 3
    assert "this pass sent 3 requests: none answered, 3 failed, took 0 from the cache" in result.stdout
    assert "; no answer to time; tokens not reported" in result.stdout
    assert "asked 0" not in result.stdout and "n/a" not in result.stdout


def test_a_judge_name_without_any_judge_configured_says_none_are_and_where_to_add_one(cli, judging_file, tmp_path):
    config = configure(tmp_path)
    before = judging_file.read_bytes()

    result = cli("judge", "machine", str(judging_file), "--judge", "gpt", "--config", config)

    assert result.exit_code == 1  # an unknown identifier, as an unknown set or judge name always was
    assert result.stderr.strip().splitlines() == [
        f"error: unknown judge 'gpt'; available: none (no judges are configured in {config}: "
        "name one under `judges:`, see docs/configuration.md)"
    ]
    assert judging_file.read_bytes() == before
