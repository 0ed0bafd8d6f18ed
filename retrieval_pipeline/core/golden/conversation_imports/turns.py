"""Conversational collections (TREC CAsT and iKAT, QReCC, TopiOCQA) as golden conversations: the rules
every format's reader shares once it has read its turns.

Each turn keeps its place in its conversation, and the relevance it is scored on comes either from TREC
qrels whose query ids are `<conversation>_<turn>` (how CAsT and iKAT publish them, read as the TREC import
reads qrels) or from the format's own gold (QReCC's answer URL, TopiOCQA's gold passage).

A turn is retrieved for with the whole conversation before it, so a conversation is kept up to its first
turn without a relevant judgement: a turn whose history has a hole could not be asked as the user asked
it, and a turn nobody judged is not a claim that nothing answers it (scoring it as "nothing to retrieve"
would count every retriever wrong). The turns left out that way are named. Conversations with no relevant
judgement at all are skipped, as the TREC import skips unjudged topics.

Forms (`match`/`gap`) are tagged by the documented vocabulary-overlap rule (`forms.py`) against the
relevant documents' texts from a BEIR-style `corpus.jsonl` when one is given, otherwise against the text
the format itself gives of what answers the turn (a gold passage, or the canonical response).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from retrieval_pipeline.core.base.errors import InvalidInputError, quoted
from retrieval_pipeline.core.golden.beir import ImportedSet, Judgements, read_corpus_texts
from retrieval_pipeline.core.golden.conversations import TURN_SEPARATOR, turn_id
from retrieval_pipeline.core.golden.forms import tag_form
from retrieval_pipeline.core.golden.question_files import question_set_from_mapping

CUT_TURNS = "without a relevant judgement, or after one in their conversation (a turn is asked with its whole history)"


@dataclass(frozen=True)
class ImportedTurn:
    """One user turn as a format's reader found it; `where` and the field names locate it in errors."""

    where: str
    conversation: str
    number: int
    utterance: str
    query_id: str
    """The turn's id in TREC qrels: `<conversation>_<turn>` as the format numbers them."""
    reply: str | None = None
    rewrite: str | None = None
    gold: tuple[str, ...] = ()
    """The relevant ids the format itself gives (used without qrels)."""
    reference: str | None = None
    """The format's own text of what answers the turn, to tag the form against without a corpus."""
    number_field: str = "number"


def conversation_id(value: object, where: str, field: str) -> str:
    """A conversation's id as text: present, not blank, and free of the separator of turn ids."""
    text = str(value).strip() if isinstance(value, (str, int)) and not isinstance(value, bool) else ""
    if not text:
        raise InvalidInputError("missing conversation id", source=where, field=field)
    if TURN_SEPARATOR in text:
        raise InvalidInputError(f"conversation id {quoted(text)} holds {TURN_SEPARATOR!r}", source=where, field=field)
    return text


def turn_number(value: object, where: str, field: str) -> int:
    """A turn number: a whole number from 1 (JSON files give it as a number or as digits)."""
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise InvalidInputError(f"{quoted(value)} is not a turn number (1, 2, 3, ...)", source=where, field=field)
    return value


def text_field(record: dict, fields: Iterable[str], where: str, *, required: bool) -> str | None:
    """The first of `fields` the record has, as text; blank counts as absent."""
    fields = tuple(fields)
    for field in fields:
        value = record.get(field)
        if value is None:
            continue
        if not isinstance(value, str):
            raise InvalidInputError(f"must be text, not {type(value).__name__}", source=where, field=field)
        if value.strip():
            return value
    if required:
        raise InvalidInputError("missing or blank", source=where, field=" or ".join(fields))
    return None


def conversation_set(
    turns: Iterable[ImportedTurn],
    judgements: Judgements | None,
    corpus: Path | None,
    *,
    identifier: str,
    name: str,
    description: str,
    source: str,
    qrels_source: str | None = None,
) -> ImportedSet:
    """The golden conversations of `turns` (in file order), scored on `judgements` when given (else on each
    turn's own gold), each conversation kept up to its first turn without a relevant judgement."""
    conversations: dict[str, list[ImportedTurn]] = {}
    for turn in turns:
        _check_follows(turn, conversations.setdefault(turn.conversation, []))
        conversations[turn.conversation].append(turn)
    if judgements is not None:
        _check_judged_turns_exist(judgements, conversations, qrels_source or source)
    relevant = (lambda t: judgements.relevant.get(t.query_id, [])) if judgements else (lambda t: list(t.gold))
    rejected = (lambda t: judgements.rejected.get(t.query_id, [])) if judgements else (lambda t: [])
    kept: dict[str, list[ImportedTurn]] = {}
    left_out: list[str] = []
    for conversation, conversation_turns in conversations.items():
        judged = [bool(relevant(turn)) for turn in conversation_turns]
        if not any(judged):
            continue
        whole = judged.index(False) if False in judged else len(judged)
        if whole:
            kept[conversation] = conversation_turns[:whole]
        left_out += [turn_id(t.conversation, t.number) for t in conversation_turns[whole:]]
    if not kept:
        raise InvalidInputError("no turn has a relevant judgement: nothing to score", source=qrels_source or source)
    texts = _corpus_texts([t for turns in kept.values() for t in turns], relevant, corpus, qrels_source or source)
    written = [
        {
            "id": conversation,
            "turns": [
                {
                    "turn": turn.number,
                    "utterance": turn.utterance,
                    **{name: value for name, value in (("reply", turn.reply), ("rewrite", turn.rewrite)) if value},
                    "form": _form(turn, relevant(turn), texts),
                    "expected_document_ids": relevant(turn),
                    "rejected_document_ids": rejected(turn),
                }
                for turn in turns
            ],
        }
        for conversation, turns in kept.items()
    ]
    question_set = question_set_from_mapping(
        {"identifier": identifier, "name": name, "description": description, "conversations": written}, source=source
    )
    return ImportedSet(question_set, tuple(left_out), CUT_TURNS)


def _check_follows(turn: ImportedTurn, earlier: list[ImportedTurn]) -> None:
    previous = earlier[-1].number if earlier else 0
    if any(t.number == turn.number for t in earlier):
        problem = f"conversation {quoted(turn.conversation)}: duplicate turn {turn.number}"
    elif turn.number != previous + 1:
        problem = f"conversation {quoted(turn.conversation)}: turn {turn.number} comes after turn {previous} (turns are numbered 1, 2, 3, ... in order)"
    else:
        return
    raise InvalidInputError(problem, source=turn.where, field=turn.number_field)


def _check_judged_turns_exist(judgements: Judgements, conversations: dict[str, list[ImportedTurn]], source: str) -> None:
    """A judged query id that names no turn is an error, as in the TREC import: usually ids numbered
    another way than `<conversation>_<turn>`, which would otherwise import as an empty set."""
    known = {turn.query_id for turns in conversations.values() for turn in turns}
    for query_id in (*judgements.relevant, *judgements.left_out):
        if query_id not in known:
            raise InvalidInputError(
                f"query {quoted(query_id)} is judged but names no turn (query ids are <conversation>_<turn>)",
                source=source,
            )


def _corpus_texts(kept, relevant, corpus: Path | None, qrels_source: str) -> dict[str, str] | None:
    if corpus is None:
        return None
    wanted = {document_id for turn in kept for document_id in relevant(turn)}
    texts = read_corpus_texts(corpus, wanted)
    missing = next((d for d in wanted if d not in texts), None)
    if missing is not None:
        raise InvalidInputError(f"a turn is judged relevant to {quoted(missing)}, which is not in {corpus}", source=qrels_source)
    return texts


def _form(turn: ImportedTurn, targets: list[str], texts: dict[str, str] | None) -> str:
    if texts is not None:
        return tag_form(turn.utterance, (texts[d] for d in targets))
    if turn.reference is None:
        raise InvalidInputError(
            "no text of what answers this turn to tag its form (match or gap) against: give the judged "
            "documents with --corpus (a BEIR-style corpus.jsonl)",
            source=turn.where,
        )
    return tag_form(turn.utterance, [turn.reference])
