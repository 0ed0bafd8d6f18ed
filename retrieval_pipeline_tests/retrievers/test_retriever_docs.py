"""Every parameter a user can write is documented: each registered kind's parameter models against
docs/retrievers.md, and the configuration file's models against docs/configuration.md."""

from __future__ import annotations

import inspect
import re
import typing
from pathlib import Path

import pytest
from pydantic import BaseModel

from retrieval_pipeline.core.retrieval.kinds import KindParams
from retrieval_pipeline.core.retrieval.retriever_kinds import RETRIEVERS
from retrieval_pipeline.core.services.configuration import schema as config_file

DOCS = Path(__file__).resolve().parents[2] / "docs"
OWN_PACKAGE = "retrieval_pipeline."


def kind_sections(text: str) -> dict[str, str]:
    """`## \\`kind\\`` heading to the text under it."""
    parts = re.split(r"^## `([a-z_]+)`\s*$", text, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2]))


def parameter_models(kind_class: type) -> list[type[BaseModel]]:
    """The parameter models a kind's module uses (defined there or imported from a helper module) and
    every model their fields hold (e.g. env headers)."""
    module = inspect.getmodule(kind_class)
    roots = [
        member
        for _, member in inspect.getmembers(module, inspect.isclass)
        if issubclass(member, KindParams) and member is not KindParams
    ]
    return [model for root in roots for model in models_reachable_from(root)]


def undocumented(models: list[type[BaseModel]], text: str) -> list[str]:
    return [f"{model.__name__}.{name}" for model in models for name in model.model_fields if f"`{name}`" not in text]


def models_reachable_from(model: type[BaseModel]) -> list[type[BaseModel]]:
    """The model and every model its fields hold (sections, list items, union members)."""
    found: list[type[BaseModel]] = []

    def visit(annotation) -> None:
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            if annotation not in found:
                found.append(annotation)
                for field in annotation.model_fields.values():
                    visit(field.annotation)
            return
        for argument in typing.get_args(annotation):
            visit(argument)

    visit(model)
    return found


BUILT_IN = {name: entry for name, entry in RETRIEVERS.kinds().items() if entry.value.startswith(OWN_PACKAGE)}


@pytest.mark.parametrize("kind", sorted(BUILT_IN))
def test_every_parameter_of_a_built_in_kind_is_named_in_its_section(kind):
    sections = kind_sections((DOCS / "retrievers.md").read_text(encoding="utf-8"))
    assert kind in sections, f"docs/retrievers.md has no '## `{kind}`' section"
    models = parameter_models(BUILT_IN[kind].load())
    assert models, f"no parameter model found for kind {kind}"
    assert undocumented(models, sections[kind]) == []


def test_every_configuration_key_is_named_in_the_configuration_page():
    text = (DOCS / "configuration.md").read_text(encoding="utf-8")
    models = models_reachable_from(config_file.ConfigFile)
    assert {config_file.Tolerances, config_file.DagsterSection, config_file.BeirSource} <= set(models)
    assert undocumented(models, text) == []


def test_a_parameter_added_without_documentation_is_reported():
    class Grown(BaseModel):
        k1: float = 1.2
        brand_new_knob: int = 3

    assert undocumented([Grown], "| `k1` | `1.5` | saturation |") == ["Grown.brand_new_knob"]
