"""7. Orchestration: `retrieval-eval nightly` over 24 partitions versus the same evaluations through the core.

The configuration (built under benchmarks/.work/, from the demo shipped in the package, so no shared
data is needed): 2 question sets (the Cranfield demo set, 240 questions, under two identifiers) x 12
BM25 retrievers over the demo's 1,400 Cranfield abstracts (k1 in 0.9 / 1.2 / 1.5 / 2.0, b in 0.5 /
0.75 / 0.9: twelve distinct indexes), i.e. 24 evaluation partitions. A warm-up round builds the twelve
indexes into the configuration's cache folder, as a team's nightly finds them.

Each repetition runs two child processes back to back, each timing its own work after its imports, and
both under the command line's process settings (`cli.command_process()`: the cycle collector's
threshold, Arrow's allocator), so that only the orchestration differs:
- nightly: `retrieval-eval nightly --config C --store S`, invoked in-process through click (one run for
  the sets with their label checks, one building the 12 retrievers, one of the 24 evaluations with their
  checks and history charts, the leaderboard run; Dagster imported inside,
  as the command does) on a Dagster instance kept across repetitions (a team's instance exists), a
  fresh result store each time;
- core:    `load_config` once, then `evaluate_and_record(set, retriever, store, settings)` for the same
  24 pairs in one process (the settings built from the configuration once, as the evaluation asset
  builds them), a fresh result store each time.
Both again on 4 sets (48 partitions), so that the overhead splits into what a nightly pays once
(importing Dagster, the runs themselves) and what each partition adds.
Reported: the overhead per partition ((nightly - core) / 24, median of per-round differences; target
150 ms), the cost per additional partition, both processes' walls, and where nightly's time goes
(cProfile of one nightly; `--no-profile` skips it).
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

import _common as c

SETS = 2
K1 = (0.9, 1.2, 1.5, 2.0)
B = (0.5, 0.75, 0.9)
TARGET_MS = 150.0

NIGHTLY = """
import json, os, sqlite3, sys, time
started = time.perf_counter()
from click.testing import CliRunner
from retrieval_pipeline.cli import main
imported = time.perf_counter()
result = CliRunner().invoke(main, ["nightly", "--config", sys.argv[1], "--store", sys.argv[2]])
done = time.perf_counter()
with sqlite3.connect(os.path.join(os.environ["DAGSTER_HOME"], "history", "runs.db")) as runs:
    run_count = runs.execute("select count(*) from runs").fetchone()[0]
print(json.dumps({"import_s": imported - started, "work_s": done - imported, "exit_code": result.exit_code,
                  "runs_in_instance": run_count}))
"""

CORE = """
import json, sys, time
started = time.perf_counter()
from retrieval_pipeline.cli import command_process
from retrieval_pipeline.core.services.config import load_config
from retrieval_pipeline.core.services.evaluation import evaluate_and_record
from retrieval_pipeline.core.services.settings import EvaluationSettings
from retrieval_pipeline.core.storage.store import ResultStore
imported = time.perf_counter()
with command_process():
    config = load_config(sys.argv[1])
    store = ResultStore(sys.argv[2])
    settings = EvaluationSettings.from_config(config)
    rates = []
    for set_identifier in sorted(config.question_sets):
        for retriever_identifier in config.retriever_identifiers:
            evaluation = evaluate_and_record(config.question_set(set_identifier), config.retriever(retriever_identifier), store,
                                             settings)
            rates.append(evaluation.run.hit_rate(1))
done = time.perf_counter()
print(json.dumps({"import_s": imported - started, "work_s": done - imported, "evaluations": len(rates)}))
"""

# (label, file name fragment, function name): cumulative time of each in one profiled nightly.
PROFILE_SPOTS = (
    ("Dagster runs in all (execute_in_process)", "job_definition.py", "execute_in_process"),
    ("definitions built (build_definitions)", "dagster_layer/definitions.py", "build_definitions"),
    ("configuration read (load_config)", "core/services/config.py", "load_config"),
    ("sets parsed (load_question_set_file)", "core/golden/question_files.py", "load_question_set_file"),
    ("retrievers built (LexicalRetriever.from_config)", "retrievers/lexical/retriever.py", "from_config"),
    ("evaluations through the core (evaluate_and_record)", "core/services/evaluation.py", "evaluate_and_record"),
    ("set questions written as Parquet (save_question_set)", "core/storage/store.py", "save_question_set"),
    ("UI metadata (evaluation_metadata)", "dagster_layer/metadata.py", "evaluation_metadata"),
    ("  of which history charts drawn (history_chart_png)", "reports/charts.py", "history_chart_png"),
    ("leaderboard (build_leaderboard)", "core/services/leaderboard.py", "build_leaderboard"),
    ("instance: every event written (handle_new_event)", "event_methods.py", "handle_new_event"),
    ("instance: run records created (create_run_for_job)", "run_methods.py", "create_run_for_job"),
    ("instance: a SQLite event database set up per run (_initdb)", "sqlite_event_log.py", "_initdb"),
    ("SQLite commits (fsync)", "~", "<method 'commit' of 'sqlite3.Connection' objects>"),
)

PROFILE = c.profiled_script(
    "import io\nfrom rich.console import Console\nfrom retrieval_pipeline.cli.nightly import run_nightly",
    "run_nightly(sys.argv[1], sys.argv[2], console=Console(file=io.StringIO()))",
)


def project(folder: Path, sets: int = SETS) -> Path:
    """The `sets` x 12-retriever configuration, its set files and its index cache folder, under `folder`."""
    from importlib.resources import files

    demo = files("retrieval_pipeline.demo")
    text = (demo / "demo.cranfield.yaml").read_text(encoding="utf-8")
    set_files = []
    folder.mkdir(exist_ok=True)
    for number in range(sets):
        path = folder / f"set-{number}.yaml"
        path.write_text(text.replace("identifier: demo.cranfield", f"identifier: bench.cranfield_{number}", 1), encoding="utf-8")
        set_files.append(path.name)
    corpus = Path(str(demo / "cranfield-corpus.jsonl.gz"))
    lines = [
        "store: unused-store",
        "cache_dir: cache",
        "question_sets:",
        *(f"  - file: {name}" for name in set_files),
        "retrievers:",
    ]
    for k1 in K1:
        for b in B:
            name = f"bm25_k{str(k1).replace('.', '')}_b{str(b).replace('.', '')}"
            lines.append(f"  {name}: {{kind: lexical, corpus: {json.dumps(str(corpus))}, k1: {k1}, b: {b}}}")
    config = folder / "config.yaml"
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return config


def main(argv: list[str] | None = None) -> c.Report:
    arguments = c.parser(__doc__.splitlines()[0])
    arguments.add_argument("--no-profile", action="store_true", help="skip the profiled nightly")
    args = arguments.parse_args(argv)
    repeat = c.repetitions(args, full=5, quick=1)
    partitions = SETS * len(K1) * len(B)
    report = c.Report("bench_orchestration", f"7. orchestration ({partitions} partitions)", args.quick)
    c.banner(report.title)
    python = sys.executable
    with c.temp_dir("orchestration-") as scratch:
        # The target's 24 partitions, and twice as many sets (48), to tell the cost paid once per nightly
        # from the cost paid per partition.
        configs = {SETS: project(scratch / "p24"), 2 * SETS: project(scratch / "p48", 2 * SETS)}
        config = configs[SETS]
        env = {"DAGSTER_HOME": str(scratch / "dagster_home")}
        (scratch / "dagster_home").mkdir()
        (scratch / "dagster_home" / "dagster.yaml").write_text((c.REPO_DIR / "dagster.yaml").read_text(encoding="utf-8"))
        scripts = {"nightly": NIGHTLY, "core": CORE}
        names = [f"{name}_{sets}" for sets in configs for name in scripts]
        samples: dict[str, list[c.ProcessSample]] = {name: [] for name in names}
        work: dict[str, list[float]] = {name: [] for name in names}
        for round_number in range(1 + repeat):  # round 0 builds the indexes and the instance's tables
            for sets, project_config in configs.items():
                for name, script in scripts.items():
                    store = scratch / f"store-{name}-{sets}-{round_number}"
                    sample = c.run_process([python, "-c", script, str(project_config), str(store)], env=env, cwd=scratch)
                    figures = json.loads(sample.stdout.strip().splitlines()[-1])
                    if round_number:
                        samples[f"{name}_{sets}"].append(sample)
                        work[f"{name}_{sets}"].append(figures["work_s"])
                    print(f"  round {round_number} {name} ({sets} sets): {json.dumps(figures)}", flush=True)
        report.keep_samples(samples)
        report.details["work_s"] = work
        nightly, core = work[f"nightly_{SETS}"], work[f"core_{SETS}"]
        per_partition = c.paired_difference(nightly, core) / partitions
        report.add(
            "overhead per partition (nightly − core, in-process)",
            c.fmt_seconds(per_partition),
            "core 0 ms",
            per_partition * 1000 / TARGET_MS,
            target_text=f"≤ {TARGET_MS:g} ms (ratio column: share of it)",
            note=f"nightly {c.fmt_seconds(statistics.median(nightly))} vs core "
            f"{c.fmt_seconds(statistics.median(core))} for {partitions} evaluations; "
            f"spreads {_spread(nightly)} / {_spread(core)}",
        )
        report.rows[-1].met = per_partition * 1000 <= TARGET_MS
        overheads = {sets: [n - k for n, k in zip(work[f"nightly_{sets}"], work[f"core_{sets}"])] for sets in configs}
        marginal = statistics.median((b - a) / partitions for a, b in zip(overheads[SETS], overheads[2 * SETS]))
        fixed = statistics.median(overheads[SETS]) - marginal * partitions
        report.add(
            "overhead per additional partition (48 vs 24 partitions)",
            c.fmt_seconds(marginal),
            f"paid once per nightly {c.fmt_seconds(fixed)}",
            note=f"48 partitions: overhead {c.fmt_seconds(statistics.median(overheads[2 * SETS]) / (2 * partitions))} per "
            f"partition (nightly {c.fmt_seconds(statistics.median(work[f'nightly_{2 * SETS}']))} vs core "
            f"{c.fmt_seconds(statistics.median(work[f'core_{2 * SETS}']))})",
        )
        report.add(
            "whole processes (imports included)",
            c.fmt_seconds(c.median_wall(samples[f"nightly_{SETS}"])),
            f"core {c.fmt_seconds(c.median_wall(samples[f'core_{SETS}']))}",
            c.paired_ratio(
                [s.wall_seconds for s in samples[f"nightly_{SETS}"]], [s.wall_seconds for s in samples[f"core_{SETS}"]]
            ),
            note=f"peak RSS {c.fmt_bytes(c.median_peak(samples[f'nightly_{SETS}']))} vs {c.fmt_bytes(c.median_peak(samples[f'core_{SETS}']))}",
        )
        if not args.no_profile:
            profiled = c.run_process(
                [python, "-c", PROFILE, str(config), str(scratch / "store-profile"), json.dumps(PROFILE_SPOTS)],
                env=env,
                cwd=scratch,
            )
            spots = json.loads(profiled.stderr.strip().splitlines()[-1])
            report.details["profile"] = spots
            for label, _, _ in PROFILE_SPOTS:
                spot = spots[label]
                report.add(
                    f"where nightly's time goes: {label}",
                    f"{c.fmt_seconds(spot['cumulative_s'])} ({spot['calls']} calls)",
                    note="cProfile, one nightly (profiling slows Python code ~1.5-2x; shares, not absolutes)",
                    headline=False,
                )
    report.save()
    return report


def _spread(values: list[float]) -> str:
    return f"{min(values):.2f}-{max(values):.2f} s"


if __name__ == "__main__":
    main(sys.argv[1:])
