"""Corpus files (JSONL, BEIR's `corpus.jsonl` layout, plain or gzip): the documents a retriever can return.

The lexical retriever indexes them; the label audit reads only their ids, to tell a label that names no
document (a typo, a deleted page) from a label the retriever merely missed.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from typing import Any

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.base.text_files import text_lines
from retrieval_pipeline.core.retrieval.kinds import KindContext
from retrieval_pipeline.core.retrieval.retriever import document_id_from_chunk

_last_read: dict[tuple[str, int, int], frozenset[str]] = {}
"""The latest corpus read, by path, size and modification time: retrievers configured over one corpus
(a parameter sweep) ask for the same ids one after another, and a changed file is read anew. One entry,
because a corpus of a million ids is a hundred megabytes."""


def checked_corpus(value: str, kind: KindContext) -> Path:
    """The file a retriever's `corpus` names, refused when checking the configuration if it is absent or
    a folder (BEIR's folder, say, named instead of its corpus.jsonl)."""
    path = kind.resolve(value)
    if path.is_dir():
        message = f"corpus {path} is a folder, not a file: name the JSONL file in it (corpus.jsonl in BEIR's layout)"
        raise kind.invalid(message, "corpus")
    if not path.is_file():
        raise kind.invalid(f"corpus file {path} does not exist", "corpus")
    return path


def read_document_ids(path: Path, key: str) -> frozenset[str]:
    try:
        stat = path.stat()
    except OSError:  # read_corpus names the file and the key
        return answerable_documents(read_corpus(path, (), key)[0])
    stamp = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if stamp not in _last_read:
        ids = answerable_documents(read_corpus(path, (), key)[0])
        _last_read.clear()
        _last_read[stamp] = ids
    return _last_read[stamp]


def answerable_documents(corpus_ids: Iterable[str]) -> frozenset[str]:
    """The corpus's ids and the documents of its chunk ids (`234_0` is document `234`), so a document
    label matches a chunk-grained corpus too."""
    ids = frozenset(corpus_ids)
    return ids | {document_id_from_chunk(chunk_id) for chunk_id in ids}


def read_document_texts(path: Path, wanted: Collection[str], key: str) -> dict[str, tuple[str, str]]:
    """(title, text) of the wanted documents: what a person judging a candidate reads. A chunk-grained
    corpus gives a document its first chunk's title and its chunks' texts in file order."""
    columns = _columnar(path) or _line_by_line(path, key)
    found: dict[str, tuple[str, str]] = {}
    for first, second, title, text in zip(columns["_id"], columns["id"], columns["title"], columns["text"]):
        corpus_id = first or second
        document_id = corpus_id if corpus_id in wanted else document_id_from_chunk(corpus_id)
        if document_id in wanted:
            before = found.get(document_id, (title or "", ""))
            found[document_id] = (before[0], " ".join(part for part in (before[1], text or "") if part))
    return found


def read_corpus(path: Path, fields: Sequence[str], key: str) -> tuple[list[str], list[str]]:
    """Document ids and indexed texts; BEIR's `_id` or plain `id`, plain or gzip-compressed JSONL."""
    columns = _columnar(path) or _line_by_line(path, key)
    ids = [first or second for first, second in zip(columns["_id"], columns["id"])]
    if not ids:
        raise InvalidInputError("the corpus holds no documents", source=str(path), key=key)
    texts = [" ".join(columns[name][row] or "" for name in fields) for row in range(len(ids))]
    return ids, texts


def _columnar(path: Path) -> dict[str, list[str | None]] | None:
    """None when pyarrow cannot vouch for every line; the line-by-line reader then names the culprit (a bad
    line, a byte that is not UTF-8, a gzip file cut short, which Arrow reports as a bare OSError)."""
    import pyarrow as pa
    import pyarrow.json as pajson

    try:
        table = pajson.read_json(path, read_options=pajson.ReadOptions(block_size=1 << 24))
        columns = {
            name: table.column(name).cast(pa.string()).to_pylist() if name in table.column_names else [None] * table.num_rows
            for name in ("_id", "id", "title", "text")
        }
    except (pa.ArrowException, OSError, UnicodeDecodeError):  # Arrow reads bytes it cannot decode; to_pylist finds out
        return None
    if not all(first or second for first, second in zip(columns["_id"], columns["id"])):
        return None
    return columns


def _line_by_line(path: Path, key: str) -> dict[str, list[str | None]]:
    columns: dict[str, list[str | None]] = {"_id": [], "id": [], "title": [], "text": []}
    try:
        for number, line in text_lines(path, "corpus"):
            if line.strip():
                record = _record(line, f"{path}:{number}", key)
                for name, values in columns.items():
                    values.append(None if record.get(name) is None else str(record[name]))
    except InvalidInputError as error:  # unreadable, or not UTF-8: named with the retriever it serves
        raise InvalidInputError(error.problem, source=error.source, key=key) from None
    return columns


def _record(line: str, source: str, key: str) -> dict[str, Any]:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as error:
        raise InvalidInputError(f"invalid JSON in the corpus ({error.msg})", source=source, key=key) from None
    if not isinstance(record, dict):
        raise InvalidInputError("a corpus line must be a JSON object", source=source, key=key)
    if record.get("_id") in (None, "") and record.get("id") in (None, ""):
        raise InvalidInputError("the document has no id; give it `_id` (BEIR) or `id`", source=source, key=key)
    return record
