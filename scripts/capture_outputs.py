"""Capture every command's output, in every format, to show a refactoring changed none of them.

A refactoring that keeps behaviour must keep bytes: capture before, capture after, compare::

    export PYTHONPATH=$PWD      # the tree under test: `retrieval-eval` and this script import from it
    python scripts/capture_outputs.py BEFORE                   # about 2 minutes; needs no /work/shared
    python scripts/capture_outputs.py --compare BEFORE AFTER   # a diff per differing file, exit 1 if any

The capture runs the commands of ``STEPS`` (every `retrieval-eval` command and format, their ``--help``,
bad inputs) on the embedded demo and on a small project built from it, in a fresh temporary folder with
its own HOME, store, DAGSTER_HOME and vector cache, as a pipe (tables keep their natural width) without
colour. Each output goes to its own file ``NNN-name.ext`` (stdout, or ``NNN-name-file.ext`` for a file
the command wrote); ``commands.txt`` records each command with its exit code and stderr. After
``nightly``, every materialization and asset-check evaluation in the Dagster instance is written as
sorted JSON. What changes between two captures of the same code (run ids, times, paths, latencies) is
replaced by the ``VOLATILE`` table and the time columns are masked, so such captures are byte-identical.
"""

from __future__ import annotations

import csv
import difflib
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from importlib.util import find_spec
from pathlib import Path

import yaml

SOURCE = str(Path(find_spec("retrieval_pipeline").origin).parent.parent)
DEMO = f"{SOURCE}/retrieval_pipeline/demo"
NUMBER = r"\d+(?:\.\d+)?"
SET = "small.cranfield"

# What varies between two captures of the same code, in the order applied.
VOLATILE = [
    (r"\d{8}T\d{6}\d*Z-[0-9a-f]{8}", "<run-id>"),
    (r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "<uuid>"),
    (r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?( UTC)?", "<time>"),
    (r"\d{4}-\d{2}-\d{2}", "<date>"),
    (r"data:image/png;base64,[A-Za-z0-9+/=]+", "data:image/png;base64,<png>"),  # run times; before <addr>
    (r"data:image/svg\+xml;base64,[A-Za-z0-9+/=]+", "data:image/svg+xml;base64,<svg>"),  # run times, as a PNG's
    (r"0x[0-9a-f]{6,}", "<addr>"),
    (r'"dagster/data_version": "[0-9a-f]+"', '"dagster/data_version": "<hash>"'),
    (r'"(dagster/input_data_version/[^"]+)": "[0-9a-f]+"', r'"\1": "<hash>"'),  # Dagster's, from the inputs' run ids
    (r'"latency_ms": \{[^{}]*\}', '"latency_ms": "<n>"'),
    (rf'"(\w*(?:latency|_ms|seconds|duration|timestamp|elapsed)\w*)": {NUMBER}', r'"\1": "<n>"'),
    (r'"(timestamp|created_at|saved_at|accepted_at)": "[^"]*"', r'"\1": "<time>"'),
    (rf"\bmean {NUMBER}", "mean <n>"),
    (rf"\({NUMBER}/s\)", "(<n>/s)"),
    (rf"[+-]?\b{NUMBER} ?(ms|s)\b", r"<n> \1"),
]
VOLATILE_RE = [(re.compile(pattern), replacement) for pattern, replacement in VOLATILE]
# Table columns (by header) and Dagster metadata entries (by label) holding a time: masked whole, so
# that their width, which follows the slowest question, cannot shift the table either.
TIME_HEADER = re.compile(r"ms|.*latency.*|.* ms")
TIME_LABEL = re.compile(r".*(seconds|latency|_ms\b|duration).*")
BOX = re.compile(r"([│┃┏┳┓┡╇┩└┴┘])")

# One command a line: the output's name, then the arguments of `retrieval-eval`, then `>FILE` when the
# command writes a file (captured as well). {w}: the work folder; {p}: the project; {P}: --config of the
# project; {S}: its set; {demo}: the embedded demo's folder; {run_id}: the project's first run of bm25.
STEPS = """
help-main                    --help
help-run                     run --help
help-compare                 compare --help
help-list                    list --help
help-history                 history --help
help-report                  report --help
help-accept                  accept --help
help-audit                   audit --help
help-pool                    pool --help
help-judge                   judge --help
help-judge-by-hand           judge by-hand --help
help-judge-machine           judge machine --help
help-judge-calibrate         judge calibrate --help
help-judge-apply             judge apply --help
help-prune                   prune --help
help-nightly                 nightly --help
help-import                  import --help
help-import-beir             import beir --help
help-import-trec             import trec --help
version                      --version
list-demo                    list
list-demo-json               list --json
run-demo                     run demo.cranfield bm25_titles
run-demo-json                run demo.cranfield bm25_plain --json
run-demo-all-md              run demo.cranfield bm25_stemmed --show all --markdown {w}/run.md >{w}/run.md
run-demo-misses              run demo.cranfield bm25_titles --show misses
run-demo-none                run demo.cranfield bm25_titles --show none --max-top3-drop 0.0
run-demo-retuned             run demo.cranfield bm25_stemmed --config={demo}/retuned.yaml --max-top3-drop 0.05
run-demo-fail                run demo.cranfield bm25_stemmed --config={demo}/retuned.yaml --fail-on-regression --json
compare-demo                 compare demo.cranfield bm25_stemmed bm25_plain bm25_titles
compare-demo-json            compare demo.cranfield bm25_stemmed bm25_titles --json
compare-demo-limit           compare demo.cranfield bm25_stemmed bm25_titles --limit 0
history-demo                 history demo.cranfield bm25_stemmed
history-demo-json            history demo.cranfield bm25_titles --json
report-demo                  report demo.cranfield bm25_stemmed
report-demo-md               report demo.cranfield bm25_titles --markdown {w}/report.md >{w}/report.md
report-demo-html             report demo.cranfield bm25_titles --html {w}/report.html >{w}/report.html
report-demo-rejudge          report demo.cranfield bm25_titles --rejudge
audit-demo                   audit demo.cranfield
audit-demo-json              audit demo.cranfield --json
list-project                 list {P}
list-project-json            list {P} --json
run-project                  run {S} bm25 {P}
run-project-titles           run {S} titles {P} --show all
run-project-fused            run {S} fused {P} --json
run-project-again            run {S} bm25 {P} --markdown {w}/again.md >{w}/again.md
run-project-regression       run {S} bm25 --config={p}/retuned.yaml --fail-on-regression
run-project-regression-json  run {S} bm25 --config={p}/retuned.yaml --json
compare-project              compare {S} bm25 titles fused {P} --save
compare-project-json         compare {S} bm25 titles {P} --json
history-project              history {S} bm25 {P}
history-project-json         history {S} bm25 {P} --json
history-project-rescore      history {S} bm25 {P} --rescore
history-project-rescore-json history {S} bm25 {P} --rescore --json --limit 0
accept                       accept {S} bm25 {run_id} {P} --by capture
accept-json                  accept {S} bm25 {run_id} {P} --by capture --json
history-project-accepted     history {S} bm25 {P}
run-project-accepted         run {S} bm25 --config={p}/accepted.yaml
run-project-baseline         run {S} bm25 {P} --baseline {run_id} --json
report-project               report {S} bm25 {P}
report-project-html          report {S} bm25 {P} --html {w}/project.html --runs 3 >{w}/project.html
report-project-md            report {S} bm25 {P} --markdown {w}/project.md >{w}/project.md
audit-project                audit {S} {P} --window 2
audit-project-json           audit {S} bm25 titles {P} --json --strict
pool-csv                     pool {S} {P} --out {w}/pool.csv --depth 3 >{w}/pool.csv
pool-jsonl                   pool {S} bm25 {P} --out {w}/pool.jsonl --depth 2 >{w}/pool.jsonl
judge-apply                  judge apply {w}/judged.csv {w}/set-copy.yaml {P} >{w}/set-copy.yaml
import-beir                  import beir {w}/beir --identifier small.beir --out {w}/beir.yaml >{w}/beir.yaml
import-beir-json             import beir {w}/beir --identifier small.beir --out {w}/beir.jsonl --json >{w}/beir.jsonl
import-beir-exists           import beir {w}/beir --identifier small.beir --out {w}/beir.yaml
import-trec                  import trec --qrels {w}/trec/qrels.txt --topics {w}/trec/topics.tsv --corpus {w}/beir/corpus.jsonl --identifier small.trec --out {w}/trec.json >{w}/trec.json
import-trec-json             import trec --qrels {w}/trec/qrels.txt --topics {w}/trec/topics.tsv --corpus {w}/beir/corpus.jsonl --identifier small.trec --out {w}/trec.yaml --min-relevance 2 --json >{w}/trec.yaml
nightly                      nightly {P}
nightly-again                nightly {P}
prune-dry                    prune {P} --older-than-days 0 --dry-run
prune-dry-json               prune --older-than-days 0 --dry-run --json
prune                        prune {P} --older-than-days 0
prune-json                   prune --older-than-days 0 --json
history-project-pruned       history {S} bm25 {P}
error-unknown-set            run scifact.test bm25_stemmed
error-unknown-retriever      run demo.cranfield nope --json
error-unknown-run            accept {S} bm25 20200101T000000000000Z-00000000 {P}
error-bad-config             list --config={p}/bad.yaml
error-bad-config-run         run {S} bm25 --config={p}/bad.yaml
error-missing-config         list --config={w}/none.yaml
error-bad-tolerance          run {S} bm25 {P} --max-top1-drop 2
error-beir-missing           import beir {w}/nowhere --identifier x.y --out {w}/x.yaml
error-usage                  run
"""


def normalise(text: str, work: str) -> str:
    text = text.replace(work, "<tmp>").replace(SOURCE, "<src>")
    for pattern, replacement in VOLATILE_RE:
        text = pattern.sub(replacement, text)
    return mask_time_columns(text)


def mask_time_columns(text: str) -> str:
    """Every cell of a table column headed as a time (``ms``, ``latency``) becomes ``<ms>``, its borders 6 wide."""
    lines = text.split("\n")
    start = 0
    while start < len(lines):
        end = start
        while end < len(lines) and BOX.search(lines[end]):
            end += 1
        headers = [BOX.split(line)[2:-1:2] for line in lines[start:end] if "┃" in line]
        masked = {n for cells in headers for n, cell in enumerate(cells) if TIME_HEADER.fullmatch(cell.strip())}
        for number in range(start, end) if masked else ():
            parts = BOX.split(lines[number])
            for column in masked:
                cell = parts[2 + 2 * column]
                border = cell and set(cell) <= set("━─")
                parts[2 + 2 * column] = cell[0] * 6 if border else f" {cell.strip() if '┃' in parts else '<ms>'} "
            lines[number] = "".join(parts)
        start = end + 1
    return "\n".join(lines)


def mask_time_labels(event: object) -> object:
    """Dagster metadata entries whose label names a time keep the label, not the value."""
    if isinstance(event, list):
        return [mask_time_labels(item) for item in event]
    if not isinstance(event, dict):
        return event
    if TIME_LABEL.fullmatch(str(event.get("label", ""))):
        return {**event, "entry_data": "<n>"}
    return {key: "<n>" if TIME_LABEL.fullmatch(key) else mask_time_labels(value) for key, value in event.items()}


def build_project(work: Path) -> None:
    """A small project from the demo: 30 questions, two BM25 kinds and their fusion, plus bad inputs."""
    project = work / "project"
    project.mkdir()
    shutil.copy(f"{DEMO}/cranfield-corpus.jsonl.gz", project / "corpus.jsonl.gz")
    demo = yaml.safe_load(Path(f"{DEMO}/demo.cranfield.yaml").read_text())
    questions = demo["questions"][:27] + demo["questions"][-3:]
    small = {"identifier": SET, "name": "small", "questions": questions}
    (project / "small.yaml").write_text(yaml.safe_dump(small, sort_keys=False))
    shutil.copy(project / "small.yaml", work / "set-copy.yaml")
    lexical = {"kind": "lexical", "corpus": "corpus.jsonl.gz", "min_score": 5.0}
    retrievers = {
        "bm25": lexical,
        "titles": {**lexical, "fields": ["title"]},
        "fused": {"kind": "fusion", "retrievers": ["bm25", "titles"]},
    }
    config = {"store": "store", "question_sets": [{"file": "small.yaml"}], "retrievers": retrievers, "cutoffs": [1, 3, 5, 10]}
    (project / "retrieval-eval.yaml").write_text(yaml.safe_dump(config))
    retuned = {**config, "retrievers": {"bm25": {**lexical, "fields": ["title"]}}, "tolerances": {"max_top3_drop": 0.01}}
    (project / "retuned.yaml").write_text(yaml.safe_dump(retuned))
    (project / "accepted.yaml").write_text(yaml.safe_dump({**config, "baseline_policy": "accepted"}))
    (project / "bad.yaml").write_text(yaml.safe_dump({**config, "retrievers": {"bm25": {"kind": "lexical", "k1": -1}}}))
    build_imports(work, questions)


def build_imports(work: Path, questions: list[dict]) -> None:
    """BEIR and TREC files of the small set, over the documents it names (plus a few unjudged)."""
    wanted = {doc for q in questions for doc in q["expected_document_ids"]} | {"1", "2", "3"}
    with gzip.open(f"{DEMO}/cranfield-corpus.jsonl.gz", "rt") as corpus:
        documents = [line for line in corpus if json.loads(line)["_id"] in wanted]
    (work / "beir" / "qrels").mkdir(parents=True)
    (work / "trec").mkdir()
    (work / "beir" / "corpus.jsonl").write_text("".join(documents))
    (work / "beir" / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q["id"], "text": q["question"]}) + "\n" for q in questions)
    )
    judged = [(q["id"], doc, 2 - n % 2) for q in questions for n, doc in enumerate(q["expected_document_ids"])]
    (work / "beir" / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{s}\n" for q, d, s in judged)
    )
    (work / "trec" / "qrels.txt").write_text("".join(f"{q} 0 {d} {s}\n" for q, d, s in judged))
    (work / "trec" / "topics.tsv").write_text("".join(f"{q['id']}\t{q['question']}\n" for q in questions))


def judge_pool(work: Path) -> None:
    """Answer the pooled candidates alternately yes and no, as a judge would in a spreadsheet."""
    with open(work / "pool.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    for number, row in enumerate(rows):
        row["judgement"] = "yes" if number % 2 else "no"
    with open(work / "judged.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def dagster_records(work: Path) -> list[tuple[str, str]]:
    """Every materialization and check evaluation the instance recorded, as sorted JSON, in a stable order."""
    import warnings

    from dagster import DagsterEventType, DagsterInstance, EventRecordsFilter, serialize_value

    with DagsterInstance.from_config(str(work / "dagster")) as instance:
        events = [
            record.asset_materialization
            for key in instance.get_asset_keys()
            for record in instance.fetch_materializations(key, limit=10_000).records
        ]
        with warnings.catch_warnings():  # no public fetch_* for check evaluations yet
            warnings.simplefilter("ignore")
            checks = instance.get_event_records(EventRecordsFilter(event_type=DagsterEventType.ASSET_CHECK_EVALUATION))
        events += [record.event_log_entry.dagster_event.event_specific_data for record in checks]
    found = [mask_time_labels(json.loads(serialize_value(event))) for event in events]
    named = [(f"dagster-{event_name(event)}", json.dumps(event, sort_keys=True, indent=1) + "\n") for event in found]
    return sorted((name, normalise(text, str(work))) for name, text in named)


def event_name(event: dict) -> str:
    key = event.get("asset_key") or event.get("asset_check_key", {}).get("asset_key")
    parts = "-".join(key["path"]) if key else "unknown"
    return f"{'check-' + event['check_name'] if 'check_name' in event else 'asset'}-{parts}"


def capture(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="capture-") as temporary:
        work = Path(temporary)
        (work / "dagster").mkdir()
        build_project(work)
        outputs, index = run_steps(work)
        outputs += [(name, "json", text) for name, text in dagster_records(work)]
        for number, (name, suffix, text) in enumerate(outputs, 1):
            (out / f"{number:03d}-{name}.{suffix}").write_text(normalise(text, str(work)))
        (out / "commands.txt").write_text(normalise("\n".join(index), str(work)))
    print(f"{len(outputs)} outputs of {len(STEPS.strip().splitlines())} commands in {out} ({time.monotonic() - started:.0f} s)")
    return 0


def run_steps(work: Path) -> tuple[list[tuple[str, str, str]], list[str]]:
    """Run STEPS as a pipe: (name, suffix, text) of every output, and each command with its exit and stderr."""
    env = {**os.environ, "HOME": str(work), "DAGSTER_HOME": str(work / "dagster"), "RETRIEVAL_EVAL_CACHE": str(work / "cache")}
    env.update(COLUMNS="120", NO_COLOR="1", TERM="dumb", USER="capture", TZ="UTC")
    for variable in ("RETRIEVAL_EVAL_CONFIG", "RETRIEVAL_EVAL_STORE", "RETRIEVAL_EVAL_DEBUG", "FORCE_COLOR"):
        env.pop(variable, None)
    project = work / "project"
    context = {"w": work, "p": project, "P": f"--config={project}/retrieval-eval.yaml", "S": SET, "demo": DEMO}
    outputs, index = [], []
    for line in STEPS.strip().splitlines():
        name, *arguments = line.format(**context).split()
        written = arguments.pop()[1:] if arguments and arguments[-1].startswith(">") else None
        if name == "judge-apply":
            judge_pool(work)
        done = subprocess.run(["retrieval-eval", *arguments], cwd=work, env=env, capture_output=True, text=True)
        if name == "history-project-json":
            context["run_id"] = json.loads(done.stdout)["runs"][-1]["run_id"]
        outputs.append((name, "json" if "--json" in arguments and done.stdout.startswith("{") else "txt", done.stdout))
        if written:
            path = Path(written)
            outputs.append((f"{name}-file", path.suffix[1:], path.read_text() if path.exists() else "(not written)\n"))
        index.append(f"$ {' '.join(arguments)}\nexit {done.returncode}\n{done.stderr}\n")
    return outputs, index


def compare(before: Path, after: Path) -> int:
    names = sorted({path.name for path in [*before.iterdir(), *after.iterdir()]})
    differing = 0
    for name in names:
        old, new = (folder / name for folder in (before, after))
        old_text = old.read_text().splitlines(keepends=True) if old.exists() else []
        new_text = new.read_text().splitlines(keepends=True) if new.exists() else []
        if old_text != new_text or old.exists() != new.exists():
            differing += 1
            sys.stdout.writelines(difflib.unified_diff(old_text, new_text, str(old), str(new)))
    print(f"{len(names) - differing} of {len(names)} outputs identical")
    return 1 if differing else 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--compare":
        sys.exit(compare(Path(sys.argv[2]), Path(sys.argv[3])))
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        sys.exit(__doc__)
    sys.exit(capture(Path(sys.argv[1])))
