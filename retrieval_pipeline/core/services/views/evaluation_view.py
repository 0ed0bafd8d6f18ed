"""An evaluation (a run, its check's report and its baseline) as one view: the verdict, the figure rows
against the baseline, the flipped questions, the set changes and the paired tests, each shaped once for
the terminal, the JSON, the reports and the Dagster metadata.

The view's two documents sit beside it, so the view depends on nothing that lays it out: the
`run --json` document (`to_dict`; every key is pinned, as scripts and CI read them) and the Markdown
summary for CI job summaries and pull-request comments (`to_markdown`; plain GitHub-flavoured Markdown,
no images, so it reads the same in a job summary, a comment and a terminal)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from retrieval_pipeline.core.base.formatting import id_list, points, signed_milliseconds
from retrieval_pipeline.core.scoring.checks.verdicts import FAILING, WARNED, RegressionReport, Verdict
from retrieval_pipeline.core.scoring.set_versions import SetChanges
from retrieval_pipeline.core.scoring.traffic import WeightedFigures, weighted_figures
from retrieval_pipeline.core.services.configuration.settings import EvaluationSettings
from retrieval_pipeline.core.services.views import documents
from retrieval_pipeline.core.services.views.figure_rows import FigureRow, LatencyRow
from retrieval_pipeline.core.services.views.question_rows import QuestionRows
from retrieval_pipeline.core.services.views.run_view import JUDGED, RunView, edited, run_view
from retrieval_pipeline.core.services.views.slice_rows import SliceTests, slice_tests
from retrieval_pipeline.core.services.views.traffic_view import TrafficView, traffic_view

if TYPE_CHECKING:
    from retrieval_pipeline.core.scoring.checks.tolerances import Tolerances
    from retrieval_pipeline.core.scoring.results import RunResult
    from retrieval_pipeline.core.services.evaluation.record import Evaluation
    from retrieval_pipeline.core.services.views.breakdowns import Breakdown

PAIRED = (*JUDGED, Verdict.INCONCLUSIVE)
"""Verdicts reached by comparing the runs question by question (flips, p-values, slice tests)."""


@dataclass(frozen=True)
class VerdictView:
    status: str
    """The stored verdict: `pass`, `regression`, `not_comparable`, ..."""
    sentence: str
    has_baseline: bool
    baseline_run_id: str | None
    judged: bool
    """Judged against the baseline (pass or regression): the reports show changes."""
    paired: bool
    """Compared question by question: judged, or a drop the set cannot tell from noise."""
    is_regression: bool
    is_inconclusive: bool

    @property
    def label(self) -> str:
        """The outcome in capitals, for a reader to scan for: PASS, REGRESSION, NOT COMPARABLE, ..."""
        return self.status.replace("_", " ").upper()


@dataclass(frozen=True)
class EvaluationView:
    run: RunView
    verdict: VerdictView
    set_changes: SetChanges | None
    """Present whenever there was a baseline: what the comparison left out."""
    flipped_to_miss: tuple[str, ...]
    flipped_to_hit: tuple[str, ...]
    excluded_unstable: tuple[str, ...]
    unjudged_lost_hits: tuple[str, ...]
    """The flipped-to-miss questions whose new top k holds a document nobody judged."""
    unjudged_could_clear: bool
    """Counted as relevant, those documents would bring every drop of a regression within its tolerance:
    only then (or as the reason for "inconclusive: unjudged") does the verdict speak of them."""
    slice_tests: SliceTests
    minimum_detectable_drop: float | None
    latency_change: float | None
    """The check's p95 change in ms, on the compared questions."""
    settings: EvaluationSettings = EvaluationSettings()
    """What the run was judged with: its tolerances and baseline policy, which the JSON document states."""
    store_uri: str | None = None
    """Where the run was saved; None when it was not."""
    traffic: TrafficView | None = None
    """The traffic-weighted figures, when a query log weighed the run; None: every output as without."""
    baseline_labels: str | None = None
    """The labels the baseline was stored under (it is rescored under the run's when they differ)."""

    def to_dict(self, *, streamed: bool = False) -> dict[str, Any]:
        """The `retrieval-eval run --json` document; `streamed` gives the per-question rows as `QuestionRows`
        (for a writer that never holds them all, or writes their JSON text), else as a list."""
        return evaluation_document(self, streamed)

    def to_markdown(self, note: str | None = None) -> str:
        """The short summary for a CI job summary or a pull-request comment (`run --markdown`)."""
        return markdown_summary(self, note)

    @property
    def reported(self) -> tuple[FigureRow | LatencyRow, ...]:
        """The rows of a report's rates table: the headline figures, then the latency it shows."""
        latency = self.run.reported_latency
        return (*self.run.headline, *([latency] if latency is not None else []))

    @property
    def reported_weighted(self) -> tuple[FigureRow, ...]:
        """The rows of a report's traffic-weighted table (none without a traffic log)."""
        return self.traffic.headline if self.traffic is not None else ()

    @property
    def set_change_line(self) -> str | None:
        """What the comparison left out when the set was edited since the baseline; None otherwise."""
        return self.set_changes.sentence() if edited(self.set_changes) else None

    @property
    def scope(self) -> str:
        """ " on the 6 unchanged questions" after a set edit: what the check's changes were measured on."""
        return self.set_changes.scope if self.set_changes is not None else ""

    def change_text(self, row: FigureRow) -> str:
        """ "+1.2 pp (baseline 32.1%, now 33.3%)": the check's change with both rates, so nobody has to add
        them up. After a set edit the change is on the unchanged questions, and says so."""
        if not self.verdict.judged:
            return f"not compared (now {row.text})"
        return f"{row.change_text}{self.scope} (baseline {row.baseline_text}, now {row.text})"

    @property
    def lost_hits_count(self) -> str:
        """ "12" or "12, 7 with unjudged documents in their place": how the details head the questions that
        flipped hit → miss (the short count of unjudged documents every output gives there)."""
        unjudged = len(self.unjudged_lost_hits)
        count = str(len(self.flipped_to_miss))
        return f"{count}, {unjudged} with unjudged documents in their place" if unjudged else count

    @property
    def latency_change_text(self) -> str:
        return signed_milliseconds(self.latency_change)

    @property
    def detectable_sentence(self) -> str:
        """The smallest drop the compared questions could show at the level, or that none could."""
        tests, paired, level = len(self.slice_tests.rows), self.slice_tests.paired_questions, self.slice_tests.significance_text
        if self.minimum_detectable_drop is None:
            return (
                f"Set too small: on {paired} compared questions no drop can reach significance {level} (Holm over {tests} tests)."
            )
        return (
            f"Smallest detectable drop at {level} (Holm over {tests} tests): "
            f"{points(self.minimum_detectable_drop)} on {paired} compared questions."
        )


@dataclass(frozen=True)
class RegressionCheck:
    """What the regression check reports for a verdict. The Dagster check and `nightly`'s summary (read back
    from the store) both take it from `regression_check`, so they cannot disagree."""

    passed: bool
    severity: str
    """`WARN` for a passed but flagged verdict (not comparable, inconclusive), else the configured severity."""


def regression_check(status: str, configured_severity: str) -> RegressionCheck:
    """`status`: a verdict's value, as a view or a stored run holds it."""
    verdict = Verdict(status)
    return RegressionCheck(passed=verdict not in FAILING, severity="WARN" if verdict in WARNED else configured_severity)


def verdict_view(report: RegressionReport) -> VerdictView:
    verdict = report.verdict
    return VerdictView(
        status=verdict.value,
        sentence=report.summary,
        has_baseline=report.has_baseline,
        baseline_run_id=report.baseline_run_id,
        judged=verdict in JUDGED,
        paired=verdict in PAIRED,
        is_regression=report.is_regression,
        is_inconclusive=report.is_inconclusive,
    )


def evaluation_view(
    evaluation: Evaluation, settings: EvaluationSettings = EvaluationSettings(), store_uri: str | None = None
) -> EvaluationView:
    """`settings` and `store_uri`: what the evaluation was run with and saved in, for its JSON document."""
    report = evaluation.report
    return EvaluationView(
        run=run_view(evaluation.run, report, evaluation.baseline),
        verdict=verdict_view(report),
        set_changes=report.set_changes,
        flipped_to_miss=report.flipped_to_miss,
        flipped_to_hit=report.flipped_to_hit,
        excluded_unstable=report.excluded_unstable,
        unjudged_lost_hits=report.unjudged_losses.unjudged if report.unjudged_losses else (),
        unjudged_could_clear=report.unjudged_losses.could_clear if report.unjudged_losses else False,
        slice_tests=slice_tests(report.slice_tests, report.significance),
        minimum_detectable_drop=report.minimum_detectable_drop,
        latency_change=report.p95_latency_delta_ms,
        settings=settings,
        store_uri=store_uri,
        traffic=traffic_view(
            evaluation.weighted,
            evaluation.baseline_weighted,
            dict(report.weighted_deltas) if report.verdict in JUDGED else None,
            report.weighted_gate,
            evaluation.run.cutoffs,
            _stored_weighted(evaluation),
        ),
        baseline_labels=evaluation.baseline.labels if evaluation.baseline is not None else None,
    )


def _stored_weighted(evaluation: Evaluation) -> WeightedFigures | None:
    """The baseline's traffic-weighted figures as stored, when the check compared it rescored (its
    weighted figures beside the changes are then the rescored ones); None otherwise."""
    rescoring, weighted = evaluation.report.rescored_baseline, evaluation.weighted
    if rescoring is None or weighted is None or evaluation.baseline_weighted is None:
        return None
    return weighted_figures(rescoring.stored, weighted.traffic)


def evaluation_document(view: EvaluationView, streamed: bool = False) -> dict[str, Any]:
    """`set_changes` is there whenever a baseline was found, so a reader can tell what was compared.
    `streamed`: the per-question rows as `QuestionRows`, for a writer that never holds them all."""
    rows = QuestionRows(view.run.result)
    document = {
        **documents.run_summary(view.run),
        "store": view.store_uri,
        "questions": rows if streamed else list(rows),
        "baseline_policy": view.settings.baseline_policy.value,
        "regression": regression_document(view, view.settings.tolerances),
    }
    if view.set_changes is not None:
        document["set_changes"] = documents.set_changes(view.set_changes)
    if view.traffic is not None:
        document["traffic"] = view.traffic.to_dict()
    return document


def regression_document(view: EvaluationView, tolerances: Tolerances) -> dict[str, Any]:
    verdict, tested = view.verdict, view.run.tested
    return {
        "verdict": verdict.status,
        "has_baseline": verdict.has_baseline,
        "baseline_run_id": verdict.baseline_run_id,
        "baseline_labels": view.baseline_labels,
        **documents.baseline_figures(view.run),
        **{f"{row.key}_delta": row.checked for row in tested},
        "is_regression": verdict.is_regression,
        "summary": verdict.sentence,
        "flipped_to_miss": list(view.flipped_to_miss),
        "flipped_to_hit": list(view.flipped_to_hit),
        "unjudged_lost_hits": list(view.unjudged_lost_hits),
        "unjudged_could_clear": view.unjudged_could_clear,
        **{f"by_{b.name}": documents.group_changes(b) for b in view.run.listed},
        **{f"{row.key}_p_value": row.p_value for row in tested},
        "is_inconclusive": verdict.is_inconclusive,
        "slice_tests": documents.slice_tests(view.slice_tests),
        "significance": view.slice_tests.significance,
        "minimum_detectable_drop": view.minimum_detectable_drop,
        "metric_deltas": {row.key: row.checked for row in view.run.ranking_changes},
        "p95_latency_delta_ms": view.latency_change,
        "excluded_unstable": list(view.excluded_unstable),
        "tolerances": tolerances.as_dict(),
    }


FLIPPED_LISTED = 20


def markdown_summary(view: EvaluationView, note: str | None = None) -> str:
    """`note`: a line under the verdict, e.g. that the run's own check found otherwise at the time."""
    run = view.run.result
    lines = [
        f"### Retrieval quality: `{run.set_identifier}` × `{run.retriever_identifier}`",
        "",
        f"**{view.verdict.label}**: {view.verdict.sentence}",
        *([f"_{note}_"] if note else []),
        "",
        "| metric | this run | baseline | change |",
        "|---|---:|---:|---:|",
        *[f"| {row.name} | {row.now_text} | {row.baseline_text} | {row.change_text} |" for row in view.reported],
        "",
        *_weighted_table(view),
        _run_line(view),
        *_approximate_lines(run),
    ]
    if view.set_change_line:
        lines += ["", view.set_change_line]
    if view.verdict.judged and (view.flipped_to_miss or view.flipped_to_hit):
        lines += [
            "",
            f"Flipped hit → miss ({view.lost_hits_count}): {id_list(view.flipped_to_miss, FLIPPED_LISTED)}  ",
            f"Flipped miss → hit ({len(view.flipped_to_hit)}): {id_list(view.flipped_to_hit, FLIPPED_LISTED)}",
        ]
    if view.run.conversations_text:
        lines += ["", f"Conversations: {view.run.conversations_text}."]
    for breakdown in view.run.breakdowns:
        lines += ["", f"<details><summary>{breakdown.title}</summary>", "", *_group_table(breakdown), "", "</details>"]
    return "\n".join(lines) + "\n"


def _weighted_table(view: EvaluationView) -> list[str]:
    """The traffic-weighted figures under the plain ones, when a query log weighed the run."""
    if view.traffic is None:
        return []
    return [
        view.traffic.sentence,
        "",
        "| traffic-weighted | this run | baseline | change |",
        "|---|---:|---:|---:|",
        *[f"| {row.name} | {row.now_text} | {row.baseline_text} | {row.change_text} |" for row in view.reported_weighted],
        "",
    ]


def _group_table(breakdown: Breakdown) -> list[str]:
    headings = "".join(f" {figure.title} | Δ {figure.title} |" for figure in breakdown.figures)
    return [
        f"| group | questions |{headings}",
        "|---|---:|" + "---:|---:|" * len(breakdown.figures),
        *[
            f"| {row.key} | {row.questions} |" + "".join(f" {cell.text} | {cell.change_text} |" for cell in row.rates)
            for row in breakdown.rows
        ],
    ]


def _approximate_lines(run: RunResult) -> list[str]:
    """The approximate search's statement, bold, under the run line; nothing for an exact run."""
    return ["", f"**{run.approximation.sentence}**"] if run.approximation else []


def _run_line(view: EvaluationView) -> str:
    run, baseline_run_id = view.run.result, view.verdict.baseline_run_id
    errors = f", {len(run.errored_question_ids)} errored" if run.errored_question_ids else ""
    against = f", compared with run `{baseline_run_id}`" if baseline_run_id is not None else ""
    asked = f", turns asked as {run.query_mode}" if run.query_mode != "current" else ""
    return (
        f"Run `{run.run_id}` ({run.run_at:%Y-%m-%d %H:%M} UTC, {run.question_count} questions{errors}, "
        f"labels {run.labels}{asked}){against}."
    )
