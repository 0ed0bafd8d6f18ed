"""Where `retrieval-eval run` spends its time on benchmark 2's 2,000,000-line run (issue 15, item 2).

One child process runs the command line's `main` under cProfile (its --json rows go to a scratch file) after `bench_run_file.py` generated the files; the cumulative CPU time of each phase is printed
and written to benchmarks/.work/results/profile_run_file.json. cProfile slows Python code, not C, so
read the shares, not the absolutes; the wall time without the profiler is benchmark 2's own row.
"""

from __future__ import annotations

import json
import sys

import _common as c

SPOTS = (
    ("imports (all modules, first use)", "<frozen importlib._bootstrap>", "_find_and_load"),
    ("configuration read", "core/services/configuration/project.py", "load_config"),
    ("golden set parsed and validated (20,000 questions)", "core/golden/question_files.py", "load_question_set_file"),
    ("run file read (parse, checksum, top-12 per query)", "core/retrieval/run_files.py", "load_run"),
    ("  of which Arrow's CSV parse of each piece", "core/retrieval/run_blocks.py", "read_single_delimited"),
    ("baseline looked up", "core/storage/store.py", "baseline"),
    ("questions asked and the run's columns built (run_question_set)", "core/services/evaluation/runner.py", "run_question_set"),
    ("  of which the questions' fingerprints", "core/golden/fingerprints.py", "question_fingerprint"),
    ("  of which the rankings collapsed (vectorised)", "core/scoring/scoring.py", "collapsed"),
    ("hits and ranks on the columns (Relevance.of)", "core/scoring/scoring.py", "of"),
    ("ranking metrics on the columns", "core/scoring/measures.py", "question_scores"),
    ("regression detection", "core/scoring/checks/regression.py", "detect_regression"),
    ("run saved as Parquet (ResultStore.save)", "core/storage/store.py", "save"),
    ("--json document written (payloads.emit)", "cli/render/payloads.py", "emit"),
)


def main(argv: list[str] | None = None) -> None:
    arguments = c.parser(__doc__.splitlines()[0])
    arguments.parse_args(argv)
    folder = c.work_dir("run_file", "20000x100")
    if not (folder / "manifest.json").is_file():
        sys.exit("run `python benchmarks/bench_run_file.py` first: it generates the 2,000,000-line run")
    c.banner("profile of retrieval-eval run (2,000,000 lines)")
    script = c.profiled_script(
        "from retrieval_pipeline.cli import main\nsys.argv = ['retrieval-eval', *sys.argv[1:]]",
        "main()",
    )
    with c.temp_dir("profile-run-") as scratch:
        command = [
            sys.executable,
            "-c",
            script,
            "run",
            "bench.run_file",
            "replay",
            "--config",
            str(folder / "config.yaml"),
            "--store",
            str(scratch / "store"),
            "--json",
            json.dumps(SPOTS),
        ]
        sample = c.run_process(command, env={c.CACHE_ENV: str(scratch / "cache")})
    spots = json.loads(sample.stderr.strip().splitlines()[-1])
    for label, _, _ in SPOTS:
        print(f"  {label}: {c.fmt_seconds(spots[label]['cumulative_s'])} ({spots[label]['calls']} calls)")
    print(
        f"  profiled CPU {c.fmt_seconds(spots['profiled_cpu_s'])}; process wall {c.fmt_seconds(sample.wall_seconds)}, "
        f"peak RSS {c.fmt_bytes(sample.peak_rss_bytes)}"
    )
    c.RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    payload = {"commit": c.code_version(), "machine": c.machine_info(), "spots": spots, "process_wall_s": sample.wall_seconds}
    (c.RESULTS_DIR / "profile_run_file.json").write_text(json.dumps(payload, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])
