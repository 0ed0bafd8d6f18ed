"""Generated questions in Dagster, on a real instance: `generated_questions` writes a generator's candidates
on demand, and `generated_set_agreement` and its check compare the rankings of a set's human and
generated questions from stored runs."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from chart_helpers import png_size
from click.testing import CliRunner
from dagster import AssetCheckSeverity, AssetKey, materialize
from dagster_runs import QUIET, only_check, only_materialization, run_job

TESTS = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(TESTS / "generators"), str(TESTS / "judges")]  # the generator tests' demo projects
from generated_apart_project import RETRIEVERS, apart_project, judged_candidates, run_all  # noqa: E402

from retrieval_pipeline.cli import main  # noqa: E402
from retrieval_pipeline.core.services.labels.judging_files import read_judging_file  # noqa: E402
from retrieval_pipeline.dagster_layer.definitions import GENERATED_AGREEMENT_JOB, build_definitions  # noqa: E402
from retrieval_pipeline.dagster_layer.names import GENERATION_ASSET, PROJECT_RESOURCE, Names  # noqa: E402
from retrieval_pipeline.dagster_layer.resources import RetrievalProject  # noqa: E402
from retrieval_pipeline.dagster_layer.traffic.generated import build_generated_questions  # noqa: E402

SET = "demo.cranfield"


def cli(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def values(materialization) -> dict:
    return {key: value.value for key, value in materialization.metadata.items()}


def generate(config: Path, instance, **run_config):
    return materialize(
        [build_generated_questions(Names())],
        instance=instance,
        resources={PROJECT_RESOURCE: RetrievalProject(config_path=str(config))},
        run_config={"ops": {GENERATION_ASSET: {"config": run_config}}, **QUIET},
        raise_on_error=False,
    )


def test_generated_questions_writes_the_extractive_generators_candidates_and_counts_them(tmp_path, instance):
    config = apart_project(tmp_path)
    wanted = {"question_set": SET, "generator": "extractive", "count": 8, "source": "corpus", "out": "candidates.jsonl"}

    result = generate(config, instance, **wanted)

    assert result.success
    metadata = values(only_materialization(result))
    rows = read_judging_file(tmp_path / "candidates.jsonl")
    candidates = {row["question_id"] for row in rows}
    assert metadata["file"] == str(tmp_path / "candidates.jsonl") and metadata["rows"] == len(rows)
    assert metadata["candidates"] == len(candidates) and metadata["candidates"] + metadata["dropped"] == 8
    assert metadata["generated_by"] == rows[0]["generated_by"] and metadata["generated_by"].startswith("extractive@")
    assert (metadata["from"], metadata["requests"], metadata["errors"]) == ("corpus", 8, 0)
    dropped = {record.data["reason"]: record.data["candidates"] for record in metadata["dropped_by_reason"].records}
    assert sum(dropped.values()) == metadata["dropped"] and "near-duplicate of another candidate" in dropped
    texts = {row["question"] for row in rows}
    assert not any(text in repr(metadata) for text in texts)  # counts, never a question


def test_generated_questions_refuses_a_file_people_have_started_answering(tmp_path, instance):
    config = apart_project(tmp_path)
    judged = judged_candidates(cli, config, count=4)
    before = judged.read_text(encoding="utf-8")

    result = generate(config, instance, question_set=SET, generator="extractive", count=4, source="corpus", out=judged.name)

    assert not result.success
    failure = next(event for event in result.all_events if event.is_step_failure)
    assert "nobody has started answering" in failure.step_failure_data.error.message
    assert judged.read_text(encoding="utf-8") == before


def test_an_unknown_generator_fails_the_step_in_one_line_naming_the_known_ones(tmp_path, instance):
    config = apart_project(tmp_path)

    result = generate(config, instance, question_set=SET, generator="nope", count=2, source="corpus", out="out.jsonl")

    assert not result.success and not (tmp_path / "out.jsonl").exists()
    failure = next(event for event in result.all_events if event.is_step_failure)
    assert failure.step_failure_data.error.message.strip().endswith("unknown generator 'nope'; available: extractive")


def test_a_set_without_generated_questions_says_so_and_its_check_passes(tmp_path, instance):
    defs = build_definitions(apart_project(tmp_path))

    result = run_job(defs, instance, GENERATED_AGREEMENT_JOB, SET)

    metadata = values(only_materialization(result))
    assert metadata["generated_questions"] == 0 and metadata["agreement"].startswith("No generated questions")
    assert only_check(result).passed


@pytest.mark.slow
def test_the_agreement_warns_when_the_generated_questions_turn_the_top1_order_over(tmp_path, instance):
    config = apart_project(tmp_path)
    applied = cli("judge", "apply", str(judged_candidates(cli, config)), str(tmp_path / "set.yaml"), "--config", str(config))
    assert applied.exit_code == 0, applied.stderr
    run_all(cli, config)
    defs = build_definitions(config)

    result = run_job(defs, instance, GENERATED_AGREEMENT_JOB, SET)

    metadata = values(only_materialization(result))
    assert metadata["generated_questions"] >= 2 and metadata["counted"].startswith("no: kept apart in demo.cranfield.generated")
    assert metadata["reached"] is False and metadata["threshold"] == 0.8
    for measure in ("top1", "top3", "ndcg@10"):
        low, high = metadata[f"{measure}_tau_low"], metadata[f"{measure}_tau_high"]
        assert -1 <= low <= high <= 1 and metadata[f"{measure}_tau"].endswith(("is below 0.8", "reaches 0.8"))
    assert metadata["top1_tau_low"] < 0.8
    assert [record.data["retriever"] for record in metadata["differences"].records] == list(RETRIEVERS)
    assert metadata["rankings_chart"].startswith("![") and png_size(metadata["rankings_chart"])[0] == 720  # a real PNG
    check = only_check(result)
    assert not check.passed and check.severity == AssetCheckSeverity.WARN
    assert check.metadata["top1_tau_low"].value == metadata["top1_tau_low"]
    assert "top1" in check.description and "below generation.min_tau 0.8" in check.description
    status = instance.get_latest_materialization_event(AssetKey("generated_set_agreement"))
    assert status is not None  # a warning never stops the materialization
