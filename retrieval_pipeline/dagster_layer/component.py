"""The code location as a `dg` component, so a team adds retrieval evaluation to its own Dagster project
(`dg scaffold defs RetrievalEvaluation evals`; the `dagster_dg_cli.registry_modules` entry point names this
module). It builds exactly what this checkout serves (`build_definitions`) less the executor, which is the
host project's to choose; `prefix` keeps an instance's names apart (names.py), so a project holds its own
`leaderboard` beside it, or two instances with two configurations. Relative paths are read against the
component's folder, not the working folder of whichever process loads it (webserver, daemon, run);
`build_definitions` is imported only when the definitions are built, not when `dg list components` scans
the environment.
"""

from __future__ import annotations

from pathlib import Path

import dagster as dg
from pydantic import Field


class RetrievalEvaluation(dg.Component, dg.Model, dg.Resolvable):
    """Retrieval-quality evaluation: golden question sets x retrievers, the leaderboard and regression checks.

    `config` names a retrieval-eval configuration (YAML); without it, $RETRIEVAL_EVAL_CONFIG, a
    retrieval-eval.yaml above the working folder, else the embedded demo. `store` replaces the
    configuration's result store. `prefix` keeps this instance's asset keys and names apart.
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
    prefix: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z0-9_]+$",
        description="Keeps this instance apart from the project's other definitions: its asset keys become "
        "`PREFIX/name` and `PREFIX_` starts its jobs, schedule, sensors, groups and resource keys. Default: none, "
        "the standalone names; set one for a second instance, or when the project already has a `leaderboard`.",
    )

    def build_defs(self, context: dg.ComponentLoadContext) -> dg.Definitions:
        from retrieval_pipeline.dagster_layer.definitions import build_definitions

        folder = Path(context.path)
        config_path = _beside(folder, self.config) if self.config else None
        store_uri = self.store if not self.store or "://" in self.store else str(_beside(folder, self.store))
        return build_definitions(config_path, store_uri, prefix=self.prefix)


def _beside(folder: Path, path: str) -> Path:
    given = Path(path).expanduser()
    return given if given.is_absolute() else (folder / given).resolve()
