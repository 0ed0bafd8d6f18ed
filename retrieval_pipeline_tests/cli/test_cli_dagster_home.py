"""nightly's Dagster instance: where it lives and the settings it starts with."""

from __future__ import annotations

import pytest
import yaml

from retrieval_pipeline.cli.dagster_home import DEFAULT_HOME, DEFAULT_INSTANCE_YAML, prepare_dagster_home
from retrieval_pipeline.core.base.errors import InvalidInputError


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
