"""The library face (docs/library.md): `retrieval_pipeline.evaluate` and `compare` return the views whose
`to_dict()` is the command line's JSON, and the documented example runs as it ships."""

from __future__ import annotations

import json
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

import retrieval_pipeline
from retrieval_pipeline.core.services.configuration.lookup import demo_config_path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "library.py"
UNSTABLE = ("run_id", "run_at", "store", "latency_ms")
"""What differs between two runs of the same retriever: when, which id, which store, how fast."""


@pytest.fixture
def demo_env(tmp_path, monkeypatch):
    monkeypatch.delenv("RETRIEVAL_EVAL_CONFIG", raising=False)
    monkeypatch.setenv("RETRIEVAL_EVAL_CACHE", str(tmp_path / "cache"))
    return tmp_path


def stable(document):
    """The document without what differs between two runs, at any depth."""
    if isinstance(document, dict):
        return {key: stable(value) for key, value in document.items() if key not in UNSTABLE}
    return [stable(value) for value in document] if isinstance(document, list) else document


def test_the_library_docs_show_the_example_exactly_as_shipped():
    code = EXAMPLE.read_text(encoding="utf-8").split('"""', 2)[2].strip()
    page = (ROOT / "docs" / "library.md").read_text(encoding="utf-8")
    assert f"```python\n{code}\n```" in page


def test_the_example_runs_and_prints_the_summaries(demo_env, capsys):
    runpy.run_path(str(EXAMPLE), run_name="__main__")

    printed = capsys.readouterr().out
    assert printed.startswith("top-1 0.321, MRR@10 0.515\n")
    assert "### Retrieval quality: `demo.cranfield` × `bm25_stemmed`" in printed
    assert "PASS No regression" in printed
    assert "| `bm25_plain` | 28.7% (69/240) | -3.3 pp |" in printed


def test_evaluate_to_dict_is_the_run_commands_json(cli, demo_env):
    printed = cli("run", "demo.cranfield", "bm25_stemmed", "--store", str(demo_env / "cli"), "--json")
    view = retrieval_pipeline.evaluate("demo.cranfield", "bm25_stemmed", config=demo_config_path(), store=str(demo_env / "lib"))

    assert printed.exit_code == 0
    document = json.loads(json.dumps(view.to_dict()))
    shown = json.loads(printed.stdout)
    assert stable(document) == stable(shown) and list(document) == list(shown)
    assert document["store"] == str(demo_env / "lib")


def test_compare_to_dict_is_the_compare_commands_json(cli, demo_env):
    printed = cli("compare", "demo.cranfield", "bm25_stemmed", "bm25_plain", "--json")
    view = retrieval_pipeline.compare("demo.cranfield", ["bm25_stemmed", "bm25_plain"], config=demo_config_path())

    assert printed.exit_code == 0
    document, shown = json.loads(json.dumps(view.to_dict())), json.loads(printed.stdout)
    assert stable(document) == stable(shown)
    assert list(document) == list(shown) and document["runs"][0]["run_id"] is None


def test_importing_the_package_loads_no_core_until_a_function_is_used():
    code = (
        "import sys, retrieval_pipeline\n"
        "assert not [m for m in sys.modules if m.startswith('retrieval_pipeline.core')], sorted(sys.modules)\n"
        "assert retrieval_pipeline.evaluate.__module__ == 'retrieval_pipeline.core.services.library'\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
