"""The one shape of a retriever kind a project may install: a `RetrieverKind` subclass, its parameters parsed
once, then built and asked, with defaults for every question it does not answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval_pipeline.core.base.errors import InvalidInputError, ServiceFailedError
from retrieval_pipeline.core.retrieval.kinds import KindParams
from retrieval_pipeline.core.retrieval.retriever import BuildContext, RetrieverFault
from retrieval_pipeline.core.retrieval.retriever_kinds import RETRIEVERS, RetrieverKind

CONTEXT = BuildContext(base_dir=Path("."), source="config.yaml")


class ListParams(KindParams):
    documents: list[str]


class ListRetriever:
    def __init__(self, identifier, documents):
        self.identifier = identifier
        self.documents = documents

    def retrieve(self, question, limit):
        return self.documents[:limit]


class ListKind(RetrieverKind[ListParams]):
    """The documented few lines: parameters, a build, and the one question it can answer."""

    Params = ListParams

    def build(self):
        return ListRetriever(self.name, self.params.documents)

    def corpus(self):
        return frozenset(self.params.documents)


def test_a_kind_is_parsed_once_then_built_and_answers_the_defaults_for_what_it_does_not_override():
    kind = ListKind.parse("listed", {"documents": ["x", "y"]}, CONTEXT)

    assert kind.corpus() == frozenset({"x", "y"})
    assert (kind.corpus_texts(["x"]), kind.echoed(), kind.question_encoder(), ListKind.embeds_questions) == (
        None,
        (),
        None,
        False,
    )
    assert RETRIEVERS.built("list", kind).retrieve("q", 1) == ["x"]


def test_a_bad_parameter_is_refused_naming_the_configuration_the_entry_and_the_key():
    with pytest.raises(InvalidInputError) as raised:
        ListKind.parse("listed", {"documents": ["x"], "extra": 1}, CONTEXT)

    assert str(raised.value) == "config.yaml: retrievers.listed: field 'extra': is not a known key; known: documents"


def test_a_service_failing_while_a_kind_builds_is_the_services_failure():
    class Failing(ListKind):
        def build(self):
            raise RetrieverFault("the endpoint answered 503")

    with pytest.raises(ServiceFailedError, match="retriever listed could not be built: the endpoint answered 503"):
        RETRIEVERS.built("failing", Failing.parse("listed", {"documents": []}, CONTEXT))
