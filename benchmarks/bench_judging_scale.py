"""11b. Machine judging's own cost by file size: `judge machine` with a trivial callable judge at concurrency 1,
rows per second on a 329-row and a 5,000-row judging file.

The judge answers at once, so what is timed is the pass itself: queueing, gathering, the answer cache and
saving progress. Saving progress must not grow with the file (the answers of each batch go to the cache, the
journal; the file is written once, at the end): target at least 1,000 rows/s at any size, and the large
file's rate close to the small one's. Rows are the embedded demo's Cranfield titles and texts, so the script
needs no shared data.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import _common as c

SIZES = (329, 5_000)
TARGET_ROWS_PER_SECOND = 1_000
CORPUS = Path(__file__).resolve().parents[1] / "retrieval_pipeline" / "demo" / "cranfield-corpus.jsonl.gz"


def always_yes(question: str, document: str) -> bool:
    """The trivial judge: whatever it is asked, at once."""
    return True


def judging_rows(count: int) -> list[dict]:
    with gzip.open(CORPUS, "rt", encoding="utf-8") as lines:
        documents = [json.loads(line) for line in lines]
    return [
        {
            "question_id": f"q{i // 10}",
            "document_id": documents[i % len(documents)]["_id"],
            "judgement": "",
            "question": documents[(i * 7) % len(documents)]["title"],
            "title": documents[i % len(documents)]["title"],
            "text": documents[i % len(documents)]["text"],
        }
        for i in range(count)
    ]


def main(argv: list[str] | None = None) -> c.Report:
    args = c.parser(__doc__.splitlines()[0]).parse_args(argv)
    repeat = c.repetitions(args, full=5, quick=2)
    report = c.Report("bench_judging_scale", "11b. Machine judging by file size (trivial judge, concurrency 1)", args.quick)
    c.banner(report.title)

    from retrieval_pipeline.core.retrieval.retriever import BuildContext
    from retrieval_pipeline.core.services.labels.judging_files import write_judging_file
    from retrieval_pipeline.core.services.labels.machine_judging import machine_judge_file
    from retrieval_pipeline.judges.callable import CallableJudgeKind

    sys.path.insert(0, str(Path(__file__).parent))  # `bench_judging_scale:always_yes` importable by the judge
    with c.temp_dir("judging-scale-") as scratch:
        context = BuildContext(base_dir=scratch, source="bench_judging_scale")
        judge = CallableJudgeKind.parse("trivial", {"function": "bench_judging_scale:always_yes"}, context).build()
        passes = iter(range(10_000))
        cases = {}
        for size in SIZES:
            rows = judging_rows(size)

            def one_pass(rows=rows):
                number = next(passes)  # a fresh file and a fresh cache: every row is asked
                path = write_judging_file(rows, scratch / f"pool-{number}.csv")
                return machine_judge_file(path, judge, scratch / f"cache-{number}")

            cases[size] = one_pass
        timings = c.measure({str(size): case for size, case in cases.items()}, repeat=repeat, warmup=1)
    rates = {}
    for size in SIZES:
        timing = timings[str(size)]
        rates[size] = size / timing.median
        assert timing.result.judged == size, f"{timing.result.judged} of {size} rows judged"
        report.add(
            f"judge machine, {size:,}-row file",
            f"{rates[size]:,.0f} rows/s",
            f"{TARGET_ROWS_PER_SECOND:,} rows/s",
            TARGET_ROWS_PER_SECOND / rates[size],
            target=1.0,
            target_text=f"≥ {TARGET_ROWS_PER_SECOND:,} rows/s",
            note=f"{c.fmt_seconds(timing.median)} for the pass (median of {repeat})",
        )
    small, large = SIZES
    report.add(
        f"rate on {large:,} rows against {small:,} rows",
        f"{rates[large]:,.0f} rows/s",
        f"{rates[small]:,.0f} rows/s",
        rates[small] / rates[large],
        note="1.0: saving progress costs the same whatever the file's size",
    )
    report.details.update(rows_per_second={str(size): rate for size, rate in rates.items()})
    report.save()
    return report


if __name__ == "__main__":
    main(sys.argv[1:])
