"""Registries fail fast on a second claim to an identifier, naming both sources; plugins come in through entry points."""

from __future__ import annotations

import textwrap
import uuid

import pytest
import yaml
from core_helpers import question, question_set

from retrieval_pipeline.core.base.errors import DuplicateIdentifierError, InvalidInputError, UnknownIdentifierError
from retrieval_pipeline.core.base.registry import Registry
from retrieval_pipeline.core.golden.question_sets import QUESTION_SETS_GROUP, build_question_set_registry, entry_point_providers
from retrieval_pipeline.core.retrieval.retriever import RETRIEVER_KINDS_GROUP
from retrieval_pipeline.core.retrieval.retriever_kinds import RETRIEVERS, RetrieverKind
from retrieval_pipeline.core.services.configuration.project import load_config


def test_registry_finds_entries_and_remembers_their_source():
    registry = Registry("question set")
    registry.add("a", 1, "a.yaml")
    registry.add("b", 2, "b.yaml")
    assert (registry["a"], registry["b"]) == (1, 2)
    assert list(registry) == ["a", "b"] and len(registry) == 2
    assert registry.source_of("b") == "b.yaml"
    assert "a" in registry and "zzz" not in registry


def test_registry_refuses_a_duplicate_naming_both_sources():
    registry = Registry("question set")
    registry.add("demo.set", 1, "sets/first.yaml")
    with pytest.raises(DuplicateIdentifierError) as caught:
        registry.add("demo.set", 2, "sets/second.json")
    message = str(caught.value)
    assert "demo.set" in message and "sets/first.yaml" in message and "sets/second.json" in message
    assert registry["demo.set"] == 1


def test_registry_miss_lists_the_known_identifiers():
    registry = Registry("retriever")
    registry.add("lexical", 1, "config")
    registry.add("vector", 2, "config")
    with pytest.raises(UnknownIdentifierError) as caught:
        registry["hybrid"]
    assert str(caught.value) == "unknown retriever 'hybrid'; available: lexical, vector"
    assert caught.value.known == ["lexical", "vector"]
    with pytest.raises(KeyError):  # still a KeyError for code that expects a mapping
        registry.source_of("hybrid")


def test_empty_registry_miss_says_none_are_available():
    with pytest.raises(UnknownIdentifierError, match="available: none"):
        Registry("question set")["anything"]


def test_two_set_providers_giving_one_identifier_fail_naming_both():
    providers = [
        ("support.yaml", lambda: [question_set(question("q1"), identifier="support")]),
        ("other.yaml", lambda: [question_set(question("q9"), identifier="other")]),
        ("plugin 'acme'", lambda: [question_set(question("q2"), identifier="support")]),
    ]
    with pytest.raises(DuplicateIdentifierError) as caught:
        build_question_set_registry(providers)
    assert "support" in str(caught.value)
    assert "support.yaml" in str(caught.value) and "plugin 'acme'" in str(caught.value)


def test_set_registry_lists_every_providers_sets():
    registry = build_question_set_registry(
        [
            ("a.yaml", lambda: [question_set(question("q1"), identifier="a")]),
            ("plugin", lambda: [question_set(question("q1"), identifier="b"), question_set(question("q1"), identifier="c")]),
        ]
    )
    assert list(registry) == ["a", "b", "c"]
    assert registry.source_of("c") == "plugin"


# --- plugins through entry points -------------------------------------------------------------


def install_plugin(tmp_path, monkeypatch, module_source: str, entry_points: dict[str, dict[str, str]]) -> str:
    """Make an installed-looking distribution in tmp_path: a module plus its .dist-info with entry points.

    Returns the module's (unique) name; entry point values may use `{module}` for it.
    """
    module = f"golden_plugin_{uuid.uuid4().hex[:10]}"
    dist = f"acme_{module}"
    (tmp_path / f"{module}.py").write_text(textwrap.dedent(module_source), encoding="utf-8")
    info = tmp_path / f"{dist}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n", encoding="utf-8")
    sections = []
    for group, names in entry_points.items():
        sections.append(f"[{group}]\n" + "".join(f"{name} = {value.format(module=module)}\n" for name, value in names.items()))
    (info / "entry_points.txt").write_text("\n".join(sections), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    return module


PLUGIN_SETS = """
    from retrieval_pipeline.core.golden.questions import GoldenQuestion, GoldenQuestionSet

    def provide():
        return [
            GoldenQuestionSet(
                identifier="acme.support",
                name="ACME support",
                questions=[GoldenQuestion(id="p1", question="How do I log in?", form="match", expected_document_ids=["d1"])],
            )
        ]

    def provide_junk():
        return ["not a set"]
"""


def write_set_file(folder, identifier):
    path = folder / f"{identifier}.yaml"
    data = {
        "identifier": identifier,
        "name": identifier,
        "questions": [{"id": "f1", "question": "Where?", "form": "gap", "expected_document_ids": ["x"]}],
    }
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def write_config(folder, set_files):
    path = folder / "retrieval-eval.yaml"
    path.write_text(yaml.safe_dump({"question_sets": [{"file": str(f)} for f in set_files]}), encoding="utf-8")
    return path


def test_a_plugin_set_joins_the_configured_sets(tmp_path, monkeypatch):
    (tmp_path / "site").mkdir()
    install_plugin(tmp_path / "site", monkeypatch, PLUGIN_SETS, {QUESTION_SETS_GROUP: {"acme": "{module}:provide"}})
    local = tmp_path / "project"
    local.mkdir()
    config = load_config(write_config(local, [write_set_file(local, "local.set")]))
    sets = config.question_sets
    assert "acme.support" in sets and "local.set" in sets
    assert sets["acme.support"].question("p1").question == "How do I log in?"
    assert "entry point 'acme'" in sets.source_of("acme.support")


def test_a_plugin_set_clashing_with_a_file_set_names_both_sources(tmp_path, monkeypatch):
    (tmp_path / "site").mkdir()
    module = install_plugin(tmp_path / "site", monkeypatch, PLUGIN_SETS, {QUESTION_SETS_GROUP: {"acme": "{module}:provide"}})
    local = tmp_path / "project"
    local.mkdir()
    set_file = write_set_file(local, "acme.support")
    config = load_config(write_config(local, [set_file]))
    with pytest.raises(DuplicateIdentifierError) as caught:
        _ = config.question_sets
    message = str(caught.value)
    assert "acme.support" in message
    assert str(set_file) in message
    assert "entry point 'acme'" in message and module in message


def test_a_plugin_providing_something_other_than_sets_fails_naming_the_entry_point(tmp_path, monkeypatch):
    install_plugin(tmp_path, monkeypatch, PLUGIN_SETS, {QUESTION_SETS_GROUP: {"junk": "{module}:provide_junk"}})
    providers = [provider for source, provider in entry_point_providers() if "'junk'" in source]
    assert len(providers) == 1
    with pytest.raises(InvalidInputError, match="entry point 'junk'.*not a GoldenQuestionSet"):
        providers[0]()


PLUGIN_KIND = """
    from retrieval_pipeline.core.retrieval.kinds import KindParams
    from retrieval_pipeline.core.retrieval.retriever_kinds import RetrieverKind

    class EchoParams(KindParams):
        documents: list[str] = []

    class EchoRetriever:
        def __init__(self, identifier, documents):
            self.identifier = identifier
            self.documents = documents

        def retrieve(self, question, limit):
            return self.documents[:limit]

    class EchoKind(RetrieverKind[EchoParams]):
        Params = EchoParams

        def build(self):
            return EchoRetriever(self.name, list(self.params.documents))

    class NotARetrieverKind(EchoKind):
        def build(self):
            return object()
"""


def test_a_user_retriever_kind_from_a_plugin_is_built_from_configuration(tmp_path, monkeypatch):
    install_plugin(tmp_path, monkeypatch, PLUGIN_KIND, {RETRIEVER_KINDS_GROUP: {"echo": "{module}:EchoKind"}})
    config_path = tmp_path / "config.yaml"
    config_path.write_text(yaml.safe_dump({"retrievers": {"my_echo": {"kind": "echo", "documents": ["a", "b"]}}}))
    config = load_config(config_path)
    retriever = config.retriever("my_echo")
    assert retriever.identifier == "my_echo"
    assert retriever.retrieve("anything", 12) == ["a", "b"]
    assert config.retriever("my_echo") is retriever  # built once per configuration
    assert "echo" in RETRIEVERS.kinds()


def test_a_kind_that_builds_no_retriever_is_refused_naming_the_configuration_key(tmp_path, monkeypatch):
    install_plugin(tmp_path, monkeypatch, PLUGIN_KIND, {RETRIEVER_KINDS_GROUP: {"broken": "{module}:NotARetrieverKind"}})
    config_path = tmp_path / "config.yaml"
    config_path.write_text(yaml.safe_dump({"retrievers": {"bad_one": {"kind": "broken"}}}))
    with pytest.raises(InvalidInputError) as caught:
        load_config(config_path).retriever("bad_one")
    assert str(caught.value) == (
        f"{config_path}: retrievers.bad_one: kind 'broken' built object, which lacks identifier or retrieve()"
    )


def test_a_registered_class_that_is_no_retriever_kind_is_refused_naming_the_entry_and_the_class(tmp_path, monkeypatch):
    module = install_plugin(tmp_path, monkeypatch, PLUGIN_KIND, {RETRIEVER_KINDS_GROUP: {"bare": "{module}:EchoRetriever"}})
    config_path = tmp_path / "config.yaml"
    config_path.write_text(yaml.safe_dump({"retrievers": {"plain": {"kind": "bare"}}}))
    config = load_config(config_path)
    with pytest.raises(InvalidInputError) as caught:
        config.check_retrievers()
    assert str(caught.value) == (
        f"{config_path}: retrievers.plain: field 'kind': kind 'bare' is {module}.EchoRetriever, which is not a RetrieverKind"
    )
    assert config.retriever_kind_class("plain") is RetrieverKind  # asked without parsing: it offers nothing


def test_two_distributions_claiming_one_retriever_kind_fail_naming_both(tmp_path, monkeypatch):
    module = install_plugin(tmp_path, monkeypatch, PLUGIN_KIND, {RETRIEVER_KINDS_GROUP: {"lexical": "{module}:EchoKind"}})
    with pytest.raises(DuplicateIdentifierError) as caught:
        RETRIEVERS.kinds()
    message = str(caught.value)
    assert "retriever kind 'lexical'" in message
    assert "retrieval_pipeline.retrievers.lexical.retriever:LexicalKind" in message
    assert f"{module}:EchoKind" in message


def test_an_unknown_retriever_name_lists_the_configured_ones(tmp_path):
    config_path = tmp_path / "config.yaml"
    config_path.write_text(yaml.safe_dump({"retrievers": {"alpha": {"kind": "lexical"}, "beta": {"kind": "lexical"}}}))
    with pytest.raises(UnknownIdentifierError) as caught:
        load_config(config_path).retriever("gamma")
    assert "gamma" in str(caught.value) and "alpha, beta" in str(caught.value)
