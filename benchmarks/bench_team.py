"""7. Team deployment: `retrieval-eval nightly` in-process versus a backfill on the team's Celery workers.

The team setup is the one docs/production.md recommends and the team test runs (deploy/team/:
PostgreSQL, the daemon with the queued coordinator, the Celery run launcher on Redis; every job runs in
process), started here on loopback with one and then with two Celery workers of two slots each. A team
evaluates with `dagster job backfill -j retrieval_evaluation_job --all` (or the UI's Launch backfill): one
run per evaluation partition, then the automation sensor refreshes the leaderboard and the label audits.
Two figures per setup: the backfill command until every evaluation run has finished, and until the
automation's leaderboard refresh after them has finished too (the sensor's interval is set to 5 s here,
`dagster.sensor_interval_seconds`; its default of 300 s polls every 30 s). The in-process row is
`retrieval-eval nightly` on a SQLite instance of its own, which also runs the sets, the retrievers, the
leaderboard and the audits, one after the other: a per-run difference would compare unlike work, so only
the walls and their ratios are reported.

Two configurations: the embedded demo (1 set x 3 BM25 retrievers: 3 evaluations) and 24 partitions (the
demo set x 24 BM25 variants, k1 x b x stemmer). Every mode runs once untimed first (index builds land in
the shared cache, workers warm up), then is timed; the figure is the median of the timed rounds. Needs the
[team] extra and Debian's postgresql and redis-server (see .ci/run).
"""

from __future__ import annotations

import itertools
import subprocess
import sys
import time
from pathlib import Path

import _common as c
import yaml

sys.path.insert(0, str(c.REPO_DIR / "retrieval_pipeline_tests" / "team"))
from services import (  # noqa: E402
    TeamDeployment,
    missing_services,
    refreshed_after,
    team_environment,
    team_instance,
    team_services,
    wait_for,
    wait_for_daemon,
    wait_for_runs,
)

DEMO = c.REPO_DIR / "retrieval_pipeline" / "demo"
EVALUATION_JOB = "retrieval_evaluation_job"
WAIT_SECONDS = 900
DAGSTER = {"sensor_interval_seconds": 5}


def demo_config(folder: Path) -> Path:
    """The embedded demo, its files named absolutely, with a fast automation sensor."""
    config = yaml.safe_load((DEMO / "config.yaml").read_text(encoding="utf-8"))
    config["question_sets"] = [{"file": str(DEMO / entry["file"])} for entry in config["question_sets"]]
    for retriever in config["retrievers"].values():
        retriever["corpus"] = str(DEMO / retriever["corpus"])
    config["dagster"] = DAGSTER
    path = folder / "demo.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


def grid_config(folder: Path) -> Path:
    """The demo set against 24 BM25 variants of the demo corpus."""
    retrievers = {
        f"bm25_k{str(k1).replace('.', '')}_b{str(b).replace('.', '')}_{stem or 'plain'}": {
            "kind": "lexical",
            "corpus": str(DEMO / "cranfield-corpus.jsonl.gz"),
            "method": "lucene",
            "k1": k1,
            "b": b,
            "stemmer": stem,
            "stopwords": "en",
            "fields": ["title", "text"],
        }
        for k1, b, stem in itertools.product((0.9, 1.2, 1.5, 1.8), (0.3, 0.5, 0.75), ("english", None))
    }
    config = {
        "store": "results",
        "question_sets": [{"file": str(DEMO / "demo.cranfield.yaml")}],
        "retrievers": retrievers,
        "dagster": DAGSTER,
    }
    path = folder / "grid24.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


def timed(command: list[str], env: dict, cwd: Path) -> float:
    started = time.perf_counter()
    result = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if result.returncode != 0:
        sys.exit(f"bench_team: {' '.join(command)} exited {result.returncode}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return wall


def backfilled(team: TeamDeployment, instance, evaluations: int) -> tuple[float, float]:
    """Seconds from the backfill command until its runs finished, and until the leaderboard refresh after them."""
    from dagster import AssetKey, DagsterRunStatus

    started = time.perf_counter()
    run_ids = team.backfill(instance, EVALUATION_JOB)
    if len(run_ids) != evaluations:
        sys.exit(f"bench_team: the backfill queued {len(run_ids)} runs, not {evaluations}\n{team.logs()}")
    runs = wait_for_runs(instance, run_ids, WAIT_SECONDS, team.logs, interval=0.1)
    finished = time.perf_counter() - started
    if any(run.status != DagsterRunStatus.SUCCESS for run in runs):
        sys.exit(f"bench_team: an evaluation run failed\n{team.logs()}")
    # a successful run of the automation sensor's, so one that has finished
    wait_for(
        lambda: refreshed_after(instance, AssetKey("leaderboard"), runs), "the leaderboard refresh", WAIT_SECONDS, team.logs, 0.1
    )
    return finished, time.perf_counter() - started


def median(rounds: list[tuple[float, ...]]) -> tuple[float, ...]:
    return tuple(sorted(column)[len(column) // 2] for column in zip(*rounds))


def main(argv: list[str] | None = None) -> c.Report:
    args = c.parser(__doc__.splitlines()[0]).parse_args(argv)
    repeat = c.repetitions(args, full=3, quick=1)
    report = c.Report("bench_team", "7. team deployment: nightly in-process vs a backfill on Celery workers", args.quick)
    c.banner(report.title)
    if missing_services():
        sys.exit(f"bench_team: needs {', '.join(missing_services())} (apt-get install postgresql redis-server)")
    nightly = [*c.cli_executable(), "nightly"]
    with c.temp_dir("team-") as scratch:
        configs = {
            "demo (3 evaluations)": (demo_config(scratch), 3),
            "24 partitions (24 evaluations)": (grid_config(scratch), 24),
        }
        for label, (config, evaluations) in configs.items():
            walls: dict[int, tuple[float, ...]] = {}
            for workers in (0, 1, 2):
                root = scratch / f"{len(walls)}-{config.stem}"
                root.mkdir()
                env, ports = team_environment(root, config, root / "results")
                if workers == 0:
                    local = {**env, "DAGSTER_HOME": str(root / "local_home")}
                    timed(nightly, local, root)  # warm-up: indexes cached
                    walls[workers] = median([(timed(nightly, local, root),) for _ in range(repeat)])
                    continue
                with team_services(root, env, ports, workers=workers) as services, team_instance(env) as instance:
                    team = TeamDeployment(root, env, None, services, f"http://127.0.0.1:{ports['webserver']}")
                    wait_for_daemon(instance, team.logs)
                    backfilled(team, instance, evaluations)  # warm-up: indexes cached, workers' imports warm
                    walls[workers] = median([backfilled(team, instance, evaluations) for _ in range(repeat)])
            (in_process,) = walls[0]
            report.add(f"{label}: nightly in-process", c.fmt_seconds(in_process))
            for workers in (1, 2):
                finished, refreshed = walls[workers]
                mode = f"backfill, {workers} worker{'s' * (workers > 1)} x 2 slots"
                report.add(
                    f"{label}: {mode}, runs finished",
                    c.fmt_seconds(finished),
                    c.fmt_seconds(in_process),
                    finished / in_process,
                )
                report.add(
                    f"{label}: {mode}, leaderboard refreshed",
                    c.fmt_seconds(refreshed),
                    c.fmt_seconds(in_process),
                    refreshed / in_process,
                )
    return report


if __name__ == "__main__":
    main().save()
