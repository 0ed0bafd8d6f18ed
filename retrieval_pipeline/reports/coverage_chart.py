"""The history of a log's covered share (one point per `coverage` materialization), drawn like the rates'
history: a small PNG for the Dagster UI's markdown metadata, with the `coverage.min_share` line under
which the check warns."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from retrieval_pipeline.reports.charts import COLOURS, FIRST, MAX_DATE_LABELS, REGRESSED, new_figure, png_bytes, run_labels


def coverage_history_png(times: Sequence[datetime], shares: Sequence[float], min_share: float, title: str) -> bytes:
    figure, axes = new_figure(3.0, margins={"left": 0.08, "right": 0.97, "top": 0.9, "bottom": 0.2})
    xs = range(len(shares))
    axes.plot(list(xs), [100 * share for share in shares], color=COLOURS[FIRST], marker="o", markersize=4, label="covered")
    below = [(x, share) for x, share in zip(xs, shares) if share < min_share]
    if below:
        axes.plot([x for x, _ in below], [100 * s for _, s in below], "X", color=REGRESSED, markersize=8, label="below min_share")
    axes.axhline(100 * min_share, color="#555555", linestyle="--", linewidth=1, label=f"min_share {100 * min_share:g}%")
    every = -(-len(times) // MAX_DATE_LABELS)
    labels = run_labels(list(times))
    axes.set_xticks(list(xs), [label if x % every == 0 else "" for x, label in enumerate(labels)], fontsize=7)
    axes.set_xlim(-0.5, max(len(shares) - 0.5, 0.5))
    axes.set_ylim(0, 105)
    axes.set_ylabel("traffic covered (%)", fontsize=8)
    axes.grid(axis="y", alpha=0.3)
    axes.legend(fontsize=7, loc="lower left", frameon=False)
    axes.set_title(title, fontsize=10, y=1.0)
    return png_bytes(figure)
