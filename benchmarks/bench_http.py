"""4. HTTP retriever against a local server with a fixed latency: wall time versus N * L / C.

A `ThreadingHTTPServer` on 127.0.0.1 (a free port, in a child process so it does not share this
process's interpreter lock) answers every POST after sleeping L seconds, with keep-alive as a real
service would. `run_question_set` asks N questions through the HTTP retriever configured with
concurrency C. The floor is N * L / C (C requests in flight at all times, zero client cost); target:
at most 1.2 times that. For reference, a bare thread pool of C workers posting the same requests with
`requests` shows what the network stack alone costs. No request leaves 127.0.0.1; the server stops
with this script.
"""

from __future__ import annotations

import sys

import _common as c

LATENCY = 0.020
QUESTIONS = 200
CONCURRENCY = 8
TARGET = 1.2

ANSWER = """
def answer(body):
    first = context.get(body["query"], "unknown")
    return {"results": [first] + [f"noise{i}" for i in range(body.get("limit", 10) - 1)]}
"""


def main(argv: list[str] | None = None) -> c.Report:
    arguments = c.parser(__doc__.splitlines()[0])
    arguments.add_argument("--latency", type=float, default=LATENCY, help="seconds the server waits per request")
    arguments.add_argument("--questions", type=int, default=QUESTIONS)
    arguments.add_argument("--concurrency", type=int, default=CONCURRENCY)
    args = arguments.parse_args(argv)
    repeat = c.repetitions(args, full=7, quick=3)
    n, latency, concurrency = args.questions, args.latency, args.concurrency
    floor = n * latency / concurrency
    report = c.Report("bench_http", f"4. HTTP (N={n}, L={latency * 1000:g} ms, C={concurrency})", args.quick)
    c.banner(report.title)
    if not c.require_modules("retrieval_pipeline.retrievers.http.retriever"):
        return report

    from concurrent.futures import ThreadPoolExecutor

    import requests

    from retrieval_pipeline.core.retrieval.retriever import BuildContext
    from retrieval_pipeline.core.scoring.scoring import CutOffs
    from retrieval_pipeline.core.services.evaluation.runner import run_question_set
    from retrieval_pipeline.retrievers.http.retriever import HttpKind

    questions = c.sampled_questions(n, seed=23)
    golden = c.question_set("bench.http", questions)
    cutoffs = CutOffs()
    server, port = c.start_latency_server(latency, ANSWER, {text: doc for _, text, doc in questions})
    url = f"http://127.0.0.1:{port}/search"
    try:
        with c.temp_dir("http-") as scratch:
            context = BuildContext(base_dir=scratch, source="bench_http", cache_dir=scratch / "cache")
            retriever = HttpKind.parse("service", {"url": url, "concurrency": concurrency}, context).build()

            def ours():
                run = run_question_set(golden, retriever, cutoffs=cutoffs)
                return run, run.hit_rate(1)

            session = requests.Session()
            adapter = requests.adapters.HTTPAdapter(pool_maxsize=concurrency, pool_block=True)
            session.mount("http://", adapter)

            def bare():
                def ask(question):
                    return session.post(url, json={"query": question.question, "limit": cutoffs.fetch_limit}, timeout=10).json()[
                        "results"
                    ]

                with ThreadPoolExecutor(max_workers=concurrency) as pool:
                    return list(pool.map(ask, golden.questions))

            timings = c.measure({"bare": bare, "ours": ours}, repeat=repeat, warmup=1)
            run, top1 = timings["ours"].result
            ours_t, bare_t = timings["ours"].median, timings["bare"].median
            report.add(
                "run_question_set over HTTP",
                c.fmt_seconds(ours_t),
                f"N·L/C {c.fmt_seconds(floor)}",
                ours_t / floor,
                target=TARGET,
                note=f"fastest run {min(timings['ours'].samples) / floor:.3f}×; "
                f"top-1 {top1:.3f} (the server ranks the source document first), complete {run.complete}; "
                f"p50 latency {run.latency_percentiles().get('p50', 0):.1f} ms",
            )
            report.add(
                "bare thread pool of requests (reference)",
                c.fmt_seconds(bare_t),
                f"N·L/C {c.fmt_seconds(floor)}",
                bare_t / floor,
                note=f"ours / bare = {c.paired_ratio(timings['ours'].samples, timings['bare'].samples):.3f}× (median of per-round ratios), "
                f"best-of {c.best_ratio(timings['ours'].samples, timings['bare'].samples):.3f}×",
            )
            report.details.update(ours_s=timings["ours"].samples, bare_s=timings["bare"].samples, floor_s=floor)
    finally:
        server.terminate()
        server.wait(timeout=10)
    report.save()
    return report


if __name__ == "__main__":
    main(sys.argv[1:])
