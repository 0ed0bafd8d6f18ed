"""A misspelt key is named itself, with the key it probably stands for, at every level of a configuration
and of a set file; a configuration's retrievers can be checked without building any index; errors quote
at most a couple of hundred characters of a value, however large."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.golden.question_files import load_question_set_file
from retrieval_pipeline.core.services.configuration.project import load_config

CORPUS_LINE = '{"_id": "d1", "title": "Wings", "text": "a wing lifts"}\n'
QUESTION = {"id": "q1", "question": "wing lift", "form": "match", "expected_document_ids": ["d1"]}


def refused(path: Path, load=load_config) -> InvalidInputError:
    with pytest.raises(InvalidInputError) as caught:
        load(path)
    return caught.value


def write(path: Path, data) -> Path:
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("data", "typo", "meant"),
    [
        ({"retrievrs": {}}, "retrievrs", "retrievers"),
        ({"tolerances": {"max_top1_dorp": 0.1}}, "max_top1_dorp", "max_top1_drop"),
        ({"dagster": {"nightly_corn": "0 3 * * *"}}, "nightly_corn", "nightly_cron"),
        ({"question_sets": [{"fiel": "set.yaml"}]}, "fiel", "file"),
        ({"question_sets": [{"beir": "b", "identifier": "b.x", "splt": "dev"}]}, "splt", "split"),
        ({"retrievers": {"bm25": {"kidn": "lexical", "corpus": "c.jsonl"}}}, "kidn", "kind"),
    ],
    ids=["top-level", "tolerances", "dagster", "set-file-entry", "beir-entry", "retriever-kind"],
)
def test_a_misspelt_configuration_key_is_named_with_the_key_it_stands_for(tmp_path, data, typo, meant):
    message = str(refused(write(tmp_path / "config.yaml", data)))

    assert f"'{typo}'" in message and message.endswith(f"did you mean '{meant}'?")


def test_an_unknown_key_like_no_known_one_lists_the_known_keys(tmp_path):
    message = str(refused(write(tmp_path / "config.yaml", {"tolerances": {"zzz": 1}})))

    assert message.endswith(
        "known: max_mrr_drop, max_ndcg_drop, max_p95_latency_increase_ms, max_recall_drop, max_top1_drop, max_top3_drop, "
        "max_unjudged_share, min_compared_questions, min_significance, weighted"
    )


@pytest.mark.parametrize(
    ("data", "typo", "meant"),
    [
        ({"identifier": "s.x", "name": "X", "questoins": [QUESTION]}, "questoins", "questions"),
        ({"identifier": "s.x", "nmae": "X", "questions": [QUESTION]}, "nmae", "name"),
        ({"identifier": "s.x", "name": "X", "questions": [{**QUESTION, "hard_clas": "normal"}]}, "hard_clas", "hard_class"),
    ],
    ids=["questions", "name", "question-field"],
)
def test_a_misspelt_set_file_key_is_named_rather_than_the_key_it_leaves_missing(tmp_path, data, typo, meant):
    path = tmp_path / "set.json"
    path.write_text(json.dumps(data), encoding="utf-8")

    error = refused(path, load_question_set_file)

    assert error.field == typo and str(error).endswith(f"is not a known field; did you mean '{meant}'?")


def test_a_misspelt_retriever_parameter_is_named_when_the_retrievers_are_checked(tmp_path):
    (tmp_path / "c.jsonl").write_text(CORPUS_LINE, encoding="utf-8")
    config = load_config(write(tmp_path / "config.yaml", {"retrievers": {"bm25": {"kind": "lexical", "corpsu": "c.jsonl"}}}))

    with pytest.raises(InvalidInputError) as caught:
        config.check_retrievers()

    assert (caught.value.key, caught.value.field) == ("retrievers.bm25", "corpsu")
    assert str(caught.value).endswith("did you mean 'corpus'?")


@pytest.mark.parametrize(
    ("spec", "field", "named"),
    [
        ({"kind": "lexcal", "corpus": "c.jsonl"}, "kind", "'lexcal'"),
        ({"kind": "lexical", "corpus": "c.jsonl", "b": 2}, "b", "less than or equal to 1"),
        ({"kind": "lexical", "corpus": "gone.jsonl"}, "corpus", "gone.jsonl does not exist"),
        ({"kind": "fusion", "retrievers": ["bm25", "dense"]}, "retrievers", "unknown retriever 'dense'"),
        ({"kind": "run_file", "path": "c.jsonl", "question_set": "s.x", "queries": "q.jsonl"}, "queries", "not both"),
        ({"kind": "run_file", "path": "gone.trec"}, "path", "cannot read the run file"),
    ],
    ids=["unknown-kind", "bad-parameter", "missing-corpus", "fusion-member", "run-file-conflict", "missing-run-file"],
)
def test_checking_the_retrievers_refuses_what_building_them_would(tmp_path, spec, field, named):
    (tmp_path / "c.jsonl").write_text(CORPUS_LINE, encoding="utf-8")
    config = load_config(write(tmp_path / "config.yaml", {"retrievers": {"bm25": spec}}))

    with pytest.raises(InvalidInputError) as caught:
        config.check_retrievers()

    assert (caught.value.key, caught.value.field) == ("retrievers.bm25", field)
    assert named in str(caught.value)


def test_checking_valid_retrievers_builds_no_index(tmp_path):
    (tmp_path / "c.jsonl").write_text(CORPUS_LINE, encoding="utf-8")
    retrievers = {"bm25": {"kind": "lexical", "corpus": "c.jsonl"}, "other": {"kind": "lexical", "corpus": "c.jsonl", "k1": 1.2}}
    retrievers["both"] = {"kind": "fusion", "retrievers": ["bm25", "other"]}
    config = load_config(write(tmp_path / "config.yaml", {"cache_dir": "cache", "retrievers": retrievers}))

    config.check_retrievers()

    assert not (tmp_path / "cache").exists()


def test_a_huge_value_is_quoted_clipped_in_the_error(tmp_path):
    path = tmp_path / "set.json"
    huge = "x" * 1_000_000
    path.write_text(json.dumps({"identifier": "s.x", "name": "X", "questions": [{**QUESTION, "form": huge}]}), encoding="utf-8")

    message = str(refused(path, load_question_set_file))

    assert len(message) < 400 and "(1000002 characters)" in message and "'q1'" in message
