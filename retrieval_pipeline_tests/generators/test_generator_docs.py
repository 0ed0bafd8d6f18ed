"""Every parameter of a built-in generator kind is named in its section of docs/generating.md, so a key
added to the code but not to the page fails here."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from retrieval_pipeline.core.base.extras import install_command
from retrieval_pipeline.core.retrieval.generators import GENERATORS
from retrieval_pipeline.core.retrieval.kinds import KindParams

PAGE = Path(__file__).resolve().parents[2] / "docs" / "generating.md"
BUILT_IN = {name: entry for name, entry in GENERATORS.kinds().items() if entry.value.startswith("retrieval_pipeline.")}


def kind_sections(text: str) -> dict[str, str]:
    parts = re.split(r"^### `kind: ([a-z_]+)`.*$", text, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2]))


@pytest.mark.parametrize("kind", sorted(BUILT_IN))
def test_every_parameter_of_a_built_in_generator_kind_is_named_in_its_section(kind):
    sections = kind_sections(PAGE.read_text(encoding="utf-8"))
    module = inspect.getmodule(BUILT_IN[kind].load())
    models = [member for _, member in inspect.getmembers(module, inspect.isclass) if issubclass(member, KindParams)]
    fields = {name for model in models for name in model.model_fields if model is not KindParams} - {"kind"}

    assert kind in sections and fields
    assert sorted(name for name in fields if f"`{name}`" not in sections[kind]) == []


def test_the_workflow_says_generating_from_traffic_needs_the_coverage_extra_as_the_refusal_does():
    workflow = PAGE.read_text(encoding="utf-8").split("## The workflow", 1)[1].split("\n## ", 1)[0]
    demo = (Path(__file__).resolve().parents[2] / "retrieval_pipeline" / "demo" / "config.yaml").read_text(encoding="utf-8")

    assert "`[coverage]` extra" in workflow and install_command("coverage") in workflow
    assert "[coverage] extra" in demo and install_command("coverage") in demo
