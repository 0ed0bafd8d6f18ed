"""An approximate search's statement in the views every output lays out: present where the run was
approximate, absent (the document unchanged) where it was exact."""

from __future__ import annotations

from dataclasses import replace

from core_helpers import run_from_codes

from retrieval_pipeline.core.retrieval.approximation import Approximation
from retrieval_pipeline.core.scoring.checks.comparison import compare_runs
from retrieval_pipeline.core.services.views.comparison.view import comparison_view
from retrieval_pipeline.core.services.views.documents import run_summary
from retrieval_pipeline.core.services.views.run_view import run_view

STATED = Approximation("hnsw M=16 ef_construction=128 ef=64", 0.966, 50)


def test_the_json_document_states_an_approximate_run_and_keeps_an_exact_ones_keys():
    exact = run_from_codes("13-1")
    approximate = replace(exact, approximation=STATED)
    document = run_summary(run_view(approximate))
    assert document["approximate"] == {
        "index": "hnsw M=16 ef_construction=128 ef=64",
        "overlap": 0.966,
        "questions": 50,
        "depth": 10,
        "statement": "approximate: hnsw M=16 ef_construction=128 ef=64; top-10 overlap with exact 0.97 on 50 questions",
    }
    assert list(run_summary(run_view(exact))) == [key for key in document if key != "approximate"]


def test_a_comparisons_markdown_names_each_approximate_retriever():
    reference = run_from_codes("1133--", retriever_identifier="exact")
    other = replace(run_from_codes("3-11-1", retriever_identifier="hnsw"), approximation=STATED)
    markdown = comparison_view(compare_runs([reference, other])).to_markdown()
    assert f"`hnsw`: **{STATED.sentence}**" in markdown and "`exact`: **approximate" not in markdown
    assert "approximate" not in comparison_view(compare_runs([reference, replace(other, approximation=None)])).to_markdown()
