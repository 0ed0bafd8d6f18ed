"""The demo conversation set: it loads from the installed package, is clearly a demo written here, every
turn's rewrite is a Cranfield query verbatim and its labels are Cranfield's, its build script reproduces
the shipped file byte for byte, `nightly` evaluates it in four query modes, and the figures by depth that
the README and docs/conversations.md quote are what the pipeline measures."""

from __future__ import annotations

import csv
import gzip
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import retrieval_pipeline
from retrieval_pipeline.core.golden.question_files import load_question_set_file
from retrieval_pipeline.core.services.configuration.lookup import demo_config_path
from retrieval_pipeline.core.services.configuration.project import load_config

REPO = Path(__file__).resolve().parents[2]
BUILD_SCRIPT = REPO / "scripts" / "build_demo_conversations.py"
DEMO_FOLDER = Path(retrieval_pipeline.__file__).resolve().parent / "demo"
SET_FILE = "demo.conversations.yaml"
CRANFIELD_QUERY = re.compile(r"Cranfield query (\d+)")
PAIR = re.compile(r"(\d+\.\d)% / (\d+\.\d)%")
DEPTH_FIGURES = {  # top-1 and top-3 by turn depth (1, 2, 3, 4+), as the README and docs/conversations.md quote them
    "bm25_stemmed": ((0.467, 0.867), (0.067, 0.267), (0.267, 0.467), (0.130, 0.174)),
    "bm25_hist2": ((0.467, 0.867), (0.233, 0.667), (0.233, 0.600), (0.130, 0.348)),
    "bm25_hist_all": ((0.467, 0.867), (0.233, 0.667), (0.233, 0.600), (0.217, 0.348)),
    "bm25_rewrite": ((0.467, 0.833), (0.367, 0.767), (0.333, 0.733), (0.304, 0.652)),
}


@pytest.fixture(scope="module")
def conversations():
    return load_question_set_file(DEMO_FOLDER / SET_FILE)


@pytest.fixture(scope="module")
def cranfield(shared_data) -> tuple[dict[str, str], dict[str, list[str]]]:
    """Cranfield's queries and, for each, the documents judged relevant (score > 0), in qrels order."""
    folder = shared_data / "cranfield"
    if not folder.is_dir():
        pytest.skip(f"Cranfield is not in {shared_data}")
    with (folder / "queries.jsonl").open(encoding="utf-8") as handle:
        queries = {str(record["_id"]): record["text"] for record in map(json.loads, handle)}
    relevant: dict[str, list[str]] = {}
    with (folder / "qrels" / "test.tsv").open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            if int(row["score"]) > 0:
                relevant.setdefault(row["query-id"], []).append(row["corpus-id"])
    return queries, relevant


def test_the_conversation_set_is_a_clearly_labelled_demo_of_about_30_conversations(conversations):
    assert conversations.identifier == "demo.conversations"
    assert "DEMO" in conversations.name and "written here" in conversations.name
    assert 25 <= len(conversations.conversations) <= 35
    assert all(3 <= len(turns) <= 4 for turns in conversations.conversations.values())
    assert all(question.turn is not None for question in conversations.questions)


def test_every_rewrite_is_a_cranfield_query_and_every_label_is_cranfields_judgement(conversations, cranfield):
    queries, relevant = cranfield
    used = []
    for turn in conversations.questions:
        query_id = CRANFIELD_QUERY.search(turn.answer_gist or "").group(1)
        used.append(query_id)
        assert turn.turn.rewrite == queries[query_id], turn.id
        assert list(turn.expected_document_ids) == relevant[query_id], turn.id
    assert len(set(used)) == len(used), "a Cranfield query is the rewrite of two turns"


def test_later_turns_are_typed_as_a_user_types_them_leaning_on_the_history(conversations):
    """Ellipsis and coreference: a later turn leaves out words of its standalone rewrite that the
    conversation supplies; the opening turn is a full question."""
    for turns in conversations.conversations.values():
        opening, *later = turns
        assert opening.question.endswith("?") and len(opening.question.split()) >= 5, opening.id
        for turn in later:
            assert content_words(turn.turn.rewrite) - content_words(turn.question), turn.id
    terse = [turn for turns in conversations.conversations.values() for turn in turns[1:] if len(turn.question.split()) <= 4]
    assert len(terse) >= 5, 'too few elliptical turns ("and experimental ones?")'


def content_words(text: str) -> set[str]:
    return {word for word in re.findall(r"[a-z]+", text.lower()) if len(word) > 3}


def test_every_expected_document_is_in_the_shipped_corpus(conversations):
    with gzip.open(DEMO_FOLDER / "cranfield-corpus.jsonl.gz", "rt", encoding="utf-8") as handle:
        shipped = {json.loads(line)["_id"] for line in handle if line.strip()}
    assert {d for q in conversations.questions for d in q.expected_document_ids} <= shipped


@pytest.mark.slow
def test_the_build_script_reproduces_the_shipped_conversations(shared_data, tmp_path):
    if not (shared_data / "cranfield").is_dir():
        pytest.skip(f"Cranfield is not in {shared_data}")
    subprocess.run(
        [sys.executable, str(BUILD_SCRIPT), "--shared", str(shared_data), "--out", str(tmp_path)],
        check=True,
        capture_output=True,
        text=True,
    )
    assert (tmp_path / SET_FILE).read_bytes() == (DEMO_FOLDER / SET_FILE).read_bytes()


def test_nightly_on_the_demo_evaluates_the_conversations_beside_demo_cranfield_in_four_query_modes():
    config = load_config(demo_config_path())
    assert list(config.question_sets) == ["demo.cranfield", "demo.conversations"]
    modes = {identifier: config.retriever_specs[identifier].conversation.label for identifier in DEPTH_FIGURES}
    assert modes == {
        "bm25_stemmed": "current",
        "bm25_hist2": "history:2",
        "bm25_hist_all": "history:all",
        "bm25_rewrite": "rewrite",
    }
    reference = config.retriever_specs["bm25_stemmed"].params
    assert all(config.retriever_specs[identifier].params == reference for identifier in DEPTH_FIGURES)


def test_on_the_demo_later_turns_asked_as_typed_degrade_and_history_or_the_rewrite_win_back_part(tmp_path):
    """The figures docs/conversations.md reports, measured by the pipeline itself."""
    measured = {
        identifier: retrieval_pipeline.evaluate(
            "demo.conversations", identifier, config=demo_config_path(), store=str(tmp_path)
        ).to_dict()["by_turn_depth"]
        for identifier in DEPTH_FIGURES
    }
    for identifier, by_depth in measured.items():
        rates = tuple(
            (round(by_depth[depth]["top1_hit_rate"], 3), round(by_depth[depth]["top3_hit_rate"], 3))
            for depth in ("1", "2", "3", "4+")
        )
        assert rates == DEPTH_FIGURES[identifier], identifier
    (_, opening), *later = DEPTH_FIGURES["bm25_stemmed"]
    assert all(opening - top3 >= 0.35 for _, top3 in later), "later turns asked as typed no longer degrade"


@pytest.mark.parametrize(
    ("page", "row_start"),
    [
        ("README.md", "│ {retriever} "),
        ("docs/conversations.md", "| `{mode}`"),
    ],
)
def test_the_readme_and_the_conversations_page_quote_the_figures_by_depth_measured(page, row_start):
    modes = {"bm25_stemmed": "current", "bm25_hist2": "history: 2", "bm25_hist_all": "history: all", "bm25_rewrite": "rewrite"}
    lines = (REPO / page).read_text(encoding="utf-8").splitlines()
    for retriever, figures in DEPTH_FIGURES.items():
        start = row_start.format(retriever=retriever, mode=modes[retriever])
        row = next(line for line in lines if line.startswith(start) and PAIR.search(line))
        quoted = [float(rate) / 100 for pair in PAIR.findall(row)[:4] for rate in pair]
        assert quoted == pytest.approx([rate for pair in figures for rate in pair], abs=0.0005), f"{page}: {retriever}"
