"""Helpers shared by every benchmark script: timing, child-process measurement, data paths, reporting.

Each `bench_*.py` imports this module (it sits beside them, so `python benchmarks/bench_x.py` finds it)
and writes its figures as JSON under `benchmarks/.work/results/`, which `run_all.py` turns into the
README table. Nothing here asserts a timing: a missed target is printed and recorded, never raised.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
WORK_DIR = BENCH_DIR / ".work"
RESULTS_DIR = WORK_DIR / "results"
SHARED_DATA_ENV = "RETRIEVAL_EVAL_SHARED_DATA"
CACHE_ENV = "RETRIEVAL_EVAL_CACHE"
FETCH_LIMIT = 12  # CutOffs() default: deepest cut-off 3 times the overfetch multiplier 4


# --------------------------------------------------------------------------------------------- data


def shared_data_dir() -> Path:
    """`../shared/data` beside the checkout, or $RETRIEVAL_EVAL_SHARED_DATA; a clear exit when absent."""
    explicit = os.environ.get(SHARED_DATA_ENV)
    folder = Path(explicit).expanduser() if explicit else REPO_DIR.parent / "shared" / "data"
    if not (folder / "scifact" / "corpus.jsonl").is_file():
        sys.exit(
            f"benchmarks: the shared test collections are not at {folder}.\n"
            f"Put the `shared` folder beside the repository checkout (so that {REPO_DIR.parent / 'shared' / 'data'} "
            f"holds scifact/, cranfield/, cisi/), or set {SHARED_DATA_ENV} to the folder that holds them."
        )
    return folder


def collection_dir(name: str) -> Path:
    return shared_data_dir() / name


def read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def read_beir_qrels(path: Path) -> dict[str, list[str]]:
    """Relevant (score > 0) document ids per query, header skipped."""
    relevant: dict[str, list[str]] = {}
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle):
            parts = line.rstrip("\n").split("\t")
            if number == 0 and parts[0] == "query-id":
                continue
            if len(parts) == 3 and float(parts[2]) > 0:
                relevant.setdefault(parts[0], []).append(parts[1])
    return relevant


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def real_sentences(collection: str = "scifact", min_words: int = 6, max_words: int = 30) -> list[tuple[str, str]]:
    """(document id, sentence) pairs taken from a real corpus: titles and sentences of the text."""
    pairs = []
    for record in read_jsonl(collection_dir(collection) / "corpus.jsonl"):
        doc_id = str(record["_id"])
        for sentence in [record.get("title") or "", *_SENTENCE_END.split(record.get("text") or "")]:
            words = sentence.split()
            if len(words) >= min_words:
                pairs.append((doc_id, " ".join(words[:max_words])))
    return pairs


def sampled_questions(count: int, collection: str = "scifact", seed: int = 7) -> list[tuple[str, str, str]]:
    """`count` (question id, text, expected document id): real sentences, each labelled with its source."""
    import random

    pairs = real_sentences(collection)
    rng = random.Random(seed)
    chosen = rng.sample(pairs, count) if count <= len(pairs) else [rng.choice(pairs) for _ in range(count)]
    return [(f"q{i:06d}", text, doc_id) for i, (doc_id, text) in enumerate(chosen)]


def question_set(identifier: str, questions: Sequence[tuple[str, str, Sequence[str] | str]]):
    """A GoldenQuestionSet from (id, text, expected id or ids); built outside any timed region."""
    from retrieval_pipeline.core.golden.questions import GoldenQuestion, GoldenQuestionSet

    return GoldenQuestionSet(
        identifier=identifier,
        name=identifier,
        questions=tuple(
            GoldenQuestion(
                id=qid,
                question=text,
                form="match",
                expected_document_ids=(expected,) if isinstance(expected, str) else tuple(expected),
            )
            for qid, text, expected in questions
        ),
    )


def write_set_file(path: Path, identifier: str, questions: Sequence[tuple[str, str, Sequence[str] | str]]) -> Path:
    """A JSONL golden-set file (header line, then one question a line)."""
    with path.open("w", encoding="utf-8") as handle:
        handle.write(json.dumps({"identifier": identifier, "name": identifier}) + "\n")
        for qid, text, expected in questions:
            ids = [expected] if isinstance(expected, str) else list(expected)
            handle.write(json.dumps({"id": qid, "question": text, "form": "match", "expected_document_ids": ids}) + "\n")
    return path


def bm25s_tokenize(texts: Sequence[str], return_ids: bool = True):
    """How a bm25s user tokenises: English stopwords, Snowball English stemmer."""
    import bm25s
    import Stemmer

    return bm25s.tokenize(
        list(texts), stopwords="en", stemmer=Stemmer.Stemmer("english"), return_ids=return_ids, show_progress=False
    )


# ------------------------------------------------------------------------------------------ folders


def work_dir(*parts: str) -> Path:
    folder = WORK_DIR.joinpath(*parts)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@contextmanager
def temp_dir(prefix: str) -> Iterator[Path]:
    """A scratch folder under benchmarks/.work (same disk as the checkout), removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=work_dir("tmp")))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def clear_lexical_memo() -> None:
    """The lexical retriever keeps built indexes per process; a build timing must not hit that memo."""
    from retrieval_pipeline.retrievers.lexical import retriever as lexical

    with lexical._LOCK:
        lexical.INDEXES.clear()


def cli_executable() -> list[str]:
    """The installed `retrieval-eval` console script beside this interpreter, else the one on PATH."""
    beside = Path(sys.executable).parent / "retrieval-eval"
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("retrieval-eval")
    if found:
        return [found]
    sys.exit("benchmarks: `retrieval-eval` is not installed; run `pip install -e .[bench]` in this interpreter's environment")


def require_modules(*names: str) -> bool:
    """True when every module imports; otherwise prints which are missing (the caller skips that part)."""
    import importlib.util

    missing = [name for name in names if importlib.util.find_spec(name) is None]
    if missing:
        print(f"  (skipped: {', '.join(missing)} not importable yet)")
    return not missing


# ---------------------------------------------------------------------------------------- services

_LATENCY_SERVER = r"""
import json, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

latency = float(sys.argv[1])
context = json.loads(sys.stdin.read() or "null")
{answer}

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # as production servers do; else delayed ACKs add ~40 ms per request

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        time.sleep(latency)
        payload = json.dumps(answer(body)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass

class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

server = Server(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


def start_latency_server(
    latency: float, answer: str, context: Any = None, server: str = _LATENCY_SERVER
) -> tuple[subprocess.Popen, int]:
    """A JSON service on 127.0.0.1 (a free port) in a child process, so it does not share the measuring
    process's interpreter lock: every POST is answered after `latency` seconds with `answer(body)`, the
    function whose source `answer` holds (it may read `context`, sent as JSON). `server` is the source of
    the server itself, `_LATENCY_SERVER` or a variant of it. Returns the process (terminate it) and its port."""
    process = subprocess.Popen(
        [sys.executable, "-c", server.replace("{answer}", answer), str(latency)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    process.stdin.write(json.dumps(context))
    process.stdin.close()
    return process, int(process.stdout.readline())


# ------------------------------------------------------------------------------------------- timing


@dataclass
class Timing:
    samples: list[float]
    result: Any = None

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def spread(self) -> str:
        return f"min {min(self.samples):.4g} / max {max(self.samples):.4g} s over {len(self.samples)}"


def measure(cases: Mapping[str, Callable[[], Any]], repeat: int, warmup: int = 1) -> dict[str, Timing]:
    """Run every case `warmup` + `repeat` times, interleaved (A B C A B C ...) so drift hits all alike.

    Returns the median-able samples and the last result of each case. The garbage collector is run
    before each sample and left enabled during it, as it would be in real use.
    """
    timings = {name: Timing([]) for name in cases}
    for round_number in range(warmup + repeat):
        for name, case in cases.items():
            gc.collect()
            started = time.perf_counter()
            result = case()
            elapsed = time.perf_counter() - started
            timings[name].result = result
            if round_number >= warmup:
                timings[name].samples.append(elapsed)
            del result
    return timings


def paired_ratio(numerator: Sequence[float], denominator: Sequence[float]) -> float:
    """Median of the per-round ratios. Both sides of a round run back to back, so a slow patch of the
    machine (a shared VM) inflates both and cancels out, which the ratio of the two medians does not do."""
    return statistics.median(n / d for n, d in zip(numerator, denominator, strict=True))


def best_ratio(numerator: Sequence[float], denominator: Sequence[float]) -> float:
    """Ratio of the fastest runs: another estimate of the intrinsic ratio when the machine is shared."""
    return min(numerator) / min(denominator)


def paired_difference(minuend: Sequence[float], subtrahend: Sequence[float]) -> float:
    return statistics.median(m - s for m, s in zip(minuend, subtrahend, strict=True))


@dataclass
class ProcessSample:
    wall_seconds: float
    peak_rss_bytes: int
    returncode: int
    stdout: str
    stderr: str


def run_process(
    command: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: Path | None = None, check: bool = True
) -> ProcessSample:
    """One child process: wall time from spawn to exit, and the child's own peak RSS (os.wait4).

    wait4 returns the rusage of exactly that child (and the descendants it waited for), which is what
    `/usr/bin/time -v` reports as "Maximum resident set size", without an extra process in between.
    """
    merged = {**os.environ, **(env or {})}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        process = subprocess.Popen(list(command), stdout=out, stderr=err, env=merged, cwd=cwd)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        sample = ProcessSample(
            wall,
            usage.ru_maxrss * (1 if sys.platform == "darwin" else 1024),
            process.returncode,
            out.read().decode("utf-8", "replace"),
            err.read().decode("utf-8", "replace"),
        )
    if check and sample.returncode != 0:
        raise RuntimeError(
            f"command failed with exit code {sample.returncode}: {' '.join(command)}\n"
            f"--- stdout ---\n{sample.stdout[-3000:]}\n--- stderr ---\n{sample.stderr[-3000:]}"
        )
    return sample


def measure_processes(
    commands: Mapping[str, Sequence[str]], repeat: int, warmup: int = 1, **kwargs
) -> dict[str, list[ProcessSample]]:
    """Interleaved runs of several commands; warm-up runs (file cache, bytecode) are discarded."""
    samples: dict[str, list[ProcessSample]] = {name: [] for name in commands}
    for round_number in range(warmup + repeat):
        for name, command in commands.items():
            sample = run_process(command, **kwargs)
            if round_number >= warmup:
                samples[name].append(sample)
    return samples


def median_wall(samples: Sequence[ProcessSample]) -> float:
    return statistics.median(s.wall_seconds for s in samples)


def median_peak(samples: Sequence[ProcessSample]) -> int:
    return int(statistics.median(s.peak_rss_bytes for s in samples))


def peak_rss_self() -> int:
    """This process's peak RSS so far, in bytes."""
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak * (1 if sys.platform == "darwin" else 1024)


def profiled_script(setup: str, call: str) -> str:
    """Python source for a child that runs `call` (after `setup`) under cProfile and prints to stderr, as
    JSON, the cumulative time and calls of each spot given as JSON in its last argument: [label, file
    name fragment, function name] triples. Time is the process's CPU time, not wall time: on a shared
    machine waiting for a core would swamp the shares. A recursive function (the import machinery) is
    counted once per outermost call, as cProfile does."""
    return f"""
import cProfile, json, pstats, sys, time
spots = json.loads(sys.argv.pop())
{setup}
profiler = cProfile.Profile(time.process_time)
started = time.process_time()
profiler.enable()
try:
    {call}
except SystemExit:
    pass
profiler.disable()
stats = pstats.Stats(profiler).stats
out = {{"profiled_cpu_s": time.process_time() - started}}
for label, fragment, name in spots:
    found = [(v[1], v[3]) for (file, line, func), v in stats.items() if func == name and fragment in file]
    out[label] = {{"calls": sum(n for n, _ in found), "cumulative_s": max((t for _, t in found), default=0.0)}}
print(json.dumps(out), file=sys.__stderr__)
"""


# ----------------------------------------------------------------------------------------- machine


def _busy_cpu_seconds() -> float | None:
    """CPU seconds all processes of the machine spent busy since boot (Linux), or None."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    except OSError:
        return None
    ticks = [int(value) for value in fields[:8]]
    idle = ticks[3] + ticks[4]  # idle + iowait
    return (sum(ticks) - idle) / os.sysconf("SC_CLK_TCK")


def _own_cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


class Contention:
    """How much CPU other processes used while a script ran: figures taken on a busy shared machine are
    noisy, and the report says so instead of letting the reader guess."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.busy = _busy_cpu_seconds()
        self.own = _own_cpu_seconds()

    def other_cores(self) -> float | None:
        """Average number of cores busy with other processes' work since construction."""
        busy = _busy_cpu_seconds()
        if busy is None or self.busy is None:
            return None
        wall = time.perf_counter() - self.started
        return max(0.0, (busy - self.busy) - (_own_cpu_seconds() - self.own)) / wall if wall > 0 else None


def code_version() -> str:
    """The checkout's commit, marked when the working tree differs from it (figures move with the code)."""
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO_DIR, capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", "retrieval_pipeline", "pyproject.toml"],
            cwd=REPO_DIR,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    if commit.returncode != 0:
        return "unknown"
    return commit.stdout.strip() + (" + uncommitted changes" if dirty.stdout.strip() else "")


def machine_info() -> dict[str, str]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = "unknown"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                break
    except OSError:
        pass
    versions = {}
    for package in ("bm25s", "ir_measures", "ranx", "numpy", "pyarrow", "dagster"):
        try:
            from importlib.metadata import version

            versions[package] = version(package)
        except Exception:
            versions[package] = "absent"
    return {
        "platform": platform.platform(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "cpu": cpu,
        "cores": str(os.cpu_count()),
        "memory": memory,
        "packages": ", ".join(f"{name} {v}" for name, v in versions.items()),
    }


# ----------------------------------------------------------------------------------------- reports


def fmt_seconds(value: float | None) -> str:
    if value is None:
        return "-"
    if value < 1e-3:
        return f"{value * 1e6:.1f} µs"
    if value < 1:
        return f"{value * 1e3:.1f} ms"
    return f"{value:.2f} s"


def fmt_bytes(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value / 2**20:.0f} MiB" if value < 2**30 else f"{value / 2**30:.2f} GiB"


@dataclass
class Row:
    """One line of the table: our figure, the figure it is compared with, their ratio and the target."""

    benchmark: str
    case: str
    ours: str
    baseline: str
    ratio: float | None = None
    target: str = ""
    met: bool | None = None
    note: str = ""
    headline: bool = False


@dataclass
class Report:
    script: str
    title: str
    quick: bool
    rows: list[Row] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    contention: Contention = field(default_factory=Contention, repr=False)

    def keep_samples(self, samples: Mapping[str, Sequence[ProcessSample]]) -> None:
        """Every child process's wall time and peak RSS go to the results file, not only the medians."""
        self.details.update(
            wall_s={name: [s.wall_seconds for s in runs] for name, runs in samples.items()},
            peak_bytes={name: [s.peak_rss_bytes for s in runs] for name, runs in samples.items()},
        )

    def add(
        self,
        case: str,
        ours: str,
        baseline: str = "-",
        ratio: float | None = None,
        *,
        target: float | None = None,
        target_text: str | None = None,
        note: str = "",
        headline: bool | None = None,
    ) -> Row:
        """A row; headline rows (by default those with a target) make the README's summary table."""
        met = None if target is None or ratio is None else ratio <= target
        text = target_text if target_text is not None else (f"≤ {target:g}×" if target is not None else "")
        headline = (target is not None or target_text is not None) if headline is None else headline
        row = Row(self.title, case, ours, baseline, ratio, text, met, note, headline)
        self.rows.append(row)
        ratio_text = f"{ratio:.3f}×" if ratio is not None else "-"
        verdict = "" if met is None else ("  [met]" if met else "  [MISSED]")
        print(f"  {case}: ours {ours} | baseline {baseline} | ratio {ratio_text} {text}{verdict}")
        if note:
            print(f"      {note}")
        return row

    def save(self) -> Path:
        RESULTS_DIR.mkdir(parents=True, exist_ok=True)
        path = RESULTS_DIR / f"{self.script}.json"
        other = self.contention.other_cores()
        if other is not None:
            print(
                f"  other processes kept {other:.2f} of {os.cpu_count()} cores busy on average during this script"
                + ("  (figures noisier than usual)" if other > 0.25 else "")
            )
        payload = {
            "script": self.script,
            "title": self.title,
            "quick": self.quick,
            "other_processes_cores": other,
            "wall_seconds": time.perf_counter() - self.contention.started,
            "commit": code_version(),
            "finished_at": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
            "machine": machine_info(),
            "rows": [asdict(row) for row in self.rows],
            "details": self.details,
        }
        path.write_text(json.dumps(payload, indent=2, default=str), encoding="utf-8")
        print(f"  -> {path.relative_to(REPO_DIR)}")
        return path


def parser(description: str) -> argparse.ArgumentParser:
    arguments = argparse.ArgumentParser(description=description)
    arguments.add_argument("--quick", action="store_true", help="fewer repetitions and smaller sizes (a smoke run)")
    arguments.add_argument("--repeat", type=int, default=None, help="timed repetitions per case (median reported)")
    return arguments


def repetitions(args: argparse.Namespace, full: int, quick: int) -> int:
    return args.repeat if args.repeat else (quick if args.quick else full)


def banner(title: str) -> None:
    print(f"\n=== {title} ===", flush=True)
