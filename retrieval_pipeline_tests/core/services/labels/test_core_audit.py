"""The label audit on real data: the shipped Cranfield demo corpus, real BM25 retrievers, a real store."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from retrieval_pipeline.core.golden.question_files import load_question_set_file
from retrieval_pipeline.core.services.configuration.lookup import demo_config_path
from retrieval_pipeline.core.services.configuration.project import load_config
from retrieval_pipeline.core.services.configuration.settings import EvaluationSettings
from retrieval_pipeline.core.services.evaluation.record import evaluate_and_record
from retrieval_pipeline.core.services.labels.audit import audit_set, missing_labels
from retrieval_pipeline.core.storage.store import ResultStore

DEMO = demo_config_path().parent
BM25 = {"kind": "lexical", "corpus": str(DEMO / "cranfield-corpus.jsonl.gz"), "stopwords": "en", "min_score": 0.0}


class CranfieldProject:
    """The first 40 demo questions against stemmed and unstemmed BM25, with labels a test may rewrite."""

    def __init__(self, root: Path):
        self.root = root
        demo = load_question_set_file(DEMO / "demo.cranfield.yaml")
        self.questions = [q.model_dump(mode="json", exclude_none=True) for q in demo.questions[:40]]
        self.store = ResultStore(str(root / "results"))
        self.write_set()
        config = {
            "store": "results",
            "question_sets": [{"file": "set.yaml"}],
            "retrievers": {"stemmed": {**BM25, "stemmer": "english"}, "plain": {**BM25, "stemmer": None}},
        }
        (root / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")

    def write_set(self) -> None:
        document = {"identifier": "audit.cranfield", "name": "Cranfield audit test", "questions": self.questions}
        (self.root / "set.yaml").write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")

    def relabel(self, question_id: str, *document_ids: str) -> None:
        next(q for q in self.questions if q["id"] == question_id)["expected_document_ids"] = list(document_ids)
        self.write_set()

    def evaluate(self):
        config = load_config(self.root / "config.yaml")
        question_set = config.question_set("audit.cranfield")
        runs = [
            evaluate_and_record(question_set, config.retriever(name), self.store, EvaluationSettings()).run
            for name in ("stemmed", "plain")
        ]
        return config, runs


@pytest.fixture
def cranfield(tmp_path: Path) -> CranfieldProject:
    return CranfieldProject(tmp_path)


def test_a_label_moved_to_a_document_both_bm25_rank_outside_their_top3_is_suspect_with_their_first_document(cranfield):
    _, (stemmed, plain) = cranfield.evaluate()
    agreed = next(
        (s, p)
        for s, p in zip(stemmed.questions, plain.questions)
        if s.hit_at(1) and p.hit_at(1) and s.retrieved_document_ids[0] == p.retrieved_document_ids[0]
    )
    question_id, first = agreed[0].question_id, agreed[0].retrieved_document_ids[0]
    elsewhere = next(
        str(d) for d in range(1400, 0, -1) if str(d) not in agreed[0].retrieved_document_ids + agreed[1].retrieved_document_ids
    )
    cranfield.relabel(question_id, elsewhere)
    config, _ = cranfield.evaluate()

    report = audit_set(config, cranfield.store, "audit.cranfield")

    suspects = {f.question_id: f.as_dict() for f in report.of_kind("suspect_label")}
    assert suspects[question_id]["candidate_document_id"] == first
    assert suspects[question_id]["retrievers"] == ["stemmed", "plain"]
    assert report.retrievers == ("stemmed", "plain") and not report.has_errors
    rates = report.optimistic_rates["stemmed"]
    assert rates["optimistic_top1_hit_rate"] >= rates["top1_hit_rate"] + 1 / 40


def test_a_label_naming_a_document_outside_the_corpus_is_label_not_in_corpus(cranfield):
    cranfield.relabel("2", "12", "no-such-document")
    config = load_config(cranfield.root / "config.yaml")

    corpora, findings = missing_labels(config, "audit.cranfield")

    assert corpora == ("stemmed", "plain")
    assert [(f.question_id, f.as_dict()["document_id"]) for f in findings] == [("2", "no-such-document")]
    assert audit_set(config, cranfield.store, "audit.cranfield").has_errors


def test_a_set_entry_may_name_its_corpus_for_sets_only_evaluated_against_remote_services(tmp_path):
    (tmp_path / "set.yaml").write_text(
        yaml.safe_dump(
            {
                "identifier": "remote.set",
                "name": "remote",
                "questions": [{"id": "q1", "question": "lift", "form": "match", "expected_document_ids": ["1", "typo-1"]}],
            }
        ),
        encoding="utf-8",
    )
    (tmp_path / "config.yaml").write_text(
        yaml.safe_dump(
            {
                "question_sets": [{"file": "set.yaml", "corpus": str(DEMO / "cranfield-corpus.jsonl.gz")}],
            }
        ),
        encoding="utf-8",
    )

    corpora, findings = missing_labels(load_config(tmp_path / "config.yaml"), "remote.set")

    assert len(corpora) == 1 and corpora[0].startswith("set corpus")
    assert [f.as_dict()["document_id"] for f in findings] == ["typo-1"]
