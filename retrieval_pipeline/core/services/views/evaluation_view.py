"""An evaluation (a run, its check's report and its baseline) as one view: the verdict, the figure rows
against the baseline, the flipped questions, the set changes and the paired tests, each shaped once for
the terminal, the JSON, the reports and the Dagster metadata."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from retrieval_pipeline.core.base.formatting import points, signed_milliseconds
from retrieval_pipeline.core.scoring.set_versions import SetChanges
from retrieval_pipeline.core.scoring.traffic import WeightedFigures, weighted_figures
from retrieval_pipeline.core.scoring.verdicts import RegressionReport, Verdict
from retrieval_pipeline.core.services.settings import EvaluationSettings
from retrieval_pipeline.core.services.views.figure_rows import FigureRow, LatencyRow
from retrieval_pipeline.core.services.views.run_view import JUDGED, RunView, edited, run_view
from retrieval_pipeline.core.services.views.slice_rows import SliceTests, slice_tests
from retrieval_pipeline.core.services.views.traffic_view import TrafficView, traffic_view

if TYPE_CHECKING:
    from retrieval_pipeline.core.services.evaluation import Evaluation

PAIRED = (*JUDGED, Verdict.INCONCLUSIVE)
"""Verdicts reached by comparing the runs question by question (flips, p-values, slice tests)."""
FAILING = frozenset({Verdict.REGRESSION, Verdict.INCOMPLETE})
"""Verdicts that fail a check: a regression, or a run that cannot be compared because questions failed."""
WARNED = frozenset({Verdict.NOT_COMPARABLE, Verdict.INCONCLUSIVE})
"""Verdicts that pass a check, flagged: not comparable, or a drop the set cannot tell from noise."""


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
        from retrieval_pipeline.core.services.views.documents import evaluation

        return evaluation(self, streamed)

    def to_markdown(self, note: str | None = None) -> str:
        """The short summary for a CI job summary or a pull-request comment (`run --markdown`)."""
        from retrieval_pipeline.core.services.views.markdown import markdown_summary

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
