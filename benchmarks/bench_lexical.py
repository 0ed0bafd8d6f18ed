"""3. The lexical retriever versus bare bm25s on SciFact (test split): index + retrieve time, and rates.

Both sides read `corpus.jsonl` from disk, index title + text (English stopwords, Snowball English
stemmer, k1=1.5, b=0.75, method "lucene") and retrieve the same 300 test questions at the depth the
evaluation asks for (12). Ours is `LexicalRetriever.from_config` (which also fingerprints the corpus and
saves the index to a fresh scratch cache) followed by `run_question_set`; the in-process index memo is
cleared before each repetition so every repetition builds. Bare bm25s is what its README shows: json
lines read, `bm25s.tokenize`, `BM25.index`, `BM25.retrieve`. Target: at most 1.1 times bm25s' time,
and top-1 / top-3 rates within 0.005 of bm25s' scored by ir_measures (Success@1, Success@3).
"""

from __future__ import annotations

import sys

import _common as c

TARGET = 1.1
TOLERANCE = 0.005


def bare_bm25s(corpus_path, query_texts: list[str], k: int):
    import json

    import bm25s

    with corpus_path.open(encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle if line.strip()]
    document_ids = [str(r["_id"]) for r in records]
    texts = [f"{r.get('title') or ''} {r.get('text') or ''}" for r in records]
    model = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
    model.index(c.bm25s_tokenize(texts), show_progress=False)
    indices, scores = model.retrieve(c.bm25s_tokenize(query_texts, return_ids=False), k=k, show_progress=False)
    return [[document_ids[i] for i in row] for row in indices.tolist()], scores.tolist()


def main(argv: list[str] | None = None) -> c.Report:
    args = c.parser(__doc__.splitlines()[0]).parse_args(argv)
    repeat = c.repetitions(args, full=11, quick=5)
    report = c.Report("bench_lexical", "3. lexical vs bm25s (SciFact)", args.quick)
    c.banner(report.title)

    import ir_measures
    from ir_measures import Success

    from retrieval_pipeline.core.golden.beir import import_beir
    from retrieval_pipeline.core.retrieval.retriever import BuildContext
    from retrieval_pipeline.core.scoring.scoring import CutOffs
    from retrieval_pipeline.core.services.evaluation.runner import run_question_set
    from retrieval_pipeline.retrievers.lexical.retriever import LexicalKind

    folder = c.collection_dir("scifact")
    corpus = folder / "corpus.jsonl"
    golden = import_beir(folder, identifier="scifact", split="test")
    cutoffs = CutOffs()
    texts = [q.question for q in golden.questions]
    print(f"  {len(texts)} test questions, fetch depth {cutoffs.fetch_limit}")

    with c.temp_dir("lexical-") as scratch:
        counter = iter(range(10**6))

        def ours():
            c.clear_lexical_memo()
            context = BuildContext(base_dir=scratch, source="bench_lexical", cache_dir=scratch / f"cache-{next(counter)}")
            retriever = LexicalKind.parse("bm25", {"corpus": str(corpus)}, context).build()
            run = run_question_set(golden, retriever, cutoffs=cutoffs)
            return run, run.hit_rate(1), run.hit_rate(3)

        def bare():
            return bare_bm25s(corpus, texts, cutoffs.fetch_limit)

        timings = c.measure({"bare": bare, "ours": ours}, repeat=repeat, warmup=1)
        run, top1, top3 = timings["ours"].result
        rankings, scores = timings["bare"].result

        qrels = [ir_measures.Qrel(q.id, doc, 1) for q in golden.questions for doc in q.expected_document_ids]
        bare_run = [
            ir_measures.ScoredDoc(q.id, doc, score)
            for q, docs, row in zip(golden.questions, rankings, scores)
            for doc, score in zip(docs, row)
        ]
        rates = ir_measures.calc_aggregate([Success @ 1, Success @ 3], qrels, bare_run)
        bare1, bare3 = rates[Success @ 1], rates[Success @ 3]

        ours_t, bare_t = timings["ours"].median, timings["bare"].median
        within = abs(top1 - bare1) <= TOLERANCE and abs(top3 - bare3) <= TOLERANCE
        report.add(
            "index + retrieve (300 questions)",
            c.fmt_seconds(ours_t),
            f"bm25s {c.fmt_seconds(bare_t)}",
            c.paired_ratio(timings["ours"].samples, timings["bare"].samples),
            target=TARGET,
            note=f"best-of ratio {c.best_ratio(timings['ours'].samples, timings['bare'].samples):.3f}×; "
            f"rates ours top-1 {top1:.4f} top-3 {top3:.4f} | bm25s+ir_measures Success@1 {bare1:.4f} Success@3 {bare3:.4f} "
            f"| within {TOLERANCE}: {within}",
        )
        report.details.update(
            ours_s=timings["ours"].samples,
            bare_s=timings["bare"].samples,
            rates={"ours": [top1, top3], "bm25s": [bare1, bare3], "within_tolerance": within},
        )
        if not within:
            print("  RATES DIFFER beyond the tolerance", file=sys.stderr)

        # The second process's path: the index is in the cache folder, so building is a load.
        cache = scratch / "cache-reuse"
        context = BuildContext(base_dir=scratch, source="bench_lexical", cache_dir=cache)
        c.clear_lexical_memo()
        LexicalKind.parse("bm25", {"corpus": str(corpus)}, context).build()

        def reuse():
            c.clear_lexical_memo()
            retriever = LexicalKind.parse("bm25", {"corpus": str(corpus)}, context).build()
            return run_question_set(golden, retriever, cutoffs=cutoffs)

        cached = c.measure({"reuse": reuse}, repeat=repeat, warmup=1)["reuse"]
        report.add(
            "index loaded from the cache + retrieve",
            c.fmt_seconds(cached.median),
            f"bm25s (builds) {c.fmt_seconds(bare_t)}",
            cached.median / bare_t,
            note="a later process reuses the saved index instead of rebuilding it",
        )
        report.details["reuse_s"] = cached.samples
    report.save()
    return report


if __name__ == "__main__":
    main(sys.argv[1:])
