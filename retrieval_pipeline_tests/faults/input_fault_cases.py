"""The bad inputs of test_faults_inputs.py: each one a file (or command-line value) a user could really hand
the tool, what it must exit with and what its one line of stderr must name."""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from pathlib import Path

import retrieval_pipeline.demo

BOM = b"\xef\xbb\xbf"
LATIN1 = "Réacteur".encode("latin-1")  # what an editor set to Latin-1 writes: not UTF-8
HUGE = "x" * 5_000_000

CORPUS = b"".join(
    json.dumps(document).encode() + b"\n"
    for document in (
        {"_id": "d1", "title": "alpha", "text": "alpha particles and beams"},
        {"_id": "d2", "title": "beta", "text": "beta decay of nuclei"},
        {"_id": "d3", "title": "gamma", "text": "gamma rays from stars"},
    )
)
Q1 = "{id: q1, question: alpha beams, form: match, expected_document_ids: [d1]}"
Q2 = "{id: q2, question: nuclear decay, form: gap, expected_document_ids: [d2]}"
HEADER = {"identifier": "t.small", "name": "Small"}
QUESTIONS = [
    {"id": "q1", "question": "alpha beams", "form": "match", "expected_document_ids": ["d1"]},
    {"id": "q2", "question": "nuclear decay", "form": "gap", "expected_document_ids": ["d2"]},
]
RETRIEVER = "{kind: lexical, corpus: corpus.jsonl}"
RUN = ("run", "t.small", "bm25", "--config", "config.yaml")
LIST = ("list", "--config", "config.yaml", "--json")


def set_yaml(*questions: str, head: str = "identifier: t.small\nname: Small\n") -> bytes:
    return (head + "questions:\n" + "".join(f"  - {q}\n" for q in questions or (Q1, Q2))).encode()


def config(extra: str = "", retriever: str = RETRIEVER, sets: str = "[{file: set.yaml}]") -> bytes:
    return f"store: results\nquestion_sets: {sets}\nretrievers:\n  bm25: {retriever}\n{extra}".encode()


def set_json(duplicate: bool = False, **first: str) -> bytes:
    """`first` replaces fields of q1; `duplicate` repeats it as the second question."""
    questions = [{**QUESTIONS[0], **first}]
    return json.dumps({**HEADER, "questions": questions * 2 if duplicate else [*questions, QUESTIONS[1]]}).encode()


def set_jsonl() -> bytes:
    return b"".join(json.dumps(line).encode() + b"\n" for line in (HEADER, *QUESTIONS))


def bad_byte(data: bytes) -> str:
    """Where the first non-UTF-8 byte of `data` is, as the error must say it."""
    offset = data.index(LATIN1) + 1  # "R" is ASCII, "é" is the first bad byte
    line = data.count(b"\n", 0, offset) + 1
    return f"offset {offset} (line {line})"


def trec_import(qrels: str, corpus: str) -> tuple[str, ...]:
    return (
        "import",
        "trec",
        "--qrels",
        qrels,
        "--topics",
        "topics.tsv",
        "--corpus",
        corpus,
        "--identifier",
        "t.x",
        "--out",
        "t.yaml",
    )


def beir_folder(queries: bytes = b'{"_id": "q1", "text": "alpha beams"}\n', corpus: bytes = CORPUS) -> dict[str, bytes]:
    return {
        "beir/corpus.jsonl": corpus,
        "beir/queries.jsonl": queries,
        "beir/qrels/dev.tsv": b"query-id\tcorpus-id\tscore\nq1\td1\t1\n",
    }


@dataclass(frozen=True)
class Case:
    """`names`: what the one stderr line must contain. `accepted`: valid input that must work, not fail."""

    id: str
    files: dict[str, bytes]
    args: tuple[str, ...] = RUN
    exit: int = 2
    names: tuple[str, ...] = ()
    accepted: bool = False
    never_written: tuple[str, ...] = field(default=())


SETS_IN = {ext: config(sets=f"[{{file: set.{ext}}}]") for ext in ("json", "jsonl")}
BAD_SET_YAML = set_yaml(Q1.replace("alpha", "ALPHA")).replace(b"ALPHA", LATIN1)
BAD_SET_JSON = set_json().replace(b"alpha", LATIN1)
BAD_SET_JSONL = set_jsonl().replace(b"alpha", LATIN1)
BAD_CONFIG = config("# " + "x" * 10 + "\n").replace(b"x" * 10, LATIN1)
BAD_CORPUS = CORPUS.replace(b"gamma rays", LATIN1)
BAD_QUERIES = b'{"_id": "q1", "text": "' + LATIN1 + b'"}\n'
BAD_QRELS = b"1 0 d1 1\n" + LATIN1 + b" 0 d2 1\n"
QRELS = b"1 0 184 1\n"  # judges a document of the demo corpus
RUN_FILE = b"q1 Q0 d1 1 2.0 tag\nq2 Q0 d2 1 2.0 tag\n"
BAD_RUN_FILE = RUN_FILE.replace(b"d2", LATIN1)
REPLAY = config(retriever="{kind: run_file, path: run.trec, question_set: t.small}")
DEMO_CORPUS = Path(retrieval_pipeline.demo.__file__).with_name("cranfield-corpus.jsonl.gz").read_bytes()


def cut_short(gzipped: bytes) -> bytes:
    """A gzip file whose copy or download stopped half way: no end-of-stream marker."""
    return gzipped[: len(gzipped) // 2]


CASES = [
    # set files: wrong types, missing fields, duplicates, huge values, encodings, syntax
    Case(
        "set-question-not-text",
        {"set.yaml": set_yaml(Q1.replace("alpha beams", "[1, 2]"))},
        names=("set.yaml", "'q1'", "'question'"),
    ),
    Case(
        "set-expected-ids-not-a-list",
        {"set.yaml": set_yaml(Q1.replace("[d1]", "{d: 1}"))},
        names=("set.yaml", "'q1'", "expected_document_ids"),
    ),
    Case(
        "set-form-missing",
        {"set.yaml": set_yaml(Q1.replace("form: match, ", ""))},
        names=("set.yaml", "'q1'", "'form'", "required"),
    ),
    Case("set-form-unknown", {"set.yaml": set_yaml(Q1.replace("match", "maybe"))}, names=("set.yaml", "'q1'", "'maybe'", "form")),
    Case(
        "set-duplicate-question-id",
        {"set.yaml": set_yaml(Q1, Q2.replace("q2", "q1"))},
        names=("set.yaml", "duplicate question id 'q1'"),
    ),
    Case(
        "set-duplicate-expected-id",
        {"set.yaml": set_yaml(Q1.replace("[d1]", "[d1, d1]"))},
        names=("set.yaml", "'q1'", "expected_document_ids", "'d1'"),
    ),
    Case(
        "set-no-questions",
        {"set.yaml": b"identifier: t.small\nname: Small\nquestions: []\n"},
        names=("set.yaml", "'questions': must not be empty"),
    ),
    Case(
        "set-bad-identifier",
        {"set.yaml": set_yaml(head="identifier: T Small\nname: Small\n")},
        names=("set.yaml", "'identifier'", "'T Small'"),
    ),
    Case("set-not-a-mapping", {"set.yaml": b"- just\n- a list\n"}, names=("set.yaml", "mapping")),
    Case("set-empty-file", {"set.yaml": b""}, names=("set.yaml", "mapping")),
    Case(
        "set-misspelt-questions-key",
        {"set.yaml": set_yaml().replace(b"questions:", b"questoins:")},
        names=("set.yaml", "'questoins'", "did you mean 'questions'"),
    ),
    Case(
        "set-misspelt-question-field",
        {"set.yaml": set_yaml(Q1.replace("expected_", "expectd_"))},
        names=("set.yaml", "'q1'", "'expectd_document_ids'", "did you mean 'expected_document_ids'"),
    ),
    Case(
        "set-huge-form-value",
        {"set.json": set_json(form=HUGE), "config.yaml": SETS_IN["json"]},
        names=("set.json", "'q1'", "form", "5000002 characters"),
    ),
    Case(
        "set-huge-id-duplicated",
        {"set.json": set_json(id=HUGE, duplicate=True), "config.yaml": SETS_IN["json"]},
        names=("set.json", "duplicate question id", "5000002 characters"),
    ),
    Case("set-yaml-not-utf8", {"set.yaml": BAD_SET_YAML}, names=("set.yaml", "not UTF-8", bad_byte(BAD_SET_YAML))),
    Case(
        "set-json-not-utf8",
        {"set.json": BAD_SET_JSON, "config.yaml": SETS_IN["json"]},
        names=("set.json", "not UTF-8", bad_byte(BAD_SET_JSON)),
    ),
    Case(
        "set-jsonl-not-utf8",
        {"set.jsonl": BAD_SET_JSONL, "config.yaml": SETS_IN["jsonl"]},
        names=("set.jsonl", "not UTF-8", bad_byte(BAD_SET_JSONL)),
    ),
    Case(
        "set-yaml-syntax-error", {"set.yaml": set_yaml(Q1, "{id: q2, question: [unclosed")}, names=("set.yaml:6:1: invalid YAML",)
    ),
    Case(
        "set-json-syntax-error",
        {"set.json": set_json()[:-1], "config.yaml": SETS_IN["json"]},
        names=("set.json:1:", "invalid JSON"),
    ),
    Case(
        "set-jsonl-syntax-error",
        {"set.jsonl": set_jsonl() + b'{"id": "q3",\n', "config.yaml": SETS_IN["jsonl"]},
        names=("set.jsonl:4:", "invalid JSON"),
    ),
    Case("set-missing-file", {"config.yaml": config(sets="[{file: nowhere.yaml}]")}, names=("nowhere.yaml", "cannot read")),
    Case(
        "set-unsupported-suffix",
        {"config.yaml": config(sets="[{file: set.txt}]"), "set.txt": set_yaml()},
        names=("set.txt", "unsupported"),
    ),
    Case("set-yaml-bom-accepted", {"set.yaml": BOM + set_yaml()}, args=LIST, accepted=True, names=("t.small",)),
    Case(
        "set-json-bom-accepted",
        {"set.json": BOM + set_json(), "config.yaml": SETS_IN["json"]},
        args=LIST,
        accepted=True,
        names=("t.small",),
    ),
    Case(
        "set-jsonl-bom-accepted",
        {"set.jsonl": BOM + set_jsonl(), "config.yaml": SETS_IN["jsonl"]},
        args=LIST,
        accepted=True,
        names=("t.small",),
    ),
    # configurations: typos at every level, unknown kinds, bad parameters, tolerances, retention, encoding
    Case(
        "config-misspelt-top-level-key",
        {"config.yaml": config().replace(b"retrievers:", b"retrievrs:")},
        names=("config.yaml", "'retrievrs'", "did you mean 'retrievers'"),
    ),
    Case(
        "config-misspelt-tolerance-key",
        {"config.yaml": config("tolerances: {max_top1_dorp: 0.1}\n")},
        names=("config.yaml", "'max_top1_dorp'", "did you mean 'max_top1_drop'"),
    ),
    Case(
        "config-misspelt-set-source-key",
        {"config.yaml": config(sets="[{fiel: set.yaml}]")},
        names=("config.yaml", "'fiel'", "did you mean 'file'"),
    ),
    Case(
        "config-misspelt-kind-key",
        {"config.yaml": config(retriever="{kidn: lexical, corpus: corpus.jsonl}")},
        names=("config.yaml", "bm25", "'kidn'", "did you mean 'kind'"),
    ),
    Case(
        "config-misspelt-retriever-parameter",
        {"config.yaml": config(retriever="{kind: lexical, corpsu: corpus.jsonl}")},
        names=("config.yaml", "retrievers.bm25", "'corpsu'", "did you mean 'corpus'"),
    ),
    Case(
        "config-unknown-kind",
        {"config.yaml": config(retriever="{kind: lexcal, corpus: corpus.jsonl}")},
        names=("config.yaml", "retrievers.bm25", "'kind'", "'lexcal'", "lexical"),
    ),
    Case(
        "config-unknown-kind-listed",
        {"config.yaml": config(retriever="{kind: lexcal, corpus: corpus.jsonl}")},
        args=LIST,
        names=("config.yaml", "retrievers.bm25", "'lexcal'"),
    ),
    Case(
        "config-bad-parameter-listed",
        {"config.yaml": config(retriever="{kind: lexical, corpus: corpus.jsonl, b: 2}")},
        args=LIST,
        names=("config.yaml", "retrievers.bm25", "'b'"),
    ),
    Case(
        "config-missing-corpus-listed",
        {"config.yaml": config(retriever="{kind: lexical, corpus: gone.jsonl}")},
        args=LIST,
        names=("config.yaml", "retrievers.bm25", "'corpus'", "gone.jsonl"),
    ),
    Case(
        "config-corpus-a-folder-listed",
        {"config.yaml": config(retriever="{kind: lexical, corpus: beir}"), "beir/corpus.jsonl": CORPUS},
        args=LIST,
        names=("config.yaml", "retrievers.bm25", "'corpus'", "beir is a folder, not a file", "corpus.jsonl"),
    ),
    Case(
        "config-dense-model-absent",
        {"config.yaml": config(retriever="{kind: dense, corpus: corpus.jsonl, model: models/minilm.onnx}")},
        names=("config.yaml", "retrievers.bm25", "'model'", "models/minilm.onnx does not exist"),
    ),
    Case(
        "config-dense-model-folder-without-a-model-listed",
        {"config.yaml": config(retriever="{kind: dense, corpus: corpus.jsonl, model: models}"), "models/README": b"soon"},
        args=LIST,
        names=("config.yaml", "retrievers.bm25", "'model'", "models holds no .onnx file"),
    ),
    Case(
        "config-body-template-date-listed",
        {
            "config.yaml": config(
                retriever="{kind: http, url: 'http://127.0.0.1:9', body_template: {q: '{question}', since: 2024-01-01}}"
            )
        },
        args=LIST,
        names=("config.yaml", "retrievers.bm25", "'body_template.since'", "2024-01-01"),
    ),
    Case(
        "config-fusion-unknown-member-listed",
        {"config.yaml": config(retriever="{kind: fusion, retrievers: [bm25, dense]}")},
        args=LIST,
        names=("config.yaml", "retrievers.bm25", "'dense'"),
    ),
    Case(
        "config-tolerance-in-points",
        {"config.yaml": config("tolerances: {max_top1_drop: 10}\n")},
        names=("config.yaml", "tolerances", "'max_top1_drop'", "did you mean 0.10?"),
    ),
    Case(
        "config-tolerance-infinite",
        {"config.yaml": config("tolerances: {max_top3_drop: .inf}\n")},
        names=("config.yaml", "tolerances", "'max_top3_drop'", "got inf"),
    ),
    Case(
        "config-tolerance-nan",
        {"config.yaml": config("tolerances: {max_top1_drop: .nan}\n")},
        names=("config.yaml", "tolerances", "'max_top1_drop'", "got nan"),
    ),
    Case(
        "config-tolerance-negative",
        {"config.yaml": config("tolerances: {max_top3_drop: -1}\n")},
        names=("config.yaml", "tolerances", "'max_top3_drop'", "got -1"),
    ),
    Case(
        "config-tolerance-not-a-number",
        {"config.yaml": config("tolerances: {max_top1_drop: ten}\n")},
        names=("config.yaml", "tolerances", "'max_top1_drop'"),
    ),
    Case(
        "config-latency-tolerance-infinite",
        {"config.yaml": config("tolerances: {max_p95_latency_increase_ms: .inf}\n")},
        names=("config.yaml", "'max_p95_latency_increase_ms'", "milliseconds"),
    ),
    Case(
        "config-latency-tolerance-negative",
        {"config.yaml": config("tolerances: {max_p95_latency_increase_ms: -5}\n")},
        names=("config.yaml", "'max_p95_latency_increase_ms'", "milliseconds"),
    ),
    Case("config-retention-negative", {"config.yaml": config("retention_days: -1\n")}, names=("config.yaml", "'retention_days'")),
    Case("config-retention-nan", {"config.yaml": config("retention_days: .nan\n")}, names=("config.yaml", "'retention_days'")),
    Case(
        "config-retention-not-a-number",
        {"config.yaml": config("retention_days: soon\n")},
        names=("config.yaml", "'retention_days'"),
    ),
    Case(
        "config-yaml-syntax-error",
        {"config.yaml": config("tolerances: {max_top1_drop: 0.1\n")},
        names=("config.yaml:6:1: invalid YAML",),
    ),
    Case("config-not-utf8", {"config.yaml": BAD_CONFIG}, names=("config.yaml", "not UTF-8", bad_byte(BAD_CONFIG))),
    Case("config-bom-accepted", {"config.yaml": BOM + config()}, args=LIST, accepted=True, names=("bm25",)),
    Case("config-missing-file", {}, args=("list", "--config", "absent.yaml"), names=("absent.yaml", "cannot read")),
    # corpora and imports
    Case(
        "corpus-not-utf8",
        {"corpus.jsonl": BAD_CORPUS},
        names=("corpus.jsonl", "retrievers.bm25", "not UTF-8", bad_byte(BAD_CORPUS)),
    ),
    Case("corpus-bom-accepted", {"corpus.jsonl": BOM + CORPUS}, accepted=True),
    Case(
        "run-file-not-utf8",
        {"config.yaml": REPLAY, "run.trec": BAD_RUN_FILE},
        names=("run.trec", "retrievers.bm25", "not UTF-8", bad_byte(BAD_RUN_FILE)),
    ),
    Case(
        "corpus-gz-truncated",
        {"corpus.jsonl.gz": cut_short(DEMO_CORPUS), "config.yaml": config(retriever="{kind: lexical, corpus: corpus.jsonl.gz}")},
        names=("corpus.jsonl.gz", "retrievers.bm25", "cannot read the corpus"),
    ),
    Case(
        "run-file-gz-truncated",
        {"config.yaml": REPLAY.replace(b"run.trec", b"run.trec.gz"), "run.trec.gz": cut_short(gzip.compress(RUN_FILE * 50))},
        names=("run.trec.gz", "retrievers.bm25", "cannot read the run file"),
    ),
    Case("run-file-bom-accepted", {"config.yaml": REPLAY, "run.trec": BOM + RUN_FILE}, accepted=True),
    Case(
        "beir-missing-split",
        beir_folder(),
        args=("import", "beir", "beir", "--identifier", "b.x", "--out", "b.yaml"),
        names=("beir", "'test'", "dev"),
        never_written=("b.yaml",),
    ),
    Case(
        "beir-queries-not-utf8",
        beir_folder(queries=BAD_QUERIES),
        args=("import", "beir", "beir", "--split", "dev", "--identifier", "b.x", "--out", "b.yaml"),
        names=("queries.jsonl", "not UTF-8", bad_byte(BAD_QUERIES)),
        never_written=("b.yaml",),
    ),
    Case(
        "beir-bom-accepted",
        beir_folder(queries=BOM + b'{"_id": "q1", "text": "alpha beams"}\n', corpus=BOM + CORPUS),
        args=("import", "beir", "beir", "--split", "dev", "--identifier", "b.x", "--out", "b.yaml"),
        accepted=True,
        names=("b.x",),
    ),
    Case(
        "trec-qrels-not-utf8",
        {"qrels.txt": BAD_QRELS, "topics.tsv": b"1\talpha beams\n", "c.jsonl": CORPUS},
        args=trec_import("qrels.txt", "c.jsonl"),
        names=("qrels.txt", "not UTF-8", bad_byte(BAD_QRELS)),
        never_written=("t.yaml",),
    ),
    Case(
        "trec-qrels-gz-truncated",
        {"qrels.txt.gz": cut_short(gzip.compress(QRELS * 50)), "topics.tsv": b"1\talpha beams\n", "c.jsonl.gz": DEMO_CORPUS},
        args=trec_import("qrels.txt.gz", "c.jsonl.gz"),
        names=("qrels.txt.gz", "cannot read"),
        never_written=("t.yaml",),
    ),
    Case(
        "trec-corpus-gz-truncated",
        {"qrels.txt.gz": gzip.compress(QRELS), "topics.tsv": b"1\talpha beams\n", "c.jsonl.gz": cut_short(DEMO_CORPUS)},
        args=trec_import("qrels.txt.gz", "c.jsonl.gz"),
        names=("c.jsonl.gz", "cannot read"),
        never_written=("t.yaml",),
    ),
    # the command line
    *(
        Case(f"option-{option[2:]}-{value}", {}, args=(*RUN, option, value), names=(option, hint))
        for option, value, hint in (
            ("--max-top1-drop", "10", "did you mean 0.10?"),
            ("--max-top1-drop", "inf", "got inf"),
            ("--max-top3-drop", "nan", "got nan"),
            ("--max-top3-drop", "-1", "got -1"),
            ("--max-top3-drop", "ten", "not a valid float"),
        )
    ),
    Case("option-show-unknown", {}, args=(*RUN, "--show", "everything"), names=("--show", "'everything'")),
    Case("option-misspelt", {}, args=(*RUN, "--jsn"), names=("--jsn", "Did you mean '--json'")),
    Case("command-misspelt", {}, args=("rnu",), names=("'rnu'", "Did you mean 'run'?")),
    Case("unknown-set", {}, args=("run", "t.nope", "bm25", "--config", "config.yaml"), exit=1, names=("'t.nope'", "t.small")),
    Case("unknown-retriever", {}, args=("run", "t.small", "bm26", "--config", "config.yaml"), exit=1, names=("'bm26'", "bm25")),
    Case(
        "unknown-huge-set-identifier",
        {},
        args=("run", "y" * 100_000, "bm25", "--config", "config.yaml"),
        exit=1,
        names=("100002 characters",),
    ),
]
