"""Fixtures for the Dagster layer: a temporary project and a real (ephemeral) Dagster instance."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from dagster import DagsterInstance
from dagster_test_project import write_project

from retrieval_pipeline.dagster_layer.definitions import build_definitions

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))  # `core_helpers`: runs of fixed rankings


def pytest_configure(config):
    # Dagster 1.13 itself tags multi-partition runs `dagster/partition/<dimension>` and then warns that
    # such keys are deprecated; nothing in this project can change that.
    config.addinivalue_line("filterwarnings", "ignore:Non-compliant tag keys:DeprecationWarning")


@pytest.fixture
def project(tmp_path):
    return write_project(tmp_path / "project")


@pytest.fixture
def defs(project):
    return build_definitions(project.config)


@pytest.fixture
def instance():
    with DagsterInstance.ephemeral() as instance:
        yield instance
