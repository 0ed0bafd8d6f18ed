"""The core is framework-free and has a direction: each layer builds only on the layers below it.

The order is `base` (errors, registries, text files, Arrow arrays, formatting), `golden` (sets, import,
fingerprints), `retrieval` (the retriever contract, corpora, run files), `scoring` (pure: hits,
measures, `checks/` for verdicts and tolerances, `stats/` for intervals and paired tests), `storage` (the
result store), then `services`, which combine them all in packages by concept, themselves in order:
`configuration` (the file, its settings), `labels` (judging files, pooling, machine judging, the label
audit), `traffic` (query-log coverage and weights), `generated` (generated questions), `evaluation` (the
runner, `evaluate_and_record`, baselines, history, the leaderboard) and `views` (what every output lays
out), with `services/library.py`, the library face, on top. A module importing a layer or a services
package above its own fails here, whether the import sits at the top of the file, inside a function or
under TYPE_CHECKING. The whole package has no import circle, counted the same way, and no folder holds
more modules than a newcomer can scan.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import retrieval_pipeline.core

LAYERS = ("base", "golden", "retrieval", "scoring", "storage", "services")
SERVICES = ("configuration", "labels", "traffic", "generated", "evaluation", "views")
MOST_MODULES_IN_A_FOLDER = 16
PACKAGE = Path(retrieval_pipeline.__file__).resolve().parent
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
            modules.add(node.module)  # and each name imported from it, which may be a module of its own
            modules.update(f"{node.module}.{alias.name}" for alias in node.names)
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
        "retrieval_pipeline.core.scoring.checks.regression",
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


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_graph() -> dict[str, set[str]]:
    """Module to the package's modules it imports, anywhere in the file (in a function, under TYPE_CHECKING):
    `from a.b import c` is an import of `a.b.c` when that is a module, else of `a.b`."""
    modules = {_module_name(path): path for path in PACKAGE.rglob("*.py")}

    def owner(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph = {}
    for name, path in modules.items():
        found = {owner(target) for target in imported_modules(path) if target.split(".")[0] == PACKAGE.name}
        graph[name] = {target for target in found if target and target != name}
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, without recursion)."""
    index, low, on_stack, stack, groups = {}, {}, set(), [], []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return groups


def test_the_circle_check_finds_a_circle():
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


def test_the_package_has_no_import_circle():
    """Counting every import (top of the file, inside a function, under TYPE_CHECKING): a view depends on
    the model it lays out, never back, and two modules that need each other share a third instead."""
    assert _circles(_import_graph()) == []


def test_each_core_module_imports_the_core_at_its_top():
    """A file's head names everything of the core it stands on, so the dependency graph reads from the
    heads alone; only heavy libraries (numpy, pyarrow, ...) are imported inside the function that needs them."""
    inside = {}
    for path in CORE_FILES:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        functions = [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)]
        statements = [node for function in functions for node in ast.walk(function)]
        core = sorted(
            {alias.name for node in statements if isinstance(node, ast.Import) for alias in node.names if layer_of(alias.name)}
            | {node.module for node in statements if isinstance(node, ast.ImportFrom) and layer_of(node.module or "")}
        )
        if core:
            inside[str(path.relative_to(CORE))] = core
    assert inside == {}


def test_no_folder_holds_more_modules_than_a_newcomer_can_scan():
    crowded = {}
    for folder in sorted({path.parent for path in PACKAGE.rglob("*.py")}):
        count = sum(1 for path in folder.glob("*.py") if path.name != "__init__.py")
        if count > MOST_MODULES_IN_A_FOLDER:
            crowded[str(folder.relative_to(PACKAGE))] = count
    assert crowded == {}


def _services_package(module: str) -> str | None:
    parts = module.split(".")
    if parts[:3] != ["retrieval_pipeline", "core", "services"] or len(parts) < 4:
        return None
    return parts[3] if parts[3] in SERVICES else None


def test_the_services_are_packages_by_concept():
    services = CORE / "services"
    assert sorted(path.name for path in services.iterdir() if (path / "__init__.py").exists()) == sorted(SERVICES)
    assert sorted(path.name for path in services.glob("*.py")) == ["__init__.py", "library.py"]


def test_each_services_package_imports_only_the_ones_before_it():
    """`views` last: the views lay out what the other packages compute and nothing there imports a view;
    `library.py` sits above them all."""
    offenders = {}
    for path in sorted((CORE / "services").rglob("*.py")):
        own = _services_package(_module_name(path))
        if own is None:
            continue
        above = sorted(
            module
            for module in imported_modules(path)
            if (_services_package(module) or own) != own and SERVICES.index(_services_package(module)) > SERVICES.index(own)
        )
        above += sorted(module for module in imported_modules(path) if module == "retrieval_pipeline.core.services.library")
        if above:
            offenders[str(path.relative_to(CORE))] = above
    assert offenders == {}


def _definitions(path: Path, names: set[str]) -> list[str]:
    """`module:Class.function` for every function or method in `path` named one of `names`, nested or not."""
    found = []

    def visit(node: ast.AST, owner: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, f"{owner}{child.name}.")
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                if child.name in names:
                    found.append(f"{_module_name(path)}:{owner}{child.name}")
                visit(child, f"{owner}{child.name}.")

    visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)), "")
    return found


def _callers(path: Path, name: str) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return any(
        isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == name
        for node in ast.walk(tree)
    )


def test_every_kind_is_parsed_and_built_one_way():
    """Retrievers, judges and generators share one `Kind.parse` and one build sequence (`KindFamily`: load,
    remember secrets, parse, build, check what was built): a second `parse` (an adapter of another
    protocol, a parameters base parsing itself) or a build sequence written again beside it fails here."""
    files = sorted(PACKAGE.rglob("*.py"))
    kinds_module = "retrieval_pipeline.core.retrieval.kinds"

    assert [found for path in files for found in _definitions(path, {"parse"})] == [f"{kinds_module}:Kind.parse"]
    steps = {
        "remember_configured": "retrieval_pipeline.core.base.secrets",
        "loaded_kind": "retrieval_pipeline.core.base.registry",
    }
    builders = {
        _module_name(path)
        for path in files
        for step, home in steps.items()
        if _callers(path, step) and _module_name(path) != home
    }
    assert builders == {kinds_module}
