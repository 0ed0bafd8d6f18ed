"""The presentation model: rows read the measure declarations, and a change is shown only where the
comparison behind it holds."""

from __future__ import annotations

from core_helpers import outcome, question, question_set, retriever_for, run_from_codes
from measure_helpers import declare, throwaway_measure

from retrieval_pipeline.core.scoring.checks.comparison import compare_runs
from retrieval_pipeline.core.scoring.checks.regression import detect_regression
from retrieval_pipeline.core.scoring.checks.tolerances import Tolerances
from retrieval_pipeline.core.scoring.measures import LISTED
from retrieval_pipeline.core.scoring.results import QuestionResult, RunResult
from retrieval_pipeline.core.services.configuration.settings import EvaluationSettings
from retrieval_pipeline.core.services.evaluation.record import evaluate_and_record
from retrieval_pipeline.core.services.evaluation.runner import RetryPolicy
from retrieval_pipeline.core.services.views.comparison.view import comparison_view
from retrieval_pipeline.core.services.views.evaluation_view import evaluation_view, verdict_view
from retrieval_pipeline.core.services.views.run_view import run_view
from retrieval_pipeline.core.services.views.slice_rows import slice_tests
from retrieval_pipeline.core.storage.store import ResultStore


def fingerprinted(codes: str) -> RunResult:
    """A run whose questions carry fingerprints, so the set reads as checked unchanged question by question."""
    return RunResult("demo.set", "fixed", tuple(outcome(f"q{i}", code, fingerprint=f"f{i}") for i, code in enumerate(codes)))


def test_rows_are_the_declared_figures_and_shown_decides_what_tables_show(monkeypatch):
    declare(monkeypatch, throwaway_measure("shown"), throwaway_measure("kept", shown=LISTED))

    view = run_view(run_from_codes("13-", forms="mgm"))

    assert [row.key for row in view.rates] == ["top1", "top3"]
    assert [row.key for row in view.ranking] == [
        "mrr@3",
        "ndcg@3",
        "recall@1",
        "recall@3",
        "judged@1",
        "judged@3",
        "judged_any@1",
        "judged_any@3",
        "shown@3",
        "kept@3",
    ]
    assert [row.name for row in view.headline] == [
        "top-1 hit rate",
        "top-3 hit rate",
        "MRR@3",
        "nDCG@3",
        "Judged@3",
        "Shown@3",
    ]
    assert [(row.title, row.now_text) for row in view.headline_ranking][-1] == ("Shown@3", "0.333")
    [match] = [row for row in view.by_form.rows if row.key == "match"]
    assert [cell.title for cell in match.headline_scores] == ["MRR@3", "nDCG@3", "Judged@3", "Shown@3"]
    assert view.rates[0].now_text == "33.3% (1/3), 95% CI 6.1–79.2%"


def test_judged_by_either_is_listed_beside_judged_only_once_a_machine_judge_labelled_documents():
    people_only = RunResult("demo.set", "fixed", (QuestionResult("q1", "match", None, ("d1",), ("d1", "d2"), 1.0),))
    machine_too = RunResult(
        "demo.set",
        "fixed",
        (QuestionResult("q1", "match", None, ("d1",), ("d1", "d2"), 1.0, machine_judged_document_ids=("d2",)),),
    )

    assert not [row for row in run_view(people_only).listed_ranking if row.key.startswith("judged_any")]
    assert "judged_any@3" in {row.key for row in run_view(people_only).ranking}  # JSON and metadata keep it
    shown = {row.key: row.value for row in run_view(machine_too).listed_ranking}
    assert (shown["judged@3"], shown["judged_any@3"]) == (0.5, 1.0)


def test_a_judged_run_shows_the_checks_changes_and_plain_differences():
    baseline, current = fingerprinted("1111"), fingerprinted("1311")
    report = detect_regression(current, baseline, Tolerances(max_top1_drop=0.5))

    view = run_view(current, report, baseline)

    top1, top3 = view.tested
    assert (top1.change_text, top1.baseline_text, top3.change_text) == ("-25.0 pp", "100.0%", "+0.0 pp")
    assert (top1.p_value, verdict_view(report).label) == (report.hit_rate_p_value(1), "PASS")
    mrr = view.ranking[0]
    assert mrr.change == mrr.checked == current.metrics()["mrr@3"] - 1.0 and mrr.change_text == "-0.167"


def test_an_inconclusive_run_keeps_its_changes_to_the_check():
    baseline, current = run_from_codes("1111"), run_from_codes("1-11")
    report = detect_regression(current, baseline, Tolerances(max_top1_drop=0.1, min_significance=0.05))

    view = run_view(current, report, baseline)

    assert verdict_view(report).label == "INCONCLUSIVE" and not verdict_view(report).judged
    assert [row.change_text for row in view.headline] == ["—"] * 5
    assert view.tested[0].checked == -0.25 and view.ranking_changes
    [cell, _] = view.by_form.rows[0].rates
    assert (cell.change, cell.checked_text) == (None, "-25.0 pp")


def test_after_a_set_edit_only_the_checks_own_figures_show_a_change():
    baseline = fingerprinted("111")
    current = RunResult("demo.set", "fixed", (*baseline.questions, outcome("q9", "-", fingerprint="f9")))
    report = detect_regression(current, baseline, Tolerances())

    view = run_view(current, report, baseline)

    assert [row.change_text for row in view.tested] == ["+0.0 pp", "+0.0 pp"]
    assert [row.change for row in view.ranking] == [None] * len(view.ranking)


def test_slice_rows_name_their_slice_and_say_what_survives():
    baseline, current = run_from_codes("1111", forms="mmgg"), run_from_codes("---1", forms="mmgg")
    report = detect_regression(current, baseline, Tolerances())

    tests = slice_tests(report.slice_tests, 0.05)

    assert [row.name for row in tests.rows[:6:2]] == ["overall", "form match", "form gap"]
    assert (tests.rows[0].delta_text, tests.paired_questions) == ("-75.0 pp", 4)
    mrr = tests.rows[6]
    assert (mrr.figure.title, mrr.test_name, mrr.delta_text) == ("MRR@3", "randomization", "-0.750")
    assert mrr.interval_text == "-1.000 to -0.250"
    assert tests.surviving_sentence == "No difference survives Holm correction at 0.05 over 10 tests."


def test_a_comparison_sets_each_tested_rate_beside_its_own_test_not_another_measure_at_its_cut_off():
    """Recall@1 and Recall@3 are tested at top-1's and top-3's cut-offs: the rates' cells must read the
    hit rate's McNemar test, whatever order the tests come in."""
    reference = run_from_codes("1133--", retriever_identifier="reference")
    other = run_from_codes("3-11-1", retriever_identifier="other")

    view = comparison_view(compare_runs([reference, other]))

    [compared] = view.others
    assert [figure.key for figure in view.tested] == ["top1", "top3"]
    assert [(row.figure.key, row.test_name) for row in compared.overall] == [("top1", "McNemar"), ("top3", "McNemar")]
    assert [row.delta_text for row in compared.overall] == ["+16.7 pp", "+0.0 pp"]
    assert view.reference.overall == (None, None)


def test_after_labels_grow_the_baseline_beside_a_change_is_the_rescored_one_with_the_stored_one_beside_it(tmp_path):
    """q2's first document was judged relevant after the first run: the check compares with the baseline
    rescored under the new label (75.0%), so that is the baseline figure beside its +0.0 pp, marked so."""
    rankings = {"q1": ["d1"], "q2": ["n2", "d2"], "q3": ["n3", "d3"], "q4": ["d4"]}
    before = question_set(*(question(f"q{i}", (f"d{i}",)) for i in range(1, 5)))
    after = question_set(*(question(f"q{i}", ("d2", "n2") if i == 2 else (f"d{i}",)) for i in range(1, 5)))
    store, settings = ResultStore(str(tmp_path / "results")), EvaluationSettings(retry=RetryPolicy(attempts=1, backoff_seconds=0))
    evaluate_and_record(before, retriever_for(rankings, before), store, settings)

    view = evaluation_view(evaluate_and_record(after, retriever_for(rankings, after), store, settings))

    top1, top3 = view.run.tested
    assert (top1.value, top1.baseline, top1.stored_baseline, top1.change) == (0.75, 0.75, 0.5, 0.0)
    assert (top1.baseline_text, top3.baseline_text) == ("75.0% rescored (50.0% as stored)", "100.0% rescored")
    assert view.change_text(top1) == "+0.0 pp on the 4 compared questions (baseline 75.0% rescored (50.0% as stored), now 75.0%)"
    mrr = view.run.ranking[0]
    assert (mrr.baseline, mrr.stored_baseline) == (0.875, 0.75) and mrr.baseline_text == "0.875 rescored (0.750 as stored)"
    regression = view.to_dict()["regression"]
    assert regression["baseline_rescored"] is True
    assert (regression["baseline_figures"]["top1"], regression["baseline_figures_as_stored"]["top1"]) == (0.75, 0.5)
