"""Conversations: what scoring a turn costs beside a single question, and what a rewriter costs per turn
against its endpoint's rate limit.

(a) Scoring overhead per turn. N questions (real SciFact sentences, each labelled with its source
    document) as a set of conversations (N/4 conversations of 4 turns) and as a set of N single
    questions: the same texts, labels and rankings, from an in-memory retriever (a dict lookup), so
    what differs is the harness alone. Each side does what a run of its set reports: `run_question_set`
    and the top-1/top-3 rates; the conversations also their figures by turn depth and the conversations
    all hit in the top 3. Goal: at most 1.1 times the single-question set. A second row does the same
    through `evaluate_and_record` (the baseline read, the run saved to a Parquet store in a scratch
    folder); a third with the lexical retriever over SciFact, `conversation: current`.
(b) A rewriter per turn. `conversation: {rewriter: NAME}` with the `openai` kind against a local
    stand-in on 127.0.0.1 (a child process): NOT a language model, it answers every chat completion after
    L seconds with the user's lines of the prompt's conversation joined, and admits at most R requests a
    second (a token bucket holding C), answering HTTP 429 with a Retry-After of the time until the next
    token, as a rate-limited provider does. The rewriter asks C at once with a fresh cache: the floor
    is the later turns (an opening turn is asked as typed) over R; the cost per turn is set beside 1/R.
    Then the same turns from the warm cache (nothing asked).
"""

from __future__ import annotations

import sys

import _common as c
from bench_overhead import PrecomputedRetriever

TURNS = 10_000
TURNS_PER_CONVERSATION = 4
LEXICAL_TURNS = 2_000
TARGET = 1.1
REWRITTEN_CONVERSATIONS = 50
RATE = 100.0
LATENCY = 0.020
CONCURRENCY = 4
DEFAULTS = {"concurrency": CONCURRENCY}
BACKED_OFF = {"concurrency": CONCURRENCY, "backoff_seconds": 0.01, "retries": 20}
"""A rate-limited endpoint's Retry-After (milliseconds here) governs once the backoff is shorter than it."""

STAND_IN = """
import threading
rate, burst = context["rate"], context["burst"]
tokens, last, lock = float(burst), time.monotonic(), threading.Lock()

def admitted():
    global tokens, last
    with lock:
        now = time.monotonic()
        tokens = min(burst, tokens + (now - last) * rate)
        last = now
        if tokens >= 1:
            tokens -= 1
            return None
        return (1 - tokens) / rate

def answer(body):
    wait = admitted()
    if wait is not None:
        raise RateLimited(wait)
    prompt = body["messages"][-1]["content"]
    asked = [line[len("user: "):] for line in prompt.splitlines() if line.startswith("user: ")]
    last = prompt.rsplit("Last message: ", 1)[-1].splitlines()[0]
    return {"choices": [{"message": {"role": "assistant", "content": " ".join(asked + [last])}}],
            "usage": {"prompt_tokens": len(prompt.split()), "completion_tokens": len(asked) + 1}}
"""
"""The stand-in's answer: `RateLimited` (defined by the server below) becomes a 429 with Retry-After."""

RATE_LIMITED_SERVER = c._LATENCY_SERVER.replace(
    "class Handler(BaseHTTPRequestHandler):",
    """class RateLimited(Exception):
    pass

class Handler(BaseHTTPRequestHandler):""",
).replace(
    """        time.sleep(latency)
        payload = json.dumps(answer(body)).encode()
        self.send_response(200)""",
    """        try:
            answered = answer(body)
        except RateLimited as limited:
            payload = b'{"error": {"message": "rate limited"}}'
            self.send_response(429)
            self.send_header("Retry-After", f"{limited.args[0]:.3f}")
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
            return
        time.sleep(latency)
        payload = json.dumps(answered).encode()
        self.send_response(200)""",
)
if "except RateLimited" not in RATE_LIMITED_SERVER or "class RateLimited" not in RATE_LIMITED_SERVER:
    sys.exit("bench_conversations: _common._LATENCY_SERVER changed; the rate-limited stand-in no longer fits it")


def conversation_set(identifier: str, questions: list[tuple[str, str, str]], per_conversation: int):
    """The questions as conversations of `per_conversation` turns, in order; built outside any timed region."""
    from retrieval_pipeline.core.golden.conversations import ConversationTurn
    from retrieval_pipeline.core.golden.questions import GoldenQuestion, GoldenQuestionSet

    turns = []
    for index, (_, text, expected) in enumerate(questions):
        conversation, number = f"c{index // per_conversation:05d}", index % per_conversation + 1
        turns.append(
            GoldenQuestion(
                id=f"{conversation}/{number}",
                question=text,
                form="match",
                expected_document_ids=(expected,),
                turn=ConversationTurn(conversation=conversation, number=number),
            )
        )
    return GoldenQuestionSet(identifier=identifier, name=identifier, questions=tuple(turns))


def scoring_overhead(report: c.Report, args, repeat: int) -> None:
    from retrieval_pipeline.core.retrieval.retriever import BuildContext
    from retrieval_pipeline.core.scoring.scoring import CutOffs
    from retrieval_pipeline.core.scoring.turns import turn_figures
    from retrieval_pipeline.core.services.configuration.settings import EvaluationSettings
    from retrieval_pipeline.core.services.evaluation.record import evaluate_and_record
    from retrieval_pipeline.core.services.evaluation.runner import run_question_set
    from retrieval_pipeline.core.storage.store import ResultStore
    from retrieval_pipeline.retrievers.lexical.retriever import LexicalKind

    count = TURNS // 5 if args.quick else TURNS
    cutoffs = CutOffs()
    sampled = c.sampled_questions(count)
    single = c.question_set("bench.single", sampled)
    turns = conversation_set("bench.turns", sampled, TURNS_PER_CONVERSATION)
    print(f"  {count} questions from SciFact sentences: {count // TURNS_PER_CONVERSATION} conversations of 4 turns, or single")

    def scored(golden, retriever):
        def case():
            run = run_question_set(golden, retriever, cutoffs=cutoffs)
            return run, run.hit_rate(1), run.hit_rate(3), turn_figures(run)

        return case

    def rows(name: str, timings, per: int, note: str = "") -> None:
        ours, theirs = timings["turns"], timings["single"]
        per_turn = c.paired_difference(ours.samples, theirs.samples) / per * 1e6
        report.add(
            name,
            c.fmt_seconds(ours.median),
            f"single questions {c.fmt_seconds(theirs.median)}",
            c.paired_ratio(ours.samples, theirs.samples),
            target=TARGET,
            note=f"{per_turn:+.2f} µs per turn; best-of ratio {c.best_ratio(ours.samples, theirs.samples):.3f}×{note}",
        )
        report.details[name] = {"turns_s": ours.samples, "single_s": theirs.samples, "per_turn_us": per_turn}

    with c.temp_dir("conversations-") as scratch:
        corpus = c.collection_dir("scifact") / "corpus.jsonl"
        context = BuildContext(base_dir=scratch, source="bench_conversations", cache_dir=scratch / "cache")
        lexical = LexicalKind.parse("bm25", {"corpus": str(corpus)}, context).build()
        texts = [text for _, text, _ in sampled]
        precomputed = PrecomputedRetriever(dict(zip(texts, lexical.retrieve_batch(texts, cutoffs.fetch_limit))))

        timings = c.measure(
            {"single": scored(single, precomputed), "turns": scored(turns, precomputed)}, repeat=max(repeat * 3, 9), warmup=2
        )
        _, top1, top3, figures = timings["turns"].result
        same = (top1, top3) == timings["single"].result[1:3]
        depths = ", ".join(f"{depth}: {rates.questions}" for depth, rates in figures.by_depth.items())
        rows(
            "(a) scoring per turn: run_question_set + rates (+ by depth)",
            timings,
            count,
            f"; rates identical to the single set: {same}; turns by depth {depths}",
        )

        settings = EvaluationSettings(cutoffs=cutoffs)
        stores = iter(range(100_000))

        def recorded(golden):
            return lambda: evaluate_and_record(golden, precomputed, ResultStore(str(scratch / f"store-{next(stores)}")), settings)

        timings = c.measure({"single": recorded(single), "turns": recorded(turns)}, repeat=max(repeat, 5), warmup=1)
        rows("(a) scoring per turn: evaluate_and_record (+ Parquet save)", timings, count)

        small = min(LEXICAL_TURNS, count)
        timings = c.measure(
            {
                "single": scored(c.question_set("bench.single", sampled[:small]), lexical),
                "turns": scored(conversation_set("bench.turns", sampled[:small], TURNS_PER_CONVERSATION), lexical),
            },
            repeat=repeat,
            warmup=1,
        )
        rows(f"(a) scoring per turn: lexical retriever (SciFact, {small:,} turns)", timings, small)


def rewriter_cost(report: c.Report, args, repeat: int) -> None:
    from retrieval_pipeline.core.retrieval.query_modes import QueryMode, QueryPlan
    from retrieval_pipeline.core.retrieval.retriever import BuildContext
    from retrieval_pipeline.core.services.evaluation.queries import asked_queries
    from retrieval_pipeline.rewriters.openai import OpenAIRewriterKind

    conversations = REWRITTEN_CONVERSATIONS // 2 if args.quick else REWRITTEN_CONVERSATIONS
    sampled = c.sampled_questions(conversations * TURNS_PER_CONVERSATION, seed=53)
    golden = conversation_set("bench.rewritten", sampled, TURNS_PER_CONVERSATION)
    asked = sum(1 for question in golden.questions if question.turn.number > 1)
    floor = asked / RATE
    stand_in = {"rate": RATE, "burst": CONCURRENCY}
    server, port = c.start_latency_server(LATENCY, STAND_IN, stand_in, server=RATE_LIMITED_SERVER)
    try:
        with c.temp_dir("rewriter-") as scratch:
            context = BuildContext(base_dir=scratch, source="bench_conversations")
            url = f"http://127.0.0.1:{port}/v1/chat/completions"
            mode = QueryMode("rewriter", rewriter="stand_in")
            caches = iter(range(100_000))

            def rewriting(params, cache=None):
                rewriter = OpenAIRewriterKind.parse("stand_in", {"url": url, "model": "stand-in", **params}, context).build()
                return lambda: asked_queries(
                    golden, QueryPlan(mode, lambda: rewriter, cache or scratch / f"cache-{next(caches)}"), "bm25"
                )

            rewriting(BACKED_OFF, scratch / "warm")()
            timings = c.measure(
                {
                    "defaults": rewriting(DEFAULTS),
                    "backed_off": rewriting(BACKED_OFF),
                    "cached": rewriting(BACKED_OFF, scratch / "warm"),
                },
                repeat=repeat,
                warmup=1,
            )
    finally:
        server.terminate()
        server.wait(timeout=10)
    for name, settings in (
        ("defaults", "retries 3, backoff_seconds 0.2 (the defaults)"),
        ("backed_off", "backoff_seconds 0.01, retries 20"),
    ):
        timing = timings[name]
        errors = sum(1 for query in timing.result if query.error)
        report.add(
            f"(b) rewriter per turn, fresh cache, {settings}",
            c.fmt_seconds(timing.median / asked),
            f"1/R {c.fmt_seconds(1 / RATE)}",
            timing.median / floor,
            target_text="report",
            note=f"{c.fmt_seconds(timing.median)} for {asked} later turns (floor {asked}/R = {c.fmt_seconds(floor)}); "
            f"R={RATE:g}/s, C={CONCURRENCY}, L={LATENCY * 1000:g} ms; turns in error {errors}",
        )
    fresh, warm = timings["backed_off"], timings["cached"]
    report.add(
        "(b) the same turns again (warm cache, nothing asked)",
        c.fmt_seconds(warm.median / asked),
        f"fresh {c.fmt_seconds(fresh.median / asked)}",
        c.paired_ratio(warm.samples, fresh.samples),
        note="per turn (median of per-round ratios)",
    )
    report.details.update({f"rewriter_{name}_s": timing.samples for name, timing in timings.items()}, floor_s=floor)


def main(argv: list[str] | None = None) -> c.Report:
    args = c.parser(__doc__.splitlines()[0]).parse_args(argv)
    repeat = c.repetitions(args, full=7, quick=3)
    report = c.Report("bench_conversations", "Conversations", args.quick)
    c.banner(report.title)
    scoring_overhead(report, args, repeat)
    rewriter_cost(report, args, repeat)
    report.save()
    return report


if __name__ == "__main__":
    main(sys.argv[1:])
