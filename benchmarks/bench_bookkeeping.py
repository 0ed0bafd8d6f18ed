"""Bookkeeping per partition: what Dagster and our evaluation asset add to one evaluation, against Dagster's own floor.

`retrieval-eval nightly`, the schedule and the sensors run one Dagster run per partition, so what a
partition costs beyond its evaluation is paid once per set x retriever pair. One process, one persistent
SQLite instance in a scratch DAGSTER_HOME (the repository's dagster.yaml), the embedded demo's
configuration (the Cranfield demo set, 240 questions, x 3 BM25 retrievers over 1,400 abstracts) copied
under benchmarks/.work with its store and index cache there; the set's and the retriever's partitions
are materialized once first (the BM25 index is built then, so the cache is warm, as a nightly finds it).
Each round runs, back to back, for the pair demo.cranfield x bm25_stemmed:

- dagster: `defs.resolve_job_def("retrieval_evaluation_job").execute_in_process(instance=..., partition_key=...)`
  with nightly's run config (console logger at CRITICAL), i.e. one partition's run as nightly makes it;
- core:    `evaluate_and_record(set, retriever, store, settings)` in the same process, with the set parsed,
  the retriever built and the settings read once beforehand (a store of its own, which grows by one run a
  round like the Dagster side's);
- floor:   Dagster's own floor: a trivial asset partitioned by a `StaticPartitionsDefinition` returning a
  `MaterializeResult` with one float of metadata and the passing result of a partitioned asset check
  (`check_specs`), one partition per run, same instance, same run config, in-process executor. The check is
  in the floor because the evaluation asset has one: its planned and evaluation events are Dagster's
  bookkeeping, not ours. Two references beside it: the same asset without the check, and the same asset
  with the evaluation's own partitions (the set x retriever `MultiPartitionsDefinition`).

Bookkeeping per partition = dagster - core, per round; the ratio is the median of the per-round ratios
(dagster - core) / floor (goal of issue 39: at most 1.2x). Where the difference goes: during the timed
rounds, the functions the asset's body calls beside the core's evaluation (the configuration read per
run, the set's status read from the instance, the UI metadata with its history read and chart, the
check's result) are timed where they are called (wall time, wrappers on the names the callers look up,
no profiler), and the ratio is recomputed without the chart; then, under cProfile (CPU time, several runs
of each side), Dagster's own parts of the evaluation's run beside the floor's (events, run records,
resources, serialisation). Nothing here changes product code; `--no-profile` skips the profile.
"""

from __future__ import annotations

import cProfile
import functools
import importlib
import os
import pstats
import statistics
import sys
import time
import warnings
from collections import defaultdict
from pathlib import Path

import _common as c

SET, RETRIEVER = "demo.cranfield", "bm25_stemmed"
TARGET = 1.2
PROFILED_RUNS = 8
WARMUP = 2

# (label, file name fragment, function name): cumulative CPU time per run of each, under cProfile.
DAGSTER_SPOTS = (
    ("the whole run (execute_in_process)", "job_definition.py", "execute_in_process"),
    ("run record and planned events (create_run_for_job)", "run_methods.py", "create_run_for_job"),
    ("every event written to the instance (handle_new_event)", "event_methods.py", "handle_new_event"),
    ("  of which the run's own SQLite event database set up (_initdb)", "sqlite_event_log.py", "_initdb"),
    ("metadata typed by Dagster (normalize_metadata)", "definitions/metadata/__init__.py", "normalize_metadata"),
    ("events serialised (serialize_value)", "serdes/serdes.py", "serialize_value"),
    (
        "resources set up (resource_initialization_event_generator)",
        "resources_init.py",
        "resource_initialization_event_generator",
    ),
    ("the asset's body (execute_core_compute)", "plan/compute.py", "execute_core_compute"),
)
BODY_SPOTS = (
    ("our asset body (retrieval_evaluation)", "dagster_layer/assets.py", "retrieval_evaluation"),
    ("  the core's evaluation (evaluate_and_record)", "core/services/evaluation/record.py", "evaluate_and_record"),
    ("  set's status read from the instance (refuse_failed_set)", "dagster_layer/assets.py", "refuse_failed_set"),
    ("  configuration read, once a run (load_config)", "core/services/configuration/project.py", "load_config"),
    ("  set file parsed (load_question_set_file)", "core/golden/question_files.py", "load_question_set_file"),
    (
        "  retriever from the process's index memo (ProjectConfig.retriever)",
        "core/services/configuration/project.py",
        "retriever",
    ),
    ("  settings (EvaluationSettings.from_config)", "core/services/configuration/settings.py", "from_config"),
    ("  UI metadata (evaluation_metadata)", "dagster_layer/metadata/charted.py", "evaluation_metadata"),
    ("    history read from the store (history_chart_data)", "core/services/evaluation/chart_data.py", "history_chart_data"),
    ("    history chart drawn, SVG (history_chart_svg)", "reports/history_svg.py", "history_chart_svg"),
    ("  check result (regression_check_result)", "dagster_layer/checks.py", "regression_check_result"),
    ("  views of the evaluation (evaluation_view, metadata and check)", "views/evaluation_view.py", "evaluation_view"),
)


# (label, module, attribute): what the evaluation asset's body calls, timed where it is called (wall time,
# no profiler) by wrapping the name the caller looks up; nested labels are inside the one above them.
IN_PLACE = (
    (
        "the core's evaluation (evaluate_and_record)",
        "retrieval_pipeline.core.services.evaluation.configured",
        "evaluate_and_record",
    ),
    ("set's status read from the instance (refuse_failed_set)", "retrieval_pipeline.dagster_layer.assets", "refuse_failed_set"),
    ("configuration read, once a run (load_config)", "retrieval_pipeline.dagster_layer.resources", "load_config"),
    (
        "retriever from the process's index memo (ProjectConfig.retriever)",
        "retrieval_pipeline.core.services.configuration.project",
        "ProjectConfig.retriever",
    ),
    ("UI metadata (evaluation_metadata)", "retrieval_pipeline.dagster_layer.assets", "evaluation_metadata"),
    (
        "  history read from the store (history_chart_data)",
        "retrieval_pipeline.dagster_layer.metadata.charted",
        "history_chart_data",
    ),
    (
        "  history chart drawn as SVG (history_chart_svg)",
        "retrieval_pipeline.dagster_layer.metadata.charted",
        "history_chart_svg",
    ),
    ("check result (regression_check_result)", "retrieval_pipeline.dagster_layer.assets", "regression_check_result"),
)
CHART = "  history chart drawn as SVG (history_chart_svg)"


class InPlace:
    """Wall time of each IN_PLACE function, summed per run of the evaluation job."""

    def __init__(self) -> None:
        self.runs: list[dict[str, float]] = []
        self._current: dict[str, float] = defaultdict(float)
        self._originals: list[tuple[object, str, object]] = []

    def install(self) -> None:
        for label, module, attribute in IN_PLACE:
            owner = importlib.import_module(module)
            *path, name = attribute.split(".")
            for part in path:
                owner = getattr(owner, part)
            original = getattr(owner, name)
            self._originals.append((owner, name, original))
            setattr(owner, name, self._timed(label, original))

    def uninstall(self) -> None:
        for owner, name, original in reversed(self._originals):
            setattr(owner, name, original)
        self._originals.clear()

    def _timed(self, label: str, original):
        @functools.wraps(original)
        def timed(*args, **kwargs):
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self._current[label] += time.perf_counter() - started

        return timed

    def run(self, case):
        self._current = defaultdict(float)
        result = case()
        self.runs.append({label: self._current.get(label, 0.0) for label, _, _ in IN_PLACE})
        return result


def project(folder: Path) -> Path:
    """The embedded demo's configuration with its corpus, set, store and index cache named absolutely."""
    from importlib.resources import files

    import yaml

    demo = Path(str(files("retrieval_pipeline.demo")))
    config = yaml.safe_load((demo / "config.yaml").read_text(encoding="utf-8"))
    config["store"] = str(folder / "store-dagster")
    config["cache_dir"] = str(folder / "cache")
    config["question_sets"] = [{"file": str(demo / entry["file"])} for entry in config["question_sets"]]
    for spec in config["retrievers"].values():
        spec["corpus"] = str(demo / spec["corpus"])
    path = folder / "config.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


def floor_definitions(set_identifiers: list[str], retriever_identifiers: list[str]):
    """Trivial partitioned assets, each with the job that runs one of its partitions."""
    from dagster import (
        AssetCheckResult,
        AssetCheckSpec,
        Definitions,
        MaterializeResult,
        MultiPartitionsDefinition,
        PreviewWarning,
        StaticPartitionsDefinition,
        asset,
        define_asset_job,
        in_process_executor,
    )

    static = StaticPartitionsDefinition(retriever_identifiers)
    two_dimensions = MultiPartitionsDefinition(
        {"set": StaticPartitionsDefinition(set_identifiers), "retriever": StaticPartitionsDefinition(retriever_identifiers)}
    )
    with warnings.catch_warnings():  # partitioned checks are a preview feature in Dagster 1.13
        warnings.simplefilter("ignore", PreviewWarning)
        checked_spec = AssetCheckSpec("passes", asset="floor_checked", partitions_def=static)
        two_dimensions_spec = AssetCheckSpec("passes", asset="floor_two_dimensions", partitions_def=two_dimensions)

    @asset(partitions_def=static, check_specs=[checked_spec])
    def floor_checked():
        return MaterializeResult(metadata={"value": 0.5}, check_results=[AssetCheckResult(passed=True)])

    @asset(partitions_def=static)
    def floor_plain():
        return MaterializeResult(metadata={"value": 0.5})

    @asset(partitions_def=two_dimensions, check_specs=[two_dimensions_spec])
    def floor_two_dimensions():
        return MaterializeResult(metadata={"value": 0.5}, check_results=[AssetCheckResult(passed=True)])

    assets = [floor_checked, floor_plain, floor_two_dimensions]
    return Definitions(
        assets=assets, jobs=[define_asset_job(f"{a.key.path[-1]}_job", [a]) for a in assets], executor=in_process_executor
    )


def main(argv: list[str] | None = None) -> c.Report:
    arguments = c.parser(__doc__.splitlines()[0])
    arguments.add_argument("--no-profile", action="store_true", help="skip the profiled runs")
    args = arguments.parse_args(argv)
    repeat = c.repetitions(args, full=15, quick=3)
    report = c.Report("bench_bookkeeping", "14. bookkeeping per partition", args.quick)
    c.banner(report.title)
    with c.temp_dir("bookkeeping-") as scratch:
        home = scratch / "dagster_home"
        home.mkdir()
        (home / "dagster.yaml").write_text((c.REPO_DIR / "dagster.yaml").read_text(encoding="utf-8"), encoding="utf-8")
        os.environ["DAGSTER_HOME"] = str(home)
        from retrieval_pipeline.cli import command_process

        with command_process():
            _measure(scratch, home, args, repeat, report)
    report.save()
    return report


def _measure(scratch: Path, home: Path, args, repeat: int, report: c.Report) -> None:
    from dagster import DagsterInstance

    from retrieval_pipeline.core.services.configuration.project import load_config
    from retrieval_pipeline.core.services.configuration.settings import EvaluationSettings
    from retrieval_pipeline.core.services.evaluation.record import evaluate_and_record
    from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore
    from retrieval_pipeline.dagster_layer.definitions import EVALUATION_JOB, RETRIEVERS_JOB, SETS_JOB, build_definitions
    from retrieval_pipeline.dagster_layer.nightly import QUIET_RUN_CONFIG
    from retrieval_pipeline.dagster_layer.partitions import project_partitions

    config_path = project(scratch)
    defs = build_definitions(config_path)
    config = load_config(config_path)
    partitions = project_partitions(config, source=str(config_path))
    key = partitions.evaluation_key(SET, RETRIEVER)  # the floor's two dimensions are named alike
    floors = floor_definitions(list(partitions.set_identifiers), list(partitions.retriever_identifiers))
    core_store = ResultStore(str(scratch / "store-core"))
    with DagsterInstance.from_config(str(home)) as instance:

        def run(definitions, job: str, partition_key: str):
            return definitions.resolve_job_def(job).execute_in_process(
                instance=instance, partition_key=partition_key, run_config=QUIET_RUN_CONFIG, raise_on_error=True
            )

        started = time.perf_counter()
        run(defs, SETS_JOB, SET)  # the set's partition, as nightly runs it first
        run(defs, RETRIEVERS_JOB, RETRIEVER)  # builds the BM25 index into the cache folder
        print(f"  set and retriever partitions materialized ({time.perf_counter() - started:.1f} s)", flush=True)
        question_set, retriever = config.question_set(SET), config.retriever(RETRIEVER)
        settings = EvaluationSettings.from_config(config)
        in_place = InPlace()
        cases = {
            "dagster": lambda: in_place.run(lambda: run(defs, EVALUATION_JOB, key)),
            "core": lambda: evaluate_and_record(question_set, retriever, core_store, settings),
            "floor": lambda: run(floors, "floor_checked_job", RETRIEVER),
            "floor_plain": lambda: run(floors, "floor_plain_job", RETRIEVER),
            "floor_two_dimensions": lambda: run(floors, "floor_two_dimensions_job", key),
        }
        in_place.install()
        try:
            timings = c.measure(cases, repeat=repeat, warmup=WARMUP)
        finally:
            in_place.uninstall()
        _report_timings(report, timings, repeat)
        _report_in_place(report, timings, in_place.runs[WARMUP:])
        report.details["events"] = events = {
            name: _run_events(instance, timings[name].result.run_id) for name in ("dagster", "floor", "floor_plain")
        }
        history = len(list(ResultStore(config.store_uri).history(HistoryKey(SET, RETRIEVER))))
        report.details["history_runs_at_end"] = history
        print(
            f"  events a run writes: evaluation {events['dagster']['count']} "
            f"(materialization {events['dagster']['materialization_bytes']:,} bytes serialized), floor {events['floor']['count']} "
            f"({events['floor']['materialization_bytes']:,} bytes), floor without check {events['floor_plain']['count']}; "
            f"the pair's history held {history} runs at the end",
            flush=True,
        )
        if not args.no_profile:
            _profile(report, cases, events, history)


def _report_timings(report: c.Report, timings: dict[str, c.Timing], repeat: int) -> None:
    dagster, core, floor = (timings[name].samples for name in ("dagster", "core", "floor"))
    bookkeeping = [d - k for d, k in zip(dagster, core)]
    report.details["samples_s"] = {name: timing.samples for name, timing in timings.items()}
    report.details["bookkeeping_s"] = bookkeeping
    ratio = c.paired_ratio(bookkeeping, floor)
    spread = sorted(b / f for b, f in zip(bookkeeping, floor))
    report.add(
        "(a) bookkeeping per partition: evaluation partition's run − the same evaluation through the core",
        c.fmt_seconds(statistics.median(bookkeeping)),
        f"(b) Dagster's floor: trivial partitioned asset + check, one partition's run {c.fmt_seconds(statistics.median(floor))}",
        ratio,
        target=TARGET,
        note=f"median of {repeat} per-round ratios (a)/(b); quartiles {_quartiles(spread)}; "
        f"run {c.fmt_seconds(statistics.median(dagster))} vs core {c.fmt_seconds(statistics.median(core))}; "
        f"best-of ratio {(min(dagster) - min(core)) / min(floor):.2f}×",
    )
    for name, what in (
        ("floor_plain", "the floor without its check"),
        ("floor_two_dimensions", "the floor with the evaluation's set × retriever partitions"),
    ):
        samples = timings[name].samples
        report.add(
            f"(a) against {what}",
            c.fmt_seconds(statistics.median(bookkeeping)),
            f"{what} {c.fmt_seconds(statistics.median(samples))}",
            c.paired_ratio(bookkeeping, samples),
            headline=False,
        )
    report.add(
        "the evaluation partition's whole run against the core's evaluation alone",
        c.fmt_seconds(statistics.median(dagster)),
        f"evaluate_and_record {c.fmt_seconds(statistics.median(core))}",
        c.paired_ratio(dagster, core),
        headline=False,
    )
    report.add(
        "the floor's check: floor with check against without",
        c.fmt_seconds(statistics.median(floor)),
        f"without check {c.fmt_seconds(statistics.median(timings['floor_plain'].samples))}",
        c.paired_ratio(floor, timings["floor_plain"].samples),
        headline=False,
    )


def _report_in_place(report: c.Report, timings: dict[str, c.Timing], runs: list[dict[str, float]]) -> None:
    """The bookkeeping split into our body's parts (timed in place) and the rest of Dagster's run."""
    dagster, core, floor = (timings[name].samples for name in ("dagster", "core", "floor"))
    report.details["in_place_s"] = runs
    top = [label for label, _, _ in IN_PLACE if not label.startswith(" ")]
    evaluation = IN_PLACE[0][0]
    outside = [d - sum(run[label] for label in top) for d, run in zip(dagster, runs)]
    ours = [sum(run[label] for label in top if label != evaluation) + run[evaluation] - k for run, k in zip(runs, core)]
    note = f"wall time, timed where the asset calls it (no profiler), median over the {len(runs)} timed runs"
    for label, _, _ in IN_PLACE:
        report.add(
            f"in place: {label}",
            c.fmt_seconds(statistics.median(run[label] for run in runs)) + " a run",
            note=note,
            headline=False,
        )
    report.add(
        "in place: our body beyond the core (the parts above, evaluate_and_record less the core's own time)",
        c.fmt_seconds(statistics.median(ours)) + " a run",
        "floor " + c.fmt_seconds(statistics.median(floor)),
        c.paired_ratio(ours, floor),
        note=note,
        headline=False,
    )
    report.add(
        "in place: Dagster's run outside our body's timed parts",
        c.fmt_seconds(statistics.median(outside)) + " a run",
        "floor " + c.fmt_seconds(statistics.median(floor)),
        c.paired_ratio(outside, floor),
        note="the run less every top-level part above; the floor runs the same Dagster steps for a trivial body",
        headline=False,
    )
    without_chart = [d - k - run[CHART] for d, k, run in zip(dagster, core, runs)]
    report.add(
        "(a) without the history chart's PNG (what drawing it costs the ratio)",
        c.fmt_seconds(statistics.median(without_chart)),
        "floor " + c.fmt_seconds(statistics.median(floor)),
        c.paired_ratio(without_chart, floor),
        note="bookkeeping per round less that round's history_chart_svg time: the ratio a partition without its chart would have",
        headline=False,
    )


def _quartiles(values: list[float]) -> str:
    if len(values) < 4:
        return f"{values[0]:.2f}-{values[-1]:.2f}× (all rounds)"
    low, _, high = statistics.quantiles(values, n=4)
    return f"{low:.2f}-{high:.2f}×"


def _run_events(instance, run_id: str) -> dict:
    """How many events a run wrote and the size of its materialization's serialized event."""
    from dagster import DagsterEventType, serialize_value

    records = instance.get_records_for_run(run_id, limit=1000).records
    sizes = [
        len(serialize_value(r.event_log_entry))
        for r in records
        if r.event_log_entry.dagster_event_type == DagsterEventType.ASSET_MATERIALIZATION
    ]
    return {"count": len(records), "materialization_bytes": sum(sizes)}


def _profile(report: c.Report, cases: dict, events: dict, history: int) -> None:
    """Several runs of each side under cProfile, CPU time (waiting for a core of a shared machine is not
    anyone's cost); per run, where the evaluation's run goes beside the floor's."""
    profiles = {}
    for name in ("dagster", "floor", "core"):
        profiler = cProfile.Profile(time.process_time)
        started = time.process_time()
        profiler.enable()
        for _ in range(PROFILED_RUNS):
            cases[name]()
        profiler.disable()
        profiles[name] = (pstats.Stats(profiler).stats, (time.process_time() - started) / PROFILED_RUNS)
    spots = {
        name: {label: _spot(stats, fragment, function) for label, fragment, function in DAGSTER_SPOTS + BODY_SPOTS}
        for name, (stats, _) in profiles.items()
    }
    report.details["profile_per_run_cpu_s"] = {name: {"total": total, **spots[name]} for name, (_, total) in profiles.items()}
    note = f"cProfile, CPU time per run, mean of {PROFILED_RUNS} runs (profiling inflates Python code; shares, not absolutes)"
    dagster_total, floor_total, core_total = (profiles[name][1] for name in ("dagster", "floor", "core"))
    report.add(
        "profiled CPU per run: evaluation partition's run / core's evaluation / floor",
        f"{c.fmt_seconds(dagster_total)} / {c.fmt_seconds(core_total)} / {c.fmt_seconds(floor_total)}",
        note=f"{note}; bookkeeping (run − core) {c.fmt_seconds(dagster_total - core_total)} = "
        f"{(dagster_total - core_total) / floor_total:.2f}× the floor's CPU",
        headline=False,
    )
    for label, _, _ in DAGSTER_SPOTS:
        ours, floor = spots["dagster"][label], spots["floor"][label]
        report.add(
            f"profile, Dagster: {label}",
            f"{c.fmt_seconds(ours)} a run",
            f"floor {c.fmt_seconds(floor)}",
            ours / floor if floor else None,
            note=note,
            headline=False,
        )
    body, core = spots["dagster"][BODY_SPOTS[0][0]], spots["dagster"][BODY_SPOTS[1][0]]
    floor_body = spots["floor"][DAGSTER_SPOTS[-1][0]]
    dagster_rest = (dagster_total - spots["dagster"][DAGSTER_SPOTS[-1][0]]) - (floor_total - floor_body)
    report.details["profile_summary"] = summary = {
        "our_body_beyond_core_s": body - core,
        "dagster_beyond_floor_outside_body_s": dagster_rest,
        "materialization_bytes": events["dagster"]["materialization_bytes"],
        "history_runs": history,
    }
    print(
        f"  our body beyond the core: {c.fmt_seconds(summary['our_body_beyond_core_s'])} a run; Dagster's own work beyond "
        f"the floor's, outside the bodies: {c.fmt_seconds(dagster_rest)} a run (CPU, profiled)",
        flush=True,
    )


def _spot(stats: dict, fragment: str, function: str) -> float:
    """Cumulative time of `function` in a file whose path holds `fragment`, per profiled run."""
    found = [v[3] for (file, _, name), v in stats.items() if name == function and fragment in file]
    return max(found, default=0.0) / PROFILED_RUNS


if __name__ == "__main__":
    main(sys.argv[1:])
