"""Retriever kinds a third party could ship, registered for the CLI tests through a dist-info folder.

They are real implementations of the retriever contract, installed the way any plugin is (an entry
point in the group `retrieval_pipeline.retrievers`), so the command line builds them exactly as it
builds the built-in kinds.
"""

from __future__ import annotations

import json
import os

from retrieval_pipeline.core.retrieval.kinds import KindParams
from retrieval_pipeline.core.retrieval.retriever_kinds import RetrieverKind


class TableParams(KindParams):
    rankings: str
    print: bool = False


class TableKind(RetrieverKind[TableParams]):
    """Kind `cli_table`: each question text is answered from a JSON file {question text: ranking}."""

    Params = TableParams

    def build(self):
        path = self.context.resolve(self.params.rankings)
        return TableRetriever(self.name, json.loads(path.read_text(encoding="utf-8")), self.params.print)


class TableRetriever:
    """A ranking of `null` answers with something that is not a ranking, which the runner records as a
    retriever error without retrying. `print: true` makes every call print to stdout, as a chatty
    library might.
    """

    def __init__(self, identifier: str, rankings: dict, chatty: bool):
        self.identifier = identifier
        self.rankings = rankings
        self.chatty = chatty

    def retrieve(self, question: str, limit: int):
        if self.chatty:
            print(f"chatty retriever asked {question!r}")
        ranking = self.rankings.get(question, [])
        return None if ranking is None else list(ranking)[:limit]


class ExplodingKind(RetrieverKind[KindParams]):
    """Kind `cli_exploding`: building it fails in a way nobody anticipated (a bug in a plugin)."""

    Params = KindParams

    def build(self):
        raise RuntimeError("plugin bug while building")


class LeakyParams(KindParams):
    token: dict[str, str]
    at_build: bool = False


class LeakyKind(RetrieverKind[LeakyParams]):
    """Kind `cli_leaky`: a careless plugin whose errors quote its token (`token: {env: VARIABLE}`),
    as a ValueError on every question, or a RuntimeError while building with `at_build: true`."""

    Params = LeakyParams

    def build(self):
        token = os.environ[self.params.token["env"]]
        if self.params.at_build:
            raise RuntimeError(f"cannot log in with {token!r}")
        return LeakyRetriever(self.name, token)


class LeakyRetriever:
    def __init__(self, identifier: str, token: str):
        self.identifier = identifier
        self.token = token

    def retrieve(self, question: str, limit: int):
        raise ValueError(f"the service refused the token {self.token}")
