"""The two shapes of a retriever kind a project may install: a `RetrieverKind` (parameters parsed once, then
asked) and a class written to the first protocol (`from_config`, `check_config` and optional classmethods),
which `ProtocolKind` reads so it keeps working unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ConfigDict

from retrieval_pipeline.core.base.errors import InvalidInputError, ServiceFailedError
from retrieval_pipeline.core.retrieval.retriever import BuildContext, RetrieverFault, RetrieverParams
from retrieval_pipeline.core.retrieval.retriever_kinds import (
    ProtocolKind,
    RetrieverKind,
    as_retriever_kind,
    built_retriever,
)

CONTEXT = BuildContext(base_dir=Path("."), source="config.yaml")


class FirstProtocolKind:
    """Every optional classmethod of the first documented protocol, recording what it was given."""

    calls: list[tuple] = []

    def __init__(self, identifier, documents):
        self.identifier = identifier
        self.documents = documents

    @classmethod
    def check_config(cls, identifier, params, context):
        cls.calls.append(("check_config", identifier))
        if "documents" not in params:
            raise context.invalid(identifier, "documents is required", "documents")
        return params

    @classmethod
    def from_config(cls, identifier, params, context):
        cls.calls.append(("from_config", identifier))
        return cls(identifier, list(params["documents"]))

    @classmethod
    def corpus_document_ids(cls, identifier, params, context):
        cls.calls.append(("corpus_document_ids", identifier))
        return frozenset(params["documents"])

    @classmethod
    def corpus_texts(cls, identifier, params, context, wanted):
        return {document: ("", f"text of {document}") for document in wanted}

    @classmethod
    def echoed_retrievers(cls, identifier, params, context):
        return ["bm25"]

    @classmethod
    def question_encoder(cls, identifier, params, context):
        return lambda texts: [[float(len(text))] for text in texts]

    def retrieve(self, question, limit):
        return self.documents[:limit]


class OnlyBuilt:
    """The least a first-protocol kind writes: `from_config`."""

    def __init__(self, identifier):
        self.identifier = identifier

    @classmethod
    def from_config(cls, identifier, params, context):
        return cls(identifier)

    def retrieve(self, question, limit):
        return []


def test_a_first_protocol_kind_is_checked_built_and_asked_through_one_adapter():
    FirstProtocolKind.calls.clear()
    kind_class = as_retriever_kind(FirstProtocolKind)
    assert issubclass(kind_class, ProtocolKind) and kind_class.embeds_questions
    assert as_retriever_kind(FirstProtocolKind) is kind_class  # one adapter class per plugin class
    kind = kind_class.parse("mine", {"documents": ["a", "b"]}, CONTEXT)
    assert kind.corpus() == frozenset({"a", "b"}) and kind.corpus() == frozenset({"a", "b"})
    assert kind.corpus_texts(["a"]) == {"a": ("", "text of a")}
    assert kind.echoed() == ("bm25",)
    assert kind.question_encoder()(["abc"]) == [[3.0]]
    retriever = built_retriever("mine_kind", kind)
    assert isinstance(retriever, FirstProtocolKind) and retriever.retrieve("q", 1) == ["a"]
    assert FirstProtocolKind.calls == [("check_config", "mine"), ("corpus_document_ids", "mine"), ("from_config", "mine")]


def test_a_first_protocol_kind_refuses_as_its_check_config_does():
    with pytest.raises(InvalidInputError) as raised:
        as_retriever_kind(FirstProtocolKind).parse("mine", {}, CONTEXT)
    assert str(raised.value) == "config.yaml: retrievers.mine: field 'documents': documents is required"


def test_a_first_protocol_kind_without_the_optional_methods_answers_the_defaults():
    kind = as_retriever_kind(OnlyBuilt).parse("plain", {"anything": 1}, CONTEXT)
    assert not type(kind).embeds_questions
    assert (kind.corpus(), kind.corpus_texts(["a"]), kind.echoed(), kind.question_encoder()) == (None, None, (), None)
    assert kind.params == {"anything": 1} and built_retriever("plain_kind", kind).identifier == "plain"


class ListParams(RetrieverParams):
    model_config = ConfigDict(frozen=True, extra="forbid")
    documents: list[str]


class ListKind(RetrieverKind[ListParams]):
    """The documented few lines: parameters, a build, and the one question it can answer."""

    Params = ListParams

    def build(self):
        return OnlyBuilt(self.name)

    def corpus(self):
        return frozenset(self.params.documents)


def test_a_kind_of_the_new_shape_is_used_as_it_is_and_parsed_once():
    assert as_retriever_kind(ListKind) is ListKind
    kind = ListKind.parse("listed", {"documents": ["x"]}, CONTEXT)
    assert kind.corpus() == frozenset({"x"}) and kind.echoed() == () and kind.question_encoder() is None
    with pytest.raises(InvalidInputError, match=r"config\.yaml: retrievers\.listed: .*documents"):
        ListKind.parse("listed", {"documents": "x", "extra": 1}, CONTEXT)


def test_a_service_failing_while_a_kind_builds_is_the_services_failure():
    class Failing(ListKind):
        def build(self):
            raise RetrieverFault("the endpoint answered 503")

    with pytest.raises(ServiceFailedError, match="retriever listed could not be built: the endpoint answered 503"):
        built_retriever("failing", Failing.parse("listed", {"documents": []}, CONTEXT))
