"""Traffic-weighted figures: what weighing a run by a query log's traffic costs beside the plain figures.

Runs alone (`python benchmarks/bench_traffic_weighting.py [--quick]`), on synthetic runs (cut-offs 1, 3,
5, 10; every third question misses) weighted by Zipf-distributed traffic, a fifth of the questions
without any:

- every declared figure weighted (`traffic.weighted_figures`: hit rates, MRR, nDCG, Recall, Judged, the
  Kish n_eff Wilson intervals, the zero-traffic ids) against the plain figures (`RunResult.metrics` and
  every hit rate with its interval), each side on freshly built columns so neither reuses the other's
  per-question scores;
  on 20,000 questions;
- the regression check gating the weighted rates (`tolerances.weighted`, with the traffic) against the
  plain check, on the same pair of 10,000-question runs, 500 questions differing (as bench_paired_tests).
"""

from __future__ import annotations

import _common as c

QUESTIONS = 20_000
CHECKED, DIFFERING = 10_000, 500


def _table(questions: int, differing: int = 0):
    """The question columns' Arrow table: question i expects d{i}, found at rank 1, 2 or nowhere; the
    first `differing` questions one step worse (rank 1 to 2, 2 to nowhere, nowhere to 1)."""
    import numpy as np

    from retrieval_pipeline.core.scoring.question_columns import QuestionColumns

    ids = [f"q{i}" for i in range(questions)]
    shapes = [(i + (i < differing)) % 3 for i in range(questions)]
    rankings = [
        ((f"d{i}", "x", "y", "z") if shape == 0 else ("x", f"d{i}", "y", "z") if shape == 1 else ("x", "y"))
        for i, shape in enumerate(shapes)
    ]
    return QuestionColumns.of(
        question_id=ids,
        form=["match"] * questions,
        hard_class=[None] * questions,
        expected_document_ids=[(f"d{i}",) for i in range(questions)],
        retrieved_document_ids=rankings,
        latency_ms=np.ones(questions),
        error=[None] * questions,
        fingerprint=[None] * questions,
    ).table


def _fresh(table, identifier: str = "bench"):
    """A run over `table` with nothing computed yet (its columns cache scores once computed)."""
    from retrieval_pipeline.core.scoring.question_columns import QuestionColumns
    from retrieval_pipeline.core.scoring.results import RunResult

    return RunResult("bench.set", identifier, QuestionColumns(table), cutoffs=(1, 3, 5, 10))


def _traffic(questions: int):
    import numpy as np

    from retrieval_pipeline.core.scoring.traffic import TrafficWeights

    counts = np.random.default_rng(11).zipf(1.5, questions).clip(max=100_000)
    counts[::5] = 0
    return TrafficWeights("bench", {f"q{i}": int(count) for i, count in enumerate(counts)})


def main(argv: list[str] | None = None) -> None:
    from retrieval_pipeline.core.scoring.checks.regression import detect_regression
    from retrieval_pipeline.core.scoring.checks.tolerances import Tolerances
    from retrieval_pipeline.core.scoring.traffic import weighted_figures

    args = c.parser(__doc__.splitlines()[0]).parse_args(argv)
    repeat = c.repetitions(args, full=9, quick=3)
    c.banner("traffic-weighted figures")
    table, traffic = _table(QUESTIONS), _traffic(QUESTIONS)

    def plain():
        run = _fresh(table)
        return run.metrics(), run.intervals(), [run.hit_rate(k) for k in run.cutoffs]

    figures = c.measure({"weighted": lambda: weighted_figures(_fresh(table), traffic), "plain": plain}, repeat)
    ratio = c.paired_ratio(figures["weighted"].samples, figures["plain"].samples)
    print(f"every figure weighted vs the plain figures, {QUESTIONS:,} questions: {ratio:.2f}x")
    print(f"  weighted median {figures['weighted'].median * 1000:.1f} ms ({figures['weighted'].spread})")

    gated, tolerances = Tolerances(weighted=True), Tolerances()
    before, after, traffic = _table(CHECKED), _table(CHECKED, DIFFERING), _traffic(CHECKED)
    checks = c.measure(
        {
            "weighted": lambda: detect_regression(_fresh(after), _fresh(before), gated, traffic=traffic),
            "plain": lambda: detect_regression(_fresh(after), _fresh(before), tolerances),
        },
        repeat,
    )
    share = c.paired_ratio(checks["weighted"].samples, checks["plain"].samples)
    print(f"check gating the weighted rates vs the plain check, {CHECKED:,} questions ({DIFFERING} differ): {share:.2f}x")
    print(f"  weighted check median {checks['weighted'].median * 1000:.1f} ms ({checks['weighted'].spread})")
    print(f"  its verdict: {checks['weighted'].result.summary}")


if __name__ == "__main__":
    main()
