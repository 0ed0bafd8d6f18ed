"""6. Scale: the lexical retriever and the result store on synthetic corpora of 10k, 100k and 1M documents.

The corpora are synthetic but text-like: 50 to 100 words per document drawn from a Zipf distribution
(exponent 1.07) over the vocabulary of the three shared collections, ranked by real frequency, so the
commonest words are the stopwords the tokenizer drops and the tail is rare technical words. The sizes
are prefixes of one generation (the 10k corpus is the first 10k documents of the 1M one); they are
generated once under benchmarks/.work/scale/ and reused. Each size has its own set of 10,000
questions: a window of 5 to 10 consecutive words of a random document, labelled with that document.

Each size is measured in its own child process, so its peak RSS is its own:
- index: `LexicalRetriever.from_config` into a fresh cache folder (read + fingerprint + tokenize +
  index + save), the in-process memo cleared; then a load from that cache (what later processes pay);
- queries: `run_question_set` over the 10,000 questions: questions per second (and per CPU second of
  the process, a figure other processes on a shared machine barely move), with the backend the
  lexical retriever chose; where it chose numba, 300 questions asked of both numba and numpy (paired
  rounds, same index): the speed-up and whether every ranking is identical;
- store: `ResultStore.save` then `load` of that 10,000-question run (Parquet on local disk);
- peak RSS of the child.
Then the growth factors 10k -> 100k -> 1M. `--quick` stops at 100k.
"""

from __future__ import annotations

import json
import re
import statistics
import sys
import time
from pathlib import Path

import _common as c

SIZES = (10_000, 100_000, 1_000_000)
QUESTIONS = 10_000
ZIPF_EXPONENT = 1.07
CHUNK = 10_000
GENERATOR_VERSION = 1
BACKEND_SAMPLE = 300  # questions asked of both backends at sizes where numpy is not the chosen one


def vocabulary() -> list[str]:
    """Words of the shared collections, most frequent first."""
    from collections import Counter

    counts: Counter[str] = Counter()
    word = re.compile(r"[a-z]{2,}")
    for name in ("scifact", "cranfield", "cisi"):
        for record in c.read_jsonl(c.collection_dir(name) / "corpus.jsonl"):
            counts.update(word.findall(f"{record.get('title') or ''} {record.get('text') or ''}".lower()))
    return [w for w, _ in counts.most_common()]


def generate(folder: Path, largest: int, seed: int = 5) -> dict[int, Path]:
    """corpus-<n>.jsonl for every size up to `largest`, written in one pass; reused when complete."""
    import numpy as np

    paths = {n: folder / f"corpus-{n}.jsonl" for n in SIZES if n <= largest}
    manifest = folder / "manifest.json"
    done = json.loads(manifest.read_text()) if manifest.is_file() else {}
    if done.get("version") == GENERATOR_VERSION and all(
        str(n) in done.get("sizes", []) and p.is_file() for n, p in paths.items()
    ):
        return paths
    folder.mkdir(parents=True, exist_ok=True)
    words = np.array(vocabulary(), dtype=object)
    weights = 1.0 / np.arange(1, len(words) + 1) ** ZIPF_EXPONENT
    cumulative = np.cumsum(weights / weights.sum())
    started = time.perf_counter()
    handles = {n: p.open("w", encoding="utf-8") for n, p in paths.items()}
    try:
        for chunk_start in range(0, largest, CHUNK):
            rng = np.random.default_rng([seed, chunk_start])  # a chunk is the same whatever the largest size
            lengths = rng.integers(50, 101, size=CHUNK)
            drawn = np.searchsorted(cumulative, rng.random(int(lengths.sum())), side="right")
            drawn = np.minimum(drawn, len(words) - 1)
            texts = words[drawn]
            bounds = np.concatenate(([0], np.cumsum(lengths)))
            lines = "".join(
                json.dumps({"_id": f"d{chunk_start + i:07d}", "title": "", "text": " ".join(texts[bounds[i] : bounds[i + 1]])})
                + "\n"
                for i in range(CHUNK)
            )
            for n, handle in handles.items():
                if chunk_start < n:
                    handle.write(lines)
            if chunk_start and chunk_start % 100_000 == 0:
                print(f"  generating: {chunk_start:,} documents ({time.perf_counter() - started:.0f} s)", flush=True)
    finally:
        for handle in handles.values():
            handle.close()
    manifest.write_text(json.dumps({"version": GENERATOR_VERSION, "sizes": [str(n) for n in paths]}))
    return paths


def questions_file(folder: Path, corpus: Path, size: int, seed: int = 9) -> Path:
    """10,000 questions: a 5-10 word window of a random document of this corpus, labelled with it."""
    import random

    path = folder / f"questions-{size}.jsonl"
    if path.is_file():
        return path
    rng = random.Random(seed)
    wanted = sorted(rng.sample(range(size), QUESTIONS))
    chosen = []
    with corpus.open(encoding="utf-8") as handle:
        targets = iter(wanted)
        target = next(targets)
        for number, line in enumerate(handle):
            if number == target:
                record = json.loads(line)
                words = record["text"].split()
                length = rng.randint(5, 10)
                start = rng.randint(0, len(words) - length)
                chosen.append((record["_id"], " ".join(words[start : start + length])))
                target = next(targets, None)
                if target is None:
                    break
    rng.shuffle(chosen)
    return c.write_set_file(path, f"bench.scale_{size}", [(f"q{i:05d}", text, doc) for i, (doc, text) in enumerate(chosen)])


def child(corpus: Path, questions: Path, repeat: int, budget: float) -> dict:
    """One size, in its own process: prints one JSON object.

    Questions go through `run_question_set` one runner batch (1,000 questions) at a time, so a slow
    size can stop at the time budget and report the throughput of the batches it answered; the
    batches' results are joined into one run for the store.
    """
    import shutil
    import statistics
    import tempfile

    from retrieval_pipeline.core.golden.question_files import load_question_set_file
    from retrieval_pipeline.core.retrieval.retriever import BuildContext
    from retrieval_pipeline.core.scoring.results import RunResult
    from retrieval_pipeline.core.scoring.scoring import CutOffs
    from retrieval_pipeline.core.services.evaluation.asking import BATCH_SIZE
    from retrieval_pipeline.core.services.evaluation.runner import run_question_set
    from retrieval_pipeline.core.storage.store import ResultStore
    from retrieval_pipeline.retrievers.lexical.retriever import LexicalKind

    golden = load_question_set_file(questions)
    batches = [
        golden.model_copy(update={"questions": golden.questions[start : start + BATCH_SIZE]})
        for start in range(0, len(golden.questions), BATCH_SIZE)
    ]
    cutoffs = CutOffs()
    scratch = Path(tempfile.mkdtemp(prefix="scale-", dir=c.work_dir("tmp")))
    out: dict = {"index_s": [], "cache_load_s": [], "query_s": [], "save_s": [], "load_s": []}
    try:
        for rep in range(repeat):
            cache = scratch / f"cache-{rep}"
            context = BuildContext(base_dir=scratch, source="bench_scale", cache_dir=cache)
            c.clear_lexical_memo()
            started, cpu = time.perf_counter(), time.process_time()
            retriever = LexicalKind.parse("bm25", {"corpus": str(corpus)}, context).build()
            out["index_s"].append(time.perf_counter() - started)
            out["index_cpu_seconds"] = time.process_time() - cpu
            out["rss_after_index_bytes"] = _rss()
            out["index_bytes_on_disk"] = sum(f.stat().st_size for f in cache.rglob("*") if f.is_file())
            del retriever
            c.clear_lexical_memo()
            started = time.perf_counter()
            retriever = LexicalKind.parse("bm25", {"corpus": str(corpus)}, context).build()
            out["cache_load_s"].append(time.perf_counter() - started)
            answered = []
            started, cpu = time.perf_counter(), time.process_time()
            for batch in batches:
                answered.extend(run_question_set(batch, retriever, cutoffs=cutoffs).questions)
                if time.perf_counter() - started > budget:
                    break
            out["query_s"].append(time.perf_counter() - started)
            out["query_cpu_seconds"] = time.process_time() - cpu
            out["answered"] = len(answered)
            out["backend"] = retriever.backend
            out["versus_numpy"] = _versus_numpy(
                retriever, corpus, context, [q.question for q in golden.questions[:BACKEND_SAMPLE]]
            )
            run = RunResult(golden.identifier, retriever.identifier, tuple(answered), cutoffs=cutoffs.values)
            out["top1"], out["top3"] = run.hit_rate(1), run.hit_rate(3)
            store = ResultStore(str(scratch / f"store-{rep}"))
            started = time.perf_counter()
            stored = store.save(run)
            out["save_s"].append(time.perf_counter() - started)
            started = time.perf_counter()
            loaded = store.load(stored)
            out["load_s"].append(time.perf_counter() - started)
            assert loaded.hit_count(1) == run.hit_count(1)
            del retriever, run, loaded
            shutil.rmtree(cache, ignore_errors=True)
        out["peak_rss_bytes"] = c.peak_rss_self()
        out.update({f"{key}_median": statistics.median(values) for key, values in list(out.items()) if key.endswith("_s")})
        out["questions"] = len(golden.questions)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return out


def _versus_numpy(retriever, corpus: Path, context, questions: list[str]) -> dict | None:
    """The chosen backend against bm25s' numpy path (one thread per core) on the same index, paired
    rounds: the speed-up measured under the same load, and whether every ranking is identical."""
    from retrieval_pipeline.retrievers.lexical.retriever import LexicalKind

    if retriever.backend == "numpy":
        return None
    numpy_path = LexicalKind.parse("bm25_numpy", {"corpus": str(corpus), "backend": "numpy"}, context).build()
    timings = c.measure(
        {
            "chosen": lambda: retriever.retrieve_batch(questions, c.FETCH_LIMIT),
            "numpy": lambda: numpy_path.retrieve_batch(questions, c.FETCH_LIMIT),
        },
        repeat=2,
        warmup=0,
    )
    return {
        "questions": len(questions),
        "chosen_s": timings["chosen"].samples,
        "numpy_s": timings["numpy"].samples,
        "speedup": c.paired_ratio(timings["numpy"].samples, timings["chosen"].samples),
        "identical": timings["chosen"].result == timings["numpy"].result,
    }


def _rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def main(argv: list[str] | None = None) -> c.Report:
    arguments = c.parser(__doc__.splitlines()[0])
    arguments.add_argument("--child", nargs=2, metavar=("CORPUS", "QUESTIONS"), help=argparse_hidden())
    arguments.add_argument(
        "--budget", type=float, default=240.0, help="seconds of questions per size before stopping at a batch boundary"
    )
    arguments.add_argument(
        "--sizes", type=int, nargs="+", default=None, help="document counts (default 10k 100k 1M; --quick: 10k 100k)"
    )
    args = arguments.parse_args(argv)
    if args.child:
        print(json.dumps(child(Path(args.child[0]).resolve(), Path(args.child[1]).resolve(), args.repeat or 1, args.budget)))
        return None
    sizes = tuple(args.sizes) if args.sizes else (SIZES[:2] if args.quick else SIZES)
    report = c.Report("bench_scale", "6. scale (lexical + store)", args.quick)
    c.banner(report.title)
    folder = c.work_dir("scale")
    if any(n not in SIZES for n in sizes):
        sys.exit(f"sizes must be among {SIZES}")
    corpora = generate(folder, max(sizes))
    results = {}
    for size in sizes:
        questions = questions_file(folder, corpora[size], size)
        repeat = c.repetitions(args, full=3 if size <= 100_000 else 1, quick=1 if size > 10_000 else 2)
        print(f"  {size:,} documents ({corpora[size].stat().st_size / 2**20:.0f} MiB), {repeat} repetition(s)…", flush=True)
        sample = c.run_process(
            [
                sys.executable,
                __file__,
                "--child",
                str(corpora[size]),
                str(questions),
                "--repeat",
                str(repeat),
                "--budget",
                str(args.budget),
            ],
            env={c.CACHE_ENV: str(c.work_dir("tmp") / "unused-cache")},
        )
        result = json.loads(sample.stdout.strip().splitlines()[-1])
        result["child_peak_rss_bytes"] = sample.peak_rss_bytes
        result["child_wall_s"] = sample.wall_seconds
        results[size] = result
        top = size == max(sizes)
        report.add(
            f"{size:,} docs: index build / load from cache",
            f"{c.fmt_seconds(result['index_s_median'])} / {c.fmt_seconds(result['cache_load_s_median'])}",
            note=f"child wall {c.fmt_seconds(sample.wall_seconds)}; build CPU {c.fmt_seconds(result['index_cpu_seconds'])}",
            headline=top,
        )
        answered = result["answered"]
        cut = (
            f" (stopped at the {args.budget:g} s budget: {answered:,} of {result['questions']:,})"
            if answered < result["questions"]
            else ""
        )
        report.add(
            f"{size:,} docs: queries",
            f"{answered / result['query_s_median']:,.0f} q/s",
            note=f"{answered:,} questions in {c.fmt_seconds(result['query_s_median'])}{cut}, "
            f"{c.fmt_seconds(result['query_cpu_seconds'])} of CPU ({answered / result['query_cpu_seconds']:,.0f} per CPU second); "
            f"top-1 {result['top1']:.3f}, top-3 {result['top3']:.3f}",
            headline=top,
        )
        versus = result.get("versus_numpy")
        if versus:
            report.add(
                f"{size:,} docs: backend {result['backend']} vs numpy on one thread per core ({versus['questions']} questions)",
                f"{versus['questions'] / statistics.median(versus['chosen_s']):,.0f} q/s",
                f"numpy {versus['questions'] / statistics.median(versus['numpy_s']):,.0f} q/s",
                1 / versus["speedup"],
                note=f"ratio column: time, {result['backend']} / numpy (paired rounds); rankings identical: {versus['identical']}",
                headline=top,
            )
        report.add(
            f"{size:,} docs: peak RSS",
            c.fmt_bytes(sample.peak_rss_bytes),
            note=f"RSS right after indexing {c.fmt_bytes(result['rss_after_index_bytes'])}; "
            f"index on disk {c.fmt_bytes(result['index_bytes_on_disk'])}",
            headline=top,
        )
        report.add(
            f"{size:,} docs: store save + load ({answered:,}-question run)",
            f"{c.fmt_seconds(result['save_s_median'])} + {c.fmt_seconds(result['load_s_median'])}",
        )
    ordered = [n for n in SIZES if n in results]
    for small, large in zip(ordered, ordered[1:]):
        a, b = results[small], results[large]
        label = f"growth {small // 1000}k → {large // 1000 if large < 10**6 else '1M'}{'k' if large < 10**6 else ''} (×{large // small} docs)"
        index_growth = b["index_s_median"] / a["index_s_median"]
        query_growth = (b["query_s_median"] / b["answered"]) / (a["query_s_median"] / a["answered"])
        memory_growth = b["child_peak_rss_bytes"] / a["child_peak_rss_bytes"]
        store_growth = ((b["save_s_median"] + b["load_s_median"]) / b["answered"]) / (
            (a["save_s_median"] + a["load_s_median"]) / a["answered"]
        )
        report.add(
            label,
            f"index ×{index_growth:.1f}, time per question ×{query_growth:.1f}, peak RSS ×{memory_growth:.1f}, "
            f"store per question ×{store_growth:.1f}",
            baseline=f"×{large // small} documents",
            ratio=index_growth,
            headline=True,
            note="ratio column: index build time growth",
        )
    report.details["sizes"] = {str(n): r for n, r in results.items()}
    report.save()
    return report


def argparse_hidden():
    import argparse

    return argparse.SUPPRESS


if __name__ == "__main__":
    main(sys.argv[1:])
