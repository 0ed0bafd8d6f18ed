"""Estimates as `judge --calibrate --estimate` shows them: the JSON document and the terminal's lines."""

from __future__ import annotations

from typing import Any

from retrieval_pipeline.core.scoring.measures import figure_of
from retrieval_pipeline.core.scoring.stats.prediction_powered import Estimate
from retrieval_pipeline.core.services.labels.estimates import Estimates


def estimates_document(estimates: Estimates) -> dict[str, Any]:
    return {
        "labelled_questions": list(estimates.labelled),
        "pooled_questions": estimates.pooled,
        "questions": estimates.questions,
        "retrievers": {
            retriever.retriever: {
                figure.figure: {
                    "human_only": _estimate(figure.human_only),
                    "machine_filled": figure.machine_filled,
                    "prediction_powered": _estimate(figure.powered),
                }
                for figure in retriever.figures
            }
            for retriever in estimates.retrievers
        },
        "left_out": [{"retriever": retriever, "why": why} for retriever, why in estimates.left_out],
    }


def estimates_lines(estimates: Estimates) -> list[str]:
    lines = [
        f"Estimates: {len(estimates.labelled)} of {estimates.pooled} pooled questions human-labelled on every row "
        f"({estimates.questions} questions in the set); 95% intervals"
    ]
    for retriever in estimates.retrievers:
        lines.append(f"  {retriever.retriever}")
        for figure in retriever.figures:
            lines.append(
                f"    {figure.figure}: human only {_text(figure.figure, figure.human_only)}; "
                f"machine-filled {figure_of(figure.figure).text(figure.machine_filled)}; "
                f"prediction-powered {_text(figure.figure, figure.powered)}"
            )
    lines += [f"  {retriever} left out: {why}" for retriever, why in estimates.left_out]
    return lines


def _estimate(estimate: Estimate) -> dict[str, Any]:
    interval = None if estimate.low is None else [estimate.low, estimate.high]
    return {"value": estimate.value, "interval": interval, "labelled": estimate.labelled, "questions": estimate.total}


def _text(name: str, estimate: Estimate) -> str:
    text = figure_of(name).text
    if estimate.low is None:
        return f"{text(estimate.value)} (no interval: too few questions)"
    return f"{text(estimate.value)} ({text(estimate.low)} to {text(estimate.high)})"
