"""7. Team deployment: `retrieval-eval nightly` in-process versus `nightly --launch` through the team setup.

The team setup is the one docs/production.md recommends and the team test runs (deploy/team/:
PostgreSQL, the daemon with the queued coordinator, the Celery run launcher on Redis, the in-process
executor), started here on loopback with one and then with two Celery workers of two slots each.
Two configurations: the embedded demo (1 set x 3 BM25 retrievers: 8 runs) and 24 partitions (the demo
set x 24 BM25 variants, k1 x b x stemmer: 50 runs). The in-process row uses a SQLite instance of its own.

Every mode runs once untimed first (index builds land in the shared cache, workers warm up), then is
timed; the figure is the median of the timed rounds. Per-run overhead = (launch wall - in-process
wall) / runs. Needs the [team] extra and Debian's postgresql and redis-server (see .ci/run).
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
from services import missing_services, team_environment, team_services  # noqa: E402

DEMO = c.REPO_DIR / "retrieval_pipeline" / "demo"


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
    config = {"store": "results", "question_sets": [{"file": str(DEMO / "demo.cranfield.yaml")}], "retrievers": retrievers}
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


def measure(command: list[str], env: dict, cwd: Path, repeat: int) -> float:
    timed(command, env, cwd)  # warm-up: indexes cached, workers' imports and BM25 memo warm
    return sorted(timed(command, env, cwd) for _ in range(repeat))[repeat // 2]


def main(argv: list[str] | None = None) -> c.Report:
    args = c.parser(__doc__.splitlines()[0]).parse_args(argv)
    repeat = c.repetitions(args, full=3, quick=1)
    report = c.Report("bench_team", "7. team deployment: nightly in-process vs --launch (Celery workers)", args.quick)
    c.banner(report.title)
    if missing_services():
        sys.exit(f"bench_team: needs {', '.join(missing_services())} (apt-get install postgresql redis-server)")
    nightly = [*c.cli_executable(), "nightly"]
    with c.temp_dir("team-") as scratch:
        configs = {
            "demo (3 partitions, 8 runs)": (DEMO / "config.yaml", 8),
            "24 partitions (50 runs)": (grid_config(scratch), 50),
        }
        for label, (config, runs) in configs.items():
            walls = {}
            for workers in (0, 1, 2):
                root = scratch / f"{len(walls)}-{config.stem}"
                root.mkdir()
                env, ports = team_environment(root, config, root / "results")
                if workers == 0:
                    local = {**env, "DAGSTER_HOME": str(root / "local_home")}
                    walls[workers] = measure(nightly, local, root, repeat)
                    continue
                with team_services(root, env, ports, workers=workers):
                    launch = [*nightly, "--launch", "--webserver", f"http://127.0.0.1:{ports['webserver']}"]
                    walls[workers] = measure(launch, env, root, repeat)
            for workers, wall in walls.items():
                if workers == 0:
                    report.add(f"{label}: in-process", c.fmt_seconds(wall))
                    continue
                mode = f"--launch, {workers} worker{'s' * (workers > 1)} x 2 slots"
                overhead = f"{(wall - walls[0]) / runs * 1000:+.0f} ms per run over in-process"
                report.add(f"{label}: {mode}", c.fmt_seconds(wall), c.fmt_seconds(walls[0]), wall / walls[0], note=overhead)
    return report


if __name__ == "__main__":
    main().save()
