"""The three built-in generator kinds, built from their configuration through the installed entry points:
what each is asked and answers on real Cranfield documents, what each refuses, and what its fingerprint
follows."""

from __future__ import annotations

import re
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
from generation_service import SECRET, TOKEN_VAR, openai_generator
from judge_helpers import DEMO

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.golden.forms import content_terms
from retrieval_pipeline.core.retrieval import kinds
from retrieval_pipeline.core.retrieval.corpus import read_document_texts
from retrieval_pipeline.core.retrieval.generators import (
    GENERATOR_KINDS_GROUP,
    GENERATORS,
    GeneratedQuestion,
    GenerationRequest,
    GeneratorFault,
    GeneratorKind,
)
from retrieval_pipeline.core.retrieval.kinds import KindParams
from retrieval_pipeline.core.retrieval.retriever import BuildContext

DOCUMENTS = read_document_texts(DEMO / "cranfield-corpus.jsonl.gz", {"1", "6", "184"}, "corpus")


def built(tmp_path: Path, name: str, params: dict):
    params = dict(params)
    return GENERATORS.build(name, params.pop("kind"), params, BuildContext(base_dir=tmp_path, source="config.yaml"))


def request(document_id: str, form: str = "match", examples: tuple[str, ...] = ()) -> GenerationRequest:
    return GenerationRequest(document_id, *DOCUMENTS[document_id], form, examples)


def shout(document: str, form: str, examples: tuple[str, ...]) -> str:
    return f"{form}: {document.split()[0]} ({len(examples)} examples)"


def number(document: str, form: str, examples: tuple[str, ...]) -> int:
    return 3


def explode(document: str, form: str, examples: tuple[str, ...]) -> str:
    raise RuntimeError("out of ideas")


@pytest.mark.parametrize("document_id", sorted(DOCUMENTS))
def test_the_extractive_kind_asks_with_the_titles_most_frequent_words_then_the_texts_and_writes_match_only(tmp_path, document_id):
    generator = built(tmp_path, "extractive", {"kind": "extractive"})
    title, text = DOCUMENTS[document_id]

    words = generator.generate(request(document_id)).text.split()

    assert generator.forms == ("match",) and len(words) == 5
    assert all(word in title for word in words[:3]) and all(content_terms(word) for word in words)
    assert not any(content_terms(word) & content_terms(title) for word in words[3:])
    assert all(re.search(rf"\b{word}\b", text) for word in words[3:])


def test_the_extractive_kind_takes_its_words_from_the_text_when_the_document_has_no_title(tmp_path):
    generator = built(tmp_path, "extractive", {"kind": "extractive", "title_terms": 1, "text_terms": 1})

    question = generator.generate(GenerationRequest("d", "", DOCUMENTS["1"][1], "match")).text

    assert question == "slipstream lift"


def test_an_openai_generator_sends_the_document_and_the_form_and_reads_the_question_behind_its_label(
    tmp_path, service, monkeypatch
):
    monkeypatch.setenv(TOKEN_VAR, SECRET)
    generator = built(tmp_path, "chat", openai_generator(service.url()))

    gap = generator.generate(request("6", "gap"))
    match = generator.generate(request("6", "match", examples=("heat flow in slabs",)))

    assert gap.text == "how do engineers study dimensional?" and match.text == "what does dimensional multilayer transient show?"
    assert gap.prompt_tokens == len(service.prompts[0].split()) and gap.completion_tokens == 1
    assert "Document:\none-dimensional transient heat flow in a multilayer slab .\n\none-dimensional" in service.prompts[0]
    assert "everyday words" in service.prompts[0] and "document's own words" in service.prompts[1]
    assert "- heat flow in slabs\n" in service.prompts[1] and "Users asked" not in service.prompts[0]


def test_a_generators_fingerprint_follows_its_prompt_and_model_never_its_key(tmp_path, monkeypatch):
    monkeypatch.setenv(TOKEN_VAR, SECRET)
    url = "http://127.0.0.1:9/v1/chat/completions"
    base = built(tmp_path, "chat", openai_generator(url)).fingerprint

    monkeypatch.setenv(TOKEN_VAR, "sk-another-key")
    assert built(tmp_path, "chat", openai_generator(url)).fingerprint == base
    assert built(tmp_path, "chat", openai_generator(url + "?api-version=1")).fingerprint == base
    assert built(tmp_path, "chat", openai_generator(url, model="other")).fingerprint != base
    assert built(tmp_path, "chat", openai_generator(url, prompt="{document} as {form}")).fingerprint != base
    assert (
        built(tmp_path, "e", {"kind": "extractive"}).fingerprint
        != built(tmp_path, "e", {"kind": "extractive", "text_terms": 3}).fingerprint
    )


@pytest.mark.parametrize(
    ("params", "field", "problem"),
    [
        ({"prompt": "Write a question about {document}."}, "prompt", "the prompt must hold {form}"),
        ({"temperature": 0.7}, "temperature", "not a known key"),
        (
            {"headers": {"Authorization": {"env": "RETRIEVAL_EVAL_UNSET_VARIABLE"}}},
            "headers.Authorization",
            "RETRIEVAL_EVAL_UNSET_VARIABLE is not set",
        ),
    ],
    ids=["placeholder", "unknown-key", "unset-secret"],
)
def test_a_bad_openai_setting_is_refused_naming_the_generators_key(tmp_path, params, field, problem):
    with pytest.raises(InvalidInputError) as refused:
        built(tmp_path, "chat", {**openai_generator("http://127.0.0.1:9/v1/chat/completions"), **params})

    assert refused.value.key == "generators.chat" and refused.value.field == field and problem in str(refused.value)


def test_a_callable_generator_is_given_the_document_the_form_and_the_examples(tmp_path):
    generator = built(tmp_path, "mine", {"kind": "callable", "function": f"{__name__}:shout", "forms": ["gap"]})

    assert generator.forms == ("gap",)
    assert generator.generate(request("6", "gap", ("a", "b"))).text == "gap: one-dimensional (2 examples)"


@pytest.mark.parametrize(
    ("function", "problem"),
    [("number", "returned int, not the question's text"), ("explode", "raised RuntimeError: out of ideas")],
)
def test_what_a_callable_generator_returns_or_raises_other_than_text_is_that_requests_error(tmp_path, function, problem):
    generator = built(tmp_path, "mine", {"kind": "callable", "function": f"{__name__}:{function}"})

    with pytest.raises(GeneratorFault, match=re.escape(problem)):
        generator.generate(request("6"))


def test_an_unknown_kind_is_refused_listing_the_known_ones(tmp_path):
    with pytest.raises(InvalidInputError) as refused:
        built(tmp_path, "mine", {"kind": "extractiv"})

    assert refused.value.key == "generators.mine" and "available: callable, extractive, openai" in str(refused.value)


def test_the_built_in_kinds_keep_their_fingerprints(tmp_path):
    """Values from before generators became kinds: a changed one would orphan every cached question."""
    url = "http://127.0.0.1:9/v1/chat/completions"
    assert built(tmp_path, "g", {"kind": "extractive"}).fingerprint == "8f1e17cf342a"
    assert built(tmp_path, "g", {"kind": "extractive", "title_terms": 1, "text_terms": 4}).fingerprint == "0c982332c220"
    assert built(tmp_path, "g", {"kind": "openai", "url": url, "model": "m"}).fingerprint == "a03be94cbad6"
    assert built(tmp_path, "g", {"kind": "callable", "function": "test_generator_kinds:shout"}).fingerprint == "bee1a9be8ada"


class Echo:
    """A team's generator: the document's first word."""

    concurrency, fail_fast_after = 1, 0

    def __init__(self, name: str, forms: tuple[str, ...], fingerprint: str = "echo1"):
        self.name, self.forms, self.fingerprint = name, forms, fingerprint

    def generate(self, request: GenerationRequest) -> GeneratedQuestion:
        return GeneratedQuestion(request.document.split()[0])


class EchoParams(KindParams):
    forms: tuple[str, ...] = ("match",)


class EchoKind(GeneratorKind[EchoParams]):
    """A team's kind as docs/generating.md shows it."""

    Params = EchoParams

    def build(self) -> Echo:
        return Echo(self.name, self.params.forms)


@pytest.fixture
def team_kinds(monkeypatch):
    claims = {"echo": "EchoKind", "plain": "Echo"}
    entry_points = tuple(EntryPoint(kind, f"{__name__}:{target}", GENERATOR_KINDS_GROUP) for kind, target in claims.items())
    installed = kinds.installed_entry_points
    monkeypatch.setattr(
        kinds, "installed_entry_points", lambda group: entry_points if group == GENERATOR_KINDS_GROUP else installed(group)
    )


def test_a_teams_kind_is_a_few_lines_and_its_refusals_name_the_generator_and_the_field(tmp_path, team_kinds):
    generator = built(tmp_path, "mine", {"kind": "echo"})

    assert generator.forms == ("match",) and generator.generate(request("6")).text == "one-dimensional"
    with pytest.raises(InvalidInputError) as refused:
        built(tmp_path, "mine", {"kind": "echo", "form": "gap"})
    assert refused.value.key == "generators.mine" and refused.value.field == "form"


def test_a_registered_class_that_is_no_generator_kind_is_refused_naming_the_generator_and_the_class(tmp_path, team_kinds):
    with pytest.raises(InvalidInputError) as refused:
        built(tmp_path, "old", {"kind": "plain", "forms": ["gap"]})

    assert (refused.value.key, refused.value.field) == ("generators.old", "kind")
    assert f"kind 'plain' is {__name__}.Echo, which is not a GeneratorKind" in str(refused.value)


def test_a_kind_claiming_a_form_no_generator_writes_is_refused(tmp_path, team_kinds):
    with pytest.raises(InvalidInputError) as refused:
        built(tmp_path, "odd", {"kind": "echo", "forms": ["match", "riddle"]})

    assert refused.value.key == "generators.odd"
    problem = "kind 'echo' says it writes forms ['match', 'riddle']; a generator writes one or both of match, gap"
    assert problem in str(refused.value)
