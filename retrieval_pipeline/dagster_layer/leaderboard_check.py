"""The check on the `leaderboard`: every configured pair's latest verdict passes.

The per-pair `no_regression` check is partitioned, and the asset catalog shows a partitioned check by
its latest execution of one partition: after a night in which one pair of many regressed, the catalog
stayed green. This check is unpartitioned, on the asset that already stands for all pairs, and is
evaluated whenever the leaderboard refreshes (after each batch of evaluations), so a failed pair shows
on the catalog page. Its verdicts are the stored ones (core `latest_verdicts`), never recomputed here,
so it and the per-pair checks cannot disagree. It fails with the configured `dagster.check_severity`,
and is not blocking: the leaderboard is still worth reading on a bad night.
"""

from __future__ import annotations

from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetCheckSpec,
    TableColumn,
    TableSchema,
)

from retrieval_pipeline.core.services.pair_verdicts import PairVerdicts
from retrieval_pipeline.dagster_layer.io_manager import LEADERBOARD
from retrieval_pipeline.dagster_layer.metadata import table

LEADERBOARD_CHECK = "every_pair_passes"

PAIRS_SCHEMA = TableSchema(
    columns=[
        TableColumn("set", "string"),
        TableColumn("retriever", "string"),
        TableColumn("verdict", "string", description="The latest run's stored verdict"),
        TableColumn("sentence", "string", description="What the pair's no_regression check said"),
        TableColumn("run_id", "string"),
    ]
)


def leaderboard_check_spec() -> AssetCheckSpec:
    return AssetCheckSpec(
        LEADERBOARD_CHECK,
        asset=LEADERBOARD,
        description="Every configured set and retriever pair passed its latest no_regression check. A failure "
        "names each regressed or incomplete pair with its verdict; refreshed with the leaderboard.",
    )


def leaderboard_check_result(verdicts: PairVerdicts, severity: str) -> AssetCheckResult:
    failed = verdicts.failed
    pairs = (
        {
            "set": v.set_identifier,
            "retriever": v.retriever_identifier,
            "verdict": v.status,
            "sentence": v.sentence,
            "run_id": v.run_id or "",
        }
        for v in verdicts.verdicts
    )
    return AssetCheckResult(
        check_name=LEADERBOARD_CHECK,
        passed=verdicts.passed,
        # A pair not comparable, inconclusive or not evaluated yet: passed, flagged WARN, as its own check is.
        severity=AssetCheckSeverity(severity) if failed else AssetCheckSeverity.WARN,
        description=verdicts.sentence,
        metadata={
            "failed_pairs": "; ".join(f"{v.pair} ({v.status}): {v.sentence}" for v in failed) or "none",
            "failed_pair_count": f"{len(failed)} of {len(verdicts.verdicts)}",
            "flagged_pairs": ", ".join(f"{v.pair} ({v.status})" for v in verdicts.warned) or "none",
            "pairs": table(PAIRS_SCHEMA, pairs),
        },
    )
