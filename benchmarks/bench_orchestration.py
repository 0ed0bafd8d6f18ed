"""7. Orchestration: `retrieval-eval nightly` on the demo and on 24 partitions versus the same evaluations through the core.

First, the two ways nightly makes its runs (`ways`): on the demo, `nightly` (launched through the instance
against the code location it serves, the default) and `nightly --in-process`, each a whole process timed
against Dagster's floor made the same way (orchestration_floor.py: a trivial partitioned asset and its
check, as many runs in the same levels, through the same runner), start-up included (goal of issue 47:
at most 1.5x), and what the origin costs per run. `--ways-only` stops there. The rest times in-process
runs (`--in-process`):

`nightly` runs one Dagster run per partition (dagster_layer/nightly.py): each set, each retriever, each
set x retriever evaluation with its check and history chart, then the leaderboard and each set's label
audit. Two configurations, both warm (a warm-up round builds their BM25 indexes into their cache folders,
as a team's nightly finds them):
- demo: the embedded demo's configuration as shipped (the Cranfield demo set, 240 questions, and its
  conversations, 113 turns, x 6 BM25 retrievers over 1,400 abstracts): 12 evaluation partitions, 25 runs
  (3 and 10 before the conversations were added, 6 December 2026);
- 24:   2 question sets (the demo set under two identifiers) x 12 BM25 retrievers (k1 in 0.9 / 1.2 / 1.5 /
  2.0, b in 0.5 / 0.75 / 0.9: twelve distinct indexes), built under benchmarks/.work: 24 evaluation
  partitions, 41 runs.

Each repetition runs, per configuration, two child processes back to back, each timing its own work
after its imports, both under the command line's process settings (`cli.command_process()`: the cycle
collector's threshold, Arrow's allocator), so that only the orchestration differs:
- nightly: `retrieval-eval nightly --config C --store S --in-process`, invoked in-process through click (Dagster
  imported inside, as the command does) on a Dagster instance kept across repetitions (a team's
  instance exists), a fresh result store each time; it reports how many runs it added to the instance;
- core:    `load_config` once, then `evaluate_and_record(set, retriever, store, settings)` for the same
  pairs in one process (the settings built from the configuration once), a fresh result store each time.
Reported: the overhead per evaluation partition ((nightly - core) / partitions, median of per-round
differences; the 150 ms target of issue 15 was set for the range runs this design replaced), the ratio
nightly / core, what nightly spends outside its runs and what each Dagster run adds over the core (its
runs timed around `run_every_partition`), both processes' walls at 24 partitions, and where nightly's time
goes (cProfile of one nightly of 24 partitions; `--no-profile` skips it). `bench_bookkeeping.py` sets one
evaluation partition's run against Dagster's own floor. The same script measures the range runs before
this design (ca4fa04: `PYTHONPATH=<that checkout> python benchmarks/bench_orchestration.py`), without the
per-run split, which needs dagster_layer/nightly.py.
"""

from __future__ import annotations

import json
import os
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
def runs_in_instance():
    path = os.path.join(os.environ["DAGSTER_HOME"], "history", "runs.db")
    if not os.path.exists(path):
        return 0
    with sqlite3.connect(path) as runs:
        return runs.execute("select count(*) from runs").fetchone()[0]
before = runs_in_instance()
started = time.perf_counter()
from click.testing import CliRunner
from retrieval_pipeline.cli import main
imported = time.perf_counter()
runs_s = []
try:
    import retrieval_pipeline.dagster_layer.nightly as stages  # imports Dagster, as the command does first
except ImportError:  # the code before one run per partition (ca4fa04, range runs): its runs are not timed apart
    stages = None
if stages is not None:
    every_partition = stages.run_every_partition
    def timed(*args, **kwargs):  # the command looks the function up when it runs: its runs, timed
        began = time.perf_counter()
        try:
            return every_partition(*args, **kwargs)
        finally:
            runs_s.append(time.perf_counter() - began)
    stages.run_every_partition = timed
result = CliRunner().invoke(main, ["nightly", "--config", sys.argv[1], "--store", sys.argv[2], "--in-process"])
done = time.perf_counter()
if result.exit_code != 0:
    sys.exit(f"nightly exited {result.exit_code}: {result.output[-2000:]}")
print(json.dumps({"import_s": imported - started, "work_s": done - imported, "runs_s": sum(runs_s) if runs_s else None,
                  "exit_code": result.exit_code, "runs": runs_in_instance() - before}))
"""

CORE = """
import json, sys, time
started = time.perf_counter()
from retrieval_pipeline.cli import command_process
from retrieval_pipeline.core.services.configuration.project import load_config
from retrieval_pipeline.core.services.evaluation.record import evaluate_and_record
from retrieval_pipeline.core.services.configuration.settings import EvaluationSettings
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
    ("Dagster runs in all, one per partition (execute_in_process)", "job_definition.py", "execute_in_process"),
    ("definitions built (build_definitions)", "dagster_layer/definitions.py", "build_definitions"),
    ("configuration read, once a run (load_config)", "core/services/configuration/project.py", "load_config"),
    ("sets parsed (load_question_set_file)", "core/golden/question_files.py", "load_question_set_file"),
    ("retrievers built (LexicalKind.build)", "retrievers/lexical/retriever.py", "build"),
    ("evaluations through the core (evaluate_and_record)", "core/services/evaluation/record.py", "evaluate_and_record"),
    ("set questions written as Parquet (save_question_set)", "core/storage/store.py", "save_question_set"),
    ("set's status read from the instance, each evaluation (refuse_failed_set)", "dagster_layer/assets.py", "refuse_failed_set"),
    ("UI metadata (evaluation_metadata)", "dagster_layer/metadata/charted.py", "evaluation_metadata"),
    ("  of which history charts drawn (history_chart_svg)", "reports/history_svg.py", "history_chart_svg"),
    ("leaderboard (build_leaderboard)", "core/services/evaluation/leaderboard.py", "build_leaderboard"),
    ("label audits (label_audit)", "dagster_layer/labels/audit.py", "label_audit"),
    ("instance: every event written (handle_new_event)", "event_methods.py", "handle_new_event"),
    ("instance: run records created (create_run_for_job)", "run_methods.py", "create_run_for_job"),
    ("instance: a SQLite event database set up per run (_initdb)", "sqlite_event_log.py", "_initdb"),
    ("SQLite commits (fsync)", "~", "<method 'commit' of 'sqlite3.Connection' objects>"),
)

WAYS = ("in-process", "launched")

FLOOR = """
import contextlib, json, os, sys
from dagster import DagsterInstance
import orchestration_floor as floor
from retrieval_pipeline.dagster_layer.launched_runs import LaunchedRuns
from retrieval_pipeline.dagster_layer.nightly import InProcessRuns, PartitionRun
keys = iter(floor.PARTITIONS.get_partition_keys())
levels = [[PartitionRun(floor.JOB, next(keys)) for _ in range(size)] for size in json.loads(sys.argv[2])]
if sys.argv[1] == "in-process":
    runner = contextlib.nullcontext(InProcessRuns(floor.defs, DagsterInstance.get()))
else:
    runner = LaunchedRuns({"DAGSTER_HOME": os.environ["DAGSTER_HOME"]}, module="orchestration_floor")
with runner as runs:
    failed = [outcome for level in levels for outcome in runs.run(level) if not outcome.success]
if failed:
    sys.exit(f"floor runs failed: {failed}")
"""
"""Dagster's floor made the way nightly makes its runs: as many runs in the same levels (the asset graph's,
a level's runs submitted together), through the same runner (dagster_layer/nightly.py, launched_runs.py)."""

PROFILE = c.profiled_script(
    "import io\nfrom rich.console import Console\nfrom retrieval_pipeline.cli.nightly import run_nightly",
    "run_nightly(sys.argv[1], sys.argv[2], console=Console(file=io.StringIO()), in_process=True)",
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


def demo_evaluations() -> int:
    """The embedded demo's evaluation partitions: every set by every retriever."""
    from retrieval_pipeline.core.services.configuration.project import load_config

    config = load_config(demo_config())
    return len(config.question_sets) * len(config.retriever_identifiers)


def demo_config() -> Path:
    """The embedded demo's configuration, as shipped (its index cache: $RETRIEVAL_EVAL_CACHE, set below)."""
    from importlib.resources import files

    return Path(str(files("retrieval_pipeline.demo") / "config.yaml"))


def main(argv: list[str] | None = None) -> c.Report:
    arguments = c.parser(__doc__.splitlines()[0])
    arguments.add_argument("--no-profile", action="store_true", help="skip the profiled nightly")
    arguments.add_argument("--ways-only", action="store_true", help="only nightly in process and launched vs the floor")
    args = arguments.parse_args(argv)
    repeat = c.repetitions(args, full=4, quick=1)
    partitions = SETS * len(K1) * len(B)
    report = c.Report("bench_orchestration", "7. orchestration (nightly, one run per partition)", args.quick)
    c.banner(report.title)
    python = sys.executable
    with c.temp_dir("orchestration-") as scratch:
        ways(report, scratch, repeat)
        if args.ways_only:
            report.save()
            return report
        configs = {"demo": demo_config(), "24": project(scratch / "p24")}
        evaluations = {"demo": demo_evaluations(), "24": partitions}
        envs = {}  # an instance of its own per configuration, as each team's code location has its instance
        for size in configs:
            home = scratch / f"dagster_home_{size}"
            home.mkdir()
            (home / "dagster.yaml").write_text((c.REPO_DIR / "dagster.yaml").read_text(encoding="utf-8"))
            envs[size] = {"DAGSTER_HOME": str(home), c.CACHE_ENV: str(scratch / "cache")}
        scripts = {"nightly": NIGHTLY, "core": CORE}
        names = [f"{name}_{size}" for size in configs for name in scripts]
        samples: dict[str, list[c.ProcessSample]] = {name: [] for name in names}
        work: dict[str, list[float]] = {name: [] for name in names}
        runs: dict[str, list[int]] = {size: [] for size in configs}
        runs_in: dict[str, list[float]] = {size: [] for size in configs}
        for round_number in range(1 + repeat):  # round 0 builds the indexes and the instance's tables
            for size, config in configs.items():
                for name, script in scripts.items():
                    store = scratch / f"store-{name}-{size}-{round_number}"
                    sample = c.run_process([python, "-c", script, str(config), str(store)], env=envs[size], cwd=scratch)
                    figures = json.loads(sample.stdout.strip().splitlines()[-1])
                    if name == "core" and figures["evaluations"] != evaluations[size]:
                        raise RuntimeError(f"{size}: {figures['evaluations']} evaluations, expected {evaluations[size]}")
                    if round_number:
                        samples[f"{name}_{size}"].append(sample)
                        work[f"{name}_{size}"].append(figures["work_s"])
                        if name == "nightly":
                            runs[size].append(figures["runs"])
                            runs_in[size].append(figures["runs_s"])
                    print(f"  round {round_number} {name} ({size}): {json.dumps(figures)}", flush=True)
        report.keep_samples(samples)
        report.details.update(work_s=work, runs_per_nightly=runs, nightly_runs_s=runs_in)
        overheads = {size: [n - k for n, k in zip(work[f"nightly_{size}"], work[f"core_{size}"])] for size in configs}
        for size in configs:
            nightly, core = work[f"nightly_{size}"], work[f"core_{size}"]
            count, dagster_runs = evaluations[size], statistics.median(runs[size])
            per_partition = statistics.median(overheads[size]) / count
            target = size == "24"
            report.add(
                f"{'the demo' if size == 'demo' else '24 partitions'}: overhead per evaluation partition (nightly − core, "
                f"in-process; {count} evaluations, {dagster_runs:g} Dagster runs)",
                c.fmt_seconds(per_partition),
                f"core {c.fmt_seconds(statistics.median(core))} for the {count} evaluations",
                per_partition * 1000 / TARGET_MS if target else c.paired_ratio(nightly, core),
                target_text=f"≤ {TARGET_MS:g} ms (ratio column: share of it)" if target else "ratio column: nightly / core",
                note=f"nightly {c.fmt_seconds(statistics.median(nightly))} vs core {c.fmt_seconds(statistics.median(core))}; "
                f"nightly / core {c.paired_ratio(nightly, core):.2f}× (median of per-round ratios); "
                f"spreads {_spread(nightly)} / {_spread(core)}; overhead per Dagster run "
                f"{c.fmt_seconds(statistics.median(overheads[size]) / dagster_runs)}",
            )
            if target:
                report.rows[-1].met = per_partition * 1000 <= TARGET_MS
        for size in configs if all(None not in runs_in[size] for size in configs) else ():
            nightly, runs_s = work[f"nightly_{size}"], runs_in[size]
            outside = [w - r for w, r in zip(nightly, runs_s)]
            per_run = [(r - k) / statistics.median(runs[size]) for r, k in zip(runs_s, work[f"core_{size}"])]
            report.add(
                f"{'the demo' if size == 'demo' else '24 partitions'}: nightly's runs over the core, per Dagster run / "
                "nightly outside its runs",
                c.fmt_seconds(statistics.median(per_run)),
                f"outside its runs {c.fmt_seconds(statistics.median(outside))}",
                note="per run: (the time inside run_every_partition − the core's evaluations) / runs; outside: "
                "importing Dagster, the definitions, the instance, the printed report",
                headline=False,
            )
        report.add(
            "whole processes at 24 partitions (imports included)",
            c.fmt_seconds(c.median_wall(samples["nightly_24"])),
            f"core {c.fmt_seconds(c.median_wall(samples['core_24']))}",
            c.paired_ratio([s.wall_seconds for s in samples["nightly_24"]], [s.wall_seconds for s in samples["core_24"]]),
            note=f"peak RSS {c.fmt_bytes(c.median_peak(samples['nightly_24']))} vs {c.fmt_bytes(c.median_peak(samples['core_24']))}",
        )
        if not args.no_profile:
            profiled = c.run_process(
                [python, "-c", PROFILE, str(configs["24"]), str(scratch / "store-profile"), json.dumps(PROFILE_SPOTS)],
                env=envs["24"],
                cwd=scratch,
            )
            spots = json.loads(profiled.stderr.strip().splitlines()[-1])
            report.details["profile"] = spots
            for label, _, _ in PROFILE_SPOTS:
                spot = spots[label]
                report.add(
                    f"where nightly's time goes (24 partitions): {label}",
                    f"{c.fmt_seconds(spot['cumulative_s'])} ({spot['calls']} calls)",
                    note=f"cProfile, one nightly, CPU time ({c.fmt_seconds(spots['profiled_cpu_s'])} in all; profiling slows "
                    "Python code ~1.5-2x: shares, not absolutes)",
                    headline=False,
                )
    report.save()
    return report


def ways(report: c.Report, scratch: Path, repeat: int) -> None:
    """`nightly` on the demo in process and launched, each a whole process against Dagster's floor made the
    same way in a whole process (start-up and the instance included on both sides); an instance per case,
    kept across rounds, a fresh store per round, one untimed round first."""
    from retrieval_pipeline.dagster_layer.definitions import build_definitions
    from retrieval_pipeline.dagster_layer.nightly import graph_levels

    levels = [len(level) for level in graph_levels(build_definitions(demo_config()))]
    runs = sum(levels)
    path = os.pathsep.join(p for p in (str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")) if p)
    env = {c.CACHE_ENV: str(scratch / "cache"), "PYTHONPATH": path}
    commands = {}
    for way in WAYS:
        flag = ["--in-process"] if way == "in-process" else []
        commands[f"nightly {way}"] = [*c.cli_executable(), "nightly", "--config", str(demo_config()), *flag, "--store"]
        commands[f"floor {way}"] = [sys.executable, "-c", FLOOR, way, json.dumps(levels)]
    for name in commands:
        home = scratch / f"home-{name.replace(' ', '-')}"
        home.mkdir()
        (home / "dagster.yaml").write_text((c.REPO_DIR / "dagster.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    walls: dict[str, list[float]] = {name: [] for name in commands}
    for round_number in range(1 + repeat):
        for name, command in commands.items():
            store = [str(scratch / f"store-{name.replace(' ', '-')}-{round_number}")] if name.startswith("nightly") else []
            home = scratch / f"home-{name.replace(' ', '-')}"
            sample = c.run_process([*command, *store], env={**env, "DAGSTER_HOME": str(home)}, cwd=scratch)
            if round_number:
                walls[name].append(sample.wall_seconds)
            print(f"  round {round_number} {name}: {c.fmt_seconds(sample.wall_seconds)}", flush=True)
    report.details.update(ways_wall_s=walls, ways_levels=levels)
    median = {name: statistics.median(values) for name, values in walls.items()}
    for way in WAYS:
        nightly, floor = walls[f"nightly {way}"], walls[f"floor {way}"]
        report.add(
            f"the demo, runs {way}: nightly against Dagster's floor ({runs} runs in levels {levels}, whole processes)",
            c.fmt_seconds(median[f"nightly {way}"]),
            f"floor {c.fmt_seconds(median[f'floor {way}'])}",
            c.paired_ratio(nightly, floor),
            target=1.5,
            note=f"spreads {_spread(nightly)} / {_spread(floor)}; the floor: a trivial partitioned asset and its check "
            "(orchestration_floor.py) through the runner nightly uses",
        )
    extra = {side: (median[f"{side} launched"] - median[f"{side} in-process"]) / runs for side in ("nightly", "floor")}
    report.add(
        "the demo: what the origin costs, nightly launched against nightly in process",
        f"+{c.fmt_seconds(extra['nightly'])} a run",
        f"the floor: +{c.fmt_seconds(extra['floor'])} a run",
        c.paired_ratio(walls["nightly launched"], walls["nightly in-process"]),
        note="launched: the command serves the code location (`dagster dev`) and the instance's queue starts each run "
        "in a process of its own; ratio column: launched / in-process walls",
        headline=False,
    )


def _spread(values: list[float]) -> str:
    return f"{c.fmt_seconds(min(values))}-{c.fmt_seconds(max(values))}"


if __name__ == "__main__":
    main(sys.argv[1:])
