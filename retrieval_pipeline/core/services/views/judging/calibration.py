"""A calibration as `judge --calibrate` shows it: the JSON document and the terminal's lines."""

from __future__ import annotations

from typing import Any

from retrieval_pipeline.core.base.formatting import percent
from retrieval_pipeline.core.services.labels.calibration import Calibration


def calibration_document(calibration: Calibration) -> dict[str, Any]:
    agreement = calibration.agreement
    document: dict[str, Any] = {
        "rows": calibration.rows,
        "machine_only_rows": calibration.machine_only,
        "judged_by": list(calibration.judged_by),
        "n": agreement.n if agreement else 0,
        "width": calibration.width,
        "more_rows_for_width": calibration.more_rows,
    }
    if agreement is not None:
        confusion = agreement.confusion
        document |= {
            "kappa": agreement.kappa,
            "kappa_interval": None if agreement.low is None else [agreement.low, agreement.high],
            "confusion": {
                "human_yes_machine_yes": confusion.both_yes,
                "human_yes_machine_no": confusion.human_yes_machine_no,
                "human_no_machine_yes": confusion.human_no_machine_yes,
                "human_no_machine_no": confusion.both_no,
            },
            "human_yes_rate": agreement.human_yes_rate,
            "machine_yes_rate": agreement.machine_yes_rate,
            "precision": agreement.precision,
            "recall": agreement.recall,
        }
    ranking = calibration.ranking
    if ranking is not None:
        document["ranking"] = {
            "figure": ranking.figure,
            "scores": ranking.scores,
            "kendall_tau": ranking.tau,
            "left_out": [{"retriever": retriever, "why": why} for retriever, why in ranking.left_out],
        }
    elif calibration.ranking_note:
        document["ranking"] = {"note": calibration.ranking_note}
    return document


def calibration_lines(calibration: Calibration) -> list[str]:
    agreement = calibration.agreement
    judges = ", ".join(calibration.judged_by) or "no judge named"
    lines = [
        f"Calibration of {judges} on {agreement.n if agreement else 0} of {calibration.rows} rows with both a human and a machine answer"
    ]
    if agreement is None:
        return [*lines, "No row carries both answers: answer some rows the machine judged (--next N --out FILE)."]
    c = agreement.confusion
    kappa = "undefined (both gave one answer throughout)" if agreement.kappa is None else _kappa(agreement)
    lines += [
        f"  kappa {kappa}",
        "                 machine yes  machine no",
        f"  human yes      {c.both_yes:>11}  {c.human_yes_machine_no:>10}",
        f"  human no       {c.human_no_machine_yes:>11}  {c.both_no:>10}",
        f"  yes rate: human {percent(agreement.human_yes_rate)}, machine {percent(agreement.machine_yes_rate)}",
        f"  machine yes: precision {_share(agreement.precision)}, recall {_share(agreement.recall)} (against the human answers)",
    ]
    if calibration.more_rows is not None:
        more = calibration.more_rows
        target = f"under {calibration.width:g} wide"
        lines.append(
            f"  the interval is {target} already"
            if more == 0
            else f"  about {more} more human answers bring the interval {target}"
        )
    lines.append(f"  {calibration.machine_only} rows have a machine answer and no human one")
    ranking = calibration.ranking
    if ranking is not None:
        tau = "undefined (fewer than two retrievers, or all tied)" if ranking.tau is None else f"{ranking.tau:.3f}"
        lines.append(f"Ranking of retrievers by {ranking.figure}, human vs human+machine labels: Kendall's tau {tau}")
        for retriever, rate in ranking.scores["human"].items():
            lines.append(
                f"  {retriever}: {percent(rate)} (human), {percent(ranking.scores['human+machine'][retriever])} (human+machine)"
            )
        lines += [f"  {retriever} left out: {why}" for retriever, why in ranking.left_out]
    elif calibration.ranking_note:
        lines.append(f"Ranking of retrievers: {calibration.ranking_note}")
    return lines


def _kappa(agreement) -> str:
    return f"{agreement.kappa:.3f} (95% interval {agreement.low:.3f} to {agreement.high:.3f})"


def _share(value: float | None) -> str:
    return "n/a" if value is None else percent(value)
