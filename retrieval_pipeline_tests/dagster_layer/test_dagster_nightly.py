"""`retrieval-eval nightly`: one run per partition on the local instance, leaderboard, verdicts, exit code."""

from __future__ import annotations

import io
import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from dagster import AssetKey, DagsterInstance
from dagster_test_project import RETRIEVERS, SETS, degraded
from printed_tables import assert_whole, figure_in, printed_table
from rich.console import Console

from retrieval_pipeline.cli.nightly import nightly, run_nightly
from retrieval_pipeline.core.services.configuration.lookup import demo_config_path

REPO_ROOT = Path(__file__).resolve().parents[2]
EVALUATION = AssetKey("retrieval_evaluation")


def run(project, instance):
    output = io.StringIO()
    report = run_nightly(project.config, instance=instance, console=Console(file=output, width=200))
    return report, output.getvalue()


@pytest.mark.slow
def test_nightly_evaluates_everything_then_reports_a_regression(project, instance):
    report, output = run(project, instance)
    assert report.exit_code == 0, output
    assert instance.get_materialized_partitions(EVALUATION) == {f"{r}|{s}" for s in SETS for r in RETRIEVERS}
    assert "Leaderboard: alpha" in output and "Leaderboard: beta.small" in output
    assert output.count("PASSED") == 4

    project.write_run("good", degraded("a1", "a2"))
    report, output = run(project, instance)
    assert report.exit_code == 1
    failed = [o for o in report.evaluations if not o.check_passed]
    assert [(o.set_identifier, o.retriever_identifier) for o in failed] == [("alpha", "good")]
    assert "FAILED (ERROR)" in output and "Regression: top-1 hit rate dropped 33.3 pp" in output


@pytest.mark.slow
def test_ci_reads_the_nights_verdicts_from_the_store_as_an_exit_code(project, instance):
    from retrieval_pipeline.cli import main

    run(project, instance)
    good_night = CliRunner().invoke(main, ["verdicts", "--config", str(project.config)])
    assert good_night.exit_code == 0, good_night.output
    assert good_night.stdout.count("No baseline: recorded as the baseline.") == 4

    project.write_run("good", degraded("a1", "a2"))
    run(project, instance)
    bad_night = CliRunner().invoke(main, ["verdicts", "--config", str(project.config), "--json"])
    assert bad_night.exit_code == 1
    pairs = {(p["set_identifier"], p["retriever_identifier"]): p["status"] for p in json.loads(bad_night.stdout)["pairs"]}
    assert pairs[("alpha", "good")] == "regression" and list(pairs.values()).count("pass") == 3
    assert "1 of 4 pairs failed their latest check. alpha × good (regression)" in bad_night.stderr


@pytest.mark.slow
def test_a_retriever_that_cannot_be_built_is_invalid_input_and_skips_its_partitions(project, instance):
    project.run_file("other").unlink()
    report, output = run(project, instance)
    assert report.exit_code == 2
    assert "cannot read the run file" in output and "skipped" in output
    # Each retriever is built in a run of its own: the one that could not be built did not take the other with it.
    assert instance.get_materialized_partitions(AssetKey("retriever_config")) == {"good"}
    [failed] = [o for o in report.outcomes if not o.success]
    assert (failed.partition, failed.input_error) == ("other", True) and "cannot read the run file" in failed.message
    assert instance.get_materialized_partitions(EVALUATION) == {"good|alpha", "good|beta.small"}


@pytest.mark.slow
def test_in_process_the_runs_land_in_dagster_home_and_the_printed_command_opens_them(project, tmp_path, monkeypatch):
    """The runs land in $DAGSTER_HOME's instance, whose dagster.yaml is seeded from the project's."""
    workdir = tmp_path / "checkout"
    workdir.mkdir()
    (workdir / "dagster.yaml").write_text((REPO_ROOT / "dagster.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.chdir(workdir)
    home = tmp_path / "home"
    monkeypatch.setenv("DAGSTER_HOME", str(home))

    result = CliRunner().invoke(
        nightly, ["--config", str(project.config), "--store", str(tmp_path / "elsewhere"), "--in-process"]
    )

    assert result.exit_code == 0, result.output
    hint = f"DAGSTER_HOME={home} RETRIEVAL_EVAL_CONFIG={project.config} RETRIEVAL_EVAL_STORE={tmp_path / 'elsewhere'} "
    assert hint + "dagster dev -m retrieval_pipeline.definitions" in result.output
    assert (home / "dagster.yaml").read_text(encoding="utf-8") == (workdir / "dagster.yaml").read_text(encoding="utf-8")
    assert (tmp_path / "elsewhere" / "summaries" / "alpha" / "good").is_dir()
    with DagsterInstance.from_config(str(home)) as instance:
        # One run per partition: every set (with its label check), every retriever, every evaluation, then the
        # leaderboard, each set's label audit and each set's generated questions' agreement.
        assert len(instance.get_runs()) == len(SETS) + len(RETRIEVERS) + len(SETS) * len(RETRIEVERS) + 1 + 2 * len(SETS)
        assert len(instance.get_materialized_partitions(AssetKey("label_audit"))) == len(SETS)
        assert len(instance.get_materialized_partitions(AssetKey("generated_set_agreement"))) == len(SETS)
        assert len(instance.get_materialized_partitions(EVALUATION)) == 4


def test_the_command_line_group_offers_nightly():
    from retrieval_pipeline.cli import main

    result = CliRunner().invoke(main, ["nightly", "--help"])
    assert result.exit_code == 0 and "--store" in result.output


def test_every_command_describes_config_and_store_in_the_same_words():
    from retrieval_pipeline.cli import main

    context = click.Context(main)
    described: dict[str, set] = {"--config": set(), "--store": set()}
    for name in main.list_commands(context):
        command = main.get_command(context, name)
        for option in command.params:
            if option.opts[0] in described:
                described[option.opts[0]].add(option.get_help_record(click.Context(command)))
    assert {option: len(helps) for option, helps in described.items()} == {"--config": 1, "--store": 1}, described


def test_a_demo_and_a_configuration_given_together_are_refused(tmp_path):
    from retrieval_pipeline.cli import main

    result = CliRunner().invoke(main, ["nightly", "--config", str(tmp_path / "c.yaml"), "--demo", "embedding-swap"])
    assert result.exit_code == 2 and "give --config or --demo, not both" in result.output


def test_an_invalid_configuration_exits_2_before_anything_runs(tmp_path):
    from retrieval_pipeline.cli import main

    bad = tmp_path / "config.yaml"
    bad.write_text("store: [unclosed\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["nightly", "--config", str(bad)])
    assert result.exit_code == 2 and "invalid YAML" in result.output


@pytest.mark.slow
def test_an_incomplete_run_exits_3(project, instance):
    beta = project.root / "sets" / "beta.json"
    beta.write_text(beta.read_text(encoding="utf-8").replace('"beta one"', '"alpha one wing lift"'), encoding="utf-8")
    report, output = run(project, instance)  # a1's text is now ambiguous: run_file cannot answer it
    assert report.exit_code == 3
    assert "Incomplete run" in output


@pytest.mark.slow
def test_the_leaderboard_chart_a_nightly_records_is_the_chart_of_its_leaderboard(project, instance):
    from chart_helpers import embedded_pngs

    from retrieval_pipeline.core.services.evaluation.leaderboard import build_leaderboard
    from retrieval_pipeline.core.storage.store import ResultStore
    from retrieval_pipeline.reports.charts import leaderboard_chart_png

    report, output = run(project, instance)

    assert report.exit_code == 0, output
    recorded = instance.get_latest_materialization_event(AssetKey("leaderboard")).asset_materialization.metadata
    board = build_leaderboard(ResultStore(str(project.store)), list(SETS), list(RETRIEVERS))
    assert embedded_pngs(recorded["leaderboard_chart"].value) == [leaderboard_chart_png(board)]


@pytest.mark.slow
@pytest.mark.skipif(not demo_config_path().exists(), reason="the embedded demo is not built yet")
def test_the_demo_leaderboard_in_a_narrow_terminal_prints_every_figure_whole(tmp_path, instance, monkeypatch):
    """The README's first command at 80 and 60 columns: `33.3%` once read `33.…` there."""
    from retrieval_pipeline.cli import main
    from retrieval_pipeline.cli.render.nightly_report import print_results
    from retrieval_pipeline.core.services.configuration.project import load_config
    from retrieval_pipeline.dagster_layer.definitions import build_definitions
    from retrieval_pipeline.dagster_layer.names import PROJECT_RESOURCE

    monkeypatch.delenv("RETRIEVAL_EVAL_CONFIG", raising=False)
    store = str(tmp_path / "store")
    output = io.StringIO()
    report = run_nightly(demo_config_path(), store, instance=instance, console=Console(file=output, width=80))
    narrower = io.StringIO()
    print_results(
        report, build_definitions(demo_config_path(), store).resources[PROJECT_RESOURCE], Console(file=narrower, width=60)
    )
    retrievers = load_config(demo_config_path()).retriever_identifiers
    compared = CliRunner().invoke(main, ["compare", "demo.cranfield", *retrievers, "--json"])

    # the leaderboard's order: by top-1, then top-3, ties by name (the conversation modes tie with
    # bm25_stemmed on demo.cranfield, which has no turns)
    runs = sorted(
        json.loads(compared.stdout)["runs"], key=lambda run: (-run["top1_hit_rate"], -run["top3_hit_rate"], run["retriever"])
    )
    names = ("top-1", "top-3", "top-5", "top-10", "mrr@10", "ndcg@10", "judged@10")
    expected: dict[str, str | None] = {name: " ".join(figure_in(run, name) for run in runs) for name in names}
    expected |= {"questions": " ".join(str(run["question_count"]) for run in runs), "latency ms": None}
    for text in (output.getvalue(), narrower.getvalue()):
        assert_whole(text, "Leaderboard: demo.cranfield, ranked by top-1", expected, always=("top-1", "top-3"))
        folded = printed_table(text, "Leaderboard: demo.cranfield, ranked by top-1").column("retriever")
        assert folded.replace(" ", "") == "".join(run["retriever"] for run in runs)


def test_a_run_canceled_in_the_ui_during_the_night_makes_the_night_incomplete_not_an_internal_error():
    from retrieval_pipeline.cli.render.nightly_report import NightlyReport
    from retrieval_pipeline.core.base.exit_codes import EXIT_INCOMPLETE
    from retrieval_pipeline.dagster_layer.definitions import LEADERBOARD_JOB
    from retrieval_pipeline.dagster_layer.nightly import PartitionOutcome, PartitionRun

    report = NightlyReport(None, Path("retrieval-eval.yaml"), "results")
    report.outcomes.append(PartitionOutcome(PartitionRun(LEADERBOARD_JOB)))
    report.outcomes.append(PartitionOutcome.failed(PartitionRun(LEADERBOARD_JOB), KeyboardInterrupt, "run 1 was canceled"))

    assert report.exit_code == EXIT_INCOMPLETE
