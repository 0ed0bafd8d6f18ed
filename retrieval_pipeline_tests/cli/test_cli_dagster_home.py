"""nightly's Dagster instance: where it lives, the settings it starts with, a dagster.yaml Dagster cannot
open, and commands started together on a fresh one."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
import yaml
from cli_helpers import console_script, subprocess_env

from retrieval_pipeline.cli.dagster_home import DEFAULT_HOME, DEFAULT_INSTANCE_YAML, prepare_dagster_home
from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.base.exit_codes import EXIT_INVALID


def test_the_default_home_is_dot_dagster_home_with_the_built_in_settings(tmp_path, monkeypatch):
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    home, seeded_from = prepare_dagster_home(tmp_path)
    assert home == tmp_path / DEFAULT_HOME and seeded_from == "the defaults built into retrieval-eval"
    assert yaml.safe_load((home / "dagster.yaml").read_text()) == yaml.safe_load(DEFAULT_INSTANCE_YAML)
    assert prepare_dagster_home(tmp_path) == (home, None)  # an existing dagster.yaml is left alone


def test_a_dagster_home_that_cannot_be_a_folder_is_named(tmp_path, monkeypatch):
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "a-file" / "home"))
    with pytest.raises(
        InvalidInputError, match=r"a-file/home: cannot prepare the Dagster instance folder .*check \$DAGSTER_HOME"
    ):
        prepare_dagster_home(tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("instance_yaml", "cause"),
    [
        ("telemetry: [unclosed", "ParserError: while parsing a flow sequence"),
        ("run_storage:\n  module: no_such_storage_module\n  class: Nowhere\n", "Couldn't import module no_such_storage_module"),
    ],
    ids=["unparsable", "storage-module-missing"],
)
def test_nightly_on_a_dagster_yaml_dagster_cannot_open_is_one_line_naming_the_file_exit_2(
    cli, project, tmp_path, monkeypatch, instance_yaml, cause
):
    home = tmp_path / "home"
    home.mkdir()
    (home / "dagster.yaml").write_text(instance_yaml, encoding="utf-8")
    monkeypatch.setenv("DAGSTER_HOME", str(home))

    result = cli("nightly", "--config", str(project.config))

    assert result.exit_code == EXIT_INVALID, result.stderr
    assert result.stderr.startswith(f"error: {home / 'dagster.yaml'}: Dagster cannot open the instance it describes (")
    assert cause in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert (home / "dagster.yaml").read_text(encoding="utf-8") == instance_yaml and project.stored_summaries() == []


OPEN_WHEN_TOLD = """
import os, sys, time
from pathlib import Path
import dagster  # imported before the signal, so the commands race on creating the instance only
from retrieval_pipeline.cli.dagster_home import open_instance, prepare_dagster_home
Path(f"{sys.argv[1]}.ready-{os.getpid()}").touch()
while not Path(sys.argv[1]).exists():
    time.sleep(0.002)
home, _ = prepare_dagster_home()
open_instance(home).dispose()
"""


@pytest.mark.slow
def test_three_commands_opening_one_fresh_dagster_home_at_once_all_open_it(tmp_path):
    for attempt in range(4):  # unguarded, about half ended in an alembic error ("more than one head")
        go = tmp_path / f"go-{attempt}"
        env = {**os.environ, "DAGSTER_HOME": str(tmp_path / f"home-{attempt}")}
        starts = [
            subprocess.Popen(
                [sys.executable, "-c", OPEN_WHEN_TOLD, str(go)], env=env, cwd=tmp_path, stderr=subprocess.PIPE, text=True
            )
            for _ in range(3)
        ]
        while len(list(tmp_path.glob(f"{go.name}.ready-*"))) < len(starts) and all(s.poll() is None for s in starts):
            time.sleep(0.01)
        go.touch()
        ended = [(start.wait(timeout=120), start.stderr.read()) for start in starts]
        assert all(code == 0 for code, _ in ended), [stderr.strip().splitlines()[-1:] for _, stderr in ended]


@pytest.mark.slow
def test_two_nightly_started_together_on_a_fresh_dagster_home_and_one_store_both_finish_the_second_waiting(
    project, plugins, tmp_path
):
    config = yaml.safe_load(project.config.read_text(encoding="utf-8"))
    config["retrievers"] = {name: config["retrievers"][name] for name in ("good", "half")}
    project.config.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    env = {**subprocess_env(plugins), "DAGSTER_HOME": str(tmp_path / "home")}
    command = [*console_script(), "nightly", "--config", str(project.config)]

    nightlies = [
        subprocess.Popen(command, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    ended = [(nightly.communicate(timeout=600), nightly.returncode) for nightly in nightlies]

    assert [code for _, code in ended] == [0, 0], [output for outputs, _ in ended for output in outputs]
    waiting = f"Waiting for the other command using the Dagster instance {tmp_path / 'home'} to finish…\n"
    assert sorted(stderr for (_, stderr), _ in ended) == ["", waiting]
    assert len(project.stored_summaries()) == 4  # each pair evaluated by each command, one after the other
