"""The `machine_judgements` asset in a real ephemeral Dagster instance: on demand only, its metadata what the
pass did and cost, never a secret."""

from __future__ import annotations

import os

import pytest
import yaml
from chat_service import SECRET, TOKEN_VAR, ChatService
from dagster import DagsterInstance, materialize
from judge_helpers import numbered_rows, openai_judge
from local_servers import running

from retrieval_pipeline.core.services.labels.judging_files import read_judging_file, write_judging_file
from retrieval_pipeline.dagster_layer.definitions import EVALUATION_JOB, build_definitions
from retrieval_pipeline.dagster_layer.labels.judging import build_machine_judgements
from retrieval_pipeline.dagster_layer.names import JUDGING_ASSET, PROJECT_RESOURCE, Names
from retrieval_pipeline.dagster_layer.resources import RetrievalProject

ROWS = numbered_rows(6)


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.setenv(TOKEN_VAR, SECRET)
    monkeypatch.setenv("RETRIEVAL_EVAL_CACHE", str(tmp_path / "cache"))
    pools = tmp_path / "pools"
    pools.mkdir()
    older = write_judging_file(ROWS[:2], pools / "older.csv")
    os.utime(older, (1, 1))
    return tmp_path, write_judging_file(ROWS, pools / "latest.jsonl")


def run(tmp_path, judges: dict, file: str):
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"store": "store", "judges": judges}), encoding="utf-8")
    return materialize(
        [build_machine_judgements(Names())],
        instance=DagsterInstance.ephemeral(),
        resources={PROJECT_RESOURCE: RetrievalProject(config_path=str(config))},
        run_config={"ops": {JUDGING_ASSET: {"config": {"judge": "steady", "file": file}}}},
        raise_on_error=False,
    )


def test_the_asset_judges_the_newest_pool_of_a_folder_and_records_rows_yes_share_and_tokens_per_1000_rows(project):
    tmp_path, latest = project
    with running(ChatService(grader=None)) as server:
        result = run(tmp_path, {"steady": openai_judge(server.url("/v1/steady"))}, "pools")

    assert result.success
    (event,) = result.get_asset_materialization_events()
    metadata = {key: value.value for key, value in event.materialization.metadata.items()}
    judged_by = read_judging_file(latest)[0]["judged_by"]
    assert metadata["file"] == str(latest) and metadata["judged_by"] == judged_by and judged_by.startswith("steady@")
    assert (metadata["rows"], metadata["rows_judged"], metadata["errors"], metadata["yes_share"]) == (6, 6, 0, 1.0)
    assert metadata["tokens_per_1000_rows"] == 11_000.0  # each answer: 10 prompt tokens and 1 reply token
    assert server.asked == 6 and all(
        "machine_judgement" not in row for row in read_judging_file(tmp_path / "pools" / "older.csv")
    )
    assert SECRET not in repr(event.materialization.metadata)


def test_row_errors_are_counted_in_the_metadata_and_the_materialization_still_records(project):
    tmp_path, latest = project
    with running(ChatService(grader=None)) as server:
        result = run(tmp_path, {"steady": openai_judge(server.url("/v1/no-digit"))}, str(latest))

    assert result.success
    metadata = {key: value.value for key, value in result.get_asset_materialization_events()[0].materialization.metadata.items()}
    assert (metadata["rows_judged"], metadata["errors"], metadata["yes_share"], metadata["tokens_per_1000_rows"]) == (
        0,
        6,
        None,
        None,
    )


def test_a_judge_name_the_configuration_lacks_fails_the_step_in_one_line_naming_the_known_ones(project):
    tmp_path, latest = project
    result = run(tmp_path, {"words": {"kind": "callable", "function": "judge_functions:every_word"}}, str(latest))

    assert not result.success
    (failure,) = result.get_step_failure_events()
    assert failure.step_failure_data.user_failure_data.description == "unknown judge 'steady'; available: words"
    assert all("machine_judgement" not in row for row in read_judging_file(latest))


def test_no_job_schedule_or_sensor_of_the_project_selects_the_judging_asset(tmp_path, monkeypatch):
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path))
    defs = build_definitions()

    assert defs.resolve_assets_def(JUDGING_ASSET) is not None
    for job in defs.resolve_all_job_defs():
        if job.name != "__ASSET_JOB":
            assert JUDGING_ASSET not in {key.path[-1] for key in job.asset_layer.selected_asset_keys}, job.name
    assert JUDGING_ASSET not in {key.path[-1] for key in defs.resolve_job_def(EVALUATION_JOB).asset_layer.selected_asset_keys}


def agreement_of(tmp_path, min_kappa: float, min_rows: int):
    """Twelve rows people answered (yes for the first five), judged by word overlap; the check's result."""
    rows = [
        {**row, "judgement": "yes" if n < 5 else "no", "question": f"wing stall {n}", "text": text}
        for n, (row, text) in enumerate(
            zip(numbered_rows(12), ["wing stall at high angle"] * 4 + ["the wing"] * 3 + ["stall"] * 2 + ["engines"] * 3)
        )
    ]
    path = write_judging_file(rows, tmp_path / "calibrated.csv")
    config = tmp_path / "config.yaml"
    judges = {"words": {"kind": "callable", "function": "judge_functions:overlap_grade"}}
    judging = {"min_kappa": min_kappa, "min_calibration_rows": min_rows}
    config.write_text(yaml.safe_dump({"store": "store", "judges": judges, "judging": judging}), encoding="utf-8")
    result = materialize(
        [build_machine_judgements(Names())],
        instance=DagsterInstance.ephemeral(),
        resources={PROJECT_RESOURCE: RetrievalProject(config_path=str(config))},
        run_config={"ops": {JUDGING_ASSET: {"config": {"judge": "words", "file": str(path)}}}},
    )
    (evaluation,) = result.get_asset_check_evaluations()
    return evaluation, read_judging_file(path)


@pytest.mark.parametrize(("min_kappa", "min_rows", "passed"), [(0.1, 10, True), (0.9, 10, False), (0.1, 13, False)])
def test_the_agreement_check_warns_below_min_kappa_or_on_too_few_rows_with_sklearns_kappa(tmp_path, min_kappa, min_rows, passed):
    from sklearn.metrics import cohen_kappa_score

    evaluation, rows = agreement_of(tmp_path, min_kappa, min_rows)

    metadata = {key: value.value for key, value in evaluation.metadata.items()}
    expected = cohen_kappa_score([row["judgement"] for row in rows], [row["machine_judgement"] for row in rows])
    assert 0.1 < expected < 0.9
    assert metadata["kappa"] == pytest.approx(expected) and metadata["n"] == 12
    low, high = (float(bound) for bound in metadata["kappa_interval_95"].strip("[]").split(", "))
    assert low < expected < high
    assert (evaluation.passed, evaluation.severity.value) == (passed, "WARN")
