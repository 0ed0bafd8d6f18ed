"""The oracle: a real ranking over a real collection, scored by the core and by ir_measures, must agree.

The ranking is a plain TF-IDF computed here in a few lines, so the test depends on no retriever of the
project. ir_measures (an independent, widely used implementation of `Success@k`) scores the same
ranking from the same qrels file; on labelled questions its Success@1 and Success@3 are the top-1 and
top-3 hit rates.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter, defaultdict

import pytest

from retrieval_pipeline.core.golden.beir import import_beir
from retrieval_pipeline.core.services.evaluation.runner import RetryPolicy, run_question_set

ir_measures = pytest.importorskip("ir_measures")

DEPTH = 12
TOKEN = re.compile(r"[a-z0-9]+")


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text.lower())


class TfIdfRanking:
    """Rank every document of a BEIR corpus by summed TF-IDF of the query terms; ties go to corpus order."""

    def __init__(self, corpus_path):
        self.doc_ids: list[str] = []
        postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        with open(corpus_path, encoding="utf-8") as handle:
            for position, line in enumerate(handle):
                record = json.loads(line)
                self.doc_ids.append(str(record["_id"]))
                for term, count in Counter(tokens(f"{record.get('title', '')} {record.get('text', '')}")).items():
                    postings[term].append((position, count))
        n = len(self.doc_ids)
        self.postings = {term: (math.log(n / len(docs)), docs) for term, docs in postings.items()}

    def rank(self, text: str, depth: int = DEPTH) -> list[tuple[str, float]]:
        scores: dict[int, float] = defaultdict(float)
        for term in set(tokens(text)):
            idf, docs = self.postings.get(term, (0.0, ()))
            for position, count in docs:
                scores[position] += (1 + math.log(count)) * idf
        ordered = sorted(scores, key=lambda position: (-scores[position], position))[:depth]
        # Strictly decreasing scores (a rank-based epsilon breaks ties), so ir_measures cannot reorder.
        return [(self.doc_ids[p], scores[p] - rank * 1e-9) for rank, p in enumerate(ordered)]


def read_beir_qrels(path):
    """The BEIR qrels file (query-id, corpus-id, score; a header line) as ir_measures judgements, read here
    independently of the core's own reader."""
    with open(path, encoding="utf-8") as handle:
        rows = [line.rstrip("\n").split("\t") for line in handle if line.strip()]
    return [ir_measures.Qrel(qid, doc, int(float(score))) for qid, doc, score in rows if qid != "query-id"]


class RankingRetriever:
    """Serves the precomputed TF-IDF ranking through the retriever contract."""

    identifier = "tfidf.oracle"

    def __init__(self, rankings_by_text: dict[str, list[str]]):
        self.rankings_by_text = rankings_by_text

    def retrieve(self, question: str, limit: int) -> list[str]:
        return self.rankings_by_text[question][:limit]


@pytest.mark.slow
@pytest.mark.parametrize("collection", ["cranfield", "cisi"])
def test_core_hit_rates_equal_ir_measures_success_at_1_and_3(shared_data, collection):
    folder = shared_data / collection
    golden = import_beir(folder, identifier=f"{collection}.test")
    ranking = TfIdfRanking(folder / "corpus.jsonl")
    ranked = {q.id: ranking.rank(q.question) for q in golden.questions}
    assert all(len(docs) == DEPTH for docs in ranked.values()), "every query must get a full ranking"
    for docs in ranked.values():
        scores = [score for _, score in docs]
        assert scores == sorted(scores, reverse=True) and len(set(scores)) == len(scores)

    retriever = RankingRetriever({q.question: [doc for doc, _ in ranked[q.id]] for q in golden.questions})
    run = run_question_set(golden, retriever, retry=RetryPolicy(attempts=1, backoff_seconds=0))
    assert run.complete

    qrels = read_beir_qrels(folder / "qrels" / "test.tsv")
    run_rows = [ir_measures.ScoredDoc(qid, doc, score) for qid, docs in ranked.items() for doc, score in docs]
    oracle = ir_measures.calc_aggregate([ir_measures.Success @ 1, ir_measures.Success @ 3], qrels, run_rows)

    labelled = [q for q in run.questions if q.expected_document_ids]
    assert len(labelled) == len(golden.questions)
    top1 = sum(bool(q.hit_at(1)) for q in labelled) / len(labelled)
    top3 = sum(bool(q.hit_at(3)) for q in labelled) / len(labelled)
    assert top1 == pytest.approx(oracle[ir_measures.Success @ 1], abs=1e-12)
    assert top3 == pytest.approx(oracle[ir_measures.Success @ 3], abs=1e-12)
    assert run.hit_rate(1) == pytest.approx(top1, abs=1e-12)
    assert run.hit_rate(3) == pytest.approx(top3, abs=1e-12)

    per_query = defaultdict(dict)
    for metric in ir_measures.iter_calc([ir_measures.Success @ 1, ir_measures.Success @ 3], qrels, run_rows):
        per_query[metric.query_id][str(metric.measure)] = metric.value
    for q in labelled:
        assert (q.hit_at(1), q.hit_at(3)) == (
            per_query[q.question_id]["Success@1"] == 1.0,
            per_query[q.question_id]["Success@3"] == 1.0,
        ), q.question_id

    # A sanity bound: a real ranking is neither useless nor perfect on these collections.
    assert 0.1 < run.hit_rate(1) < run.hit_rate(3) < 1.0
