"""A user's own asset downstream of the evaluation (examples/downstream_asset.py, the example of docs/dagster.md)
receives the evaluation and the golden questions as tables and materializes, on the test project and
on the embedded demo."""

from __future__ import annotations

import importlib.util
import io
from pathlib import Path

import pytest
from dagster import AssetKey, Definitions
from dagster_test_project import RETRIEVERS
from rich.console import Console

from retrieval_pipeline.cli.nightly import run_nightly
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore
from retrieval_pipeline.dagster_layer.definitions import build_definitions

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "downstream_asset.py"
MISSES = AssetKey("questions_every_retriever_misses")


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("downstream_asset", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def nightly(config_path, store_uri, instance) -> None:
    output = io.StringIO()
    report = run_nightly(config_path, store_uri, instance=instance, console=Console(file=output, width=200))
    assert report.exit_code == 0, output.getvalue()


def materialize_misses(defs: Definitions, instance):
    """As the UI's "Materialize" button does: the asset alone, its inputs loaded through their IO manager."""
    job = defs.resolve_implicit_global_asset_job_def()
    result = job.execute_in_process(instance=instance, asset_selection=[MISSES], raise_on_error=True)
    assert [event.asset_key for event in result.get_asset_materialization_events()] == [MISSES]
    return defs.load_asset_value(MISSES, instance=instance)


def missed_by_every_retriever(store_uri: str, set_identifier: str, retrievers) -> set[str]:
    """The expectation, computed from the stored runs with the core alone."""
    store = ResultStore(store_uri)
    found: dict[str, bool] = {}
    for retriever in retrievers:
        for question in store.baseline(HistoryKey(set_identifier, retriever)).questions:
            found[question.question_id] = found.get(question.question_id, False) or bool(question.hit_at(3))
    return {question_id for question_id, hit in found.items() if not hit}


@pytest.mark.slow
def test_the_users_asset_gets_every_partition_and_the_question_text(project, instance, example):
    nightly(project.config, None, instance)
    defs = Definitions.merge(build_definitions(project.config), Definitions(assets=[example.questions_every_retriever_misses]))
    misses = materialize_misses(defs, instance)
    assert misses.to_pylist() == [
        {
            "set_identifier": "beta.small",
            "question_id": "b4",
            "retrievers": len(RETRIEVERS),
            "question": "beta four",
            "form": "gap",
            "hard_class": None,
        }
    ]


@pytest.mark.slow
def test_the_users_asset_materializes_on_the_demo(tmp_path, instance, example, monkeypatch):
    """The example's own code location (`dagster dev -f examples/downstream_asset.py`) over the demo."""
    monkeypatch.delenv("RETRIEVAL_EVAL_CONFIG", raising=False)
    store_uri = str(tmp_path / "store")
    monkeypatch.setenv("RETRIEVAL_EVAL_STORE", store_uri)
    nightly(None, store_uri, instance)
    defs = example.defs()

    misses = materialize_misses(defs, instance)

    retrievers = defs.resolve_assets_def("retriever_config").partitions_def.get_partition_keys()
    assert len(retrievers) == 6 and set(misses.column("retrievers").to_pylist()) == {6}
    expected = missed_by_every_retriever(store_uri, "demo.cranfield", retrievers)
    cranfield = {row["question_id"] for row in misses.to_pylist() if row["set_identifier"] == "demo.cranfield"}
    assert 0 < len(expected) < 240 and cranfield == expected
    assert all(misses.column("question").to_pylist())
    evaluation = defs.load_asset_value("retrieval_evaluation", partition_key=f"{retrievers[0]}|demo.cranfield", instance=instance)
    assert evaluation.num_rows == 240 and {"top5_hit", "top10_hit"} <= set(evaluation.column_names)


def test_the_dagster_docs_show_the_example_exactly_as_shipped_and_tested():
    code = EXAMPLE.read_text(encoding="utf-8").split('"""', 2)[2].strip()
    page = (EXAMPLE.parents[1] / "docs" / "dagster.md").read_text(encoding="utf-8")
    assert f"```python\n{code}\n```" in page
