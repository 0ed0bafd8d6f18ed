"""`judge machine FILE --judge NAME` with an OpenAI-compatible endpoint, end to end over a real pool of the demo: the
grades are the test service's real model's, checked against that model asked directly."""

from __future__ import annotations

import json

import pytest
from chat_service import SECRET
from judge_helpers import openai_judge

from retrieval_pipeline.core.retrieval.judges import document_text

pytestmark = pytest.mark.slow  # a real model grades every row on a shared machine


def judge(cli, demo_pool, name: str = "minilm", *options: str):
    return cli("judge", "machine", str(demo_pool.pool), "--judge", name, "--config", str(demo_pool.config), *options)


def test_every_row_gets_the_models_grade_and_yes_from_grade_two_while_the_human_judgement_stays_empty(
    cli, demo_pool, chat, grader
):
    demo_pool.configure_judges({"minilm": openai_judge(chat.url())})
    before = demo_pool.rows()

    result = judge(cli, demo_pool, "minilm", "--json")

    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["errors"] == 0, result.stdout
    rows = demo_pool.rows()
    assert len(rows) == len(before) >= 15
    for row, original in zip(rows, before):
        expected = grader.grade(row["question"], document_text(row["title"], row["text"]))
        assert row["machine_grade"] == expected
        assert row["machine_judgement"] == ("yes" if expected >= 2 else "no")
        assert row["judged_by"].startswith("minilm@") and len(row["judged_by"]) == len("minilm@") + 12
        assert row["judgement"] == "" and {k: row[k] for k in original} == {**original, "judgement": ""}
    assert {row["machine_judgement"] for row in rows} == {"yes", "no"}
    summary = json.loads(result.stdout)
    assert summary["asked"] == chat.calls["/v1/chat/completions"] == len(rows)
    assert summary["judged"] == len(rows) and summary["errors"] == 0
    assert summary["yes"] == sum(row["machine_judgement"] == "yes" for row in rows)
    sent = chat.bodies[0]
    assert (sent["model"], sent["temperature"], sent["seed"]) == ("minilm-judge", 0, 0)
    tokens = sum(grader.tokens(body["messages"][0]["content"]) + 1 for body in chat.bodies)
    assert summary["prompt_tokens"] + summary["completion_tokens"] == tokens
    assert summary["tokens_per_1000_rows"] == round(1000 * tokens / len(rows), 1)


def test_a_second_pass_asks_nothing_and_another_file_with_the_same_pairs_is_answered_from_the_cache(cli, demo_pool, chat):
    demo_pool.configure_judges({"minilm": openai_judge(chat.url())})
    assert judge(cli, demo_pool).exit_code == 0
    asked = chat.asked
    judged = demo_pool.pool.read_bytes()

    again = judge(cli, demo_pool, "minilm", "--json")
    copy = demo_pool.root / "copy.csv"
    assert cli("pool", "demo.cranfield", "--depth", "3", "--out", str(copy), "--config", str(demo_pool.config)).exit_code == 0
    other = cli("judge", "machine", str(copy), "--judge", "minilm", "--config", str(demo_pool.config), "--json")

    assert chat.asked == asked  # neither pass asked the endpoint anything
    assert json.loads(again.stdout)["already_judged"] == json.loads(again.stdout)["rows"]
    assert demo_pool.pool.read_bytes() == judged
    assert json.loads(other.stdout)["from_cache"] == json.loads(other.stdout)["rows"]
    jsonl = {(r["question_id"], r["document_id"]): r["machine_grade"] for r in demo_pool.rows()}
    from retrieval_pipeline.core.services.labels.judging_files import read_judging_file

    assert {(r["question_id"], r["document_id"]): r["machine_grade"] for r in read_judging_file(copy)} == jsonl


def test_a_changed_prompt_is_a_new_judge_whose_answers_replace_the_old_ones_and_are_asked_anew(cli, demo_pool, chat):
    demo_pool.configure_judges({"minilm": openai_judge(chat.url())})
    assert judge(cli, demo_pool).exit_code == 0
    first = {row["judged_by"] for row in demo_pool.rows()}
    asked = chat.asked
    from retrieval_pipeline.judges.openai import DEFAULT_PROMPT

    demo_pool.configure_judges({"minilm": openai_judge(chat.url(), prompt="Be strict.\n" + DEFAULT_PROMPT)})

    assert judge(cli, demo_pool).exit_code == 0
    assert chat.asked == 2 * asked
    second = {row["judged_by"] for row in demo_pool.rows()}
    assert len(first) == len(second) == 1 and first != second


def test_the_token_never_reaches_the_file_the_cache_or_the_output_even_when_the_endpoint_echoes_it(
    cli, demo_pool, chat, tmp_path
):
    demo_pool.configure_judges(
        {
            "minilm": openai_judge(chat.url()),
            "echo": openai_judge(chat.url("/v1/echo-unauthorized")),
            "html": openai_judge(chat.url("/v1/html")),
        }
    )
    outputs = [judge(cli, demo_pool, name, *options) for name in ("minilm", "echo", "html") for options in ((), ("--json",))]

    assert [result.exit_code for result in outputs] == [0, 0, 3, 3, 3, 3]  # rows with errors: incomplete
    assert "401" in outputs[2].stdout and "non-JSON" in outputs[4].stdout
    written = demo_pool.pool.read_bytes() + b"".join(
        path.read_bytes() for path in (tmp_path / "cache").rglob("*") if path.is_file()
    )
    assert SECRET.encode() not in written
    assert all(SECRET not in result.stdout + result.stderr for result in outputs)
