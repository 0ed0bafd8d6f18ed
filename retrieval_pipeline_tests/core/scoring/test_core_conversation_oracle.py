"""The conversation oracle: conversational collections imported with their TREC qrels, asked turn by turn
through the project's BM25, scored by the core and by ir_measures, must agree.

ir_measures reads the same qrels file itself, under the `<conversation>_<turn>` query ids CAsT and iKAT
publish, and scores the run's rankings under those ids. Per turn, top-1 and top-3 hits are its
`Success@1` and `Success@3`, and `mrr@10` and `recall@k` its `RR@10` and `R@k`; averaged over the turns
of one depth, the by-depth rates are its `Success@k` over that depth's queries. Turns the import left
out (at or after a conversation's first turn without a relevant judgement) are not asked, so ir_measures,
which scores an unanswered judged query as a miss, averages over the qrels of the asked turns.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from retrieval_pipeline.core.golden.conversation_imports.cast import imported_cast
from retrieval_pipeline.core.golden.conversations import depth_of
from retrieval_pipeline.core.retrieval.retriever import BuildContext
from retrieval_pipeline.core.scoring.scoring import CutOffs
from retrieval_pipeline.core.services.evaluation.runner import RetryPolicy, run_question_set

ir_measures = pytest.importorskip("ir_measures")

COLLECTIONS = Path(__file__).parents[1] / "golden" / "conversation_imports" / "collections"
CUTOFFS = CutOffs((1, 3, 5, 10))
HITS = {1: ir_measures.Success @ 1, 3: ir_measures.Success @ 3}
RANKING = {"mrr@10": ir_measures.RR @ 10, **{f"recall@{k}": ir_measures.R @ k for k in CUTOFFS.values}}


@pytest.mark.slow
@pytest.mark.parametrize(("topics", "qrels"), [("cast_topics.json", "cast_qrels.txt"), ("ikat_topics.json", "ikat_qrels.txt")])
def test_a_turns_figures_equal_ir_measures_on_the_same_qrels_with_conv_turn_ids(tmp_path, topics, qrels):
    from retrieval_pipeline.retrievers.lexical.retriever import LexicalKind

    golden = imported_cast(
        COLLECTIONS / topics, COLLECTIONS / qrels, identifier="oracle.turns", corpus=COLLECTIONS / "corpus.jsonl"
    ).question_set
    context = BuildContext(base_dir=COLLECTIONS, source="oracle", cache_dir=tmp_path / "cache", fetch_limit=CUTOFFS.fetch_limit)
    retriever = LexicalKind.parse("bm25", {"corpus": "corpus.jsonl", "stemmer": "english", "stopwords": "en"}, context).build()
    run = run_question_set(golden, retriever, cutoffs=CUTOFFS, retry=RetryPolicy(attempts=1, backoff_seconds=0))
    assert run.complete

    judged = list(ir_measures.read_trec_qrels(str(COLLECTIONS / qrels)))
    trec_id = {q.question_id: f"{q.conversation}_{q.turn}" for q in run.questions}
    scored = [
        ir_measures.ScoredDoc(trec_id[q.question_id], doc, float(-rank))
        for q in run.questions
        for rank, doc in enumerate(q.retrieved_document_ids)
    ]
    oracle: dict[str, dict[str, float]] = defaultdict(dict)
    for metric in ir_measures.iter_calc([*HITS.values(), *RANKING.values()], judged, scored):
        oracle[metric.query_id][str(metric.measure)] = metric.value
    assert set(trec_id.values()) <= set(oracle), "every turn asked is judged"

    for q in run.questions:
        ours, theirs = run.question_metrics[q.question_id], oracle[trec_id[q.question_id]]
        assert [q.hit_at(k) for k in HITS] == [theirs[str(m)] == 1.0 for m in HITS.values()], q.question_id
        for name, measure in RANKING.items():
            assert ours[name] == pytest.approx(theirs[str(measure)], abs=1e-9), (q.question_id, name)

    asked = [qrel for qrel in judged if qrel.query_id in set(trec_id.values())]
    aggregate = ir_measures.calc_aggregate(list(HITS.values()), asked, scored)
    by_depth = run.by_turn_depth()
    for k, measure in HITS.items():
        assert run.hit_rate(k) == pytest.approx(aggregate[measure], abs=1e-12)
        for depth, rates in by_depth.items():
            at_depth = [oracle[trec_id[q.question_id]][str(measure)] for q in run.questions if depth_of(q.turn) == depth]
            assert rates.questions == len(at_depth)
            assert rates.hit_rate(k) == pytest.approx(sum(at_depth) / len(at_depth), abs=1e-12), (depth, k)
    assert set(by_depth) == {"1", "2", "3"}
    assert 0.0 < run.hit_rate(1) < 1.0, "a real ranking: neither useless nor perfect on these turns"
