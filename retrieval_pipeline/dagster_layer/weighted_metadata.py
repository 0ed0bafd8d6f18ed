"""An evaluation's traffic-weighted figures as Dagster metadata, beside the plain ones.

Only counts and shares: the log's name and checksum, how much traffic weighed the run, how many
questions got none, and the weighted figures; never a logged query (logs hold personal data). Nothing
at all for a run weighted by no log, so its metadata stays as it was.
"""

from __future__ import annotations

from typing import Any

from dagster import MetadataValue

from retrieval_pipeline.core.services.views.traffic_view import TrafficView


def weighted_metadata(view: TrafficView | None) -> dict[str, Any]:
    """`weighted_top1` as the text a person reads ("50.6%, 95% CI 25.2–75.7%") and `weighted_top1_value`
    as the float the UI plots, like the plain `top1` and `top1_hit_rate`."""
    if view is None:
        return {}
    metadata: dict[str, Any] = {
        "traffic": MetadataValue.text(view.sentence),
        "traffic_log": MetadataValue.text(view.log),
        "traffic_fingerprint": MetadataValue.text(view.fingerprint or "none"),
        "traffic_total": MetadataValue.int(view.total),
        "traffic_effective_questions": MetadataValue.float(round(view.effective_questions, 2)),
        "zero_traffic_questions": MetadataValue.int(len(view.zero_traffic)),
        "weighted_gate": MetadataValue.bool(view.gated),
    }
    for row in view.rows:
        metadata[f"weighted_{row.key}"] = MetadataValue.text(row.now_text)
        metadata[f"weighted_{row.key}_value"] = MetadataValue.float(round(row.value, 4))
        if row.change is not None:
            metadata[f"weighted_{row.key}_delta"] = MetadataValue.float(round(row.change, 4))
    return metadata
