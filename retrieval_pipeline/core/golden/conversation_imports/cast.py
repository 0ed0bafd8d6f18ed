"""Import TREC CAsT (2019-2022) and iKAT (2023, 2024) topics with their TREC qrels as golden conversations.

The topics are one JSON list of topics, each a conversation: CAsT's `{"number", "turn": [...]}`, iKAT's
`{"number", "turns": [...]}`. Of each turn this reads:

- its number: `number` (CAsT) or `turn_id` (iKAT);
- the utterance as the user typed it: `raw_utterance` (CAsT 2019-2021) or `utterance` (CAsT 2022, iKAT);
- the manual rewrite: `manual_rewritten_utterance` (CAsT 2020-2022) or `resolved_utterance` (iKAT);
  CAsT 2019 has none in its JSON, and publishes them as `<topic>_<turn><TAB>rewrite` lines
  (`evaluation_topics_annotated_resolved_v1.0.tsv`), read with `rewrites`;
- the canonical response, kept as the turn's reply: `response` (CAsT 2022, iKAT) or `passage` (the
  canonical passage of CAsT 2021); CAsT 2019 and 2020 have none.

Everything else (automatic rewrites, PTKB statements, provenance, titles) is not read. The qrels' query ids
are `<topic number>_<turn number>`, e.g. `31_4` or `9-1_3`. CAsT 2022 numbers turns `1-1`, `1-3`, ... along
a tree of paths; its flattened file (`2022_evaluation_topics_flattened_duplicated_v1.0.json`) lists each path
as a topic entry of its own, so a path becomes a conversation `<topic>.<path>` (`132.2`) whose turns are
numbered by position, each still judged under its qrels id (`132_1-3`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from retrieval_pipeline.core.base.errors import InvalidInputError, quoted
from retrieval_pipeline.core.base.text_files import parse_json, read_text
from retrieval_pipeline.core.golden.beir import ImportedSet
from retrieval_pipeline.core.golden.conversation_imports.turns import (
    ImportedTurn,
    conversation_id,
    conversation_set,
    text_field,
    turn_number,
)
from retrieval_pipeline.core.golden.trec import read_judged_trec_qrels, read_trec_topics

_TREE_TURN = re.compile(r"\d+-\d+")
UTTERANCE = ("raw_utterance", "utterance")
REWRITE = ("manual_rewritten_utterance", "resolved_utterance")
REPLY = ("response", "passage")


def read_cast_topics(path: str | Path) -> Iterator[ImportedTurn]:
    """The user turns of a CAsT or iKAT topics file, in file order."""
    path = Path(path)
    topics = parse_json(read_text(path, "topics file"), str(path))
    if not isinstance(topics, list):
        raise InvalidInputError("expected a JSON list of topics", source=str(path))
    numbers = Counter(str(topic.get("number")).strip() for topic in topics if isinstance(topic, dict))
    paths: Counter[str] = Counter()
    for position, topic in enumerate(topics, start=1):
        where = f"{path} (topic #{position})"
        if not isinstance(topic, dict):
            raise InvalidInputError("expected a JSON object", source=where)
        number = conversation_id(topic.get("number"), where, "number")
        turns_field = "turns" if "turns" in topic else "turn"
        turns = topic.get(turns_field)
        if not isinstance(turns, list) or not turns:
            raise InvalidInputError(f"topic {quoted(number)} has no turns", source=where, field=turns_field)
        by_position = all(_tree_turn(turn) for turn in turns)
        paths[number] += 1
        if paths[number] > 1 and not by_position:  # only a tree's paths share their topic's number
            raise InvalidInputError(f"topic {quoted(number)} appears twice", source=where, field="number")
        conversation = number if numbers[number] == 1 else f"{number}.{paths[number]}"
        for index, turn in enumerate(turns, start=1):
            yield _turn(turn, index, number, conversation, by_position, str(path))


def _tree_turn(turn: object) -> bool:
    """Whether the turn is numbered as CAsT 2022 numbers a tree's turns (`<branch>-<step>`)."""
    value = turn.get("number") if isinstance(turn, dict) else None
    return isinstance(value, str) and _TREE_TURN.fullmatch(value.strip()) is not None


def _turn(turn: object, index: int, topic: str, conversation: str, by_position: bool, path: str) -> ImportedTurn:
    if not isinstance(turn, dict):
        raise InvalidInputError("expected a JSON object", source=f"{path} (topic {quoted(topic)} turn #{index})")
    number_field = "number" if "number" in turn else "turn_id"
    label = turn.get(number_field)
    where = f"{path} (topic {quoted(topic)} turn {quoted(label) if label is not None else f'#{index}'})"
    if turn.get("participant") == "System":
        raise InvalidInputError(
            "a System turn: import the flattened topics file (one path per entry), not the tree", source=where
        )
    if label is None or (isinstance(label, str) and not label.strip()):
        raise InvalidInputError("missing turn number", source=where, field=number_field)
    number = index if by_position else turn_number(label, where, number_field)
    return ImportedTurn(
        where=where,
        conversation=conversation,
        number=number,
        utterance=text_field(turn, UTTERANCE, where, required=True),
        query_id=f"{topic}_{str(label).strip()}",
        reply=(reply := text_field(turn, REPLY, where, required=False)),
        rewrite=text_field(turn, REWRITE, where, required=False),
        reference=reply,
        number_field=number_field,
    )


def with_rewrites(turns: list[ImportedTurn], path: Path) -> list[ImportedTurn]:
    """The turns with the rewrites of a `query-id<TAB>text` file; a rewrite of no turn is refused, as
    it is one of ids numbered another way."""
    rewrites = read_trec_topics(path)
    known = {turn.query_id for turn in turns}
    stray = next((query_id for query_id in rewrites if query_id not in known), None)
    if stray is not None:
        raise InvalidInputError(f"rewrite of {quoted(stray)}, which names no turn (ids are <topic>_<turn>)", source=str(path))
    return [replace(turn, rewrite=rewrites.get(turn.query_id, turn.rewrite)) for turn in turns]


def imported_cast(
    topics_path: str | Path,
    qrels_path: str | Path,
    *,
    identifier: str,
    name: str | None = None,
    corpus: str | Path | None = None,
    rewrites: str | Path | None = None,
    min_relevance: float | None = None,
) -> ImportedSet:
    """The judged conversations of a CAsT or iKAT topics file, scored on its qrels (relevance > 0, or at
    least `min_relevance`, as the TREC import reads them). `rewrites`: `<topic>_<turn><TAB>rewrite` lines,
    as CAsT 2019 publishes its manual rewrites beside the topics; they replace the topics' own."""
    topics_path, qrels_path = Path(topics_path), Path(qrels_path)
    judgements = read_judged_trec_qrels(qrels_path, min_relevance)
    turns = read_cast_topics(topics_path)
    if rewrites is not None:
        turns = with_rewrites(list(turns), Path(rewrites))
    against = "the judged documents" if corpus is not None else "the canonical responses"
    return conversation_set(
        turns,
        judgements,
        None if corpus is None else Path(corpus),
        identifier=identifier,
        name=name or topics_path.name,
        description=(
            f"Imported from the TREC conversational topics {topics_path.name} and qrels {qrels_path.name}; "
            f"forms tagged by vocabulary overlap with {against}."
        ),
        source=str(topics_path),
        qrels_source=str(qrels_path),
    )
