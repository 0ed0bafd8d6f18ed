"""Which configuration a command uses, a store checked before any work, and identifiers kept whole off a terminal."""

from __future__ import annotations

import subprocess

import pytest
import yaml
from cli_helpers import as_permissions_bind, console_script, subprocess_env

from retrieval_pipeline.cli.errors import EXIT_INVALID


def test_a_retrieval_eval_yaml_in_a_parent_folder_is_used_and_named_on_stderr(cli, project, monkeypatch):
    (project.root / "retrieval-eval.yaml").write_text(project.config.read_text(encoding="utf-8"), encoding="utf-8")
    below = project.root / "deep" / "er"
    below.mkdir(parents=True)
    monkeypatch.chdir(below)

    result = cli("run", "cli.small", "good")

    assert result.exit_code == 0, result.stderr
    assert f"configuration: {project.root / 'retrieval-eval.yaml'} (found retrieval-eval.yaml from {below})" in result.stderr
    assert (project.root / "results" / "summaries" / "cli.small" / "good").is_dir()


def test_the_environment_variable_wins_over_a_found_file_and_is_named(cli, project, monkeypatch, tmp_path):
    (tmp_path / "retrieval-eval.yaml").write_text("store: elsewhere\nretrievers: {}\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)

    result = cli("run", "cli.small", "good", env={"RETRIEVAL_EVAL_CONFIG": str(project.config)})

    assert result.exit_code == 0, result.stderr
    assert f"configuration: {project.config} (from $RETRIEVAL_EVAL_CONFIG)" in result.stderr


def test_list_names_the_configuration_once_with_where_it_came_from(cli, project, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)

    listed = cli("list", env={"RETRIEVAL_EVAL_CONFIG": str(project.config)})
    as_json = cli("list", "--json", env={"RETRIEVAL_EVAL_CONFIG": str(project.config)})

    assert listed.exit_code == 0, listed.stderr
    assert f"Configuration: {project.config} (from $RETRIEVAL_EVAL_CONFIG)" in listed.stdout
    assert "onfiguration" not in listed.stderr
    assert f"configuration: {project.config} (from $RETRIEVAL_EVAL_CONFIG)" in as_json.stderr  # stdout is JSON


def test_an_unknown_set_on_the_embedded_demo_says_the_demo_is_in_use_and_how_to_name_a_configuration(cli, tmp_path, monkeypatch):
    monkeypatch.delenv("RETRIEVAL_EVAL_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)

    result = cli("run", "scifact.test", "bm25_plain", "--store", str(tmp_path / "results"))

    assert result.exit_code == 1
    [configuration, error] = result.stderr.splitlines()
    assert "the embedded demo" in configuration
    assert "unknown question set 'scifact.test'; available: demo.conversations, demo.cranfield" in error
    assert "embedded demo is in use" in error
    assert "--config FILE, $RETRIEVAL_EVAL_CONFIG, or a retrieval-eval.yaml" in error


def test_an_unknown_set_of_a_named_configuration_does_not_mention_the_demo(cli, project):
    result = cli("run", "scifact.test", "good", "--config", str(project.config))

    assert result.exit_code == 1
    assert "demo" not in result.stderr and result.stderr.startswith("error: unknown question set 'scifact.test'")


def test_a_file_where_the_store_folder_should_be_fails_before_the_retriever_is_built(cli, project):
    config = yaml.safe_load(project.config.read_text(encoding="utf-8"))
    config["retrievers"]["broken_plugin"] = {"kind": "cli_exploding"}
    project.config.write_text(yaml.safe_dump(config), encoding="utf-8")
    project.store.write_text("not a folder", encoding="utf-8")

    result = cli("run", "cli.small", "broken_plugin", "--config", str(project.config))

    assert result.exit_code == EXIT_INVALID  # an internal error (exit 4) had the retriever been built first
    assert result.stderr.startswith(f"error: cannot write to the result store {project.store}")
    assert len(result.stderr.splitlines()) == 1
    assert project.store.read_text(encoding="utf-8") == "not a folder"


@pytest.mark.slow
def test_a_store_without_write_permission_fails_before_any_question_is_asked(project, plugins):
    command = [*as_permissions_bind(), *console_script(), "run", "cli.small", "good", "--config", str(project.config)]
    project.store.mkdir()
    project.store.chmod(0o500)
    try:
        result = subprocess.run(command, env=subprocess_env(plugins), capture_output=True, text=True, check=False)
    finally:
        project.store.chmod(0o700)

    assert result.returncode == EXIT_INVALID, result.stderr
    assert "cannot write to the result store" in result.stderr and "Permission denied" in result.stderr
    assert list(project.store.iterdir()) == []


def test_the_probe_leaves_nothing_in_a_store_that_can_be_written(cli, project):
    result = cli("run", "cli.small", "good", "--config", str(project.config))

    assert result.exit_code == 0
    assert sorted(path.name for path in project.store.iterdir()) == ["questions", "summaries"]


@pytest.mark.slow
def test_long_retriever_names_are_never_cut_when_stdout_is_a_pipe(project, plugins):
    long_names = ["bm25_stemmed_titles_and_abstracts_v2", "bm25_stemmed_titles_and_abstracts_v3"]
    config = yaml.safe_load(project.config.read_text(encoding="utf-8"))
    config["retrievers"] = {name: {"kind": "cli_table", "rankings": "good.json"} for name in long_names}
    project.config.write_text(yaml.safe_dump(config), encoding="utf-8")
    env = {**subprocess_env(plugins), "COLUMNS": "80"}  # what a CI runner may set

    for name in long_names:
        subprocess.run([*console_script(), "run", "cli.small", name, "--config", str(project.config)], env=env, check=True)
    listed = subprocess.run(
        [*console_script(), "list", "--config", str(project.config)], env=env, capture_output=True, text=True, check=True
    )
    compared = subprocess.run(
        [*console_script(), "compare", "cli.small", *long_names, "--config", str(project.config)],
        env=env,
        capture_output=True,
        text=True,
    )

    for output in (listed.stdout, compared.stdout):
        assert "…" not in output
        for name in long_names:
            assert name in output


@pytest.mark.slow
def test_nightly_with_a_store_that_cannot_be_written_stops_before_any_dagster_run(cli, project, tmp_path, monkeypatch):
    project.store.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))

    result = cli("nightly", "--config", str(project.config))

    assert result.exit_code == EXIT_INVALID
    assert result.stderr.startswith(f"error: cannot write to the result store {project.store}")
    assert not (tmp_path / "dagster_home").exists()


def test_run_keeps_its_runs_in_the_store_named_by_the_environment_as_nightly_and_dagster_do(cli, project, tmp_path):
    elsewhere, given = tmp_path / "elsewhere", tmp_path / "given"

    from_environment = cli(
        "run", "cli.small", "good", "--config", str(project.config), env={"RETRIEVAL_EVAL_STORE": str(elsewhere)}
    )
    from_option = cli(
        "run",
        "cli.small",
        "good",
        "--config",
        str(project.config),
        "--store",
        str(given),
        env={"RETRIEVAL_EVAL_STORE": str(elsewhere)},
    )

    assert from_environment.exit_code == 0 and from_option.exit_code == 0, from_environment.stderr + from_option.stderr
    assert len(list(elsewhere.glob("summaries/**/*.parquet"))) == 1 and len(list(given.glob("summaries/**/*.parquet"))) == 1
    assert project.stored_summaries() == []


@pytest.mark.parametrize("place", ["before the command", "after the command"])
def test_config_and_store_are_taken_before_the_command_as_after_it(cli, project, tmp_path, monkeypatch, place):
    monkeypatch.chdir(tmp_path)  # no retrieval-eval.yaml here: without the options, the embedded demo
    given = tmp_path / "given"
    shared = ("--config", str(project.config), "--store", str(given))
    command = ("run", "cli.small", "good")

    result = cli(*shared, *command) if place == "before the command" else cli(*command, *shared)

    assert (result.exit_code, result.stderr) == (0, "")
    assert len(list(given.glob("summaries/**/*.parquet"))) == 1 and project.stored_summaries() == []


def test_a_shared_option_after_the_command_wins_over_one_before_it_and_both_over_the_environment(cli, project, tmp_path):
    before, after, environment = tmp_path / "before", tmp_path / "after", tmp_path / "environment"
    env = {"RETRIEVAL_EVAL_STORE": str(environment)}

    both = cli(
        "--store", str(before), "run", "cli.small", "good", "--config", str(project.config), "--store", str(after), env=env
    )
    only_before = cli("--store", str(before), "run", "cli.small", "good", "--config", str(project.config), env=env)

    assert both.exit_code == only_before.exit_code == 0, both.stderr + only_before.stderr
    assert [len(list(folder.glob("summaries/**/*.parquet"))) for folder in (before, after, environment)] == [1, 1, 0]


def test_a_shared_option_before_a_command_that_does_not_take_it_is_refused_in_one_line(cli, project):
    result = cli("--store", "elsewhere", "list", "--config", str(project.config))

    [line] = result.stderr.splitlines()
    assert result.exit_code == EXIT_INVALID and line.startswith("error: ") and "list takes no --store" in line
