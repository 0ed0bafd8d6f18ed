"""Every configuration the docs show is one the tool accepts: each YAML block of a configuration file, and
each setting quoted inline (`baseline_policy: previous`, `dagster.check_severity: WARN`), is loaded with
the configuration's own schema, so a documented value the tool refuses is caught here, not by a reader."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from pydantic import BaseModel, ValidationError

from retrieval_pipeline.core.services.configuration.schema import ConfigFile

ROOT = Path(__file__).resolve().parents[4]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("**/*.md")])
BLOCK = re.compile(r"^```ya?ml\n(.*?)^```", re.M | re.S)
INLINE = re.compile(r"`([a-z_]+(?:\.[a-z_]+)*): ([^`\s][^`]*)`")
SECTIONS = set(ConfigFile.model_fields)


def _where(page: Path, text: str, offset: int) -> str:
    return f"{page.relative_to(ROOT)}:{text[:offset].count(chr(10)) + 1}"


def _configuration_blocks() -> list[tuple[str, dict]]:
    """YAML blocks whose top-level keys are all configuration sections (set files, dagster.yaml, a
    component's defs.yaml and run configuration have keys of their own)."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in BLOCK.finditer(text):
            data = yaml.safe_load(match.group(1))
            if isinstance(data, dict) and data and set(data) <= SECTIONS:
                found.append((_where(page, text, match.start()), data))
    return found


def _is_setting(path: list[str]) -> bool:
    """A path through the configuration's own sections to one of their fields (a retriever's or a judge's
    entry is checked by its kind, and quoted refusals name such entries)."""
    model: type[BaseModel] = ConfigFile
    for depth, part in enumerate(path):
        if part not in model.model_fields:
            return False
        annotation = model.model_fields[part].annotation
        if depth < len(path) - 1:
            if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
                return False
            model = annotation
    return True


def _inline_settings() -> list[tuple[str, dict]]:
    """`key: value` or `section.key: value` quoted in prose, where `section` (or `key`) is a configuration
    section, as the nested mapping a configuration file would hold."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in INLINE.finditer(text):
            path, value = match.group(1).split("."), match.group(2)
            if not _is_setting(path):
                continue
            try:
                setting: object = yaml.safe_load(value)
            except yaml.YAMLError:  # a quoted message, not a setting
                continue
            for part in reversed(path):
                setting = {part: setting}
            found.append((_where(page, text, match.start()), setting))
    return found


def test_the_docs_show_configuration_blocks_and_inline_settings_to_check():
    assert len(_configuration_blocks()) >= 10
    assert any(setting == {"baseline_policy": "previous"} for _, setting in _inline_settings())


@pytest.mark.parametrize(
    ("where", "data"), _configuration_blocks() + _inline_settings(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_every_documented_configuration_block_and_quoted_setting_loads(where, data):
    try:
        ConfigFile.model_validate(data)
    except ValidationError as error:
        pytest.fail(f"{where}: the configuration it documents is refused: {error}")
