"""The code location loads, and its definitions are wired as documented: partitions from the
configuration, one-dimension dependencies, a partitioned check, jobs, schedule, sensor, instance files."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from dagster import (
    AssetCheckKey,
    AssetKey,
    DagsterInstance,
    Definitions,
    MultiPartitionsDefinition,
    MultiToSingleDimensionPartitionMapping,
)
from dagster_test_project import RETRIEVERS, SETS

from retrieval_pipeline.cli.dagster_home import DEFAULT_INSTANCE_YAML
from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.dagster_layer.definitions import (
    EVALUATION_JOB,
    LEADERBOARD_JOB,
    RETRIEVERS_JOB,
    SETS_JOB,
    build_definitions,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
EVALUATION = AssetKey("retrieval_evaluation")
CHECK = AssetCheckKey(EVALUATION, "no_regression")


def test_the_module_target_loads_lazily_and_validates(monkeypatch, project):
    """`dagster dev` loads `retrieval_pipeline.definitions`; $RETRIEVAL_EVAL_CONFIG picks the configuration."""
    monkeypatch.setenv("RETRIEVAL_EVAL_CONFIG", str(project.config))
    from retrieval_pipeline import definitions

    loaded = definitions.defs()
    assert isinstance(loaded, Definitions)
    Definitions.validate_loadable(loaded)
    assert set(loaded.resolve_all_asset_keys()) == {
        AssetKey("golden_question_set"),
        AssetKey("retriever_config"),
        EVALUATION,
        AssetKey("leaderboard"),
        AssetKey("label_audit"),
        AssetKey("generated_set_agreement"),
        AssetKey("machine_judgements"),
        AssetKey("generated_questions"),
    }
    for job in (SETS_JOB, RETRIEVERS_JOB, EVALUATION_JOB, LEADERBOARD_JOB):
        assert loaded.resolve_job_def(job).name == job
    assert loaded.resolve_schedule_def("nightly_retrieval_evaluation").job_name == EVALUATION_JOB
    assert loaded.resolve_sensor_def("index_version_sensor")


def test_the_embedded_demo_is_the_default_configuration(monkeypatch):
    monkeypatch.delenv("RETRIEVAL_EVAL_CONFIG", raising=False)
    from retrieval_pipeline.definitions import defs

    demo = defs()
    partitions = demo.resolve_assets_def(EVALUATION).partitions_def
    assert partitions.get_partition_keys() and all("demo.cranfield" in key for key in partitions.get_partition_keys())


def test_partitions_are_the_configured_sets_and_retrievers(defs):
    assert defs.resolve_assets_def("golden_question_set").partitions_def.get_partition_keys() == list(SETS)
    assert defs.resolve_assets_def("retriever_config").partitions_def.get_partition_keys() == list(RETRIEVERS)
    evaluation = defs.resolve_assets_def(EVALUATION).partitions_def
    assert isinstance(evaluation, MultiPartitionsDefinition)
    keys = {(key.keys_by_dimension["set"], key.keys_by_dimension["retriever"]) for key in evaluation.get_partition_keys()}
    assert keys == {(s, r) for s in SETS for r in RETRIEVERS}


def test_each_evaluation_partition_depends_on_its_own_set_and_retriever_only(defs):
    graph = defs.resolve_asset_graph()
    evaluation = defs.resolve_assets_def(EVALUATION)
    for upstream, dimension in (("golden_question_set", "set"), ("retriever_config", "retriever")):
        mapping = evaluation.get_partition_mapping(AssetKey(upstream))
        assert isinstance(mapping, MultiToSingleDimensionPartitionMapping)
        assert mapping.partition_dimension_name == dimension
    key = evaluation.partitions_def.get_partition_key_from_str("other|beta.small")
    parents = graph.get_parents_partitions(graph.get(EVALUATION).key, key).parent_partitions
    assert {(p.asset_key.path[0], p.partition_key) for p in parents} == {
        ("golden_question_set", "beta.small"),
        ("retriever_config", "other"),
    }


def test_the_regression_check_is_partitioned_like_the_evaluation_and_runs_in_its_job(defs):
    """Preview feature: `AssetCheckSpec(partitions_def=...)`, so results are recorded per partition."""
    evaluation = defs.resolve_assets_def(EVALUATION)
    spec = evaluation.get_spec_for_check_key(CHECK)
    assert spec.partitions_def == evaluation.partitions_def
    assert CHECK in defs.resolve_job_def(EVALUATION_JOB).asset_layer.asset_graph.asset_check_keys


def test_an_invalid_configuration_fails_the_load_naming_the_file(tmp_path):
    bad = tmp_path / "config.yaml"
    bad.write_text("retrievers:\n  Bad-Name:\n    kind: lexical\n", encoding="utf-8")
    with pytest.raises(InvalidInputError, match="config.yaml"):
        build_definitions(bad)


def test_a_configuration_without_sets_or_retrievers_is_refused_clearly(tmp_path, project):
    empty = tmp_path / "empty.yaml"
    empty.write_text("question_sets: []\nretrievers: {}\n", encoding="utf-8")
    with pytest.raises(InvalidInputError, match="no question set is configured"):
        build_definitions(empty)


def test_every_run_executes_in_process_and_scales_out_through_the_run_launcher(project):
    """One partition and one step a run: a child process per step would only repeat the imports."""
    defs = build_definitions(project.config)
    assert {defs.resolve_job_def(job).executor_def.name for job in (SETS_JOB, RETRIEVERS_JOB, EVALUATION_JOB)} == {"in_process"}


@pytest.mark.slow
def test_the_local_instance_configuration_is_valid(tmp_path):
    """dagster.yaml: SQLite under DAGSTER_HOME (the default), telemetry off, two concurrent runs at most."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "dagster.yaml").write_text((REPO_ROOT / "dagster.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    with DagsterInstance.from_config(str(home)) as instance:
        assert instance.get_concurrency_config().run_queue_config.max_concurrent_runs == 2
        assert instance.telemetry_enabled is False
        assert type(instance.run_storage).__name__.startswith("Sqlite")
    assert yaml.safe_load((REPO_ROOT / "dagster.yaml").read_text()) == yaml.safe_load(DEFAULT_INSTANCE_YAML)


def test_the_workspace_file_points_at_the_definitions_module():
    workspace = yaml.safe_load((REPO_ROOT / "workspace.yaml").read_text(encoding="utf-8"))
    (entry,) = workspace["load_from"]
    assert entry["python_module"]["module_name"] == "retrieval_pipeline.definitions"
    assert entry["python_module"]["working_directory"] == "."
