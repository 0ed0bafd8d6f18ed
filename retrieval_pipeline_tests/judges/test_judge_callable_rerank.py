"""The `callable` judge (a team's function) and the `rerank` judge (a rerank endpoint's score over a
threshold) fill the same columns as the chat-completions judge."""

from __future__ import annotations

import json

import pytest
from chat_service import ChatHandler, ChatService
from judge_functions import overlap_grade
from local_servers import running

from retrieval_pipeline.core.retrieval.judges import document_text
from retrieval_pipeline.core.services.labels.judging_files import read_judging_file, write_judging_file

ROWS = [
    {
        "question_id": "q1",
        "document_id": "d1",
        "judgement": "yes",
        "question": "how do wings stall",
        "title": "Stall",
        "text": "wings stall at a high angle",
    },
    {
        "question_id": "q1",
        "document_id": "d2",
        "judgement": "",
        "question": "how do wings stall",
        "title": "Engines",
        "text": "turbofan engines",
    },
    {
        "question_id": "q2",
        "document_id": "d3",
        "judgement": "no",
        "question": "heat transfer in slabs",
        "title": "",
        "text": "heat moves through slabs",
    },
]


def configure(tmp_path, **judges) -> str:
    import yaml

    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"store": "store", "judges": judges}), encoding="utf-8")
    return str(config)


def test_a_callable_judges_grades_fill_the_columns_and_the_human_answers_are_untouched(cli, tmp_path):
    path = write_judging_file(ROWS, tmp_path / "pool.csv")
    config = configure(tmp_path, overlap={"kind": "callable", "function": "judge_functions:overlap_grade"})

    result = cli("judge", "machine", str(path), "--judge", "overlap", "--config", config)

    assert result.exit_code == 0, result.output
    rows = read_judging_file(path)
    expected = [overlap_grade(row["question"], document_text(row["title"], row["text"])) for row in ROWS]
    assert [row["machine_grade"] for row in rows] == expected and len(set(expected)) > 1
    assert [row["machine_judgement"] for row in rows] == ["yes" if grade >= 2 else "no" for grade in expected]
    assert [row["judgement"] for row in rows] == ["yes", "", "no"]
    assert "3 of 3 row(s)" in result.stdout and "tokens not reported" in result.stdout


def test_a_callable_returning_a_bool_answers_without_a_grade_and_anything_else_is_a_row_error(cli, tmp_path):
    path = write_judging_file(ROWS, tmp_path / "pool.jsonl")
    config = configure(
        tmp_path,
        words={"kind": "callable", "function": "judge_functions:every_word"},
        unsure={"kind": "callable", "function": "judge_functions:undecided"},
    )

    assert cli("judge", "machine", str(path), "--judge", "words", "--config", config).exit_code == 0
    answered = read_judging_file(path)
    unsure = cli("judge", "machine", str(path), "--judge", "unsure", "--config", config, "--json")

    assert [(row["machine_judgement"], row["machine_grade"]) for row in answered] == [("no", None)] * 3
    assert unsure.exit_code == 3
    assert json.loads(unsure.stdout)["errors_by_cause"] == {
        "judge function judge_functions:undecided returned 'maybe', not a grade 0-3 or a bool": 3
    }
    assert read_judging_file(path) == answered  # the failed judge left the earlier answers as they were


class RerankHandler(ChatHandler):
    """Cohere's rerank shape at /v1/rerank, scored by the test service's MiniLM cosine."""

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        with self.server.lock:
            self.server.calls[self.path] += 1
        scores = [self.server.grader.cosine(body["query"], text) for text in body["documents"]]
        self.answer(200, {"results": [{"index": index, "relevance_score": score} for index, score in enumerate(scores)]})


@pytest.mark.slow
def test_a_rerank_endpoint_judges_yes_from_its_threshold_up_without_a_grade(cli, tmp_path, grader):
    path = write_judging_file(ROWS, tmp_path / "pool.jsonl")
    server = ChatService(grader)
    server.RequestHandlerClass = RerankHandler
    with running(server):
        scorer = {"kind": "http", "url": server.url("/v1/rerank"), "timeout_seconds": 20}
        config = configure(tmp_path, rerank={"kind": "rerank", "threshold": 0.5, "scorer": scorer})
        result = cli("judge", "machine", str(path), "--judge", "rerank", "--config", config, "--json")

    assert result.exit_code == 0, result.output
    cosines = [grader.cosine(row["question"], document_text(row["title"], row["text"])) for row in ROWS]
    rows = read_judging_file(path)
    assert [row["machine_judgement"] for row in rows] == ["yes" if cosine >= 0.5 else "no" for cosine in cosines]
    assert {row["machine_judgement"] for row in rows} == {"yes", "no"}
    assert all(row["machine_grade"] is None and row["judged_by"].startswith("rerank@") for row in rows)
    assert server.calls["/v1/rerank"] == 3
