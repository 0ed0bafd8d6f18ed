"""The core is framework-free and has a direction: each layer builds only on the layers below it.

The order is `base` (errors, registries, text files, Arrow arrays, formatting), `golden` (sets, import,
fingerprints), `retrieval` (the retriever contract, corpora, run files), `scoring` (pure: hits,
measures, verdicts), `storage` (the result store), then `services`, which combine them all (the
configuration, the runner, baselines, history, the leaderboard, chart data, the label audit and
`evaluate_and_record`). A module importing a layer above its own fails here, whether the import sits at
the top of the file, inside a function or under TYPE_CHECKING.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import retrieval_pipeline.core

LAYERS = ("base", "golden", "retrieval", "scoring", "storage", "services")
CORE = Path(retrieval_pipeline.core.__file__).resolve().parent
CORE_FILES = sorted(CORE.rglob("*.py"))
CORE_MODULES = [
    "retrieval_pipeline.core." + ".".join(path.relative_to(CORE).with_suffix("").parts)
    for path in CORE_FILES
    if path.stem != "__init__"
]


def imported_modules(path: Path) -> set[str]:
    modules = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules.add(node.module)
            if node.module == "retrieval_pipeline.core":
                modules.update(f"retrieval_pipeline.core.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module":
            modules.update(arg.value for arg in node.args if isinstance(arg, ast.Constant) and isinstance(arg.value, str))
    return modules


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == ["retrieval_pipeline", "core"] else None


def test_the_core_has_modules_to_check():
    assert len(CORE_MODULES) >= 10
    assert {
        "retrieval_pipeline.core.scoring.scoring",
        "retrieval_pipeline.core.storage.store",
        "retrieval_pipeline.core.scoring.regression",
    } <= set(CORE_MODULES)


def test_every_core_module_sits_in_a_layer_folder():
    outside = [module for module in CORE_MODULES if layer_of(module) not in LAYERS]
    assert outside == []
    assert sorted(path.name for path in CORE.iterdir() if path.is_dir() and (path / "__init__.py").exists()) == sorted(LAYERS)


def test_each_core_layer_imports_only_the_layers_below_it():
    offenders = {}
    for path in CORE_FILES:
        own = LAYERS.index(path.relative_to(CORE).parts[0]) if len(path.relative_to(CORE).parts) > 1 else -1
        above = sorted(
            module for module in imported_modules(path) if layer_of(module) in LAYERS and LAYERS.index(layer_of(module)) > own
        )
        if above:
            offenders[str(path.relative_to(CORE))] = above
    assert offenders == {}


def test_no_core_module_imports_dagster_or_the_packages_above_the_core():
    offenders = {}
    for path in CORE_FILES:
        bad = sorted(
            module
            for module in imported_modules(path)
            if module.split(".")[0] in {"dagster", "dagster_webserver"}
            or (module.startswith("retrieval_pipeline.") and not module.startswith("retrieval_pipeline.core"))
        )
        if bad:
            offenders[str(path.relative_to(CORE))] = bad
    assert offenders == {}


@pytest.mark.slow
def test_importing_every_core_module_does_not_load_dagster():
    code = (
        "import importlib, sys\n"
        f"for name in {CORE_MODULES!r}:\n"
        "    importlib.import_module(name)\n"
        "loaded = sorted(m for m in sys.modules if m == 'dagster' or m.startswith(('dagster.', 'dagster_')))\n"
        "print(len(loaded), loaded[:5])\n"
        "sys.exit(1 if loaded else 0)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_dagster_layer_imports_nothing_from_the_command_line():
    """The command line drives the Dagster layer (`nightly`), never the other way round."""
    layer = CORE.parent / "dagster_layer"
    offenders = {}
    for path in sorted(layer.rglob("*.py")):
        bad = sorted(module for module in imported_modules(path) if module.startswith("retrieval_pipeline.cli"))
        if bad:
            offenders[path.name] = bad
    assert offenders == {}
