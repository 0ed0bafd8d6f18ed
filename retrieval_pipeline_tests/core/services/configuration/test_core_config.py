"""The project configuration file: relative paths follow the file, and every error names the file and the key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.scoring.checks.tolerances import Tolerances
from retrieval_pipeline.core.scoring.scoring import CutOffs
from retrieval_pipeline.core.services.configuration.project import load_config
from retrieval_pipeline.core.services.configuration.schema import DEFAULT_RETENTION_DAYS


def write_config(folder: Path, data, name: str = "retrieval-eval.yaml") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def write_set(path: Path, identifier: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "identifier": identifier,
        "name": identifier,
        "questions": [{"id": "q1", "question": "What is a wing?", "form": "match", "expected_document_ids": ["1"]}],
    }
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def write_beir(folder: Path) -> Path:
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text('{"_id": "1", "title": "Wings", "text": "a wing lifts"}\n', encoding="utf-8")
    (folder / "queries.jsonl").write_text('{"_id": "7", "text": "wing lift"}\n', encoding="utf-8")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n7\t1\t1\n", encoding="utf-8")
    return folder


def failure(path: Path) -> InvalidInputError:
    with pytest.raises(InvalidInputError) as caught:
        load_config(path)
    assert str(path) in str(caught.value), "the error must name the configuration file"
    return caught.value


def test_defaults_apply_when_the_file_is_empty(tmp_path):
    config = load_config(write_config(tmp_path, ""))
    assert config.cutoffs == CutOffs()
    assert config.tolerances == Tolerances(max_top1_drop=0.1, max_top3_drop=0.1)
    assert config.retention_days == DEFAULT_RETENTION_DAYS == 30
    assert config.store_uri == str(tmp_path / "results")
    assert config.retriever_identifiers == []


def test_relative_paths_resolve_against_the_configuration_folder(tmp_path, monkeypatch):
    project = tmp_path / "project"
    write_set(project / "sets" / "local.json", "local.set")
    write_beir(project / "data" / "tiny")
    path = write_config(
        project,
        {
            "store": "history/results",
            "cache_dir": "cache",
            "question_sets": [{"file": "sets/local.json"}, {"beir": "data/tiny", "identifier": "tiny.test"}],
        },
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    config = load_config(Path("..") / "project" / "retrieval-eval.yaml")
    assert Path(config.store_uri) == project.resolve() / "history" / "results"
    assert config.cache_dir == project.resolve() / "cache"
    sets = config.question_sets
    assert "local.set" in sets and "tiny.test" in sets
    assert sets.source_of("local.set") == str(project.resolve() / "sets" / "local.json")
    assert sets["tiny.test"].question("7").expected_document_ids == ("1",)
    assert path.exists()


def test_absolute_paths_and_store_uris_are_kept(tmp_path):
    config = load_config(write_config(tmp_path, {"store": "s3://team-bucket/retrieval", "cache_dir": "/var/cache/re"}))
    assert config.store_uri == "s3://team-bucket/retrieval"
    assert config.cache_dir == Path("/var/cache/re")


def test_configured_tolerances_cutoffs_and_retention_are_used(tmp_path):
    config = load_config(
        write_config(
            tmp_path,
            {"tolerances": {"max_top1_drop": 0.05, "max_top3_drop": 0.2}, "cutoffs": [1, 3, 5, 10], "retention_days": 90},
        )
    )
    assert config.tolerances == Tolerances(max_top1_drop=0.05, max_top3_drop=0.2)
    assert config.cutoffs.values == (1, 3, 5, 10) and config.cutoffs.fetch_limit == 40
    assert config.retention_days == 90


def test_retrievers_keep_their_kind_and_parameters(tmp_path):
    config = load_config(
        write_config(tmp_path, {"retrievers": {"bm25_small": {"kind": "lexical", "k1": 1.2, "corpus": "c.jsonl"}}})
    )
    spec = config.retriever_specs["bm25_small"]
    assert spec.kind == "lexical"
    assert spec.params == {"k1": 1.2, "corpus": "c.jsonl"}
    assert config.retriever_identifiers == ["bm25_small"]


# --- every error names the file and the key ---------------------------------------------------


def test_an_unknown_top_level_key_is_named(tmp_path):
    error = failure(write_config(tmp_path, {"stroe": "results"}))
    assert error.field == "stroe"
    assert "not a known key" in str(error)


@pytest.mark.parametrize("key", ["Store", "Retrievers", "question_set"])
def test_an_unknown_key_is_named_whatever_its_spelling(tmp_path, key):
    error = failure(write_config(tmp_path, {key: "x"}))
    assert error.field == key, f"the error must name the key {key!r}: {error}"


def test_a_bad_retriever_identifier_is_named(tmp_path):
    error = failure(write_config(tmp_path, {"retrievers": {"BM25 Large": {"kind": "lexical"}}}))
    assert "retrievers" in str(error) and "BM25 Large" in str(error)


@pytest.mark.parametrize("field", ["max_top1_drop", "max_top3_drop", "max_p95_latency_increase_ms"])
def test_a_negative_tolerance_is_named(tmp_path, field):
    error = failure(write_config(tmp_path, {"tolerances": {field: -0.1}}))
    assert (error.key, error.field) == ("tolerances", field)
    assert f"tolerances: field '{field}'" in str(error)


def test_an_unknown_tolerance_is_named(tmp_path):
    error = failure(write_config(tmp_path, {"tolerances": {"max_top5_drop": 0.1}}))
    assert (error.key, error.field) == ("tolerances", "max_top5_drop")


@pytest.mark.parametrize(
    "cutoffs", [[3, 1], [1, 5], [3, 5], [1, 3, 3], [0, 1, 3]], ids=["unsorted", "no-3", "no-1", "repeat", "zero"]
)
def test_bad_cutoffs_are_named(tmp_path, cutoffs):
    error = failure(write_config(tmp_path, {"cutoffs": cutoffs}))
    assert "cut-offs" in str(error)
    assert error.field == "cutoffs", f"the error must name the key 'cutoffs': {error}"


def test_a_bad_overfetch_multiplier_is_named(tmp_path):
    error = failure(write_config(tmp_path, {"overfetch_multiplier": 0}))
    assert error.field == "overfetch_multiplier", f"the error must name the key 'overfetch_multiplier': {error}"


def test_a_non_positive_retention_is_named(tmp_path):
    assert failure(write_config(tmp_path, {"retention_days": 0})).field == "retention_days"


def test_a_retriever_without_a_kind_is_named(tmp_path):
    error = failure(write_config(tmp_path, {"retrievers": {"bm25": {"k1": 1.2}}}))
    assert (error.key, error.field) == ("retrievers.bm25", "kind")
    assert "required" in str(error)


def test_an_unknown_retriever_kind_lists_the_known_kinds(tmp_path):
    path = write_config(tmp_path, {"retrievers": {"mystery": {"kind": "telepathy"}}})
    config = load_config(path)
    with pytest.raises(InvalidInputError) as caught:
        config.retriever("mystery")
    message = str(caught.value)
    assert str(path.resolve()) in message
    assert (caught.value.key, caught.value.field) == ("retrievers.mystery", "kind")
    assert "telepathy" in message and "lexical" in message


def test_an_unknown_question_set_entry_key_is_named(tmp_path):
    error = failure(write_config(tmp_path, {"question_sets": [{"file": "a.yaml", "colour": "red"}]}))
    assert (error.key, error.field) == ("question_sets.0", "colour")


def test_a_beir_entry_with_a_bad_identifier_names_the_identifier(tmp_path):
    error = failure(write_config(tmp_path, {"question_sets": [{"beir": "data/tiny", "identifier": "Tiny Set"}]}))
    assert error.key == "question_sets.0"
    assert error.field == "identifier", f"the error must name the 'identifier' field of the BEIR entry: {error}"


def test_a_beir_entry_without_an_identifier_names_it(tmp_path):
    error = failure(write_config(tmp_path, {"question_sets": [{"beir": "data/tiny"}]}))
    assert error.field == "identifier", f"the error must name the missing 'identifier': {error}"


def write_graded_beir(folder: Path) -> Path:
    """Query 7: graded 2 and 1; query 8: graded 1 only; query 9: graded 0 only."""
    write_beir(folder)
    corpus = [{"_id": "2", "title": "Flaps", "text": "flaps add lift"}, {"_id": "3", "title": "Drag", "text": "drag"}]
    with (folder / "corpus.jsonl").open("a", encoding="utf-8") as handle:
        handle.writelines(json.dumps(document) + "\n" for document in corpus)
    with (folder / "queries.jsonl").open("a", encoding="utf-8") as handle:
        handle.write('{"_id": "8", "text": "flap lift"}\n{"_id": "9", "text": "drag"}\n')
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n7\t1\t2\n7\t2\t1\n8\t2\t1\n8\t3\t0\n9\t3\t0\n", encoding="utf-8"
    )
    return folder


def test_a_beir_entry_with_min_relevance_counts_only_grades_from_it_and_names_the_queries_left_out(tmp_path):
    write_graded_beir(tmp_path / "data" / "graded")
    entries = [{"beir": "data/graded", "identifier": "graded.test", "min_relevance": 2}]
    config = load_config(write_config(tmp_path, {"question_sets": entries}))
    default = load_config(write_config(tmp_path, {"question_sets": [{**entries[0], "min_relevance": None}]}, "default.yaml"))

    [question] = config.question_set("graded.test").questions
    assert (question.id, question.expected_document_ids, question.rejected_document_ids) == ("7", ("1",), ("2",))
    assert config.set_left_out("graded.test") == ("8", "9")
    by_default = {q.id: (q.expected_document_ids, q.rejected_document_ids) for q in default.question_set("graded.test").questions}
    assert by_default == {"7": (("1", "2"), ()), "8": (("2",), ("3",))}
    assert default.set_left_out("graded.test") == ("9",)


def test_a_set_not_read_from_a_beir_folder_has_nothing_left_out(tmp_path):
    write_set(tmp_path / "local.json", "local.set")

    config = load_config(write_config(tmp_path, {"question_sets": [{"file": "local.json"}]}))

    assert config.set_left_out("local.set") is None


@pytest.mark.parametrize("grade", [True, "high", float("inf")], ids=["boolean", "word", "infinite"])
def test_a_beir_entry_with_a_min_relevance_that_is_not_a_finite_number_names_the_field(tmp_path, grade):
    entry = {"beir": "data/tiny", "identifier": "tiny.test", "min_relevance": grade}

    error = failure(write_config(tmp_path, {"question_sets": [entry]}))

    assert (error.key, error.field) == ("question_sets.0", "min_relevance")


def test_invalid_yaml_is_reported_with_the_file(tmp_path):
    error = failure(write_config(tmp_path, "store: [unclosed\n"))
    assert "invalid YAML" in str(error)


def test_a_configuration_that_is_not_a_mapping_is_refused(tmp_path):
    assert "mapping" in str(failure(write_config(tmp_path, "- store\n- results\n")))


def test_a_missing_configuration_file_is_reported_with_its_path(tmp_path):
    error = failure(tmp_path / "absent.yaml")
    assert "cannot read" in str(error)


def test_a_bad_set_file_named_in_the_configuration_fails_naming_that_file(tmp_path):
    bad = tmp_path / "sets" / "bad.yaml"
    bad.parent.mkdir()
    bad.write_text(
        "identifier: bad\nname: Bad\nquestions:\n  - id: q1\n    question: x\n    form: fuzzy\n    expected_document_ids: []\n"
    )
    config = load_config(write_config(tmp_path, {"question_sets": [{"file": "sets/bad.yaml"}]}))
    with pytest.raises(InvalidInputError) as caught:
        _ = config.question_sets
    assert str(bad.resolve()) in str(caught.value)
    assert "question 'q1'" in str(caught.value) and "form" in str(caught.value)


def test_the_baseline_policy_and_minimum_of_compared_questions_are_read(tmp_path):
    from retrieval_pipeline.core.services.evaluation.baselines import BaselinePolicy

    default = load_config(write_config(tmp_path / "default", {}))
    assert default.baseline_policy is BaselinePolicy.PREVIOUS and default.tolerances.min_compared_questions == 1
    config = load_config(write_config(tmp_path, {"baseline_policy": "accepted", "tolerances": {"min_compared_questions": 20}}))
    assert config.baseline_policy is BaselinePolicy.ACCEPTED
    assert config.tolerances.min_compared_questions == 20


@pytest.mark.parametrize(
    ("data", "named"),
    [
        ({"baseline_policy": "latest"}, "field 'baseline_policy': 'latest' is not one of 'previous' or 'accepted'"),
        ({"tolerances": {"min_compared_questions": 0}}, "tolerances: field 'min_compared_questions'"),
        ({"tolerances": {"min_compared_questions": 2.5}}, "tolerances: field 'min_compared_questions'"),
    ],
)
def test_a_bad_baseline_policy_or_minimum_is_named(tmp_path, data, named):
    with pytest.raises(InvalidInputError, match=named):
        load_config(write_config(tmp_path, data))
