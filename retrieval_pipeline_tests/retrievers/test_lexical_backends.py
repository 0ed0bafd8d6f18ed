"""The lexical retriever's scoring backends rank alike, and it picks one by corpus size and what is installed."""

from __future__ import annotations

import json
from importlib.resources import files

import pytest

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.golden.question_files import load_question_set_file
from retrieval_pipeline.core.retrieval.retriever import BuildContext
from retrieval_pipeline.retrievers.lexical import backends as bm25_backends
from retrieval_pipeline.retrievers.lexical import retriever as lexical
from retrieval_pipeline.retrievers.lexical.retriever import LexicalKind, LexicalRetriever

DEMO = files("retrieval_pipeline.demo")
NUMBA_MISSING = not bm25_backends.numba_usable()


@pytest.fixture(autouse=True)
def fresh_process_cache():
    lexical.INDEXES.clear()


@pytest.fixture(scope="module")
def cranfield_questions() -> list[str]:
    """The demo's real Cranfield questions, and the demo's off-domain ones that match little or nothing."""
    return [question.question for question in load_question_set_file(DEMO / "demo.cranfield.yaml").questions]


def build(tmp_path, backend: str) -> LexicalRetriever:
    context = BuildContext(base_dir=tmp_path, source="test.yaml", cache_dir=tmp_path / "cache")
    return LexicalKind.parse(
        f"bm25_{backend}", {"corpus": str(DEMO / "cranfield-corpus.jsonl.gz"), "backend": backend}, context
    ).build()


def test_small_corpora_are_scored_by_numpy_whatever_is_installed(tmp_path):
    assert build(tmp_path, "auto").backend == "numpy"


def test_large_corpora_are_scored_by_numba_when_it_is_installed(tmp_path, monkeypatch):
    monkeypatch.setattr(bm25_backends, "NUMBA_MIN_DOCUMENTS", 1_000)  # the Cranfield demo holds 1,400
    assert build(tmp_path, "auto").backend == ("numpy" if NUMBA_MISSING else "numba")


def test_the_backend_does_not_change_the_index_version(tmp_path):
    assert build(tmp_path, "auto").index_version() == build(tmp_path, "numpy").index_version()


@pytest.mark.slow
def test_the_threaded_numpy_batch_ranks_like_one_question_at_a_time(tmp_path, cranfield_questions):
    retriever = build(tmp_path, "numpy")
    batch = retriever.retrieve_batch(cranfield_questions, 12)
    assert batch == [retriever.retrieve(question, 12) for question in cranfield_questions]
    assert sum(1 for ranking in batch if ranking) > len(batch) // 2


@pytest.mark.skipif(NUMBA_MISSING, reason="numba is not installed (the `fast` extra); only the numpy backend can run")
def test_numba_ranks_every_question_exactly_like_numpy(tmp_path, cranfield_questions):
    numpy_rankings = build(tmp_path, "numpy").retrieve_batch(cranfield_questions, 12)
    numba = build(tmp_path, "numba")
    assert numba.retrieve_batch(cranfield_questions, 12) == numpy_rankings
    assert [numba.retrieve(question, 12) for question in cranfield_questions[:5]] == numpy_rankings[:5]


def test_asking_for_numba_where_it_is_not_installed_names_the_key_and_the_extra(tmp_path, monkeypatch):
    monkeypatch.setattr(lexical, "numba_usable", lambda: False)
    with pytest.raises(InvalidInputError, match=r"retrievers\.bm25_numba.*backend.*pip install -e '\.\[fast\]'"):
        build(tmp_path, "numba")


@pytest.mark.parametrize(
    "backend", ["numpy", pytest.param("numba", marks=pytest.mark.skipif(NUMBA_MISSING, reason="numba is not installed"))]
)
def test_documents_tied_at_the_cut_rank_by_corpus_position_whatever_the_backend(tmp_path, backend):
    # 60 identical abstracts tie on every question that matches them; the first three by position are kept.
    documents = [
        {"_id": f"copy{n:02d}", "text": "Honey bees tell the hive where flowers are through a waggle dance."} for n in range(60)
    ]
    documents += [{"_id": f"other{n}", "text": f"Glacier number {n} retreats every summer."} for n in range(40)]
    corpus = tmp_path / "ties.jsonl"
    corpus.write_text(
        "".join(json.dumps(document) + "\n" for document in reversed(documents[60:]))
        + "".join(json.dumps(document) + "\n" for document in documents[:60]),
        encoding="utf-8",
    )
    context = BuildContext(base_dir=tmp_path, source="test.yaml", cache_dir=tmp_path / "cache")
    retriever = LexicalKind.parse("ties", {"corpus": "ties.jsonl", "backend": backend}, context).build()
    assert (
        retriever.retrieve_batch(["waggle dance of honey bees", "where are the flowers"], 3)
        == [["copy00", "copy01", "copy02"]] * 2
    )
