"""Import QReCC-style and TopiOCQA-style records as golden conversations.

Both give one record per turn, as JSON lines or (as the published files are) one JSON list of records,
each conversation's turns in order. Of each record this reads:

- `Conversation_no` and `Turn_no`: the conversation and the turn's number in it (1, 2, 3, ...);
- `Question`: the utterance as the user typed it;
- `Rewrite`: the manual rewrite (QReCC; optional);
- `Answer`: the canonical answer, kept as the turn's reply;
- the gold: QReCC's `Answer_URL` (the page the answer came from, its expected document id) or TopiOCQA's
  `Gold_passage` (`id` the expected document id; `title` and `text` what the form is tagged against).

Everything else (`Context`, which repeats the earlier turns; `Conversation_source`, `Topic`, `Rationale`,
...) is not read. With TREC qrels (`--qrels`, query ids `<Conversation_no>_<Turn_no>`) the expected ids come
from the qrels instead of the gold fields.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.base.text_files import parse_json, read_text
from retrieval_pipeline.core.golden.beir import ImportedSet, read_jsonl
from retrieval_pipeline.core.golden.conversation_imports.turns import (
    ImportedTurn,
    conversation_id,
    conversation_set,
    text_field,
    turn_number,
)
from retrieval_pipeline.core.golden.trec import read_judged_trec_qrels


def _qrecc_gold(record: dict, where: str) -> tuple[tuple[str, ...], str | None]:
    """QReCC's answer page; a turn without one (no answer was found) has no gold. The answer itself is
    what the page was found to say, the closest text the record has of it."""
    url = text_field(record, ("Answer_URL",), where, required=False)
    return ((url.strip(),) if url else ()), text_field(record, ("Answer",), where, required=False)


def _topiocqa_gold(record: dict, where: str) -> tuple[tuple[str, ...], str | None]:
    passage = record.get("Gold_passage")
    if passage is None:
        return (), None
    if not isinstance(passage, dict):
        raise InvalidInputError("must be an object with id, title and text", source=where, field="Gold_passage")
    passage_id = passage.get("id")
    if not isinstance(passage_id, (str, int)) or isinstance(passage_id, bool) or not str(passage_id).strip():
        raise InvalidInputError("missing passage id", source=where, field="Gold_passage.id")
    text = " ".join(value for value in (passage.get("title"), passage.get("text")) if isinstance(value, str))
    return (str(passage_id).strip(),), text or None


FORMATS: dict[str, Callable[[dict, str], tuple[tuple[str, ...], str | None]]] = {
    "QReCC": _qrecc_gold,
    "TopiOCQA": _topiocqa_gold,
}


def read_conversation_records(path: str | Path, style: str) -> Iterator[ImportedTurn]:
    """The turns of a QReCC- or TopiOCQA-style file (`style`: a key of FORMATS), in file order."""
    gold = FORMATS[style]
    for where, record in _records(Path(path)):
        conversation = conversation_id(record.get("Conversation_no"), where, "Conversation_no")
        number = turn_number(record.get("Turn_no"), where, "Turn_no")
        ids, reference = gold(record, where)
        yield ImportedTurn(
            where=where,
            conversation=conversation,
            number=number,
            utterance=text_field(record, ("Question",), where, required=True),
            query_id=f"{conversation}_{number}",
            reply=text_field(record, ("Answer",), where, required=False),
            rewrite=text_field(record, ("Rewrite",), where, required=False),
            gold=ids,
            reference=reference,
            number_field="Turn_no",
        )


def _records(path: Path) -> Iterator[tuple[str, dict]]:
    """JSON lines, or one JSON list (how QReCC and TopiOCQA publish their files): a list's records are
    located by position (`record #n`), lines by line number."""
    with open(path, "rb") as handle:
        start = handle.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    if start != b"[":
        yield from ((f"{path}:{number}", record) for number, record in read_jsonl(path))
        return
    records = parse_json(read_text(path, "records file"), str(path))
    for position, record in enumerate(records, start=1):
        where = f"{path} (record #{position})"
        if not isinstance(record, dict):
            raise InvalidInputError(f"expected a JSON object, not {type(record).__name__}", source=where)
        yield where, record


def imported_conversation_records(
    path: str | Path,
    *,
    style: str,
    identifier: str,
    name: str | None = None,
    qrels: str | Path | None = None,
    corpus: str | Path | None = None,
    min_relevance: float | None = None,
) -> ImportedSet:
    """The conversations of a QReCC- or TopiOCQA-style file, scored on its gold fields, or on `qrels`."""
    path = Path(path)
    judgements = None if qrels is None else read_judged_trec_qrels(qrels, min_relevance)
    labels = f"the qrels {Path(qrels).name}" if qrels is not None else "its gold fields"
    return conversation_set(
        read_conversation_records(path, style),
        judgements,
        None if corpus is None else Path(corpus),
        identifier=identifier,
        name=name or path.name,
        description=f"Imported from the {style}-style file {path.name}, labelled by {labels}; forms tagged by vocabulary overlap.",
        source=str(path),
        qrels_source=None if qrels is None else str(qrels),
    )
