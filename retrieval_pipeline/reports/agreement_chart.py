"""The two rankings of a set's retrievers side by side, on its human questions and on its generated ones:
one panel per measure, each retriever's rank on the left (human) and on the right (generated) joined by a
line, so an order that turns over shows as crossing lines. The check is an order test (Kendall's tau), so
the chart draws ranks; each end names the retriever's score, since the levels differ far more than the
order (generated questions are easier). A small PNG for the Dagster UI's markdown metadata.
"""

from __future__ import annotations

from retrieval_pipeline.core.scoring.measures import figure_of
from retrieval_pipeline.core.scoring.stats.generated_agreement import MeasureAgreement
from retrieval_pipeline.core.services.generated.validation import GeneratedValidation
from retrieval_pipeline.reports.charts import COLOURS, DEEPEST, FIRST, OTHER_COLOURS, REGRESSED, new_figure, png_bytes

ROW_INCHES, TITLE_INCHES, BOTTOM_INCHES, TOP_INCHES = 0.3, 0.45, 0.4, 0.1
PALETTE = (COLOURS[FIRST], COLOURS[DEEPEST], *OTHER_COLOURS)


def agreement_chart_png(validation: GeneratedValidation) -> bytes:
    return png_bytes(agreement_chart(validation))


def agreement_chart(validation: GeneratedValidation):
    """The matplotlib figure of `agreement_chart_png`, for a test to look at its panels."""
    names = list(validation.runs)
    panels = len(validation.agreements)
    axes_height = ROW_INCHES * len(names) + 0.2
    height = TOP_INCHES + panels * (axes_height + TITLE_INCHES) + BOTTOM_INCHES
    figure, axes = new_figure(
        height,
        margins={
            "left": 0.02,
            "right": 0.98,
            "top": 1 - (TOP_INCHES + TITLE_INCHES) / height,
            "bottom": BOTTOM_INCHES / height,
            "hspace": TITLE_INCHES / axes_height,
        },
        panels=panels,
    )
    colours = {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(names)}
    for panel, agreement in zip(figure.axes, validation.agreements):
        _draw(panel, agreement, names, colours, validation.threshold)
    figure.axes[-1].set_xticks([0, 1], ["on the human questions", "on the generated questions"], fontsize=8)
    return figure


def _draw(axes, agreement: MeasureAgreement, names: list[str], colours: dict[str, str], threshold: float) -> None:
    figure = figure_of(agreement.measure)
    human, generated = _positions(agreement.human, names), _positions(agreement.generated, names)
    for name in names:
        ends = (human[name], generated[name])
        axes.plot([0, 1], ends, color=colours[name], marker="o", markersize=5, linewidth=2)
        axes.annotate(
            f"{_rank(agreement.human, name)}. {name}  {figure.text(agreement.human[name])}",
            (0, ends[0]),
            xytext=(-8, 0),
            textcoords="offset points",
            ha="right",
            va="center",
            fontsize=8,
        )
        axes.annotate(
            f"{_rank(agreement.generated, name)}. {name}  {figure.text(agreement.generated[name])}",
            (1, ends[1]),
            xytext=(8, 0),
            textcoords="offset points",
            ha="left",
            va="center",
            fontsize=8,
        )
    axes.set_xlim(-1.1, 2.1)  # room either side for a retriever's name and score
    axes.set_ylim(len(names) + 0.5, 0.5)  # rank 1 on top
    axes.set_yticks([])
    axes.tick_params(axis="x", length=0)
    for side in axes.spines.values():
        side.set_visible(False)
    tau = "n/a" if agreement.tau is None else f"{agreement.tau:+.2f}"
    low, high = agreement.interval
    below = not agreement.reaches(threshold)
    axes.set_title(
        f"{figure.title}: tau {tau}, 95% interval [{low:+.2f}, {high:+.2f}]; {agreement.gate_text(threshold)}",
        fontsize=9,
        loc="left",
        color=REGRESSED if below else "#333333",
    )


def _positions(scores, names: list[str]) -> dict[str, int]:
    """Where each retriever is drawn, 1 (the best score) on top; a tie keeps the configuration's order, so
    the lines stay apart."""
    order = sorted(names, key=lambda name: (-scores[name], names.index(name)))
    return {name: position for position, name in enumerate(order, start=1)}


def _rank(scores, name: str) -> int:
    """The rank a label shows: tied scores share one, as they count for Kendall's tau (neither ahead)."""
    return 1 + sum(1 for other in scores.values() if other > scores[name])
