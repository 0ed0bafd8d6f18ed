"""1. Overhead: `run_question_set` over 10,000 questions versus a bare loop calling the same retriever.

Questions are real sentences and titles from the SciFact corpus, each labelled with its source document.
(a) an in-memory retriever returning precomputed rankings (a dict lookup): the per-question overhead of
    the evaluation, in microseconds;
(b) the lexical (BM25) retriever: the evaluation versus the fastest way a user would call it, i.e.
    `retrieve_batch` in chunks of the same size the runner uses (and, for reference, a loop over
    `retrieve`). Target: at most 1.05 times the bare batch loop.

"Evaluation" is `run_question_set` plus reading the top-1 and top-3 rates off the run; question-set
construction is outside the timed region. A further row times `evaluate_and_record`, which also reads
the baseline and saves the run to a Parquet store in a scratch folder.
"""

from __future__ import annotations

import sys

import _common as c

QUESTIONS = 10_000
TARGET_LEXICAL = 1.05


class PrecomputedRetriever:
    """Answers from a dict: the cheapest possible retriever, so what remains is the harness' cost."""

    identifier = "precomputed"

    def __init__(self, rankings: dict[str, list[str]]):
        self._rankings = rankings

    def retrieve(self, question: str, limit: int) -> list[str]:
        return self._rankings[question]


def main(argv: list[str] | None = None) -> c.Report:
    args = c.parser(__doc__.splitlines()[0]).parse_args(argv)
    repeat = c.repetitions(args, full=7, quick=3)
    report = c.Report("bench_overhead", "1. overhead (10,000 questions)", args.quick)
    c.banner(report.title)

    from retrieval_pipeline.core.retrieval.retriever import BuildContext
    from retrieval_pipeline.core.scoring.scoring import CutOffs
    from retrieval_pipeline.core.services.configuration.settings import EvaluationSettings
    from retrieval_pipeline.core.services.evaluation.asking import BATCH_SIZE
    from retrieval_pipeline.core.services.evaluation.record import evaluate_and_record
    from retrieval_pipeline.core.services.evaluation.runner import run_question_set
    from retrieval_pipeline.core.storage.store import ResultStore
    from retrieval_pipeline.retrievers.lexical.retriever import LexicalKind

    cutoffs = CutOffs()
    limit = cutoffs.fetch_limit
    golden = c.question_set("bench.overhead", c.sampled_questions(QUESTIONS))
    questions = golden.questions
    print(f"  {len(questions)} questions from SciFact sentences; fetch limit {limit}; runner batch size {BATCH_SIZE}")

    with c.temp_dir("overhead-") as scratch:
        corpus = c.collection_dir("scifact") / "corpus.jsonl"
        context = BuildContext(base_dir=scratch, source="bench_overhead", cache_dir=scratch / "cache")
        lexical = LexicalKind.parse("bm25", {"corpus": str(corpus)}, context).build()
        precomputed = PrecomputedRetriever(
            {q.question: ranking for q, ranking in zip(questions, lexical.retrieve_batch([q.question for q in questions], limit))}
        )

        def evaluate(retriever):
            def case():
                run = run_question_set(golden, retriever, cutoffs=cutoffs)
                return run, run.hit_rate(1), run.hit_rate(3)

            return case

        def bare_loop(retriever):
            return lambda: [retriever.retrieve(q.question, limit) for q in questions]

        def bare_batches(retriever):
            def case():
                rankings = []
                for start in range(0, len(questions), BATCH_SIZE):
                    rankings.extend(retriever.retrieve_batch([q.question for q in questions[start : start + BATCH_SIZE]], limit))
                return rankings

            return case

        # (a) in-memory retriever: many repetitions, each is a few tens of milliseconds
        timings = c.measure({"bare": bare_loop(precomputed), "eval": evaluate(precomputed)}, repeat=max(repeat * 3, 9), warmup=2)
        bare, ours = timings["bare"].median, timings["eval"].median
        per_question_us = c.paired_difference(timings["eval"].samples, timings["bare"].samples) / len(questions) * 1e6
        report.add(
            "(a) in-memory retriever, run_question_set + rates",
            c.fmt_seconds(ours),
            f"bare loop {c.fmt_seconds(bare)}",
            c.paired_ratio(timings["eval"].samples, timings["bare"].samples),
            target_text="report µs/question",
            note=f"overhead {per_question_us:.2f} µs per question ({c.fmt_seconds(ours / len(questions))} per question in all)",
        )
        report.details["in_memory"] = {
            "eval_s": timings["eval"].samples,
            "bare_s": timings["bare"].samples,
            "overhead_us_per_question": per_question_us,
        }

        # (b) lexical retriever: the runner batches, so the fair bare loop batches too
        lexical_repeat = max(repeat, 11) if not args.quick else repeat
        timings = c.measure({"bare_batch": bare_batches(lexical), "eval": evaluate(lexical)}, repeat=lexical_repeat, warmup=1)
        bare, ours = timings["bare_batch"].median, timings["eval"].median
        run, top1, top3 = timings["eval"].result
        bare_rankings = timings["bare_batch"].result
        same = all(q.retrieved_document_ids == tuple(dict.fromkeys(r))[:3] for q, r in zip(run.questions, bare_rankings))
        report.add(
            "(b) lexical retriever, run_question_set + rates",
            c.fmt_seconds(ours),
            f"bare retrieve_batch ×{BATCH_SIZE} {c.fmt_seconds(bare)}",
            c.paired_ratio(timings["eval"].samples, timings["bare_batch"].samples),
            target=TARGET_LEXICAL,
            note=f"overhead {c.paired_difference(timings['eval'].samples, timings['bare_batch'].samples) / len(questions) * 1e6:.2f} "
            f"µs per question; best-of ratio {c.best_ratio(timings['eval'].samples, timings['bare_batch'].samples):.3f}×; "
            f"top-1 {top1:.4f}, top-3 {top3:.4f}; "
            f"rankings identical to the bare loop: {same}",
        )
        report.details["lexical_batch"] = {"eval_s": timings["eval"].samples, "bare_s": timings["bare_batch"].samples}

        loop_repeat = 1 if args.quick else 3
        loop = c.measure({"bare_loop": bare_loop(lexical)}, repeat=loop_repeat, warmup=0)["bare_loop"]
        report.add(
            "(b) lexical retriever, for reference: bare loop over retrieve()",
            c.fmt_seconds(loop.median),
            f"bare retrieve_batch {c.fmt_seconds(bare)}",
            loop.median / bare,
            note="one question per call (what a runner without batching would cost); the evaluation batches",
        )
        report.details["lexical_loop_s"] = loop.samples

        # evaluate_and_record: baseline lookup + run + compare + Parquet save, on the in-memory retriever
        counter = iter(range(10**6))

        def record():
            store = ResultStore(str(scratch / f"store-{next(counter)}"))
            return evaluate_and_record(golden, precomputed, store, EvaluationSettings(cutoffs=cutoffs))

        timings = c.measure({"record": record, "eval": evaluate(precomputed)}, repeat=repeat, warmup=1)
        report.add(
            "(a) in-memory retriever, evaluate_and_record (+ Parquet save)",
            c.fmt_seconds(timings["record"].median),
            f"run_question_set {c.fmt_seconds(timings['eval'].median)}",
            c.paired_ratio(timings["record"].samples, timings["eval"].samples),
            note=f"saving and baseline lookup add "
            f"{c.paired_difference(timings['record'].samples, timings['eval'].samples) / len(questions) * 1e6:.2f} µs per question",
        )
    report.save()
    return report


if __name__ == "__main__":
    main(sys.argv[1:])
