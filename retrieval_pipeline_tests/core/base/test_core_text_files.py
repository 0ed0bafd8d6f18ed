"""Text files as users save them: a byte-order mark is accepted in every format, bytes that are not UTF-8
are refused naming the file, byte offset and line, and syntax errors say FILE:LINE:COLUMN on one line."""

from __future__ import annotations

import gzip
import json

import pytest
import yaml

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.base.text_files import read_text, text_lines
from retrieval_pipeline.core.golden.beir import import_beir
from retrieval_pipeline.core.golden.question_files import load_question_set_file
from retrieval_pipeline.core.golden.trec import read_trec_qrels, read_trec_topics
from retrieval_pipeline.core.retrieval.corpus import read_corpus
from retrieval_pipeline.core.retrieval.run_files import load_run
from retrieval_pipeline.core.services.configuration.project import load_config

BOM = b"\xef\xbb\xbf"
LATIN1_E = "é".encode("latin-1")
HEADER = {"identifier": "demo.bom", "name": "With a byte-order mark"}
QUESTION = {"id": "q1", "question": "wing lift", "form": "match", "expected_document_ids": ["d1"]}
SET_BYTES = {
    ".yaml": yaml.safe_dump({**HEADER, "questions": [QUESTION]}, sort_keys=False).encode(),
    ".json": json.dumps({**HEADER, "questions": [QUESTION]}).encode(),
    ".jsonl": (json.dumps(HEADER) + "\n" + json.dumps(QUESTION) + "\n").encode(),
}


def failure(load, *args, **kwargs) -> str:
    with pytest.raises(InvalidInputError) as caught:
        load(*args, **kwargs)
    message = str(caught.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize("suffix", list(SET_BYTES))
def test_a_set_file_with_a_byte_order_mark_loads_like_one_without(tmp_path, suffix):
    plain, marked = tmp_path / f"plain{suffix}", tmp_path / f"marked{suffix}"
    plain.write_bytes(SET_BYTES[suffix])
    marked.write_bytes(BOM + SET_BYTES[suffix])

    assert load_question_set_file(marked) == load_question_set_file(plain)


@pytest.mark.parametrize("suffix", list(SET_BYTES))
def test_a_set_file_that_is_not_utf8_names_the_byte_offset_and_line(tmp_path, suffix):
    data = SET_BYTES[suffix].replace(b"wing", b"w" + LATIN1_E + b"ng")
    path = tmp_path / f"latin1{suffix}"
    path.write_bytes(data)
    offset = data.index(LATIN1_E)

    message = failure(load_question_set_file, path)

    line = data.count(b"\n", 0, offset) + 1
    assert message.startswith(f"{path}: not UTF-8 text: invalid byte at offset {offset} (line {line})")


def test_the_offset_of_a_bad_byte_counts_the_byte_order_mark(tmp_path):
    path = tmp_path / "set.yaml"
    path.write_bytes(BOM + b"name: " + LATIN1_E + b"\n")

    assert "offset 9 (line 1)" in failure(read_text, path)


def test_a_configuration_with_a_byte_order_mark_loads_and_one_in_latin1_is_refused(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_bytes(BOM + b"retention_days: 7\n")
    assert load_config(path).retention_days == 7

    path.write_bytes(b"store: r" + LATIN1_E + b"sults\n")
    assert f"{path}: not UTF-8 text: invalid byte at offset 8 (line 1)" in failure(load_config, path)


def test_a_yaml_syntax_error_is_one_line_with_file_line_and_column(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("store: results\nretrievers:\n  bm25: {kind: lexical\n", encoding="utf-8")

    message = failure(load_config, path)

    assert message.startswith(f"{path}:4:1: invalid YAML: expected ',' or '}}'")
    assert "<unicode string>" not in message


def test_a_json_syntax_error_names_file_line_and_column(tmp_path):
    path = tmp_path / "set.json"
    path.write_text('{\n  "identifier": "demo",\n  "name" "x"\n}', encoding="utf-8")

    assert failure(load_question_set_file, path).startswith(f"{path}:3:10: invalid JSON: Expecting ':' delimiter")


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "gzip"])
def test_corpus_lines_keep_their_text_and_a_bad_byte_names_the_corpus_and_line(tmp_path, compress):
    lines = [b'{"_id": "d1", "text": "caf\xc3\xa9"}', b'{"_id": "d2", "text": "caf' + LATIN1_E + b'"}']
    data = BOM + b"\n".join(lines) + b"\n"
    path = tmp_path / ("corpus.jsonl.gz" if compress else "corpus.jsonl")
    path.write_bytes(gzip.compress(data) if compress else data)
    offset = data.index(LATIN1_E)

    assert next(text_lines(path))[1] == '{"_id": "d1", "text": "café"}\n'
    message = failure(read_corpus, path, ["text"], "retrievers.bm25")
    assert message == (
        f"{path}: retrievers.bm25: not UTF-8 text: invalid byte at offset {offset} (line 2); save the file as UTF-8"
    )


def test_a_beir_folder_in_latin1_is_refused_naming_the_file_and_one_with_byte_order_marks_imports(tmp_path):
    (tmp_path / "qrels").mkdir()
    (tmp_path / "qrels" / "test.tsv").write_bytes(BOM + b"query-id\tcorpus-id\tscore\n7\t1\t1\n")
    (tmp_path / "corpus.jsonl").write_bytes(BOM + b'{"_id": "1", "title": "Wings", "text": "a wing lifts"}\n')
    (tmp_path / "queries.jsonl").write_bytes(BOM + b'{"_id": "7", "text": "wing lift"}\n')
    assert [q.id for q in import_beir(tmp_path, identifier="beir.bom").questions] == ["7"]

    (tmp_path / "queries.jsonl").write_bytes(b'{"_id": "7", "text": "wing l' + LATIN1_E + b'ft"}\n')
    message = failure(import_beir, tmp_path, identifier="beir.bom")
    assert message.startswith(f"{tmp_path / 'queries.jsonl'}: not UTF-8 text: invalid byte at offset 28 (line 1)")


def test_a_missing_beir_split_lists_the_splits_that_exist(tmp_path):
    (tmp_path / "qrels").mkdir()
    for split in ("dev", "train"):
        (tmp_path / "qrels" / f"{split}.tsv").write_text("q\td\t1\n", encoding="utf-8")

    message = failure(import_beir, tmp_path, identifier="beir.x")

    assert "no split 'test'" in message and message.endswith("splits here: dev, train")


def test_trec_files_with_a_byte_order_mark_read_like_plain_ones_and_latin1_is_refused(tmp_path):
    qrels, topics = tmp_path / "qrels.txt", tmp_path / "topics.tsv"
    qrels.write_bytes(BOM + b"301 0 d1 1\n")
    topics.write_bytes(BOM + b"301\twing lift\n")
    assert read_trec_qrels(qrels) == {"301": ["d1"]} and read_trec_topics(topics) == {"301": "wing lift"}

    topics.write_bytes(b"301\twing l" + LATIN1_E + b"ft\n")
    assert "not UTF-8 text: invalid byte at offset 10 (line 1)" in failure(read_trec_topics, topics)


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("run.trec", b"q1 Q0 d1 1 2.0 t\nq2 Q0 d2 1 2.0 t\n"),
        ("run.jsonl", b'{"query_id": "q1", "document_ids": ["d1"]}\n{"query_id": "q2", "document_ids": ["d2"]}\n'),
    ],
)
def test_a_run_file_with_a_byte_order_mark_reads_like_one_without_and_latin1_is_refused(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(BOM + data)
    assert load_run(path).top("q1", 3) == ["d1"]

    latin1 = data.replace(b"d2", b"d" + LATIN1_E)
    path.write_bytes(latin1)
    offset = latin1.index(LATIN1_E)
    assert failure(load_run, path, key="retrievers.replay") == (
        f"{path}: retrievers.replay: not UTF-8 text: invalid byte at offset {offset} (line 2); save the file as UTF-8"
    )
