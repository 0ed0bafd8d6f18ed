"""Import a BEIR folder (`corpus.jsonl`, `queries.jsonl`, `qrels/<split>.tsv`) as a golden set.

Only queries with at least one relevant judgement (score > 0, or at least the minimum relevance given)
become questions: BEIR leaves unjudged queries out of the qrels, and an unjudged query is not a claim that
nothing answers it. Documents judged below that become the question's rejected ids: judged, and found not
to answer it. A query judged only not relevant has nothing to be scored on and is left out; the import
names it (`ImportedSet.left_out`), so a set that is smaller than its qrels says why.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from retrieval_pipeline.core.base.errors import InvalidInputError, quoted
from retrieval_pipeline.core.base.formatting import id_list
from retrieval_pipeline.core.base.text_files import text_lines
from retrieval_pipeline.core.golden.forms import tag_form
from retrieval_pipeline.core.golden.question_files import question_set_from_mapping
from retrieval_pipeline.core.golden.questions import GoldenQuestionSet

MAX_NAMED = 10
"""Query ids a left-out note names before it says how many more."""
JUDGED_ONLY_NOT_RELEVANT = "judged only not relevant (nothing to score them on)"


@dataclass(frozen=True)
class Judgements:
    """A qrels file read: each query's relevant and rejected documents, in file order."""

    relevant: Mapping[str, list[str]]
    rejected: Mapping[str, list[str]]
    left_out: tuple[str, ...] = ()
    """Queries judged only not relevant, in file order: no question can be made of them."""


@dataclass(frozen=True)
class ImportedSet:
    """An imported set and the judged queries it left out (judged only not relevant)."""

    question_set: GoldenQuestionSet
    left_out: tuple[str, ...]
    left_out_because: str = JUDGED_ONLY_NOT_RELEVANT
    """Why they were left out (conversational imports leave out turns for another reason)."""


def left_out_note(left_out: Sequence[str], because: str = JUDGED_ONLY_NOT_RELEVANT) -> str:
    """The one account of the queries an import left out: `import` warns it, `list` prints it under its table."""
    count = len(left_out)
    return f"left out {count} quer{'ies' if count != 1 else 'y'} {because}: {id_list(left_out, limit=MAX_NAMED)}"


def read_jsonl(path: Path) -> Iterator[tuple[int, dict]]:
    """Yield (line number, object); a malformed line names the file and the line."""
    for number, line in text_lines(path):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise InvalidInputError(f"invalid JSON: {error.msg}", source=f"{path}:{number}:{error.colno}") from None
        if not isinstance(record, dict):
            raise InvalidInputError("expected a JSON object", source=f"{path}:{number}")
        yield number, record


def read_qrels(path: Path) -> Mapping[str, list[str]]:
    """Relevant document ids per query, in file order; a header line is allowed."""
    return read_judged_qrels(path).relevant


def read_judged_qrels(path: Path, min_relevance: float | None = None) -> Judgements:
    """Relevant and rejected document ids per query (see `judged_documents`)."""
    rows = csv.reader((line for _, line in text_lines(path, "qrels file")), delimiter="\t")
    return judged_documents(_beir_judgements(rows, path), min_relevance)


def _beir_judgements(rows, path: Path) -> Iterator[tuple[str, str, str, str]]:
    for number, row in enumerate(rows, start=1):
        if not row or (number == 1 and row[0] == "query-id"):
            continue
        if len(row) != 3:
            raise InvalidInputError("expected query-id, corpus-id and score", source=f"{path}:{number}")
        yield f"{path}:{number}", *row


def judged_documents(judgements: Iterable[tuple[str, str, str, str]], min_relevance: float | None = None) -> Judgements:
    """(where, query id, document id, relevance) to each query's relevant and rejected documents, in file order.

    Relevance > 0 is relevant, or relevance >= `min_relevance` when given (trec_eval's `-l`: graded
    collections whose lowest grade means "not useful"); the rest (0, the negative grades some tracks use
    for spam and junk) is judged not relevant, unless another line of the same pair says relevant. A query
    judged only not relevant is left out of both, and named: unjudged is not "nothing answers".
    """
    relevant: dict[str, dict[str, None]] = {}
    rejected: dict[str, dict[str, None]] = {}
    for where, query_id, document_id, relevance in judgements:
        try:
            grade = float(relevance)
        except ValueError:
            raise InvalidInputError(f"relevance {quoted(relevance)} is not a number", source=where) from None
        is_relevant = grade > 0 if min_relevance is None else grade >= min_relevance
        (relevant if is_relevant else rejected).setdefault(query_id, {})[document_id] = None
        relevant.setdefault(query_id, {})
    kept = {query_id: list(targets) for query_id, targets in relevant.items() if targets}
    return Judgements(
        kept,
        {
            query_id: [d for d in rejected.get(query_id, ()) if d not in relevant[query_id]]
            for query_id in kept
            if query_id in rejected
        },
        tuple(query_id for query_id, targets in relevant.items() if not targets),
    )


def read_corpus_texts(path: Path, wanted: Collection[str]) -> dict[str, str]:
    """Title and text of the wanted documents of a BEIR corpus.jsonl, the text forms are tagged against.

    Only the wanted ones are kept: a corpus can be far larger than the documents anybody judged.
    """
    return {
        str(record.get("_id")): f"{record.get('title') or ''} {record.get('text') or ''}"
        for _, record in read_jsonl(path)
        if str(record.get("_id")) in wanted
    }


def question_set_from_judgements(
    queries: Iterable[tuple[str, str]],
    judgements: Judgements,
    corpus_path: Path,
    *,
    qrels_source: str,
    identifier: str,
    name: str,
    description: str,
    source: str,
) -> ImportedSet:
    """The set of the judged queries, in `queries` order, each tagged by the documented form rule.

    Shared by every importer of judgements (BEIR, TREC): `queries` yields (query id, text) pairs and
    may validate lazily; queries without a relevant judgement are skipped (those judged only not relevant
    are named as left out). A judged document missing from the corpus is an error, because its form cannot
    be tagged and no retriever over that corpus can find it. Documents judged not relevant are kept as
    each question's rejected ids.
    """
    qrels, rejected = judgements.relevant, judgements.rejected
    wanted = {document_id for targets in qrels.values() for document_id in targets}
    texts = read_corpus_texts(corpus_path, wanted)
    questions = []
    for query_id, text in queries:
        if query_id not in qrels:
            continue
        targets = qrels[query_id]
        missing = [document_id for document_id in targets if document_id not in texts]
        if missing:
            raise InvalidInputError(
                f"query {quoted(query_id)} is judged relevant to {quoted(missing[0])}, which is not in {corpus_path}",
                source=qrels_source,
            )
        questions.append(
            {
                "id": query_id,
                "question": text,
                "form": tag_form(text, (texts[d] for d in targets)),
                "expected_document_ids": targets,
                "rejected_document_ids": rejected.get(query_id, []),
            }
        )
    question_set = question_set_from_mapping(
        {"identifier": identifier, "name": name, "description": description, "questions": questions},
        source=source,
    )
    return ImportedSet(question_set, judgements.left_out)


def import_beir(folder: str | Path, **options) -> GoldenQuestionSet:
    """The set alone, for callers that report nothing of the import (see `imported_beir`)."""
    return imported_beir(folder, **options).question_set


def imported_beir(
    folder: str | Path, *, identifier: str, split: str = "test", name: str | None = None, min_relevance: float | None = None
) -> ImportedSet:
    folder = Path(folder)
    qrels_path = folder / "qrels" / f"{split}.tsv"
    queries_path = folder / "queries.jsonl"
    if not qrels_path.is_file():
        splits = ", ".join(sorted(path.stem for path in (folder / "qrels").glob("*.tsv"))) or "none"
        raise InvalidInputError(
            f"no split {quoted(split)} (no {qrels_path}); splits here: {splits}", source=str(folder), field="split"
        )

    def queries() -> Iterator[tuple[str, str]]:
        for number, record in read_jsonl(queries_path):
            query_id = str(record.get("_id", ""))
            if query_id not in qrels:
                continue
            text = record.get("text")
            if not isinstance(text, str):
                raise InvalidInputError("missing query text", source=f"{queries_path}:{number}", field="text")
            yield query_id, text

    judgements = read_judged_qrels(qrels_path, min_relevance)
    qrels = judgements.relevant
    return question_set_from_judgements(
        queries(),
        judgements,
        folder / "corpus.jsonl",
        qrels_source=str(qrels_path),
        identifier=identifier,
        name=name or f"{folder.name} ({split})",
        description=f"Imported from the BEIR folder {folder.name}, split {split}; forms tagged by vocabulary overlap.",
        source=str(folder),
    )
