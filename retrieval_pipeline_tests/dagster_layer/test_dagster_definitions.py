"""The code location loads, and its definitions are wired as documented: partitions from the
configuration, one-dimension dependencies, a partitioned check, jobs, schedule, sensor, instance files."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from dagster import (
    AssetCheckKey,
    AssetKey,
    AssetSelection,
    AutomationCondition,
    AutomationConditionSensorDefinition,
    DagsterInstance,
    Definitions,
    MultiPartitionsDefinition,
    MultiToSingleDimensionPartitionMapping,
    asset,
    multiprocess_executor,
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
    defs,
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
    sets = {key.split("|")[1] for key in partitions.get_partition_keys()}
    assert sets == {"demo.cranfield", "demo.conversations"}


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


def test_the_standalone_location_runs_every_job_in_process_and_the_component_leaves_the_executor_to_its_host(
    project, monkeypatch
):
    """One partition and one step a run: a child process per step would only repeat the imports. A host
    project's own executor would clash with one the component brought."""
    monkeypatch.setenv("RETRIEVAL_EVAL_CONFIG", str(project.config))
    standalone = defs()
    assert {standalone.resolve_job_def(job).executor_def.name for job in (SETS_JOB, RETRIEVERS_JOB, EVALUATION_JOB)} == {
        "in_process"
    }
    assert build_definitions(project.config).executor is None


def test_a_prefix_keeps_every_name_apart_so_two_instances_load_beside_a_hosts_own(project):
    """The host's own `leaderboard`, executor and automation sensor, and two instances of two configurations."""
    host_leaderboard = asset(name="leaderboard", group_name="host", automation_condition=AutomationCondition.eager())(
        lambda: None
    )
    host = Definitions(
        assets=[host_leaderboard],
        executor=multiprocess_executor,
        sensors=[AutomationConditionSensorDefinition("host_automation", target=AssetSelection.groups("host"))],
    )
    search = build_definitions(project.config, prefix="search")
    merged = Definitions.merge(host, search, build_definitions(prefix="demo"))
    Definitions.validate_loadable(merged)

    repository = search.get_repository_def()
    assert {key.path[0] for key in repository.asset_graph.get_all_asset_keys()} == {"search"}
    assert AssetCheckKey(AssetKey(["search", "retrieval_evaluation"]), "no_regression") in repository.asset_graph.asset_check_keys
    named = [job.name for job in search.jobs] + [sensor.name for sensor in search.sensors] + list(search.resources)
    assert all(name.startswith("search_") for name in named + [schedule.name for schedule in search.schedules])
    automation = search.resolve_sensor_def("search_retrieval_automation")
    assert automation.asset_selection.resolve(merged.resolve_asset_graph()) == repository.asset_graph.get_all_asset_keys()


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


def test_the_location_nightly_serves_for_its_own_runs_has_no_automation_sensor_to_launch_them_twice(monkeypatch):
    from dagster import AutomationConditionSensorDefinition

    from retrieval_pipeline.dagster_layer.definitions import NIGHTLY_SERVER_ENV_VAR, defs

    def automation_sensors(definitions):
        return [s.name for s in definitions.sensors if isinstance(s, AutomationConditionSensorDefinition)]

    served_for_the_ui = automation_sensors(defs())
    monkeypatch.setenv(NIGHTLY_SERVER_ENV_VAR, "1")
    served_for_the_night = automation_sensors(defs())

    assert served_for_the_ui == ["retrieval_automation"] and served_for_the_night == []
