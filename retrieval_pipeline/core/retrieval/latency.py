"""Latency figures under the name of what was measured.

A retriever asked one question at a time is timed per question, and its percentiles say how slow the
slow questions are. A retriever answering in batches is timed per batch: each question gets the batch
time over the batch size, so every percentile would be that one number. Such a run reports only the
mean per question, as `batch_mean`, and no percentile at all.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

PERCENTILES = (50, 90, 95, 99)
PER_QUESTION = "per_question"
BATCH_MEAN = "batch_mean"
MODES = (PER_QUESTION, BATCH_MEAN)


def check_mode(mode: str) -> None:
    if mode not in MODES:
        raise ValueError(f"latency_mode must be one of {', '.join(MODES)}, got {mode!r}")


def percentiles(mode: str, latencies: Sequence[float]) -> dict[str, float]:
    """Nearest-rank percentiles and the maximum, in milliseconds; none for questions timed in batches."""
    if not latencies or mode == BATCH_MEAN:
        return {}
    ordered = sorted(latencies)
    return {f"p{p}": ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)] for p in PERCENTILES} | {"max": ordered[-1]}


def summary(mode: str, latencies: Sequence[float]) -> dict[str, float]:
    """Percentiles when each question was timed, else `{"batch_mean": mean}`."""
    if mode == BATCH_MEAN:
        return {"batch_mean": sum(latencies) / len(latencies)} if latencies else {}
    return percentiles(mode, latencies)
