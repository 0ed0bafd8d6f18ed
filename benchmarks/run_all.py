"""Run every benchmark, one child process each, then print the table and write it into the README.

    python benchmarks/run_all.py            # full run (about 15-25 minutes on 2 cores), updates README.md
    python benchmarks/run_all.py --quick    # smoke run (a few minutes): smaller sizes, fewer repetitions
    python benchmarks/run_all.py --only overhead lexical

Each script is also runnable alone (`python benchmarks/bench_lexical.py [--quick]`); every script
writes its figures to benchmarks/.work/results/<script>.json, and this one assembles them. A full run
replaces the block between the results markers in benchmarks/README.md; a quick or partial run
writes benchmarks/.work/latest.md only, so the README always shows one complete, full-size run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import _common as c

SCRIPTS = ("overhead", "run_file", "lexical", "http", "startup", "scale", "orchestration", "bookkeeping", "dense", "judging")
README = c.BENCH_DIR / "README.md"
START, END = "<!-- results:start -->", "<!-- results:end -->"


def table(results: list[dict], headline_only: bool) -> list[str]:
    lines = [
        "| benchmark | case | ours | compared with | ratio | target | met |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for result in results:
        for row in result["rows"]:
            if headline_only and not row["headline"]:
                continue
            ratio = f"{row['ratio']:.3f}×" if row["ratio"] is not None else "-"
            met = {True: "yes", False: "**no**", None: ""}[row["met"]]
            case = row["case"] + (f" ({row['note']})" if headline_only and row["note"] and row["met"] is None else "")
            cells = [row["benchmark"], case, row["ours"], row["baseline"], ratio, row["target"], met]
            lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return lines


def render(results: list[dict], command: str, elapsed: float) -> str:
    machine = results[0]["machine"] if results else c.machine_info()
    quick = any(result["quick"] for result in results)
    finished = max((result["finished_at"] for result in results), default=time.strftime("%Y-%m-%d %H:%M:%S %Z"))
    commits = sorted({result.get("commit", "unknown") for result in results})
    others = [result.get("other_processes_cores") for result in results if result.get("other_processes_cores") is not None]
    out = [
        f"Latest figures: `{command}`, finished {finished} in {elapsed / 60:.1f} min, code at {', '.join(commits)}"
        + (" (QUICK run: reduced sizes and repetitions)" if quick else "")
        + ".",
        "",
        f"Machine: {machine['cpu']}, {machine['cores']} cores, {machine['memory']} RAM; {machine['platform']}; "
        f"{machine['python']}; {machine['packages']}."
        + (f" Other processes kept at most {max(others):.2f} cores busy on average during a script." if others else ""),
        "",
        "### Summary (one or two rows per benchmark)",
        "",
        *table(results, headline_only=True),
        "",
        "### All rows",
        "",
        *table(results, headline_only=False),
        "",
        "Notes per row (medians, spreads and raw samples are in `benchmarks/.work/results/*.json`):",
        "",
    ]
    for result in results:
        for row in result["rows"]:
            if row["note"]:
                out.append(f"- {row['benchmark']} / {row['case']}: {row['note']}")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    arguments = argparse.ArgumentParser(description="Run every benchmark and assemble the table.")
    arguments.add_argument("--quick", action="store_true", help="smaller sizes and fewer repetitions; README untouched")
    arguments.add_argument("--only", nargs="+", choices=SCRIPTS, help="run only these benchmarks; README untouched")
    arguments.add_argument("--no-readme", action="store_true", help="do not touch benchmarks/README.md")
    arguments.add_argument(
        "--render-only", action="store_true", help="rebuild the table from the last results in benchmarks/.work/results/"
    )
    args = arguments.parse_args(argv)
    c.shared_data_dir()  # fail before anything runs when ../shared is missing
    chosen = args.only or SCRIPTS
    started = time.perf_counter()
    failed = []
    for name in () if args.render_only else chosen:
        script = c.BENCH_DIR / f"bench_{name}.py"
        stale = c.RESULTS_DIR / f"bench_{name}.json"
        stale.unlink(missing_ok=True)
        command = [sys.executable, str(script), *(["--quick"] if args.quick else [])]
        code = subprocess.call(command, cwd=c.REPO_DIR, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        if code != 0 or not stale.is_file():
            failed.append(name)
            print(f"!! bench_{name}.py failed (exit code {code})", file=sys.stderr)
    results = [json.loads(path.read_text()) for name in chosen if (path := c.RESULTS_DIR / f"bench_{name}.json").is_file()]
    if args.render_only:
        failed = [name for name in chosen if not (c.RESULTS_DIR / f"bench_{name}.json").is_file()]
        args.quick = any(result["quick"] for result in results)
        elapsed = sum(result.get("wall_seconds", 0.0) for result in results)
    else:
        elapsed = time.perf_counter() - started
    command = (
        "python benchmarks/run_all.py" + (" --quick" if args.quick else "") + (f" --only {' '.join(chosen)}" if args.only else "")
    )
    text = render(results, command, elapsed)
    c.work_dir()
    (c.WORK_DIR / "latest.md").write_text(text, encoding="utf-8")
    print("\n" + text)
    complete = not args.quick and not args.only and not failed
    if complete and not args.no_readme and README.is_file():
        readme = README.read_text(encoding="utf-8")
        if START in readme and END in readme:
            head, rest = readme.split(START, 1)
            _, tail = rest.split(END, 1)
            README.write_text(f"{head}{START}\n{text}{END}{tail}", encoding="utf-8")
            print(f"updated {README.relative_to(c.REPO_DIR)}")
    elif not complete:
        print(f"(not a complete full run: README left as it was; table in {(c.WORK_DIR / 'latest.md').relative_to(c.REPO_DIR)})")
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
