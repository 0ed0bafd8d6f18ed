"""The chart of a set's two rankings: a small real PNG, one panel per measure, each retriever's rank on the
human questions joined to its rank on the generated ones."""

from __future__ import annotations

from chart_helpers import png_size

from retrieval_pipeline.core.scoring.stats.generated_agreement import measure_agreement
from retrieval_pipeline.core.services.generated.validation import GeneratedValidation
from retrieval_pipeline.reports.agreement_chart import agreement_chart, agreement_chart_png

RETRIEVERS = ("bm25_stemmed", "bm25_plain", "bm25_titles")
HUMAN = {"bm25_stemmed": [1, 1, 0, 0], "bm25_plain": [1, 0, 0, 0], "bm25_titles": [1, 1, 1, 0]}
GENERATED = {"bm25_stemmed": [1, 1, 1, 0], "bm25_plain": [1, 1, 1, 1], "bm25_titles": [1, 0, 0, 0]}


def _validation() -> GeneratedValidation:
    """top-1 turned over (the demo's case), top-3 the same order on both (four questions: wide intervals)."""
    agreements = (
        measure_agreement("top1", HUMAN, GENERATED, resamples=200),
        measure_agreement("top3", HUMAN, HUMAN, resamples=200),
    )
    runs = {name: (f"{name}-human", f"{name}-generated") for name in RETRIEVERS}
    return GeneratedValidation("demo.cranfield", 4, 4, runs, agreements, 0.8)


def test_the_agreement_chart_is_a_small_png_as_wide_as_the_other_charts():
    png = agreement_chart_png(_validation())

    width, height = png_size(png)
    assert width == 720 and 250 < height < 500
    assert len(png) < 60_000


def test_each_measure_has_a_panel_whose_lines_join_each_retrievers_two_ranks():
    figure = agreement_chart(_validation())

    top1, top3 = figure.axes
    assert top1.get_title(loc="left").startswith("top-1: tau -1.00") and "below 0.8" in top1.get_title(loc="left")
    assert top3.get_title(loc="left").startswith("top-3: tau +1.00")
    ends = {tuple(line.get_ydata()) for line in top1.get_lines()}
    assert ends == {(2.0, 2.0), (3.0, 1.0), (1.0, 3.0)}  # titles first on human, last on generated; plain the reverse
    labels = [text.get_text() for text in top1.texts]
    assert "1. bm25_titles  75.0%" in labels and "1. bm25_plain  100.0%" in labels
