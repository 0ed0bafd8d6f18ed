"""2. Run files: `retrieval-eval run` (run-file retriever) versus pytrec_eval, ir_measures and ranx on one TREC run.

A synthetic TREC run of 20,000 queries x 100 documents (2,000,000 lines), its qrels (1 to 3 relevant
documents per query, the first placed at a random rank or left out) and a golden set file whose
questions carry the qrels' labels (question text unique per query, as the run-file retriever maps text
to query id through the configured set). Each tool runs as a whole child process, measured from spawn
to exit (wall) and by the child's peak RSS:

- ours:        `retrieval-eval run bench.run_file replay --config ... --store <scratch> --json`, which also
               saves the 20,000-question run to a Parquet store (a fresh folder per repetition, so no
               baseline; a second row runs against a store that already holds a baseline);
- pytrec_eval: the C trec_eval engine (package pytrec-eval-terrier), loaded the usual way: qrels and run
               read line by line into dictionaries, `RelevanceEvaluator(qrels, {"success.1,3"}).evaluate(run)`,
               then the per-query values averaged;
- ir_measures: `calc_aggregate([Success@1, Success@3], read_trec_qrels(...), read_trec_run(...))`;
- ranx:        `evaluate(Qrels.from_file(..., kind="trec"), Run.from_file(..., kind="trec"), ["hit_rate@1", "hit_rate@3"])`.

The four tools' rates must be identical (checked, and printed with the generator's own count).
Targets: at most 0.6 times pytrec_eval's wall time and 0.5 times its peak memory (the fastest peer);
the ratios to ir_measures are kept for the record (their earlier target was 0.25 and 0.5).

Two reference rows say what part of ours is not the evaluation: the import floor (a process that
imports what `retrieval-eval run` imports and does nothing else) and ours where pandas is not
installed (the run is simulated by making `import pandas` fail in the child). pyarrow would import
pandas, which ranx installs, on its first `pa.array` or `to_numpy`; ours crosses between Arrow and
Python without either (core/base/arrow_arrays.py), so that row should match ours within noise. ranx is a
reference only: without it (it needs numba) its rows are left out.
"""

from __future__ import annotations

import json
import sys

import _common as c

TARGET_WALL = 0.6
TARGET_MEMORY = 0.5
PEER = "pytrec_eval"
GENERATOR_VERSION = 2

IR_MEASURES = """
import json, sys, ir_measures
from ir_measures import Success
rates = ir_measures.calc_aggregate([Success@1, Success@3], ir_measures.read_trec_qrels(sys.argv[1]), ir_measures.read_trec_run(sys.argv[2]))
print(json.dumps({"top1": rates[Success@1], "top3": rates[Success@3]}))
"""

PYTREC_EVAL = """
import json, sys, pytrec_eval
qrels, run = {}, {}
with open(sys.argv[1]) as lines:
    for line in lines:
        qid, _, doc, relevance = line.split()
        qrels.setdefault(qid, {})[doc] = int(relevance)
with open(sys.argv[2]) as lines:
    for line in lines:
        qid, _, doc, _, score, _ = line.split()
        run.setdefault(qid, {})[doc] = float(score)
per_query = pytrec_eval.RelevanceEvaluator(qrels, {"success.1,3"}).evaluate(run)
count = len(per_query)
print(json.dumps({"top1": sum(q["success_1"] for q in per_query.values()) / count,
                  "top3": sum(q["success_3"] for q in per_query.values()) / count}))
"""

# What `retrieval-eval run` imports on this path (pandas no longer: see the docstring).
IMPORT_FLOOR = """
import click, yaml, pydantic, numpy
import pyarrow, pyarrow.compute, pyarrow.csv, pyarrow.parquet
import retrieval_pipeline.cli.run, retrieval_pipeline.cli.render.payloads, retrieval_pipeline.core.services.evaluation.record
import retrieval_pipeline.core.services.configuration.project, retrieval_pipeline.core.retrieval.run_blocks, retrieval_pipeline.retrievers.run_file
"""

WITHOUT_PANDAS = """
import importlib.abc, sys
class NoPandas(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.partition(".")[0] == "pandas":
            raise ImportError("pandas is not installed (simulated)")
sys.meta_path.insert(0, NoPandas())
from retrieval_pipeline.cli import main
sys.argv = ["retrieval-eval", *sys.argv[1:]]
main()
"""

RANX = """
import json, sys
from ranx import Qrels, Run, evaluate
rates = evaluate(Qrels.from_file(sys.argv[1], kind="trec"), Run.from_file(sys.argv[2], kind="trec"), ["hit_rate@1", "hit_rate@3"])
print(json.dumps({"top1": float(rates["hit_rate@1"]), "top3": float(rates["hit_rate@3"])}))
"""


def generate(folder, queries: int, depth: int, seed: int = 11) -> dict:
    """Write run.trec, qrels.trec, set.jsonl and config.yaml once per size; returns the true rates."""
    import numpy as np

    manifest = folder / "manifest.json"
    if manifest.is_file():
        recorded = json.loads(manifest.read_text())
        if recorded.get("version") == GENERATOR_VERSION:
            return recorded
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    pool = 1_000_000
    hits1 = hits3 = 0
    scores = [f"{1000 - rank * 7.25:.2f}" for rank in range(depth)]  # strictly decreasing: no ties to break
    with (
        (folder / "run.trec").open("w") as run,
        (folder / "qrels.trec").open("w") as qrels,
        (folder / "set.jsonl").open("w") as golden,
    ):
        golden.write(json.dumps({"identifier": "bench.run_file", "name": "synthetic run-file set"}) + "\n")
        for number in range(queries):
            qid = f"q{number:06d}"
            documents = rng.choice(pool, size=depth + 3, replace=False)
            ranked, extra = documents[:depth], documents[depth:]
            relevant_count = int(rng.integers(1, 4))
            draw = rng.random()
            if draw < 0.30:
                first = 0
            elif draw < 0.50:
                first = int(rng.integers(1, 3))
            elif draw < 0.80:
                first = int(rng.integers(3, depth))
            else:
                first = None  # the relevant documents are not retrieved
            relevant = [ranked[first]] if first is not None else [extra[0]]
            relevant += list(extra[1:relevant_count])
            hits1 += first == 0
            hits3 += first is not None and first < 3
            ids = [f"D{doc:07d}" for doc in ranked]
            run.write("".join(f"{qid} Q0 {doc} {rank + 1} {scores[rank]} bench\n" for rank, doc in enumerate(ids)))
            expected = [f"D{doc:07d}" for doc in relevant]
            qrels.write("".join(f"{qid} 0 {doc} 1\n" for doc in expected))
            golden.write(
                json.dumps(
                    {"id": qid, "question": f"synthetic question {qid}", "form": "match", "expected_document_ids": expected}
                )
                + "\n"
            )
    (folder / "config.yaml").write_text(
        "question_sets:\n  - file: set.jsonl\n"
        "retrievers:\n  replay:\n    kind: run_file\n    path: run.trec\n    question_set: bench.run_file\n",
        encoding="utf-8",
    )
    recorded = {
        "version": GENERATOR_VERSION,
        "queries": queries,
        "depth": depth,
        "top1": hits1 / queries,
        "top3": hits3 / queries,
    }
    manifest.write_text(json.dumps(recorded))
    return recorded


def main(argv: list[str] | None = None) -> c.Report:
    arguments = c.parser(__doc__.splitlines()[0])
    arguments.add_argument("--queries", type=int, default=None, help="queries in the run (default 20,000; 5,000 with --quick)")
    args = arguments.parse_args(argv)
    queries = args.queries or (5_000 if args.quick else 20_000)
    depth = 100
    repeat = c.repetitions(args, full=5, quick=1)
    report = c.Report("bench_run_file", f"2. run file ({queries * depth:,} lines)", args.quick)
    c.banner(report.title)
    if not c.require_modules("pytrec_eval", "ir_measures", "retrieval_pipeline.retrievers.run_file", "retrieval_pipeline.cli"):
        return report
    peers = (PEER, "ir_measures", *(["ranx"] if c.require_modules("ranx") else []))  # ranx: for the record only

    folder = c.work_dir("run_file", f"{queries}x{depth}")
    truth = generate(folder, queries, depth)
    run_path, qrels_path = folder / "run.trec", folder / "qrels.trec"
    print(
        f"  {run_path.relative_to(c.REPO_DIR)}: {run_path.stat().st_size / 2**20:.0f} MiB; expected rates top-1 {truth['top1']:.4f} top-3 {truth['top3']:.4f}"
    )

    python = sys.executable
    cli = c.cli_executable()
    with c.temp_dir("run-file-") as scratch:
        counter = iter(range(10**6))

        def ours_command(store):
            return [
                *cli,
                "run",
                "bench.run_file",
                "replay",
                "--config",
                str(folder / "config.yaml"),
                "--store",
                str(store),
                "--json",
            ]

        sources = {"pytrec_eval": PYTREC_EVAL, "ir_measures": IR_MEASURES, "ranx": RANX}
        commands = {
            "import_floor": [python, "-c", IMPORT_FLOOR],
            **{name: [python, "-c", sources[name], str(qrels_path), str(run_path)] for name in peers},
        }
        env = {
            c.CACHE_ENV: str(scratch / "cache"),
            "NUMBA_CACHE_DIR": str(c.work_dir("numba-cache")),
            # Bytecode as an installed package has it, even where the shell sets PYTHONDONTWRITEBYTECODE:
            # otherwise every child compiles our modules from source (~0.1 s the peers never pay).
            "PYTHONDONTWRITEBYTECODE": "",
            "PYTHONPYCACHEPREFIX": str(c.work_dir("pycache")),
        }
        samples: dict[str, list[c.ProcessSample]] = {
            name: [] for name in ("ours", "ours_baseline", "ours_without_pandas", "import_floor", *peers)
        }
        baseline_store = scratch / "store-with-baseline"
        for round_number in range(1 + repeat):  # round 0 warms the page cache, bytecode and numba's cache
            rows = {
                "ours": ours_command(scratch / f"store-{next(counter)}"),
                "ours_baseline": ours_command(baseline_store),
                "ours_without_pandas": [python, "-c", WITHOUT_PANDAS, *ours_command(scratch / f"store-{next(counter)}")[1:]],
                **commands,
            }
            for name, command in rows.items():
                sample = c.run_process(command, env=env)
                if round_number:
                    samples[name].append(sample)
        rates = {}
        for name, runs in samples.items():
            if name == "import_floor":
                continue
            document = json.loads(runs[-1].stdout)
            rates[name] = (
                (document["top1_hit_rate"], document["top3_hit_rate"])
                if name.startswith("ours")
                else (document["top1"], document["top3"])
            )
        print("  rates (top-1, top-3): " + "; ".join(f"{name} {r[0]!r}, {r[1]!r}" for name, r in rates.items()))
        identical = len(set(rates.values())) == 1 and rates["ours"] == (truth["top1"], truth["top3"])
        print(f"  identical across tools and equal to the generator's count: {identical}")
        if not identical:
            print("  RATES DIFFER", file=sys.stderr)

        wall = {name: c.median_wall(runs) for name, runs in samples.items()}
        peak = {name: c.median_peak(runs) for name, runs in samples.items()}

        def wall_ratio(name, baseline):
            return c.paired_ratio([s.wall_seconds for s in samples[name]], [s.wall_seconds for s in samples[baseline]])

        for baseline in peers:
            report.add(
                f"wall time vs {baseline}",
                c.fmt_seconds(wall["ours"]),
                f"{baseline} {c.fmt_seconds(wall[baseline])}",
                wall_ratio("ours", baseline),
                target=TARGET_WALL if baseline == PEER else None,
                note=("includes saving the run to a Parquet store; " if baseline == PEER else "")
                + "best-of ratio "
                + f"{c.best_ratio([s.wall_seconds for s in samples['ours']], [s.wall_seconds for s in samples[baseline]]):.3f}×",
            )
            report.add(
                f"peak memory vs {baseline}",
                c.fmt_bytes(peak["ours"]),
                f"{baseline} {c.fmt_bytes(peak[baseline])}",
                peak["ours"] / peak[baseline],
                target=TARGET_MEMORY if baseline == PEER else None,
            )
        report.add(
            "with a baseline in the store (read + compare + save)",
            c.fmt_seconds(wall["ours_baseline"]),
            f"{PEER} {c.fmt_seconds(wall[PEER])}",
            wall_ratio("ours_baseline", PEER),
            note=f"peak {c.fmt_bytes(peak['ours_baseline'])}; rates identical to {', '.join(peers)}: {identical}",
        )
        for name, label in (
            ("ours_without_pandas", "where pandas is not installed (simulated)"),
            ("import_floor", "import floor: the same imports, no work"),
        ):
            report.add(
                label,
                f"{c.fmt_seconds(wall[name])}, {c.fmt_bytes(peak[name])}",
                f"{PEER} {c.fmt_seconds(wall[PEER])}, {c.fmt_bytes(peak[PEER])}",
                wall_ratio(name, PEER),
                note=f"ratio column: wall time; peak memory {peak[name] / peak[PEER]:.3f}×",
            )
        report.details.update(
            lines=queries * depth,
            rates={name: list(r) for name, r in rates.items()},
            identical=identical,
        )
        report.keep_samples(samples)
    report.save()
    return report


if __name__ == "__main__":
    main(sys.argv[1:])
