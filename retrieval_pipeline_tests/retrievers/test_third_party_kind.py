"""A kind from another distribution is configured and evaluated like a built-in one (SPEC section 2).

The plugin is a real installed distribution as far as `importlib.metadata` can tell: a module and a
`.dist-info` folder with an entry point, on `sys.path`; nothing in this project is edited for it.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.services.configuration.project import load_config
from retrieval_pipeline.core.services.evaluation.runner import run_question_set

PLUGIN_MODULE = '''
"""Ranks documents by how many distinct question words they contain."""
import json
import re

from retrieval_pipeline.core.retrieval.kinds import KindParams
from retrieval_pipeline.core.retrieval.retriever_kinds import RetrieverKind


def words(text):
    return set(re.findall(r"[a-z]+", text.lower()))


class KeywordOverlapParams(KindParams):
    documents: str


class KeywordOverlapKind(RetrieverKind[KeywordOverlapParams]):
    Params = KeywordOverlapParams

    def build(self):
        lines = self.context.resolve(self.params.documents).read_text(encoding="utf-8").splitlines()
        documents = [(record["id"], words(record["text"])) for record in map(json.loads, lines)]
        return KeywordOverlapRetriever(self.name, documents)


class KeywordOverlapRetriever:
    def __init__(self, identifier, documents):
        self.identifier = identifier
        self.documents = documents

    def retrieve(self, question, limit):
        asked = words(question) - {"the", "what", "which", "how", "do", "of", "a", "in"}
        scored = [(len(asked & terms), doc_id) for doc_id, terms in self.documents]
        ranked = sorted((pair for pair in scored if pair[0] > 0), key=lambda pair: -pair[0])
        return [doc_id for _, doc_id in ranked][:limit]
'''


@pytest.fixture
def plugin(tmp_path, monkeypatch) -> Path:
    site = tmp_path / "site"
    dist_info = site / "keyword_overlap_plugin-1.0.dist-info"
    dist_info.mkdir(parents=True)
    (site / "keyword_overlap_plugin.py").write_text(PLUGIN_MODULE, encoding="utf-8")
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: keyword-overlap-plugin\nVersion: 1.0\n", encoding="utf-8")
    (dist_info / "entry_points.txt").write_text(
        "[retrieval_pipeline.retrievers]\nkeyword_overlap = keyword_overlap_plugin:KeywordOverlapKind\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, "keyword_overlap_plugin", raising=False)
    return site


def write_project(tmp_path: Path, retrievers: str) -> Path:
    documents = [
        {"id": "m1", "text": "The heart pumps blood through arteries and veins."},
        {"id": "m2", "text": "Lungs exchange oxygen and carbon dioxide with the blood."},
        {"id": "m3", "text": "The kidneys filter waste from the blood into urine."},
    ]
    (tmp_path / "documents.jsonl").write_text("".join(json.dumps(d) + "\n" for d in documents), encoding="utf-8")
    (tmp_path / "set.yaml").write_text(
        textwrap.dedent(
            """
            identifier: body
            name: The human body
            questions:
              - {id: q1, question: 'Which organ pumps blood through arteries?', form: match, expected_document_ids: [m1]}
              - {id: q2, question: 'Where is oxygen exchanged for carbon dioxide?', form: match, expected_document_ids: [m2]}
              - {id: q3, question: 'What filters waste into urine?', form: match, expected_document_ids: [m3]}
              - {id: q4, question: 'How do the kidneys and lungs share blood?', form: gap, expected_document_ids: [m1]}
            """
        ),
        encoding="utf-8",
    )
    config_file = tmp_path / "config.yaml"
    config_file.write_text(f"cache_dir: cache\nquestion_sets: [{{file: set.yaml}}]\nretrievers:\n{retrievers}", encoding="utf-8")
    return config_file


def test_a_plugin_kind_is_built_from_configuration_and_evaluated(tmp_path, plugin):
    config = load_config(write_project(tmp_path, "  overlap: {kind: keyword_overlap, documents: documents.jsonl}\n"))
    retriever = config.retriever("overlap")
    assert type(retriever).__module__ == "keyword_overlap_plugin"
    assert retriever.retrieve("Which organ pumps blood through arteries?", 12) == ["m1", "m2", "m3"]
    result = run_question_set(config.question_set("body"), retriever)
    assert [q.retrieved_document_ids[:1] for q in result.questions] == [("m1",), ("m2",), ("m3",), ("m2",)]
    assert (result.hit_rate(1), result.hit_rate(3)) == (0.75, 1.0)


def test_a_plugin_kind_can_be_fused_with_a_built_in_one(tmp_path, plugin):
    config = load_config(
        write_project(
            tmp_path,
            "  overlap: {kind: keyword_overlap, documents: documents.jsonl}\n"
            "  bm25: {kind: lexical, corpus: documents.jsonl}\n"
            "  hybrid: {kind: fusion, retrievers: [overlap, bm25]}\n",
        )
    )
    result = run_question_set(config.question_set("body"), config.retriever("hybrid"))
    assert [q.retrieved_document_ids for q in result.questions] == [("m1", "m2", "m3"), ("m2",), ("m3",), ("m2", "m1", "m3")]
    assert (result.hit_rate(1), result.hit_rate(3)) == (0.75, 1.0)


def test_an_unknown_kind_lists_the_known_ones(tmp_path):
    config = load_config(write_project(tmp_path, "  mystery: {kind: telepathy}\n"))
    with pytest.raises(InvalidInputError) as raised:
        config.retriever("mystery")
    message = str(raised.value)
    assert "config.yaml: retrievers.mystery: field 'kind': unknown retriever kind 'telepathy'" in message
    for kind in ("fusion", "http", "lexical", "run_file"):
        assert kind in message
