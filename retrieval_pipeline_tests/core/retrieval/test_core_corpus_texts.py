"""What a person judging a candidate reads: a corpus document's title and text, by document id."""

from __future__ import annotations

import json

import pytest

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.retrieval.corpus import read_document_texts


def write_corpus(path, documents) -> None:
    path.write_text("".join(json.dumps(document) + "\n" for document in documents), encoding="utf-8")


def test_only_the_wanted_documents_are_read_with_their_title_and_text(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    write_corpus(
        corpus, [{"_id": "d1", "title": "Reset", "text": "Open settings."}, {"id": "d2", "text": "No title."}, {"_id": "d3"}]
    )
    assert read_document_texts(corpus, {"d2", "d3", "d9"}, "retrievers.bm25") == {"d2": ("", "No title."), "d3": ("", "")}


def test_a_chunk_grained_corpus_gives_a_document_its_first_title_and_its_chunks_in_order(tmp_path):
    corpus = tmp_path / "chunks.jsonl"
    write_corpus(
        corpus,
        [
            {"_id": "234_0", "title": "Invoices", "text": "Invoices are kept"},
            {"_id": "7_0", "title": "Other", "text": "Unrelated."},
            {"_id": "234_1", "title": "Invoices (cont.)", "text": "under billing."},
        ],
    )
    assert read_document_texts(corpus, {"234"}, "retrievers.dense") == {"234": ("Invoices", "Invoices are kept under billing.")}


def test_a_broken_corpus_line_is_refused_naming_the_file_line_and_retriever(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"_id": "d1", "text": "fine"}\n{not json\n', encoding="utf-8")
    with pytest.raises(InvalidInputError, match=r"corpus.jsonl:2: retrievers.bm25: invalid JSON"):
        read_document_texts(corpus, {"d1"}, "retrievers.bm25")
