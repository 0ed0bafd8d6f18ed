"""Paired tests of the ranking measures: what they add to a check, and that they cost by differing questions.

Runs alone (`python benchmarks/bench_paired_tests.py [--quick]`), on synthetic runs whose rankings differ
on a fixed number of questions:

- one ranking figure's randomization test and bootstrap interval on 100,000 paired questions against
  10,000, with the same 500 questions differing: the draws touch only the differing questions, so the
  ratio stays near 1 rather than 10;
- the whole check (`detect_regression`: McNemar family, every ranking figure's tests, deltas, flips)
  against the same check's McNemar family and deltas alone, on 10,000 questions.
"""

from __future__ import annotations

import _common as c


def _runs(questions: int, differing: int):
    import numpy as np

    from retrieval_pipeline.core.scoring.question_columns import QuestionColumns
    from retrieval_pipeline.core.scoring.results import RunResult

    ids = [f"q{i}" for i in range(questions)]
    expected = [(f"d{i}",) for i in range(questions)]
    good = [(f"d{i}", "x", "y") for i in range(questions)]
    worse = [(("x", f"d{i}", "y") if i < differing else (f"d{i}", "x", "y")) for i in range(questions)]

    def run(rankings):
        columns = QuestionColumns.of(
            question_id=ids,
            form=["match"] * questions,
            hard_class=[None] * questions,
            expected_document_ids=expected,
            retrieved_document_ids=rankings,
            latency_ms=np.ones(questions),
            error=[None] * questions,
            fingerprint=[None] * questions,
        )
        return RunResult(set_identifier="bench.set", retriever_identifier="bench", questions=columns)

    return run(good), run(worse)


def main(argv: list[str] | None = None) -> None:
    import numpy as np

    from retrieval_pipeline.core.scoring.checks.regression import detect_regression
    from retrieval_pipeline.core.scoring.checks.tolerances import Tolerances
    from retrieval_pipeline.core.scoring.stats import slice_tests
    from retrieval_pipeline.core.scoring.stats.significance import bootstrap_interval, paired_randomization_p

    args = c.parser(__doc__.splitlines()[0]).parse_args(argv)
    repeat = c.repetitions(args, full=9, quick=3)
    c.banner("paired tests of the ranking measures")
    differences = {}
    for size in (10_000, 100_000):
        values = np.zeros(size)
        values[:500] = np.random.default_rng(5).normal(-0.05, 0.4, 500)
        differences[size] = values
    tested = c.measure(
        {size: (lambda v=values: (paired_randomization_p(v), bootstrap_interval(v))) for size, values in differences.items()},
        repeat,
    )
    ratio = c.paired_ratio(tested[100_000].samples, tested[10_000].samples)
    print(f"one ranking figure's tests, 100,000 vs 10,000 paired questions (500 differ): {ratio:.2f}x")

    baseline, current = _runs(10_000, 500)
    full = lambda: detect_regression(current, baseline, Tolerances())  # noqa: E731
    original = slice_tests._ranking_tests

    def hit_rates_only():
        slice_tests._ranking_tests = lambda *_: []
        try:
            return detect_regression(current, baseline, Tolerances())
        finally:
            slice_tests._ranking_tests = original

    checks = c.measure({"full": full, "hit rates": hit_rates_only}, repeat)
    share = c.paired_ratio(checks["full"].samples, checks["hit rates"].samples)
    print(f"check on 10,000 questions (500 differ), with the ranking tests vs McNemar alone: {share:.2f}x")
    print(f"  full check median {checks['full'].median * 1000:.1f} ms ({checks['full'].spread})")


if __name__ == "__main__":
    main()
