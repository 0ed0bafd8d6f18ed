"""The judge contract: a reply read as its first digit 0-3 or refused, grades and yes from `relevant_from`,
fingerprints that ignore secrets, kinds that fail fast, and judging files read with or without the
machine columns."""

from __future__ import annotations

from importlib.metadata import EntryPoint

import pytest
from chat_service import SECRET, TOKEN_VAR
from judge_helpers import openai_judge

from retrieval_pipeline.core.base.errors import DuplicateIdentifierError, InvalidInputError, UnknownIdentifierError
from retrieval_pipeline.core.base.registry import entry_point_registry
from retrieval_pipeline.core.retrieval.judges import Grade, JudgeFault, MachineJudgement, grade_of_reply
from retrieval_pipeline.core.retrieval.retriever import BuildContext
from retrieval_pipeline.core.services.configuration.project import load_config
from retrieval_pipeline.core.services.labels.judging_files import FIELDS, read_judging_file, write_judging_file
from retrieval_pipeline.judges.openai import OpenAIJudge, OpenAIJudgeKind

URL = "http://127.0.0.1:9/v1/chat/completions"


@pytest.mark.parametrize(
    ("reply", "grade"), [("2", 2), ("Grade: 3.", 3), ("##final score: 1", 1), (" 0\n", 0), ("3 - it answers", 3)]
)
def test_a_reply_is_read_as_its_first_digit(reply, grade):
    assert grade_of_reply(reply) == grade


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ("", "holds no grade 0-3"),
        ("I cannot judge this.", "holds no grade 0-3"),
        ("5", "first digit is 5, not a grade 0-3"),
        ("Relevance: 7 of 10, so 2", "first digit is 7"),
    ],
)
def test_a_reply_without_a_first_digit_0_to_3_is_an_error_never_a_guess(reply, problem):
    with pytest.raises(JudgeFault, match=problem):
        grade_of_reply(reply)


def test_yes_is_a_grade_from_relevant_from_up():
    assert [MachineJudgement.graded(grade, 2).relevant for grade in range(4)] == [False, False, True, True]
    assert [MachineJudgement.graded(grade, 3).relevant for grade in range(4)] == [False, False, False, True]
    for wrong in (4, -1, True, "2"):
        with pytest.raises(ValueError, match="a grade is an integer from 0 to 3"):
            Grade(wrong)


def build(params: dict) -> OpenAIJudge:
    return OpenAIJudgeKind.parse("j", params, BuildContext(base_dir=__import__("pathlib").Path("."), source="test.yaml")).build()


def test_the_fingerprint_changes_with_what_changes_answers_and_never_with_the_key(monkeypatch):
    monkeypatch.setenv(TOKEN_VAR, SECRET)
    base = build(openai_judge(URL))
    monkeypatch.setenv(TOKEN_VAR, "another-key-entirely")
    assert build(openai_judge(URL)).fingerprint == base.fingerprint
    assert build(openai_judge(URL + "?api-version=2024-06-01")).fingerprint == base.fingerprint
    changed = [
        openai_judge(URL, model="other"),
        openai_judge(URL, relevant_from=3),
        openai_judge(URL, seed=7),
        openai_judge(URL, prompt="Grade {question} against {document}, 0-3."),
        openai_judge(URL.replace("127.0.0.1:9", "127.0.0.1:10")),
    ]
    assert len({base.fingerprint, *(build(params).fingerprint for params in changed)}) == 6


def write_config(tmp_path, judges: dict):
    import yaml

    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({"judges": judges}), encoding="utf-8")
    return load_config(path)


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ({"kind": "gpt"}, "judges.j: field 'kind': unknown judge kind 'gpt'; available: callable, openai, rerank"),
        ({"kind": "openai", "url": URL, "model": "m", "prompt": "{question} only"}, "judges.j: field 'prompt'"),
        ({"kind": "openai", "url": URL, "model": "m", "relevant_from": 4}, "judges.j: field 'relevant_from'"),
        ({"kind": "openai", "url": URL, "model": "m", "temprature": 1}, "judges.j: field 'temprature'"),
        (
            {"kind": "callable", "function": "no_such_module:judge"},
            "judges.j: field 'function': cannot import no_such_module:judge",
        ),
        ({"kind": "rerank", "threshold": 0.5, "scorer": {"kind": "http"}}, "judges.j: field 'scorer.http.url'"),
        (
            {"kind": "rerank", "threshold": 0.5, "scorer": {"kind": "cross_encoder", "model": "no-such-folder"}},
            "judges.j: field 'scorer.model': no model folder at",
        ),
    ],
)
def test_a_wrong_judge_configuration_is_refused_naming_the_file_the_judge_and_the_field(tmp_path, spec, problem):
    config = write_config(tmp_path, {"j": spec})

    with pytest.raises(InvalidInputError) as refused:
        config.judge("j")

    assert problem in str(refused.value) and str(tmp_path / "config.yaml") in str(refused.value)


def test_an_unset_secret_variable_is_refused_naming_the_header(tmp_path, monkeypatch):
    monkeypatch.delenv(TOKEN_VAR, raising=False)
    config = write_config(tmp_path, {"j": openai_judge(URL)})

    with pytest.raises(
        InvalidInputError, match=f"judges.j: field 'headers.Authorization': the environment variable {TOKEN_VAR} is not set"
    ):
        config.judge("j")


def test_an_unknown_judge_name_lists_the_configured_ones(tmp_path):
    config = write_config(tmp_path, {"strict": {"kind": "callable", "function": "judge_functions:every_word"}})

    with pytest.raises(UnknownIdentifierError, match="unknown judge 'lenient'; available: strict"):
        config.judge("lenient")


def test_two_distributions_claiming_one_judge_kind_fail_fast_naming_both():
    claims = (
        EntryPoint("openai", "team_a.judges:Judge", "retrieval_pipeline.judges"),
        EntryPoint("openai", "team_b.judges:Judge", "retrieval_pipeline.judges"),
    )
    with pytest.raises(
        DuplicateIdentifierError, match="duplicate judge kind 'openai': given by team_a.judges:Judge .* and by team_b"
    ):
        entry_point_registry("judge kind", claims)


def test_a_file_without_machine_columns_is_written_as_pool_writes_it_and_one_with_them_round_trips(tmp_path):
    row = {"question_id": "q1", "document_id": "d1", "judgement": "no", "question": "why", "title": "t", "text": "x"}
    plain = write_judging_file([row], tmp_path / "plain.csv")
    assert plain.read_text(encoding="utf-8").splitlines()[0] == ",".join(FIELDS)

    judged = write_judging_file(
        [{**row, "machine_judgement": "yes", "machine_grade": 3, "judged_by": "j@abc"}], tmp_path / "j.csv"
    )
    assert judged.read_text(encoding="utf-8").splitlines()[0].endswith(",machine_judgement,machine_grade,judged_by")
    (read,) = read_judging_file(judged)
    assert (read["judgement"], read["machine_judgement"], read["machine_grade"], read["judged_by"]) == ("no", "yes", 3, "j@abc")


@pytest.mark.parametrize(("column", "value"), [("machine_grade", "7"), ("machine_judgement", "maybe")])
def test_a_machine_column_that_is_not_an_answer_is_refused_naming_the_line_and_the_field(tmp_path, column, value):
    row = {
        "question_id": "q1",
        "document_id": "d1",
        "judgement": "",
        "machine_judgement": "",
        "machine_grade": "",
        "judged_by": "",
    }
    path = write_judging_file([row, {**row, column: value}], tmp_path / "pool.csv")

    with pytest.raises(InvalidInputError, match=f"pool.csv:3: field '{column}'"):
        read_judging_file(path)
