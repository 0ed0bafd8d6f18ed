"""The embedded demo: it loads from the installed package alone, its set follows its documented rules,
its build script reproduces the shipped files byte for byte, and its retrievers compare meaningfully."""

from __future__ import annotations

import fnmatch
import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

import retrieval_pipeline
from retrieval_pipeline.core.retrieval.query_modes import CURRENT
from retrieval_pipeline.core.retrieval.retriever import BuildContext
from retrieval_pipeline.core.retrieval.retriever_kinds import RETRIEVERS
from retrieval_pipeline.core.services.configuration.lookup import demo_config_path
from retrieval_pipeline.core.services.configuration.project import load_config
from retrieval_pipeline.core.services.evaluation.runner import run_question_set

REPO = Path(__file__).resolve().parents[2]
BUILD_SCRIPT = REPO / "scripts" / "build_demo.py"
DEMO_FOLDER = Path(retrieval_pipeline.__file__).resolve().parent / "demo"
GENERATED = ("cranfield-corpus.jsonl.gz", "demo.cranfield.yaml")
SET_IDENTIFIER = "demo.cranfield"
CRANFIELD_QUESTIONS = 225


@pytest.fixture(scope="module")
def demo_config():
    return load_config(demo_config_path())


@pytest.fixture(scope="module")
def demo_set(demo_config):
    return demo_config.question_set(SET_IDENTIFIER)


@pytest.fixture(scope="module")
def shipped_corpus() -> dict[str, dict]:
    with gzip.open(DEMO_FOLDER / "cranfield-corpus.jsonl.gz", "rt", encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle if line.strip()]
    return {record["_id"]: record for record in records}


def test_the_demo_configuration_lives_in_the_package_and_is_shipped_as_package_data(demo_config):
    assert demo_config_path().parent == DEMO_FOLDER
    shipped = sorted(p.name for p in DEMO_FOLDER.iterdir() if p.is_file() and p.suffix != ".py")
    assert set(GENERATED) | {"config.yaml", "README.md"} <= set(shipped)
    unpackaged = [name for name in shipped if not any(fnmatch.fnmatch(name, pattern) for pattern in package_data("demo/"))]
    assert unpackaged == [], "files a wheel would leave out of retrieval_pipeline/demo"
    assert SET_IDENTIFIER in list(demo_config.question_sets)


def test_the_demo_stores_results_outside_the_package(demo_config):
    store = Path(demo_config.store_uri)
    assert store.is_absolute()
    assert Path(retrieval_pipeline.__file__).resolve().parent not in store.resolve().parents


def test_the_demo_retrievers_read_the_shipped_corpus(demo_config):
    assert len(demo_config.retriever_identifiers) >= 2
    for identifier, spec in demo_config.retriever_specs.items():
        assert spec.kind == "lexical", identifier
        assert demo_config.resolve(spec.params["corpus"]) == DEMO_FOLDER / "cranfield-corpus.jsonl.gz"


def test_the_demo_set_is_clearly_a_demo(demo_set):
    assert "demo" in demo_set.name.lower()
    assert "near-duplicate" in demo_set.description and "CISI" in demo_set.description


def test_the_demo_set_holds_the_cranfield_queries_and_off_domain_questions(demo_set):
    labelled = [q for q in demo_set.questions if q.expected_document_ids]
    empty = [q for q in demo_set.questions if not q.expected_document_ids]
    assert [q.id for q in labelled] == [str(n) for n in range(1, CRANFIELD_QUESTIONS + 1)]
    assert len(empty) >= 10
    assert len(demo_set.questions) == CRANFIELD_QUESTIONS + len(empty)
    for question in empty:
        assert question.id.startswith("cisi-") and question.form.value == "gap"


def test_both_forms_and_both_hard_classes_occur(demo_set):
    forms = demo_set.counts_by_form()
    classes = demo_set.counts_by_hard_class()
    assert set(forms) == {"match", "gap"}
    assert set(classes) == {"near-duplicate", "normal"}
    assert 0 < classes["near-duplicate"] < len(demo_set.questions) / 2
    assert sum(classes.values()) == len(demo_set.questions)


def test_every_expected_document_is_in_the_shipped_corpus(demo_set, shipped_corpus):
    assert len(shipped_corpus) == 1400
    assert all(set(record) == {"_id", "title", "text"} for record in shipped_corpus.values())
    missing = {
        (q.id, document_id)
        for q in demo_set.questions
        for document_id in q.expected_document_ids
        if document_id not in shipped_corpus
    }
    assert missing == set()


@pytest.mark.slow
def test_the_build_script_reproduces_the_shipped_files(shared_data, tmp_path):
    if not BUILD_SCRIPT.is_file():
        pytest.skip(f"the build script is not in this checkout ({BUILD_SCRIPT})")
    if not (shared_data / "cranfield").is_dir() or not (shared_data / "cisi").is_dir():
        pytest.skip(f"Cranfield and CISI are not in {shared_data}")
    subprocess.run(
        [sys.executable, str(BUILD_SCRIPT), "--shared", str(shared_data), "--out", str(tmp_path)],
        check=True,
        capture_output=True,
        text=True,
    )
    for name in GENERATED:
        assert (tmp_path / name).read_bytes() == (DEMO_FOLDER / name).read_bytes(), f"{name} differs from a rebuild"


@pytest.fixture(scope="module")
def demo_runs(demo_set, tmp_path_factory):
    """Each demo retriever that asks questions as typed run on the demo set, with indexes cached in a
    throw-away folder (the others differ from bm25_stemmed on conversations only: a single question is
    asked as is whatever the mode)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RETRIEVAL_EVAL_CACHE", str(tmp_path_factory.mktemp("cache")))
        config = load_config(demo_config_path())
        yield (
            config,
            {
                identifier: run_question_set(demo_set, config.retriever(identifier), cutoffs=config.cutoffs)
                for identifier in config.retriever_identifiers
                if config.retriever_specs[identifier].conversation == CURRENT
            },
        )


def test_the_demo_retrievers_differ_meaningfully(demo_runs):
    _, runs = demo_runs
    rates = {identifier: (run.hit_rate(1), run.hit_rate(3)) for identifier, run in runs.items()}
    assert all(run.complete for run in runs.values())
    assert len(set(rates.values())) == len(rates), f"the demo retrievers score alike: {rates}"
    for top1, top3 in rates.values():
        assert 0.2 < top1 <= top3 < 0.9


def test_the_stemmed_retriever_answers_some_off_domain_questions_with_silence(demo_runs):
    _, runs = demo_runs
    silent = [q.question_id for q in runs["bm25_stemmed"].questions if not q.expected_document_ids and q.hit_at(1)]
    assert silent, "no empty-label question passes: min_score no longer filters anything"


def test_the_score_floor_costs_no_cranfield_hit(demo_runs, demo_set):
    """The documented choice of `min_score`: it silences off-domain questions only."""
    config, runs = demo_runs
    spec = config.retriever_specs["bm25_stemmed"]
    context = BuildContext(base_dir=config.base_dir, source=config.source, cache_dir=config.cache_dir)
    unfloored = RETRIEVERS.parsed("bm25_stemmed", spec.kind, {**spec.params, "min_score": 0.0}, context).build()
    baseline = run_question_set(demo_set, unfloored, cutoffs=config.cutoffs)
    floored = runs["bm25_stemmed"]
    for before, after in zip(baseline.questions, floored.questions):
        if before.expected_document_ids:
            assert (after.hit_at(1), after.hit_at(3)) == (before.hit_at(1), before.hit_at(3)), before.question_id
    cranfield_top3 = sum(1 for q in floored.questions if q.expected_document_ids and q.hit_at(3)) / CRANFIELD_QUESTIONS
    assert cranfield_top3 == pytest.approx(0.707, abs=0.01)  # shared/data/README.md reference figure


def package_data(folder: str) -> list[str]:
    """pyproject.toml's package-data patterns for one folder of the package."""
    tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11")
    pyproject = tomllib.loads(
        (Path(retrieval_pipeline.__file__).resolve().parents[1] / "pyproject.toml").read_text(encoding="utf-8")
    )
    patterns = pyproject["tool"]["setuptools"]["package-data"]["retrieval_pipeline"]
    return [pattern.removeprefix(folder) for pattern in patterns if pattern.startswith(folder)]
