"""5. Start-up: `retrieval-eval --help` and the Dagster definitions load, versus `python -c pass`.

Each command is a whole child process (wall time from spawn to exit, median of several interleaved
runs after one warm-up that fills the page cache and bytecode caches):

- `python -c pass`                                     the interpreter alone, the floor;
- `python -c "import click"`                           the command line's one eager dependency;
- `retrieval-eval --help`                              what a CI gate pays before any work;
- `python -c "import dagster"`                         Dagster alone, the floor of any code location;
- `python -c "import retrieval_pipeline.definitions"`  the Dagster code location (embedded demo config);
- `dagster definitions validate -m retrieval_pipeline.definitions`  what `dagster dev` pays per load.
"""

from __future__ import annotations

import sys

import _common as c


def main(argv: list[str] | None = None) -> c.Report:
    args = c.parser(__doc__.splitlines()[0]).parse_args(argv)
    repeat = c.repetitions(args, full=10, quick=5)
    report = c.Report("bench_startup", "5. start-up", args.quick)
    c.banner(report.title)
    python = sys.executable
    commands = {
        "python -c pass": [python, "-c", "pass"],
        "python -c 'import click'": [python, "-c", "import click"],
        "retrieval-eval --help": [*c.cli_executable(), "--help"],
    }
    heavy = {}
    if c.require_modules("retrieval_pipeline.definitions"):
        heavy["python -c 'import dagster'"] = [python, "-c", "import dagster"]
        heavy["import retrieval_pipeline.definitions"] = [python, "-c", "import retrieval_pipeline.definitions"]
        dagster = c.Path(python).parent / "dagster"
        if dagster.is_file():
            heavy["dagster definitions validate"] = [
                str(dagster),
                "definitions",
                "validate",
                "-m",
                "retrieval_pipeline.definitions",
            ]

    with c.temp_dir("startup-") as scratch:
        env = {"DAGSTER_HOME": str(scratch), c.CACHE_ENV: str(scratch / "cache")}
        samples = c.measure_processes(commands, repeat=repeat, warmup=1, env=env, cwd=c.REPO_DIR)
        if heavy:
            samples.update(c.measure_processes(heavy, repeat=max(3, repeat // 2), warmup=1, env=env, cwd=c.REPO_DIR))
    floor = c.median_wall(samples["python -c pass"])
    dagster_alone = c.median_wall(samples["python -c 'import dagster'"]) if "python -c 'import dagster'" in samples else None
    for name, runs in samples.items():
        if name == "python -c pass":
            continue
        wall = c.median_wall(runs)
        report.add(
            name,
            c.fmt_seconds(wall),
            f"python -c pass {c.fmt_seconds(floor)}",
            wall / floor,
            note=f"peak RSS {c.fmt_bytes(c.median_peak(runs))}; +{c.fmt_seconds(wall - floor)} over the interpreter"
            + (
                f"; {wall / dagster_alone:.2f}× `import dagster` ({c.fmt_seconds(dagster_alone)})"
                if dagster_alone and name in ("import retrieval_pipeline.definitions", "dagster definitions validate")
                else ""
            ),
            headline=name in ("retrieval-eval --help", "import retrieval_pipeline.definitions"),
        )
    report.keep_samples(samples)
    report.save()
    return report


if __name__ == "__main__":
    main(sys.argv[1:])
