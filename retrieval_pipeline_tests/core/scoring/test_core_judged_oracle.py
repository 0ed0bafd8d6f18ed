"""Judged@k against ir_measures' `Judged@k`: a real BM25 run over a real collection judged both ways.

The fixture (cranfield_judged/README.md) is a Cranfield slice whose qrels hold relevant (score > 0) and
non-relevant (score 0) judgements; the BEIR import keeps the 0s as rejected ids, so the share of judged
documents in each top k must be exactly what ir_measures computes from the same qrels.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_core_oracle import read_beir_qrels

from retrieval_pipeline.core.golden.beir import import_beir
from retrieval_pipeline.core.retrieval.retriever import BuildContext
from retrieval_pipeline.core.scoring.scoring import CutOffs
from retrieval_pipeline.core.services.evaluation.runner import RetryPolicy, run_question_set

ir_measures = pytest.importorskip("ir_measures")

FIXTURE = Path(__file__).parent / "cranfield_judged"
CUTOFFS = CutOffs((1, 3, 5, 10))


def test_judged_at_k_equals_ir_measures_per_query_and_on_average(tmp_path):
    from retrieval_pipeline.retrievers.lexical.retriever import LexicalKind

    golden = import_beir(FIXTURE, identifier="cranfield.judged")
    assert sum(len(q.rejected_document_ids) for q in golden.questions) > 10, "the oracle needs non-relevant judgements"
    context = BuildContext(base_dir=FIXTURE, source="oracle", cache_dir=tmp_path / "cache", fetch_limit=CUTOFFS.fetch_limit)
    retriever = LexicalKind.parse("bm25", {"corpus": "corpus.jsonl", "stemmer": "english", "stopwords": "en"}, context).build()
    run = run_question_set(golden, retriever, cutoffs=CUTOFFS, retry=RetryPolicy(attempts=1, backoff_seconds=0))
    assert run.complete and all(q.retrieved_document_ids for q in run.questions)

    qrels = [ir_measures.Qrel(q.query_id, q.doc_id, int(q.relevance)) for q in read_beir_qrels(FIXTURE / "qrels" / "test.tsv")]
    scored = [
        ir_measures.ScoredDoc(q.question_id, document, float(-rank))
        for q in run.questions
        for rank, document in enumerate(q.retrieved_document_ids)
    ]
    measures = {f"judged@{k}": ir_measures.Judged @ k for k in CUTOFFS.values}
    oracle: dict[str, dict[str, float]] = {}
    for metric in ir_measures.iter_calc(list(measures.values()), qrels, scored):
        oracle.setdefault(metric.query_id, {})[str(metric.measure)] = metric.value
    for question in run.questions:
        ours = run.question_metrics[question.question_id]
        for name, measure in measures.items():
            assert ours[name] == pytest.approx(oracle[question.question_id][str(measure)], abs=1e-12), (
                question.question_id,
                name,
            )

    aggregate = ir_measures.calc_aggregate(list(measures.values()), qrels, scored)
    means = run.metrics()
    for name, measure in measures.items():
        assert means[name] == pytest.approx(aggregate[measure], abs=1e-12), name
    assert 0.0 < means["judged@10"] < means["judged@1"] <= 1.0


def test_each_question_names_the_unjudged_documents_of_its_top_k(tmp_path):
    from retrieval_pipeline.retrievers.lexical.retriever import LexicalKind

    golden = import_beir(FIXTURE, identifier="cranfield.judged")
    context = BuildContext(base_dir=FIXTURE, source="oracle", cache_dir=tmp_path / "cache", fetch_limit=CUTOFFS.fetch_limit)
    retriever = LexicalKind.parse("bm25", {"corpus": "corpus.jsonl"}, context).build()
    run = run_question_set(golden, retriever, cutoffs=CUTOFFS, retry=RetryPolicy(attempts=1, backoff_seconds=0))
    for question, labels in zip(run.questions, golden.questions):
        for k in CUTOFFS.values:
            unjudged = question.unjudged_document_ids(k)
            top = question.retrieved_document_ids[:k]
            assert unjudged == tuple(d for d in top if d not in labels.judged_document_ids)
            assert run.question_metrics[question.question_id][f"judged@{k}"] == pytest.approx(1 - len(unjudged) / len(top))
