"""Retriever kinds a third party could ship, registered for the CLI tests through a dist-info folder.

They are real implementations of the retriever contract, installed the way any plugin is (an entry
point in the group `retrieval_pipeline.retrievers`), so the command line builds them exactly as it
builds the built-in kinds.
"""

from __future__ import annotations

import json


class TableRetriever:
    """Kind `cli_table`: each question text is answered from a JSON file {question text: ranking}.

    A ranking of `null` answers with something that is not a ranking, which the runner records as a
    retriever error without retrying. `print: true` makes every call print to stdout, as a chatty
    library might.
    """

    def __init__(self, identifier: str, rankings: dict, chatty: bool):
        self.identifier = identifier
        self.rankings = rankings
        self.chatty = chatty

    @classmethod
    def from_config(cls, identifier, params, context):
        path = context.resolve(params["rankings"])
        return cls(identifier, json.loads(path.read_text(encoding="utf-8")), bool(params.get("print", False)))

    def retrieve(self, question: str, limit: int):
        if self.chatty:
            print(f"chatty retriever asked {question!r}")
        ranking = self.rankings.get(question, [])
        return None if ranking is None else list(ranking)[:limit]


class ExplodingKind:
    """Kind `cli_exploding`: building it fails in a way nobody anticipated (a bug in a plugin)."""

    @classmethod
    def from_config(cls, identifier, params, context):
        raise RuntimeError("plugin bug while building")


class LeakyRetriever:
    """Kind `cli_leaky`: a careless plugin whose errors quote its token (`token: {env: VARIABLE}`),
    as a ValueError on every question, or a RuntimeError while building with `at_build: true`."""

    def __init__(self, identifier: str, token: str):
        self.identifier = identifier
        self.token = token

    @classmethod
    def from_config(cls, identifier, params, context):
        import os

        token = os.environ[params["token"]["env"]]
        if params.get("at_build"):
            raise RuntimeError(f"cannot log in with {token!r}")
        return cls(identifier, token)

    def retrieve(self, question: str, limit: int):
        raise ValueError(f"the service refused the token {self.token}")
