"""The code location as a `dg` component, for a Dagster project of one's own (`create-dagster project`).

Such a project declares its definitions in `defs/<folder>/defs.yaml` files rather than importing them,
and installs the packages that ship component types: with this package installed, `dg list components`
shows `RetrievalEvaluation` (the `dagster_dg_cli.registry_modules` entry point in pyproject.toml names
this module) and `dg scaffold defs retrieval_pipeline.dagster_layer.component.RetrievalEvaluation evals`
writes its `defs.yaml` (Dagster's default scaffolder: `type:` and empty `attributes:`).

The component builds exactly what `dagster dev` serves from this checkout (`build_definitions`), so a
team can run the evaluation beside its own assets without a second copy of the wiring. It is therefore
one per project: two instances would define the same asset keys, jobs and sensors twice.

Relative paths are read against the component's own folder (`context.path`, as Dagster's SQL component
reads its templates), not against the working folder of whichever process loads the definitions: the
webserver, the daemon and each run may start elsewhere. `build_definitions` is imported when the
definitions are built, not when `dg list components` scans the entry points of the environment.
"""

from __future__ import annotations

from pathlib import Path

import dagster as dg
from pydantic import Field


class RetrievalEvaluation(dg.Component, dg.Model, dg.Resolvable):
    """Retrieval-quality evaluation: golden question sets x retrievers, the leaderboard and regression checks.

    `config` names a retrieval-eval configuration (YAML); without it, $RETRIEVAL_EVAL_CONFIG, a
    retrieval-eval.yaml above the working folder, else the embedded demo. `store` replaces the
    configuration's result store.
    """

    config: str | None = Field(
        default=None,
        description="Retrieval-eval configuration (YAML), relative to this defs.yaml's folder. Default: $RETRIEVAL_EVAL_CONFIG, "
        "a retrieval-eval.yaml above the working folder, else the embedded demo.",
    )
    store: str | None = Field(
        default=None,
        description="Result store URI (a folder, s3://..., gs://...) replacing the configuration's `store`; "
        "a relative folder is relative to this defs.yaml's folder.",
    )

    def build_defs(self, context: dg.ComponentLoadContext) -> dg.Definitions:
        from retrieval_pipeline.dagster_layer.definitions import build_definitions

        folder = Path(context.path)
        config_path = _beside(folder, self.config) if self.config else None
        store_uri = self.store if not self.store or "://" in self.store else str(_beside(folder, self.store))
        return build_definitions(config_path, store_uri)


def _beside(folder: Path, path: str) -> Path:
    given = Path(path).expanduser()
    return given if given.is_absolute() else (folder / given).resolve()
