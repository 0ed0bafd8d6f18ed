"""11. Machine judging against a local chat-completions server with a fixed latency: wall time versus N * L / C,
and a second pass over the same pairs answered from the cache.

A `ThreadingHTTPServer` on 127.0.0.1 (a child process, so it does not share this process's interpreter
lock) answers every `POST /v1/chat/completions` after sleeping L seconds with the grade `2` and a `usage`.
`machine_judge_file` judges a fresh copy of an N-row judging file (SciFact sentences as questions and
documents) with the `openai` judge at concurrency C, a fresh cache each time: the floor is N * L / C, target
at most 1.25 times that (the file is rewritten after every batch of 4 * C rows). Then the same rows in
another file with the warm cache: nothing is asked, and the ratio to the first pass is what the cache saves.
For reference, a bare thread pool of C workers posting the same requests with `requests` shows what the
network stack alone costs.
"""

from __future__ import annotations

import sys

import _common as c

LATENCY = 0.020
ROWS = 200
CONCURRENCY = 8
TARGET = 1.25

ANSWER = """
def answer(body):
    return {"choices": [{"message": {"role": "assistant", "content": "2"}}], "usage": {"prompt_tokens": 200, "completion_tokens": 1}}
"""


def main(argv: list[str] | None = None) -> c.Report:
    arguments = c.parser(__doc__.splitlines()[0])
    arguments.add_argument("--latency", type=float, default=LATENCY, help="seconds the server waits per request")
    arguments.add_argument("--rows", type=int, default=ROWS)
    arguments.add_argument("--concurrency", type=int, default=CONCURRENCY)
    args = arguments.parse_args(argv)
    repeat = c.repetitions(args, full=5, quick=2)
    n, latency, concurrency = args.rows, args.latency, args.concurrency
    floor = n * latency / concurrency
    report = c.Report("bench_judging", f"11. Machine judging (N={n}, L={latency * 1000:g} ms, C={concurrency})", args.quick)
    c.banner(report.title)
    if not c.require_modules("retrieval_pipeline.judges.openai"):
        return report

    from concurrent.futures import ThreadPoolExecutor

    import requests

    from retrieval_pipeline.core.retrieval.retriever import BuildContext
    from retrieval_pipeline.core.services.labels.judging_files import write_judging_file
    from retrieval_pipeline.core.services.labels.machine_judging import machine_judge_file
    from retrieval_pipeline.judges.openai import OpenAIJudgeKind

    sentences = c.sampled_questions(2 * n, seed=31)
    rows = [
        {"question_id": f"q{i}", "document_id": f"d{i}", "judgement": "", "question": q[1], "title": "", "text": d[1]}
        for i, (q, d) in enumerate(zip(sentences[:n], sentences[n:]))
    ]
    server, port = c.start_latency_server(latency, ANSWER)
    try:
        with c.temp_dir("judging-") as scratch:
            context = BuildContext(base_dir=scratch, source="bench_judging")
            params = {"url": f"http://127.0.0.1:{port}/v1/chat/completions", "model": "bench", "concurrency": concurrency}
            judge = OpenAIJudgeKind.parse("bench", params, context).build()
            passes = iter(range(10_000))

            def first_pass():
                number = next(passes)
                path = write_judging_file(rows, scratch / f"pool-{number}.jsonl")
                return machine_judge_file(path, judge, scratch / f"cache-{number}")

            def cached_pass():
                number = next(passes)
                path = write_judging_file(rows, scratch / f"pool-{number}.jsonl")
                return machine_judge_file(path, judge, scratch / "warm-cache")

            session = requests.Session()
            session.mount("http://", requests.adapters.HTTPAdapter(pool_maxsize=concurrency, pool_block=True))

            def bare():
                def ask(row):
                    body = {"model": "bench", "messages": [{"role": "user", "content": row["question"] + row["text"]}]}
                    return session.post(params["url"], json=body, timeout=10).json()["choices"][0]["message"]["content"]

                with ThreadPoolExecutor(max_workers=concurrency) as pool:
                    return list(pool.map(ask, rows))

            machine_judge_file(write_judging_file(rows, scratch / "warm.jsonl"), judge, scratch / "warm-cache")
            timings = c.measure({"bare": bare, "first": first_pass, "cached": cached_pass}, repeat=repeat, warmup=1)
    finally:
        server.terminate()
        server.wait(timeout=10)
    first, cached, bare_t = timings["first"], timings["cached"], timings["bare"]
    summary, warm = first.result, cached.result
    report.add(
        "judge machine FILE --judge (fresh cache)",
        c.fmt_seconds(first.median),
        f"N·L/C {c.fmt_seconds(floor)}",
        first.median / floor,
        target=TARGET,
        note=f"asked {summary.tally.asked}, judged {summary.judged}, errors {sum(summary.tally.errors.values())}",
    )
    report.add(
        "bare thread pool of requests (reference)",
        c.fmt_seconds(bare_t.median),
        f"N·L/C {c.fmt_seconds(floor)}",
        bare_t.median / floor,
        note=f"ours / bare = {c.paired_ratio(first.samples, bare_t.samples):.3f}× (median of per-round ratios)",
    )
    report.add(
        "the same pairs again (warm cache)",
        c.fmt_seconds(cached.median),
        f"fresh {c.fmt_seconds(first.median)}",
        c.paired_ratio(cached.samples, first.samples),
        note=f"asked {warm.tally.asked}, from the cache {warm.tally.cached} (median of per-round ratios)",
    )
    report.details.update(first_s=first.samples, cached_s=cached.samples, bare_s=bare_t.samples, floor_s=floor)
    report.save()
    return report


if __name__ == "__main__":
    main(sys.argv[1:])
