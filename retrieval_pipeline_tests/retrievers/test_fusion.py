"""Reciprocal-rank fusion: exact RRF arithmetic on fixed rankings, then lexical members via a configuration."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Sequence
from pathlib import Path

import pytest
from fixed_retrievers import Fixed

from retrieval_pipeline.core.base.errors import InvalidInputError, UnknownIdentifierError
from retrieval_pipeline.core.retrieval.retriever import BatchRetriever, BuildContext, VersionedIndex
from retrieval_pipeline.core.services.configuration.project import load_config
from retrieval_pipeline.core.services.evaluation.runner import run_question_set
from retrieval_pipeline.retrievers.fusion import FusionKind, FusionRetriever


class FixedBatch(Fixed):
    def retrieve_batch(self, questions: Sequence[str], limit: int) -> list[list[str]]:
        return [self.retrieve(question, limit) for question in questions]


class Versioned(FixedBatch):
    version = "v1"

    def index_version(self) -> str:
        return self.version


def fuse(members: dict[str, Fixed], **params) -> FusionRetriever:
    context = BuildContext(base_dir=Path("."), source="test.yaml", build_retriever=members.__getitem__)
    return FusionKind.parse("hybrid", {"retrievers": list(members), **params}, context).build()


def test_documents_rank_by_summed_reciprocal_ranks():
    # d1: 1/61 + 1/62, d3: 1/63 + 1/61, d2: 1/62, d4: 1/63.
    members = {"a": Fixed("a", ["d1", "d2", "d3"]), "b": Fixed("b", ["d3", "d1", "d4"])}
    assert fuse(members).retrieve("q", 10) == ["d1", "d3", "d2", "d4"]
    assert fuse(members).retrieve("q", 2) == ["d1", "d3"]


def test_weights_and_k_change_the_balance():
    members = {"a": Fixed("a", ["d1", "d2"]), "b": Fixed("b", ["d2", "d3"])}
    assert fuse(members).retrieve("q", 3) == ["d2", "d1", "d3"]
    # Weight 3 on b: d3 gets 3/62 against d1's 1/61.
    assert fuse(members, weights=[1.0, 3.0]).retrieve("q", 3) == ["d2", "d3", "d1"]
    # With k = 0 the top rank dominates: d1 = 1, d2 = 1/2 + 1 (still first), d3 = 1/2 * 0.1.
    assert fuse(members, k=0, weights=[1.0, 0.1]).retrieve("q", 3) == ["d1", "d2", "d3"]


def test_repeated_ids_count_once_at_their_first_rank_and_ties_keep_first_appearance():
    # a's distinct ranking is x, y (y at rank 2, not 3); b's is z, v. So x = z = 1/61 and y = v = 1/62,
    # and each tie goes to the document seen first: members in configured order, each best first.
    members = {"a": Fixed("a", ["x", "x", "", "y"]), "b": Fixed("b", ["z", "v"])}
    assert fuse(members).retrieve("q", 10) == ["x", "z", "y", "v"]
    swapped = {"b": members["b"], "a": members["a"]}
    assert fuse(swapped).retrieve("q", 10) == ["z", "x", "v", "y"]


def test_members_are_asked_for_the_depth_or_else_the_limit():
    members = {"a": Fixed("a", ["d1"]), "b": Fixed("b", ["d2"])}
    fuse(members).retrieve("q", 12)
    fuse(members, depth=50).retrieve("q", 12)
    assert members["a"].asked == members["b"].asked == [12, 50]


def test_batch_is_offered_only_when_every_member_offers_it():
    batch = {"a": FixedBatch("a", ["d1", "d2"]), "b": FixedBatch("b", ["d2", "d3"])}
    fused = fuse(batch)
    assert isinstance(fused, BatchRetriever)
    assert fused.retrieve_batch(["q1", "q2"], 3) == [fused.retrieve("q1", 3)] * 2
    assert not isinstance(fuse({"a": batch["a"], "c": Fixed("c", ["d4"])}), BatchRetriever)


def test_the_index_version_follows_the_members_versions():
    members = {"a": Versioned("a", ["d1"]), "b": Fixed("b", ["d2"])}
    fused = fuse(members)
    assert isinstance(fused, VersionedIndex)
    before = fused.index_version()
    members["a"].version = "v2"
    assert fused.index_version() != before
    assert not isinstance(fuse({"b": members["b"], "c": Fixed("c", ["d3"])}), VersionedIndex)


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"retrievers": ["a"]}, r"field 'retrievers': List should have at least 2 items"),
        ({"retrievers": ["a", "a"]}, r"field 'retrievers': .*a listed more than once"),
        ({"retrievers": ["a", "b"], "weights": [1.0]}, r"field 'weights': 1 weights for 2 retrievers"),
        ({"retrievers": ["a", "b"], "k": -1}, r"field 'k'"),
        ({"retrievers": ["a", "nowhere"]}, r"field 'retrievers': unknown retriever 'nowhere'; available: a, b"),
    ],
)
def test_bad_parameters_are_named(params, expected):
    members = {"a": Fixed("a", ["d1"]), "b": Fixed("b", ["d2"])}

    def build(identifier: str):
        if identifier not in members:
            raise UnknownIdentifierError("retriever", identifier, members)
        return members[identifier]

    context = BuildContext(base_dir=Path("."), source="test.yaml", build_retriever=build)
    with pytest.raises(InvalidInputError, match=rf"test\.yaml: retrievers\.hybrid: {expected}"):
        FusionKind.parse("hybrid", params, context).build()


def write_project(tmp_path: Path, retrievers: str) -> Path:
    documents = [
        {"_id": "p1", "title": "Photosynthesis", "text": "Chlorophyll captures light to turn carbon dioxide into sugar."},
        {"_id": "p2", "title": "Ocean tides", "text": "The moon's gravity raises tides twice a day along the coast."},
        {"_id": "p3", "title": "Light and sugar", "text": "Plants store energy from sunlight as starch in their leaves."},
        {"_id": "p4", "title": "Coral reefs", "text": "Warm shallow seas let corals build reefs from calcium carbonate."},
    ]
    (tmp_path / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in documents), encoding="utf-8")
    (tmp_path / "set.yaml").write_text(
        textwrap.dedent(
            """
            identifier: plants
            name: Plants and seas
            questions:
              - {id: q1, question: 'How do plants turn light into sugar?', form: match, expected_document_ids: [p1, p3]}
              - {id: q2, question: 'What raises the tides?', form: match, expected_document_ids: [p2]}
              - {id: q3, question: 'What are coral reefs built from?', form: match, expected_document_ids: [p4]}
            """
        ),
        encoding="utf-8",
    )
    config_file = tmp_path / "config.yaml"
    config_file.write_text(f"cache_dir: cache\nquestion_sets: [{{file: set.yaml}}]\nretrievers:\n{retrievers}", encoding="utf-8")
    return config_file


def test_a_configured_fusion_of_lexical_retrievers_is_evaluated(tmp_path):
    config = load_config(
        write_project(
            tmp_path,
            "  titles: {kind: lexical, corpus: corpus.jsonl, fields: [title]}\n"
            "  texts: {kind: lexical, corpus: corpus.jsonl, fields: [text]}\n"
            "  hybrid: {kind: fusion, retrievers: [titles, texts]}\n",
        )
    )
    hybrid = config.retriever("hybrid")
    titles, texts = config.retriever("titles"), config.retriever("texts")
    question = "How do plants turn light into sugar?"
    # p3 is first by title ("Light and sugar") and second by text; p1 is first by text only.
    assert titles.retrieve(question, 12)[0] == "p3" and texts.retrieve(question, 12)[:2] == ["p1", "p3"]
    assert hybrid.retrieve(question, 12)[:2] == ["p3", "p1"]
    result = run_question_set(config.question_set("plants"), hybrid)
    assert (result.hit_rate(1), result.hit_rate(3)) == (1.0, 1.0)
    assert result.index_version is not None


@pytest.mark.parametrize(
    ("retrievers", "cycle"),
    [
        ("  solo: {kind: fusion, retrievers: [solo, other]}\n  other: {kind: lexical, corpus: corpus.jsonl}\n", "solo -> solo"),
        (
            "  first: {kind: fusion, retrievers: [base, second]}\n"
            "  second: {kind: fusion, retrievers: [base, first]}\n"
            "  base: {kind: lexical, corpus: corpus.jsonl}\n",
            "first -> second -> first",
        ),
    ],
)
def test_a_fusion_that_includes_itself_fails_instead_of_recursing(tmp_path, retrievers, cycle):
    config = load_config(write_project(tmp_path, retrievers))
    with pytest.raises(
        InvalidInputError, match=rf"config\.yaml: retrievers\.\w+: field 'retrievers': fusion includes itself: {cycle}"
    ):
        config.retriever(cycle.split()[0])
