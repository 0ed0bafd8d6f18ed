"""A small conversational project for the query-mode tests: a real-text corpus BM25 indexes, a set of
two conversations whose second turns cannot be found without the first (a pronoun, an ellipsis), and a
configuration naming retrievers and rewriters.

The set is built in Python (a turn is a `GoldenQuestion` with `turn=ConversationTurn(...)`), so these
tests do not depend on how a set file writes conversations.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from retrieval_pipeline.core.golden.conversations import ConversationTurn
from retrieval_pipeline.core.golden.questions import GoldenQuestion, GoldenQuestionSet

DOCUMENTS = [
    {
        "_id": "d1",
        "title": "Turbofan engines",
        "text": "Turbofan engines need an inspection of their fan blades after bird strikes.",
    },
    {"_id": "d2", "title": "Wind farms", "text": "Drones inspect the blades of wind turbines; cracked blades are replaced."},
    {
        "_id": "d3",
        "title": "Glacier retreat",
        "text": "Alpine glaciers have lost much of their ice since the nineteenth century.",
    },
    {"_id": "d4", "title": "Sea level", "text": "Melting ice sheets raise the sea level and flood coastal towns."},
    {"_id": "d5", "title": "Honey bees", "text": "Bees tell the hive where flowers are through a waggle dance."},
    {"_id": "d6", "title": "Tidal power", "text": "Tidal turbines convert the motion of sea water into electricity."},
]
TURNS = {
    "engines": [
        ("what damage do bird strikes do to turbofan engines?", "They can crack the fan blades.", None, "d1"),
        ("how are the blades checked afterwards?", None, "how are turbofan fan blades inspected after bird strikes?", "d1"),
    ],
    "glaciers": [
        ("how much ice have alpine glaciers lost?", "Much of it.", None, "d3"),
        ("when did that begin?", None, "when did alpine glaciers begin to lose their ice?", "d3"),
    ],
}


def conversations(with_rewrites: bool = True) -> GoldenQuestionSet:
    """The two conversations, then one single question; without rewrites, the later turns have none."""
    questions = [
        GoldenQuestion(
            id=f"{conversation}/{number}",
            question=utterance,
            form="gap",
            expected_document_ids=(expected,),
            turn=ConversationTurn(
                conversation=conversation, number=number, reply=reply, rewrite=rewrite if with_rewrites else None
            ),
        )
        for conversation, turns in TURNS.items()
        for number, (utterance, reply, rewrite, expected) in enumerate(turns, start=1)
    ]
    questions.append(
        GoldenQuestion(id="bees", question="how do bees tell where flowers are?", form="match", expected_document_ids=("d5",))
    )
    return GoldenQuestionSet(identifier="demo.conversations", name="Conversations (test)", questions=tuple(questions))


def write_project(root: Path, retrievers: dict[str, dict[str, Any]], rewriters: dict[str, dict[str, Any]] | None = None) -> Path:
    """`corpus.jsonl` and `config.yaml` in `root`; every retriever is BM25 over the corpus unless it says otherwise."""
    (root / "corpus.jsonl").write_text("".join(json.dumps(document) + "\n" for document in DOCUMENTS), encoding="utf-8")
    config = {
        "store": "results",
        "cache_dir": "cache",
        "retrievers": {name: {"kind": "lexical", "corpus": "corpus.jsonl", **spec} for name, spec in retrievers.items()},
        "rewriters": rewriters or {},
    }
    path = root / "config.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path
