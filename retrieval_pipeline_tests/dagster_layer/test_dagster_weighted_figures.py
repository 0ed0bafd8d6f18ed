"""Traffic-weighted figures in the evaluation's Dagster metadata, materialized in-process on a real
instance: from the set's `traffic:` entry, or from `nightly --traffic` (the project resource's
`traffic_log`); counts and figures only, never a logged query."""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from dagster import AssetKey, MultiPartitionKey, materialize
from dagster_runs import QUIET
from traffic_project import SECRET, logged_project

from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore
from retrieval_pipeline.dagster_layer.definitions import build_definitions

SET = "demo.cranfield"


@pytest.fixture
def logged(tmp_path, shared_data):
    return logged_project(tmp_path, shared_data)


def evaluate(defs, instance):
    result = materialize(
        list(defs.assets),
        instance=instance,
        resources=dict(defs.resources),
        partition_key=MultiPartitionKey({"set": SET, "retriever": "bm25"}),
        selection=[AssetKey("retrieval_evaluation")],
        run_config=QUIET,
    )
    [materialization] = result.get_asset_materialization_events()
    return materialization.materialization.metadata


def numpy_weighted_top(store_uri: str, traffic, k: int) -> float:
    """Each stored question's hit at k (read back from the run's Parquet), weighted by the known traffic."""
    store = ResultStore(store_uri)
    run = store.load(store.history(HistoryKey(SET, "bm25"))[0])
    hits = np.array([question.hit_at(k) for question in run.questions], float)
    return float(np.average(hits, weights=[traffic.by_question[i] for i in run.questions.ids]))


def test_the_evaluation_metadata_carries_the_weighted_figures_of_the_sets_log(logged, instance):
    config, traffic = logged
    data = yaml.safe_load(config.read_text())
    data["question_sets"][0]["traffic"] = "traffic"
    config.write_text(yaml.safe_dump(data))

    metadata = evaluate(build_definitions(config), instance)

    for k in (1, 3):
        assert metadata[f"weighted_top{k}_value"].value == round(numpy_weighted_top(data["store"], traffic, k), 4)
        assert metadata[f"weighted_top{k}"].value.endswith("%") and "95% CI" in metadata[f"weighted_top{k}"].value
    silent = sum(1 for count in traffic.by_question.values() if count == 0)
    assert metadata["zero_traffic_questions"].value == silent
    assert metadata["traffic_total"].value == traffic.total - traffic.off_topic
    assert metadata["traffic_log"].value == "traffic" and metadata["weighted_gate"].value is False
    assert all(SECRET not in str(value.value) for value in metadata.values())


def test_a_log_given_to_the_definitions_weighs_a_set_that_names_none(logged, instance):
    config, traffic = logged
    plain = evaluate(build_definitions(config), instance)
    assert not any(key.startswith(("weighted_", "traffic")) for key in plain)

    weighted = evaluate(build_definitions(config, traffic_log="traffic"), instance)

    store = yaml.safe_load(config.read_text())["store"]
    assert weighted["weighted_top3_value"].value == round(numpy_weighted_top(store, traffic, 3), 4)
    assert weighted["weighted_top1_delta"].value == 0.0  # the same retriever again, weighed by the same traffic
