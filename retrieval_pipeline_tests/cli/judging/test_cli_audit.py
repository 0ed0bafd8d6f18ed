"""`retrieval-eval audit`: findings printed (and as JSON), exit 0 unless --strict finds an error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from retrieval_pipeline.core.services.configuration.lookup import demo_config_path

CORPUS = str(demo_config_path().parent / "cranfield-corpus.jsonl.gz")
QUESTIONS = [
    {
        "id": "q1",
        "question": "what similarity laws must be obeyed when constructing aeroelastic models",
        "form": "match",
        "expected_document_ids": ["184", "29", "31"],
    },
    {
        "id": "q2",
        "question": "aeroelastic models of heated high speed aircraft",
        "form": "match",
        "expected_document_ids": ["typo-184"],
    },
    {
        "id": "q3",
        "question": "What similarity laws must be obeyed when constructing aeroelastic models?",
        "form": "gap",
        "expected_document_ids": ["12"],
    },
    {"id": "q4", "question": "a question about library catalogues", "form": "gap", "expected_document_ids": []},
]


@pytest.fixture
def audited(tmp_path: Path) -> Path:
    (tmp_path / "set.yaml").write_text(
        yaml.safe_dump({"identifier": "cli.audit", "name": "audit", "questions": QUESTIONS}), encoding="utf-8"
    )
    bm25 = {"kind": "lexical", "corpus": CORPUS, "min_score": 0.0}
    config = {
        "store": "results",
        "question_sets": [{"file": "set.yaml"}],
        "retrievers": {"stemmed": bm25, "plain": {**bm25, "stemmer": None}},
    }
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return tmp_path / "config.yaml"


def test_audit_json_lists_each_finding_with_its_kind_question_and_what_is_wrong(cli, audited):
    for retriever in ("stemmed", "plain"):
        assert cli("run", "cli.audit", retriever, "--config", str(audited)).exit_code == 0

    result = cli("audit", "cli.audit", "--config", str(audited), "--json")

    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    kinds = {(f["kind"], f["question_id"]) for f in payload["findings"]}
    assert {("label_not_in_corpus", "q2"), ("conflicting_labels", "q3"), ("empty_label_mix", None)} <= kinds
    missing = next(f for f in payload["findings"] if f["kind"] == "label_not_in_corpus")
    assert (missing["document_id"], missing["severity"]) == ("typo-184", "error")
    assert payload["retrievers"] == ["stemmed", "plain"] and payload["has_errors"] is True
    assert set(payload["optimistic_rates"]) == {"stemmed", "plain"}


def test_audit_strict_exits_1_on_an_error_finding_and_prints_the_table(cli, audited):
    result = cli("audit", "cli.audit", "--config", str(audited), "--strict")

    assert result.exit_code == 1
    assert "label_not_in_corpus" in result.stdout and "typo-184" in result.stdout
    assert "--strict" in result.stderr


def test_audit_of_an_unknown_retriever_exits_1_listing_the_configured_ones(cli, audited):
    result = cli("audit", "cli.audit", "dense", "--config", str(audited))

    assert result.exit_code == 1
    assert "unknown retriever 'dense'" in result.stderr and "plain, stemmed" in result.stderr


def test_audit_states_the_smallest_drops_the_set_detects_at_80_percent_power_and_the_size_it_needs(cli, audited):
    for _ in range(3):
        assert cli("run", "cli.audit", "stemmed", "--config", str(audited)).exit_code == 0

    text = cli("audit", "cli.audit", "--config", str(audited), env={"COLUMNS": "300"}).stdout
    power = json.loads(cli("audit", "cli.audit", "--config", str(audited), "--json").stdout)["power"]

    assert (power["power"], power["significance"], power["questions"], power["run_pairs"]) == (0.8, 0.05, 4, 2)
    assert power["top1"]["flip_rate"] == 0.0  # BM25 over an unchanged index flips nothing
    assert power["top1"]["detectable_drop"] is None  # four questions: no drop reaches 0.05
    assert (power["top1"]["tolerance"], power["top1"]["questions_needed"]) == (0.1, 77)
    assert (
        "Power 80.0% (McNemar, significance 0.05, flip rate top-1 0.0%, top-3 0.0% over 2 run pairs) on 4 questions: "
        "top-1: no drop detectable on this many questions; 77 questions to detect the 10.0 pp tolerance"
    ) in " ".join(text.split())


@pytest.mark.slow
def test_audit_counts_a_fusion_and_its_own_member_as_one_opinion_on_a_suspect_label(cli, tmp_path):
    mislabelled = {**QUESTIONS[0], "expected_document_ids": ["12"]}  # 184 answers it: every retriever ranks it first
    (tmp_path / "set.yaml").write_text(
        yaml.safe_dump({"identifier": "cli.fused", "name": "fused", "questions": [mislabelled]}), encoding="utf-8"
    )
    bm25 = {"kind": "lexical", "corpus": CORPUS}
    retrievers = {
        "stemmed": bm25,
        "plain": {**bm25, "stemmer": None},
        "fused": {"kind": "fusion", "retrievers": ["stemmed", "plain"]},
    }
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"store": "results", "question_sets": [{"file": "set.yaml"}], "retrievers": retrievers}))
    for retriever in ("stemmed", "fused", "plain"):
        assert cli("run", "cli.fused", retriever, "--config", str(config)).exit_code in (0, 1)

    def suspects(*retrievers: str) -> list[dict]:
        result = cli("audit", "cli.fused", *retrievers, "--config", str(config), "--json")
        assert result.exit_code == 0, result.stderr
        return [f for f in json.loads(result.stdout)["findings"] if f["kind"] == "suspect_label"]

    assert suspects("stemmed", "fused") == []  # the fusion repeats stemmed: one opinion
    [suspect] = suspects("stemmed", "fused", "plain")  # stemmed and plain judge apart
    assert (suspect["candidate_document_id"], suspect["retrievers"]) == ("184", ["stemmed", "fused", "plain"])
