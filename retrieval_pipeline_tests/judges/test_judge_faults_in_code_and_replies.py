"""A judge's own code or its endpoint's reply is untrusted input: a function calling `sys.exit` fails that
judge (exit 3, the answers it gave kept), a reply nested thousands deep is that row's counted error, and
one reporting 10**30 tokens or holding a lone surrogate is judged, its impossible count left out."""

from __future__ import annotations

import json

import pytest
import yaml
from chat_service import SECRET, TOKEN_VAR, ChatService
from judge_functions import overlap_grade
from judge_helpers import numbered_rows, openai_judge
from local_servers import running

from retrieval_pipeline.core.base.errors import ServiceFailedError
from retrieval_pipeline.core.retrieval.judges import document_text
from retrieval_pipeline.core.services.configuration.project import load_config
from retrieval_pipeline.core.services.labels.judgement_cache import JudgementCache
from retrieval_pipeline.core.services.labels.judging_files import read_judging_file, write_judging_file
from retrieval_pipeline.core.services.labels.machine_judging import machine_judge_file


def _judge(tmp_path, name: str, params: dict):
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"store": "store", "judges": {name: params}}), encoding="utf-8")
    return load_config(config).judge(name)


def test_a_judge_function_calling_sys_exit_fails_that_judge_and_keeps_the_answers_it_gave(tmp_path):
    judge = _judge(tmp_path, "exits", {"kind": "callable", "function": "judge_functions:exits_at_question_5"})
    rows = numbered_rows(12)
    path = write_judging_file(rows, tmp_path / "pool.csv")

    with pytest.raises(ServiceFailedError) as caught:  # exit 3 (cli/errors.py), never a silent exit nor a bug
        machine_judge_file(path, judge, tmp_path / "cache")

    message = str(caught.value)
    assert message.startswith("judge exits failed: its function judge_functions:exits_at_question_5 called sys.exit(2): ")
    assert "fix the judge, then run the same command again to resume" in message
    answered = {row["question_id"]: row["machine_grade"] for row in read_judging_file(path) if row.get("machine_judgement")}
    assert f"{len(answered)} rows carry exits's answer in {path}" in message
    assert {f"q{n}" for n in range(5)} <= set(answered) and "q5" not in answered
    with JudgementCache(tmp_path / "cache", judge.fingerprint) as cache:
        for row in rows[:5]:
            kept = cache.get(row["question"], document_text(row["title"], row["text"]))
            assert kept is not None and kept.grade.value == overlap_grade(row["question"], row["text"])


def test_a_reply_nested_thousands_deep_is_that_rows_counted_error_and_the_pass_goes_on(tmp_path, monkeypatch):
    monkeypatch.setenv(TOKEN_VAR, SECRET)
    path = write_judging_file(numbered_rows(3), tmp_path / "pool.jsonl")
    before = path.read_bytes()
    with running(ChatService(grader=None)) as server:
        judge = _judge(tmp_path, "deep", openai_judge(server.url("/v1/deep-json"), retries=0))
        summary = machine_judge_file(path, judge, tmp_path / "cache")

    assert (summary.judged, sum(summary.tally.errors.values())) == (0, 3)
    ((cause, count),) = summary.tally.errors.items()
    assert count == 3 and "answered HTTP 200 with JSON that cannot be read: nested too deeply" in cause
    assert path.read_bytes() == before


@pytest.mark.slow
@pytest.mark.parametrize(
    ("route", "prompt_tokens"), [("/v1/huge-usage", 0), ("/v1/surrogate", 30)], ids=["10**30-tokens", "lone-surrogate"]
)
def test_judge_machine_judges_a_reply_reporting_10_to_the_30_tokens_or_holding_a_lone_surrogate(
    cli, tmp_path, route, prompt_tokens
):
    path = write_judging_file(numbered_rows(3), tmp_path / "pool.jsonl")
    config = tmp_path / "config.yaml"
    with running(ChatService(grader=None)) as server:
        config.write_text(yaml.safe_dump({"judges": {"odd": openai_judge(server.url(route))}}), encoding="utf-8")
        result = cli("judge", "machine", str(path), "--judge", "odd", "--config", str(config), "--json")

    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert (summary["judged"], summary["errors"], summary["prompt_tokens"]) == (3, 0, prompt_tokens)  # 10**30: not counted
    assert [row["machine_grade"] for row in read_judging_file(path)] == [2, 2, 2]
    project = load_config(config)
    with JudgementCache(project.judgement_cache, project.judge("odd").fingerprint) as cache:
        assert all(cache.get(row["question"], document_text(row["title"], row["text"])) for row in numbered_rows(3))
