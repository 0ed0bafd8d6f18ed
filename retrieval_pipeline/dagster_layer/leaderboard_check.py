"""The check on the `leaderboard`: every configured pair's latest verdict passes.

The catalog shows a partitioned check by its latest execution of one partition, so after a night in
which one pair of many regressed it stayed green; this check is unpartitioned, on the asset that stands
for all pairs, so a failed pair shows on the catalog page. Its verdicts are the stored ones (core
`latest_verdicts`), never recomputed, so it and the per-pair checks cannot disagree. Not blocking: the
leaderboard is still worth reading on a bad night.
"""

from __future__ import annotations

from dagster import AssetCheckResult, AssetCheckSeverity, AssetCheckSpec, AssetKey

from retrieval_pipeline.core.services.evaluation.pair_verdicts import PairVerdicts
from retrieval_pipeline.dagster_layer.metadata.regression import pair_verdicts_metadata
from retrieval_pipeline.dagster_layer.metadata.values import typed

LEADERBOARD_CHECK = "every_pair_passes"


def leaderboard_check_spec(leaderboard: AssetKey) -> AssetCheckSpec:
    return AssetCheckSpec(
        LEADERBOARD_CHECK,
        asset=leaderboard,
        description="Every configured set and retriever pair passed its latest no_regression check. A failure "
        "names each regressed or incomplete pair with its verdict; refreshed with the leaderboard.",
    )


def leaderboard_check_result(verdicts: PairVerdicts, severity: str) -> AssetCheckResult:
    return AssetCheckResult(
        check_name=LEADERBOARD_CHECK,
        passed=verdicts.passed,
        # A pair not comparable, inconclusive or not evaluated yet: passed, flagged WARN, as its own check is.
        severity=AssetCheckSeverity(severity) if verdicts.failed else AssetCheckSeverity.WARN,
        description=verdicts.sentence,
        metadata=typed(pair_verdicts_metadata(verdicts)),
    )
