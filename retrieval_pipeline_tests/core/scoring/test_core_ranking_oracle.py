"""The ranking-metric oracle: real BM25 runs over real collections, scored by the core and by ir_measures.

The project's lexical retriever (bm25s) answers every query of Cranfield, CISI and SciFact through the
runner with cut-offs 1, 3, 5, 10 (so it is asked for 40 and the collapsed ranking holds 10 documents).
ir_measures (trec_eval through pytrec_eval) scores that same collapsed ranking against the same qrels,
made binary (any positive grade is relevant, as the importer's expected ids are): per query and on
average, our `mrr@10`, `ndcg@10` and `recall@k` must equal its `RR@10`, `nDCG@10` and `R@k`.
"""

from __future__ import annotations

import pytest
from test_core_oracle import read_beir_qrels

from retrieval_pipeline.core.golden.beir import import_beir
from retrieval_pipeline.core.retrieval.retriever import BuildContext
from retrieval_pipeline.core.scoring.scoring import CutOffs
from retrieval_pipeline.core.services.evaluation.runner import RetryPolicy, run_question_set

ir_measures = pytest.importorskip("ir_measures")

CUTOFFS = CutOffs((1, 3, 5, 10))
MEASURES = {
    "mrr@10": ir_measures.RR @ 10,
    "ndcg@10": ir_measures.nDCG @ 10,
    **{f"recall@{k}": ir_measures.R @ k for k in CUTOFFS.values},
}


@pytest.mark.slow
@pytest.mark.parametrize("collection", ["cranfield", "cisi", "scifact"])
def test_ranking_metrics_equal_ir_measures_per_query_and_on_average(shared_data, tmp_path, collection):
    from retrieval_pipeline.retrievers.lexical.retriever import LexicalKind

    folder = shared_data / collection
    golden = import_beir(folder, identifier=f"{collection}.test")
    assert all(q.expected_document_ids for q in golden.questions), "the oracle needs sets without empty labels"
    context = BuildContext(base_dir=folder, source="oracle", cache_dir=tmp_path / "cache", fetch_limit=CUTOFFS.fetch_limit)
    retriever = LexicalKind.parse("bm25", {"corpus": "corpus.jsonl", "stemmer": "english", "stopwords": "en"}, context).build()
    run = run_question_set(golden, retriever, cutoffs=CUTOFFS, retry=RetryPolicy(attempts=1, backoff_seconds=0))
    assert run.complete

    qrels = [ir_measures.Qrel(q.query_id, q.doc_id, int(q.relevance > 0)) for q in read_beir_qrels(folder / "qrels" / "test.tsv")]
    scored = [
        ir_measures.ScoredDoc(q.question_id, doc, float(-rank))
        for q in run.questions
        for rank, doc in enumerate(q.retrieved_document_ids)
    ]
    assert sum(len(q.retrieved_document_ids) == 10 for q in run.questions) > 0.9 * run.question_count

    oracle: dict[str, dict[str, float]] = {}
    for metric in ir_measures.iter_calc(list(MEASURES.values()), qrels, scored):
        oracle.setdefault(metric.query_id, {})[str(metric.measure)] = metric.value
    for question in run.questions:
        ours = run.question_metrics[question.question_id]
        theirs = oracle.get(question.question_id, {})  # a query with nothing retrieved scores 0 everywhere
        for name, measure in MEASURES.items():
            assert ours[name] == pytest.approx(theirs.get(str(measure), 0.0), abs=1e-9), (question.question_id, name)

    aggregate = ir_measures.calc_aggregate(list(MEASURES.values()), qrels, scored)
    means = run.metrics()
    for name, measure in MEASURES.items():
        # ir_measures averages over the queries that retrieved something; ours over every question.
        answered = [q for q in run.questions if q.question_id in oracle]
        assert means[name] * run.question_count / len(answered) == pytest.approx(aggregate[measure], abs=1e-9), name
    assert 0.0 < means["mrr@10"] < 1.0 and means["recall@1"] < means["recall@10"]
