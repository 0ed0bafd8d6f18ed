"""`chunking` on lexical and dense: documents ranked by their best chunk, only document ids returned.

The corpora are small: a long document whose answer sits in its second chunk, and the first 80 Cranfield
abstracts, whose rankings are recomputed here with bm25s (or the ONNX encoder) over the same chunks.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from semantic_text_splitter import TextSplitter

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.retrieval.retriever import BuildContext
from retrieval_pipeline.core.services.configuration.schema import RetrieverSpec
from retrieval_pipeline.dagster_layer.metadata.project import retriever_metadata
from retrieval_pipeline.retrievers.lexical import retriever as lexical
from retrieval_pipeline.retrievers.lexical.retriever import LexicalKind, LexicalRetriever
from retrieval_pipeline.retrievers.vector import dense
from retrieval_pipeline.retrievers.vector.dense import DenseKind, DenseRetriever

FILLER = " ".join(f"Section {n} reviews the wind tunnel calibration of the compressor rig." for n in range(12))
DOCUMENTS = [
    {"_id": "long", "title": "Test report", "text": FILLER + " The quokka nests in coastal scrub and needs shade."},
    {
        "_id": "short",
        "title": "Island notes",
        "text": "A quokka rests in the shade near the ferry, among tourists, bicycles and gulls.",
    },
    {"_id": "other", "title": "Compressor rig", "text": "The wind tunnel compressor rig was calibrated twice."},
]
QUESTIONS = ["wind tunnel calibration", "boundary layer heat transfer", "shock wave at the nose", "pressure on a swept wing"]


@pytest.fixture(autouse=True)
def fresh_process():
    lexical.INDEXES.clear()
    dense.VECTORS.clear()


@pytest.fixture
def context(tmp_path) -> BuildContext:
    return BuildContext(base_dir=tmp_path, source="test.yaml", cache_dir=tmp_path / "cache")


@pytest.fixture
def toy(tmp_path) -> Path:
    path = tmp_path / "toy.jsonl"
    path.write_text("".join(json.dumps(document) + "\n" for document in DOCUMENTS), encoding="utf-8")
    return path


@pytest.fixture
def cranfield(demo_corpus) -> Path:
    return demo_corpus(80)


def lexical_on(context: BuildContext, corpus: Path, **params) -> LexicalRetriever:
    return LexicalKind.parse("bm25", {"corpus": corpus.name, **params}, context).build()


def test_a_long_document_ranks_where_its_best_chunk_ranks(toy, context):
    splitter = TextSplitter(200, 0)
    chunks = splitter.chunks(f"{DOCUMENTS[0]['title']} {DOCUMENTS[0]['text']}")
    assert len(chunks) > 2 and "quokka" not in chunks[0] and "quokka" in chunks[-1]  # the answer is a later chunk
    assert lexical_on(context, toy).retrieve("quokka scrub shade", 3) == ["short", "long"]  # diluted by its length
    chunked = lexical_on(context, toy, chunking={"size": 200})
    assert chunked.retrieve("quokka scrub shade", 3) == ["long", "short"]


def test_results_are_distinct_document_ids_and_fill_the_limit(cranfield, context):
    ids = {json.loads(line)["_id"] for line in cranfield.read_text(encoding="utf-8").splitlines()}
    retriever = lexical_on(context, cranfield, chunking={"size": 150, "overlap": 30})
    whole = lexical_on(context, cranfield)
    for ranking, matching in zip(retriever.retrieve_batch(QUESTIONS, 80), whole.retrieve_batch(QUESTIONS, 80)):
        assert len(ranking) == len(set(ranking)) and set(ranking) == set(matching) <= ids  # a document matches by a chunk
    assert all(len(ranking) == len(set(ranking)) == 5 for ranking in retriever.retrieve_batch(QUESTIONS, 5))
    assert retriever.retrieve(QUESTIONS[0], 5) == retriever.retrieve_batch(QUESTIONS, 5)[0]


def test_rankings_equal_bm25s_over_the_same_chunks_best_chunk_first(cranfield, context):
    import bm25s
    import Stemmer

    documents = [json.loads(line) for line in cranfield.read_text(encoding="utf-8").splitlines()]
    texts = TextSplitter(300, 50).chunk_all([f"{d.get('title') or ''} {d.get('text') or ''}" for d in documents])
    owners = [d["_id"] for d, chunks in zip(documents, texts) for _ in chunks]
    stemmer = Stemmer.Stemmer("english")
    bm25 = bm25s.BM25()
    bm25.index(bm25s.tokenize(list(itertools.chain(*texts)), stopwords="en", stemmer=stemmer, show_progress=False))
    expected = []
    for question in QUESTIONS:
        scores = bm25.get_scores(
            bm25s.tokenize([question], stopwords="en", stemmer=stemmer, return_ids=False, show_progress=False)[0]
        )
        best: dict[str, tuple[float, int]] = {}
        for position, (owner, score) in enumerate(zip(owners, scores)):
            if score > 0 and (owner not in best or score > best[owner][0]):
                best[owner] = (float(score), position)
        expected.append(sorted(best, key=lambda owner: (-best[owner][0], best[owner][1]))[:10])
    retriever = lexical_on(context, cranfield, chunking={"size": 300, "overlap": 50})
    assert retriever.retrieve_batch(QUESTIONS, 10) == expected
    assert retriever.build_report() == {"documents": 80, "chunks": len(owners)}


def test_changing_size_or_overlap_misses_the_cache_and_the_same_settings_hit(cranfield, context):
    versions = [
        lexical_on(context, cranfield, chunking=settings).index_version()
        for settings in (
            {"size": 300},
            {"size": 300, "overlap": 50},
            {"size": 200, "overlap": 50},
        )
    ]
    unchunked = lexical_on(context, cranfield).index_version()
    assert len({*versions, unchunked}) == 4
    assert sorted(path.name for path in (context.cache_dir / "lexical").iterdir()) == sorted({*versions, unchunked})
    lexical.INDEXES.clear()  # a new process
    assert lexical_on(context, cranfield, chunking={"overlap": 50, "size": 300}).index_version() == versions[1]


@pytest.mark.parametrize(
    ("chunking", "field", "words"),
    [
        ({"size": 0}, "chunking.size", "greater than or equal to 1"),
        ({"size": 10, "overlap": 10}, "chunking", "overlap (10) must be smaller than size (10)"),
        ({"size": 10, "overlap": -1}, "chunking.overlap", "greater than or equal to 0"),
        ({"size": 10, "overlap": 2, "unit": "words"}, "chunking.unit", "not a known key"),
        ({"overlap": 2}, "chunking.size", "required"),
    ],
)
def test_bad_settings_name_the_retriever_and_the_key(toy, context, chunking, field, words):
    with pytest.raises(InvalidInputError) as raised:
        lexical_on(context, toy, chunking=chunking)
    message = str(raised.value)
    assert "retrievers.bm25" in message and f"'{field}'" in message and words in message


def test_the_chunk_count_is_in_the_retriever_metadata(toy, context):
    retriever = lexical_on(context, toy, chunking={"size": 200})
    metadata = retriever_metadata(RetrieverSpec(kind="lexical", chunking={"size": 200}), retriever, 0.5)
    chunks = len(TextSplitter(200).chunks(f"{DOCUMENTS[0]['title']} {DOCUMENTS[0]['text']}")) + 2
    assert (metadata["build_documents"], metadata["build_chunks"]) == (3, chunks)


def dense_params(corpus: Path, minilm, **params) -> dict:
    model, tokenizer = minilm
    return {"corpus": corpus.name, "model": str(model), "tokenizer": str(tokenizer), "max_length": 48, **params}


def dense_on(context: BuildContext, corpus: Path, minilm, **params) -> DenseRetriever:
    return DenseKind.parse("minilm", dense_params(corpus, minilm, **params), context).build()


@pytest.mark.parametrize("size", [64, 48, 47])
def test_dense_chunks_leave_room_for_the_special_tokens_within_max_length(toy, context, minilm, size):
    expected = rf"retrievers.minilm: field 'chunking.size': {size} tokens and the tokenizer's 2 special tokens exceed max_length 48: at most 46"
    with pytest.raises(InvalidInputError, match=expected) as raised:
        DenseKind.parse("minilm", dense_params(toy, minilm, chunking={"size": size}), context)
    assert len(str(raised.value).splitlines()) == 1


def test_a_dense_chunk_and_its_special_tokens_filling_max_length_is_accepted(toy, context, minilm):
    settings = DenseKind.parse("minilm", dense_params(toy, minilm, chunking={"size": 46}), context).params
    assert settings.chunking.size == 46


@pytest.mark.slow
def test_dense_ranks_by_the_best_chunk_vector_and_caches_per_setting(toy, cranfield, context, minilm):
    from tokenizers import Tokenizer

    from retrieval_pipeline.retrievers.encoders import encoder_settings, open_encoder

    model, tokenizer = minilm
    documents = [json.loads(line) for line in toy.read_text(encoding="utf-8").splitlines()]
    counting = Tokenizer.from_file(str(tokenizer))
    counting.no_truncation()
    counting.no_padding()  # the file pads to 128: every text would count as 128 tokens
    texts = TextSplitter.from_huggingface_tokenizer(counting, 40, 8).chunk_all([f"{d['title']} {d['text']}" for d in documents])
    assert max(len(counting.encode(chunk, add_special_tokens=False).ids) for chunk in itertools.chain(*texts)) <= 40
    owners = [d["_id"] for d, chunks in zip(documents, texts) for _ in chunks]
    encoder = open_encoder(
        encoder_settings(model, tokenizer, "onnx", max_length=48, pooling="mean", normalize=True, batch_size=32, output=None)
    )
    questions = ["quokka scrub shade", *QUESTIONS]
    scores = encoder.encode(questions) @ encoder.encode(list(itertools.chain(*texts))).T
    expected = [list(dict.fromkeys(owners[i] for i in np.argsort(-row, kind="stable"))) for row in scores]
    retriever = dense_on(context, toy, minilm, chunking={"size": 40, "overlap": 8})
    assert retriever.retrieve_batch(questions, 3) == expected
    report = retriever.build_report()
    assert (report["documents"], report["chunks"], report["vector_cache_hit"]) == (3, len(owners), False)
    other = dense_on(context, toy, minilm, chunking={"size": 40, "overlap": 4})
    assert other.index_version() != retriever.index_version() and other.build_report()["vector_cache_hit"] is False
    dense.VECTORS.clear()
    again = dense_on(context, toy, minilm, chunking={"size": 40, "overlap": 8})
    assert again.build_report()["vector_cache_hit"] is True and again.retrieve_batch(questions, 3) == expected


def test_dense_progress_counts_chunks_not_documents(toy, context, minilm):
    told: list[str] = []
    retriever = dense_on(BuildContext(**{**vars(context), "progress": told.append}), toy, minilm, chunking={"size": 40})
    chunks = retriever.build_report()["chunks"]
    assert chunks > 3 and told[-1].startswith(f"encoded {chunks}/{chunks} chunks (")
