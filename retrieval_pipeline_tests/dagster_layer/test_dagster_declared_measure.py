"""A measure declared once (scoring/measures.py), with no other edit, is in the evaluation's Dagster
metadata and in its check's, materialized in-process."""

from __future__ import annotations

import pytest
from dagster import AssetKey, MultiPartitionKey, materialize
from dagster_runs import QUIET, failure_metadata
from dagster_test_project import degraded, write_project
from measure_helpers import declare, throwaway_measure

from retrieval_pipeline.dagster_layer.definitions import build_definitions


@pytest.fixture
def throwaway(monkeypatch):
    """`throwaway@3` (0.5 a question hit within the cut-off), declared beside the built-in measures."""
    declare(monkeypatch, throwaway_measure())


def evaluate(defs, instance):
    """The figures of a passed pair's materialization, or of a failed pair's failure."""
    result = materialize(
        list(defs.assets),
        instance=instance,
        resources=dict(defs.resources),
        partition_key=MultiPartitionKey({"set": "alpha", "retriever": "good"}),
        selection=[AssetKey("retrieval_evaluation")],
        run_config=QUIET,
        raise_on_error=False,
    )
    [check] = result.get_asset_check_evaluations()
    if not result.success:
        return failure_metadata(result), check.metadata
    [materialization] = result.get_asset_materialization_events()
    return materialization.materialization.metadata, check.metadata


def test_a_declared_measure_is_in_the_evaluation_and_check_metadata(tmp_path, instance, throwaway):
    project = write_project(tmp_path / "project", sets=("alpha",), retrievers=("good",))
    defs = build_definitions(project.config)
    evaluate(defs, instance)
    project.write_run("good", degraded("a3"))

    metadata, check = evaluate(defs, instance)

    # a1-a5 score 0.5 but the degraded a3; a6 expects silence and gets it, which scores 1 on every measure.
    assert metadata["throwaway@3"].value == round(3 / 6, 3)
    assert check["throwaway@3_change"].value == "-0.083"
