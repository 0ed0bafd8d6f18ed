"""The measure declarations: one registry every output and gate reads, failing fast on a bad declaration."""

from __future__ import annotations

import pytest

from retrieval_pipeline.core.base.errors import DuplicateIdentifierError, UnknownIdentifierError
from retrieval_pipeline.core.scoring.checks.tolerances import Tolerances
from retrieval_pipeline.core.scoring.measures import (
    HIT_RATE,
    MEASURES,
    Measure,
    figure_of,
    figures,
    gates,
    measure_registry,
)
from retrieval_pipeline.core.scoring.ranking_metrics import recall
from retrieval_pipeline.core.services.configuration.schema import ConfigFile

EVERY_GATE = Tolerances(max_mrr_drop=0.01, max_ndcg_drop=0.02, max_recall_drop=0.03)


def test_each_set_tolerance_gates_its_figures_at_the_cutoffs_its_measure_declares():
    held = [(gate.figure.key, gate.option, gate.tolerance) for gate in gates(EVERY_GATE, (1, 3, 5, 10))]
    assert held == [
        ("top1", "max_top1_drop", 0.1),
        ("top3", "max_top3_drop", 0.1),
        ("mrr@10", "max_mrr_drop", 0.01),
        ("ndcg@10", "max_ndcg_drop", 0.02),
        ("recall@10", "max_recall_drop", 0.03),
    ]
    assert [gate.figure.key for gate in gates(Tolerances(), (1, 5))] == ["top1"]


def test_the_configuration_gates_by_the_same_model_the_measures_name():
    assert ConfigFile.model_fields["tolerances"].annotation is Tolerances


def test_a_measure_gated_by_no_tolerance_is_refused_when_declared():
    with pytest.raises(ValueError, match="measure 'odd': gate 'max_odd_drop' is not a field of Tolerances"):
        Measure("odd", "Odd", score=recall, gate="max_odd_drop")
    with pytest.raises(ValueError, match="gate 'max_top2_drop'"):
        Measure("odd", "Odd", gate=((1, "max_top1_drop"), (2, "max_top2_drop")))


def test_figures_come_in_declaration_order_each_at_its_cutoffs():
    keys = [figure.key for figure in figures((1, 3, 10))]
    assert keys == [
        "top1",
        "top3",
        "top10",
        "mrr@10",
        "ndcg@10",
        "recall@1",
        "recall@3",
        "recall@10",
        "judged@1",
        "judged@3",
        "judged@10",
        "judged_any@1",
        "judged_any@3",
        "judged_any@10",
    ]
    assert [figure.short for figure in figures((1, 3), headline=True)] == [
        "top-1",
        "top-3",
        "mrr@3",
        "ndcg@3",
        "judged@3",
    ]
    assert [figure.title for figure in figures((1, 3), charted=True)] == ["top-1", "top-3", "MRR@3", "nDCG@3"]


def test_a_figure_reads_as_its_measure_says():
    top1, mrr = figures((1, 3))[0], figures((1, 3))[2]
    assert (top1.text(0.321), top1.change_text(-0.0125), top1.column) == ("32.1%", "-1.2 pp", "top1_hit_rate")
    assert (mrr.text(0.51549), mrr.change_text(0.0124), mrr.column) == ("0.515", "+0.012", "mrr@3")


def test_a_stored_key_names_its_figure_and_an_unknown_key_none():
    assert (figure_of("top10").measure, figure_of("top10").k) == (HIT_RATE, 10)
    assert (figure_of("ndcg@12").measure.name, figure_of("ndcg@12").k) == ("ndcg", 12)
    assert figure_of("precision@5") is None and figure_of("mrr@") is None


def test_a_second_declaration_of_a_name_is_refused_and_an_unknown_name_lists_the_known():
    with pytest.raises(DuplicateIdentifierError):
        measure_registry((*MEASURES.values(), Measure("recall", "R", score=recall)))
    with pytest.raises(UnknownIdentifierError, match="hit_rate"):
        MEASURES["precision"]


def test_a_declaration_with_an_unknown_depth_or_scale_is_refused():
    with pytest.raises(ValueError, match="'sometimes'"):
        Measure("odd", "Odd", depth="sometimes", score=recall)


def test_judged_at_k_is_kept_at_every_cutoff_but_tables_show_it_at_the_deepest_only():
    keys = [figure.key for figure in figures((1, 3, 10))]
    shown = [figure.key for figure in figures((1, 3, 10), headline=True)]
    assert [key for key in keys if key.startswith("judged@")] == ["judged@1", "judged@3", "judged@10"]
    assert [key for key in shown if key.startswith("judged")] == ["judged@10"]
    assert all(gate.figure.measure.name != "judged" for gate in gates(EVERY_GATE, (1, 3, 10)))


def test_a_measure_shown_nowhere_declared_is_refused():
    with pytest.raises(ValueError, match="shown 'sometimes'"):
        Measure("odd", "Odd", shown="sometimes")
