"""The dense kind's approximate index (`index: {kind: hnsw}`) and its statement in every output, on the
demo corpus's first 400 documents with the bundled MiniLM; and onnxruntime's `providers`.

The documents are encoded once for the module (a shared vector cache); each test starts with nothing in
memory, as a new process would.
"""

from __future__ import annotations

import gzip
import itertools
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from retrieval_pipeline.cli import main
from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.retrieval.approximation import Approximation
from retrieval_pipeline.core.retrieval.retriever import BuildContext
from retrieval_pipeline.retrievers.encoders import OPEN
from retrieval_pipeline.retrievers.vector import ann_index, dense
from retrieval_pipeline.retrievers.vector.ann_index import HnswIndex, hnsw_search, measured_overlap, sampled
from retrieval_pipeline.retrievers.vector.dense import DenseKind, DenseRetriever

DEMO = Path(__file__).resolve().parents[2] / "retrieval_pipeline" / "demo"
DOCUMENTS = 400
SET_QUESTIONS = 30
HNSW = {"kind": "hnsw", "connectivity": 8, "expansion_add": 32, "expansion_search": 16}


@pytest.fixture(autouse=True)
def fresh_process():
    dense.VECTORS.clear()
    ann_index.INDEXES.clear()


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """A folder with the corpus (the demo's first 400 documents), a set of 30 demo questions (their labels
    among those documents) and the cache."""
    folder = tmp_path_factory.mktemp("ann")
    with gzip.open(DEMO / "cranfield-corpus.jsonl.gz", "rt", encoding="utf-8") as handle:
        lines = list(itertools.islice(handle, DOCUMENTS))
    (folder / "corpus.jsonl").write_text("".join(lines), encoding="utf-8")
    held = {json.loads(line)["_id"] for line in lines}
    demo_set = yaml.safe_load((DEMO / "demo.cranfield.yaml").read_text(encoding="utf-8"))
    questions = [
        {
            **{k: q[k] for k in ("id", "question", "form")},
            "expected_document_ids": [d for d in q["expected_document_ids"] if d in held],
        }
        for q in demo_set["questions"]
    ]
    (folder / "set.yaml").write_text(
        yaml.safe_dump({"identifier": "ann.demo", "name": "demo questions", "questions": questions[:SET_QUESTIONS]})
    )
    return folder


@pytest.fixture(scope="module")
def questions() -> list[str]:
    demo_set = yaml.safe_load((DEMO / "demo.cranfield.yaml").read_text(encoding="utf-8"))
    return [question["question"] for question in demo_set["questions"]]


def params(minilm, **settings) -> dict:
    model, tokenizer = minilm
    return {"corpus": "corpus.jsonl", "model": str(model), "tokenizer": str(tokenizer), "max_length": 32, **settings}


def build(project: Path, minilm, **settings) -> DenseRetriever:
    context = BuildContext(base_dir=project, source="test.yaml", cache_dir=project / "cache")
    return DenseKind.parse("minilm", params(minilm, **settings), context).build()


def overlap(approximate: list[list[str]], exact: list[list[str]]) -> float:
    return float(np.mean([len(set(a) & set(e)) / len(e) for a, e in zip(approximate, exact)]))


@pytest.mark.slow
def test_hnsw_rankings_agree_with_exact_search_and_the_stated_overlap_is_the_one_measured_here(project, minilm, questions):
    exact = build(project, minilm).retrieve_batch(questions, 10)
    for index in ({"kind": "hnsw"}, HNSW, {**HNSW, "connectivity": 2, "expansion_add": 2, "expansion_search": 1}):
        retriever = build(project, minilm, index={**index, "overlap_sample": len(questions)})
        found = overlap(retriever.retrieve_batch(questions, 10), exact)
        stated = retriever.approximation(questions)
        assert stated.questions == len(questions) and stated.overlap == pytest.approx(found, abs=1e-12)
        if index == {"kind": "hnsw"}:
            assert found >= 0.95  # the defaults, on 400 documents
    assert build(project, minilm, index={"kind": "exact"}).approximation(questions) is None


def test_the_overlap_counts_exact_searchs_top_10_found_by_the_graph(tmp_path):
    """Clustered unit vectors and a deliberately poor graph, so the graph misses some; the overlap is
    recomputed here from a full sort and usearch's own search."""
    rng = np.random.default_rng(7)
    centres = rng.standard_normal((40, 32)).astype(np.float32)
    vectors = centres[rng.integers(0, 40, 20_000)] + 0.4 * rng.standard_normal((20_000, 32)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    queries = vectors[:200] + 0.05 * rng.standard_normal((200, 32)).astype(np.float32)
    search = hnsw_search(
        HnswIndex(kind="hnsw", connectivity=3, expansion_add=4, expansion_search=2), vectors, "k", True, tmp_path, print
    )
    exact = np.argsort(-(queries @ vectors.T), axis=1, kind="stable")[:, :10]
    found = search.graph.search(queries, 10).keys
    expected = np.mean([len(set(f.tolist()) & set(e.tolist())) / 10 for f, e in zip(found, exact)])
    assert measured_overlap(search, queries, vectors) == pytest.approx(expected, abs=1e-12)
    assert 0.0 < expected < 1.0


def test_the_overlap_sample_is_seeded_and_kept_in_the_sets_order():
    questions = [f"q{n}" for n in range(300)]
    first = sampled(questions, 50)
    assert first == sampled(questions, 50) and len(set(first)) == 50
    assert first == sorted(first, key=questions.index) and first != questions[:50]
    assert sampled(questions[:7], 50) == questions[:7]


@pytest.mark.slow
def test_the_graph_is_built_once_per_vectors_and_build_parameters(project, minilm, monkeypatch):
    messages: list[str] = []
    context = BuildContext(base_dir=project, source="test.yaml", cache_dir=project / "cache", progress=messages.append)
    index = {"kind": "hnsw", "connectivity": 12}
    first = DenseKind.parse("minilm", params(minilm, index=index), context).build()
    assert first.build_report()["index_cache_hit"] is False and messages[-1] == f"indexed {DOCUMENTS}/{DOCUMENTS} vectors (hnsw)"
    assert first.build_report()["index"] == "hnsw M=12 ef_construction=128 ef=64"
    again = DenseKind.parse("minilm", params(minilm, index=index), context).build()
    assert again._graph is first._graph  # the same process: the same graph
    dense.VECTORS.clear()
    ann_index.INDEXES.clear()
    built = []
    monkeypatch.setattr(ann_index, "_keys", lambda start, stop: built.append(stop) or np.arange(start, stop, dtype=np.uint64))
    loaded = DenseKind.parse("minilm", params(minilm, index={**index, "expansion_search": 99}), context).build()
    assert loaded.build_report()["index_cache_hit"] is True and built == []  # ef_search reuses the saved graph
    assert loaded._graph.graph.expansion_search == 99
    other = DenseKind.parse("minilm", params(minilm, index={**index, "expansion_add": 64}), context).build()
    assert other.build_report()["index_cache_hit"] is False and built == [DOCUMENTS]
    graphs = sorted(path.name.split(".")[1] for path in (project / "cache" / "dense").glob("*.hnsw-*"))
    assert len(graphs) == len(set(graphs)) >= 2


def test_a_damaged_saved_graph_is_built_again(tmp_path):
    vectors = np.eye(8, dtype=np.float32)
    params = HnswIndex(kind="hnsw")
    first = hnsw_search(params, vectors, "key", True, tmp_path, print)
    (saved,) = tmp_path.glob("key.hnsw-*/index.usearch")
    saved.write_bytes(b"not an index")
    ann_index.INDEXES.clear()
    rebuilt = hnsw_search(params, vectors, "key", True, tmp_path, print)
    assert not first.cache_hit and not rebuilt.cache_hit and rebuilt.top_positions(vectors[:1], 1) == [[0]]


@pytest.mark.slow
def test_an_exact_index_is_todays_search(project, minilm, questions):
    today, exact = build(project, minilm), build(project, minilm, index={"kind": "exact"})
    assert exact.retrieve_batch(questions, 10) == today.retrieve_batch(questions, 10)
    assert exact.index_version() == today.index_version()
    assert exact.build_report().keys() == today.build_report().keys() and "index" not in today.build_report()


@pytest.mark.parametrize(
    ("index", "field"),
    [
        ({"kind": "hnsw", "M": 16}, "index.hnsw.M"),
        ({"kind": "hnsw", "connectivity": 1}, "index.hnsw.connectivity"),
        ({"kind": "hnsw", "expansion_search": 0}, "index.hnsw.expansion_search"),
        ({"kind": "hnsw", "overlap_sample": 0}, "index.hnsw.overlap_sample"),
        ({"kind": "exact", "connectivity": 16}, "index.exact.connectivity"),
        ({"kind": "ivf"}, "index"),
    ],
)
def test_a_bad_index_parameter_is_refused_naming_the_retriever_and_key(project, minilm, index, field):
    context = BuildContext(base_dir=project, source="test.yaml", cache_dir=project / "cache")
    with pytest.raises(InvalidInputError, match=rf"test\.yaml: retrievers\.minilm: field '{field}'") as raised:
        DenseKind.parse("minilm", params(minilm, index=index), context)
    assert len(str(raised.value).splitlines()) == 1


def write_config(project: Path, minilm) -> Path:
    config = {
        "store": "results",
        "cache_dir": "cache",
        "question_sets": [{"file": "set.yaml"}],
        "retrievers": {"exact": {"kind": "dense", **params(minilm)}, "hnsw": {"kind": "dense", **params(minilm, index=HNSW)}},
    }
    (project / "config.yaml").write_text(yaml.safe_dump(config))
    return project / "config.yaml"


@pytest.mark.slow
def test_an_approximate_run_says_so_in_json_markdown_terminal_and_html(project, minilm, tmp_path):
    config = str(write_config(project, minilm))
    invoke = CliRunner().invoke
    exact = json.loads(invoke(main, ["run", "ann.demo", "exact", "--config", config, "--json"]).stdout)
    assert "approximate" not in exact
    result = invoke(main, ["run", "ann.demo", "hnsw", "--config", config, "--json", "--markdown", str(tmp_path / "run.md")])
    assert result.exit_code == 0, result.output
    stated = json.loads(result.stdout)["approximate"]
    sentence = Approximation(stated["index"], stated["overlap"], stated["questions"]).sentence
    assert stated["statement"] == sentence and stated["questions"] == SET_QUESTIONS and stated["depth"] == 10
    assert sentence.startswith("approximate: hnsw M=8 ef_construction=32 ef=16; top-10 overlap with exact ")
    assert sentence.endswith(f"{stated['overlap']:.2f} on {SET_QUESTIONS} questions")
    assert f"**{sentence}**" in (tmp_path / "run.md").read_text()
    terminal = invoke(main, ["run", "ann.demo", "hnsw", "--config", config, "--show", "none"])
    assert f"Search: {sentence}" in terminal.output
    report = invoke(main, ["report", "ann.demo", "hnsw", "--config", config, "--html", str(tmp_path / "run.html")])
    assert report.exit_code == 0, report.output
    assert f"<p><b>{sentence}</b></p>" in (tmp_path / "run.html").read_text()
    compared = invoke(main, ["compare", "ann.demo", "exact", "hnsw", "--config", config])
    assert f"hnsw: {sentence}" in compared.output and "exact: approximate" not in compared.output
    compared_json = json.loads(invoke(main, ["compare", "ann.demo", "exact", "hnsw", "--config", config, "--json"]).stdout)
    assert [run.get("approximate", {}).get("statement") for run in compared_json["runs"]] == [None, sentence]


@pytest.mark.slow
def test_an_approximate_evaluation_says_so_in_dagster_metadata(project, minilm):
    from dagster import DagsterInstance, MultiPartitionKey

    from retrieval_pipeline.dagster_layer.definitions import EVALUATION_JOB, RETRIEVERS_JOB, SETS_JOB, build_definitions

    defs = build_definitions(write_config(project, minilm))
    quiet = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}
    with DagsterInstance.ephemeral() as instance:
        run = {"instance": instance, "run_config": quiet}
        defs.resolve_job_def(SETS_JOB).execute_in_process(partition_key="ann.demo", **run)
        built = {}
        for retriever in ("exact", "hnsw"):
            result = defs.resolve_job_def(RETRIEVERS_JOB).execute_in_process(partition_key=retriever, **run)
            built[retriever] = result.get_asset_materialization_events()[0].materialization.metadata
        evaluated = {}
        for retriever in ("exact", "hnsw"):
            key = MultiPartitionKey({"set": "ann.demo", "retriever": retriever})
            result = defs.resolve_job_def(EVALUATION_JOB).execute_in_process(partition_key=key, **run)
            evaluated[retriever] = result.get_asset_materialization_events()[0].materialization.metadata
    assert "approximate" not in evaluated["exact"] and "build_index" not in built["exact"]
    statement = evaluated["hnsw"]["approximate"].value
    overlap = evaluated["hnsw"]["approximate_top10_overlap"].value
    assert statement.startswith("approximate: hnsw M=8 ef_construction=32 ef=16; top-10 overlap with exact ")
    assert statement.endswith(f"{overlap:.2f} on {SET_QUESTIONS} questions")
    assert built["hnsw"]["build_index"].value == "hnsw M=8 ef_construction=32 ef=16"
    assert built["hnsw"]["build_providers"].value == "CPUExecutionProvider"


def available_providers() -> list[str]:
    onnxruntime = pytest.importorskip("onnxruntime", reason="needs pip install -e '.[dense]'")
    return onnxruntime.get_available_providers()


@pytest.mark.parametrize(
    ("providers", "message"),
    [
        (["CUDAExecutionProvider"], "CUDAExecutionProvider not available here; available: "),
        (["CUDAExecutionProvder", "CPUExecutionProvider"], "onnxruntime has no provider CUDAExecutionProvder; available here: "),
    ],
)
def test_a_provider_not_available_is_refused_listing_the_available_ones(project, minilm, providers, message):
    if "CUDAExecutionProvider" in available_providers():
        pytest.skip("CUDAExecutionProvider is available here")
    context = BuildContext(base_dir=project, source="test.yaml", cache_dir=project / "cache")
    with pytest.raises(InvalidInputError) as raised:
        DenseKind.parse("minilm", params(minilm, providers=providers), context)
    text = str(raised.value)
    assert text.startswith("test.yaml: retrievers.minilm: field 'providers': " + message)
    assert text.endswith(", ".join(available_providers())) and len(text.splitlines()) == 1


@pytest.mark.slow
def test_the_cpu_runs_where_the_list_names_it_as_the_fallback_and_the_build_report_says_so(project, minilm):
    OPEN.clear()
    default = build(project, minilm)
    listed = build(project, minilm, providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
    used = (
        "CUDAExecutionProvider, CPUExecutionProvider"
        if "CUDAExecutionProvider" in available_providers()
        else "CPUExecutionProvider"
    )
    assert default.build_report()["providers"] == "CPUExecutionProvider" and listed.build_report()["providers"] == used


@pytest.mark.slow
def test_cuda_encodes_as_the_cpu_does_where_there_is_a_gpu(project, minilm, questions):
    if "CUDAExecutionProvider" not in available_providers():
        pytest.skip(
            f"no CUDAExecutionProvider here (onnxruntime has {', '.join(available_providers())}): needs a GPU and onnxruntime-gpu"
        )
    on_gpu = build(project, minilm, providers=["CUDAExecutionProvider"])
    assert on_gpu.build_report()["providers"].startswith("CUDAExecutionProvider")
    on_cpu = build(project, minilm)
    assert overlap(on_gpu.retrieve_batch(questions, 10), on_cpu.retrieve_batch(questions, 10)) >= 0.99


def test_providers_apply_to_a_local_onnx_model_only(project, minilm):
    context = BuildContext(base_dir=project, source="test.yaml", cache_dir=project / "cache")
    endpoint = {
        "corpus": "corpus.jsonl",
        "encoder": {"kind": "callable", "function": "json:loads"},
        "providers": ["CPUExecutionProvider"],
    }
    with pytest.raises(InvalidInputError, match="field 'providers': providers applies to a local model"):
        DenseKind.parse("minilm", endpoint, context)


def test_a_stored_approximate_run_reads_back_with_its_statement():
    from retrieval_pipeline.core.scoring.question_columns import QuestionResult
    from retrieval_pipeline.core.scoring.results import RunResult
    from retrieval_pipeline.core.storage.run_tables import question_table, summary_table
    from retrieval_pipeline.core.storage.stored_runs import run_from_tables

    stated = Approximation("hnsw M=16 ef_construction=128 ef=64", 0.9712345678901234, 50)
    answered = [QuestionResult("q1", "match", "normal", ("d1",), ("d1", "d2"), 1.0)]
    for approximation in (stated, None):
        run = RunResult("set", "hnsw", answered, approximation=approximation)
        assert run_from_tables(summary_table(run), question_table(run)) == run
    assert stated.sentence == "approximate: hnsw M=16 ef_construction=128 ef=64; top-10 overlap with exact 0.97 on 50 questions"
    assert Approximation("hnsw", None, 0).sentence == "approximate: hnsw; top-10 overlap with exact not measured"


@pytest.mark.parametrize("bad", [("hnsw", 1.5, 3), ("hnsw", None, 3), ("hnsw", 0.5, 0), ("", 0.5, 1)])
def test_an_impossible_statement_is_refused(bad):
    with pytest.raises(ValueError):
        Approximation(*bad)


@pytest.mark.slow
def test_a_process_that_built_a_graph_can_open_an_onnx_encoder_afterwards(tmp_path):
    """usearch imported before onnxruntime crashed the interpreter on onnxruntime's import (a segfault)."""
    pytest.importorskip("onnxruntime", reason="needs pip install -e '.[dense]'")
    script = (
        "import numpy as np\n"
        "from retrieval_pipeline.retrievers.vector.ann_index import HnswIndex, hnsw_search\n"
        f"hnsw_search(HnswIndex(kind='hnsw'), np.eye(4, dtype=np.float32), 'k', True, __import__('pathlib').Path({str(tmp_path)!r}), print)\n"
        "import onnxruntime\n"
        "print('opened', len(onnxruntime.get_available_providers()) > 0)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip().endswith("opened True"), done.stderr[-2000:]
