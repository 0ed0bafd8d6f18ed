"""The one Dagster resource: the project configuration (and through it the result store).

A resource instance lives for one run (or one sensor/schedule evaluation): the configuration file is
read once per run and each retriever is built once per run (the lexical kind also keeps its BM25 index
per process and on disk, so a rebuild is only paid when the corpus or the parameters change). A fresh
read per run is deliberate: a sensor that polls index versions must see a rebuilt index, and an edited
configuration applies to the next run without restarting anything.
"""

from __future__ import annotations

import os
from pathlib import Path

from dagster import ConfigurableResource, InitResourceContext
from pydantic import Field, PrivateAttr

from retrieval_pipeline.core.services.configuration.lookup import STORE_ENV_VAR, default_config_path
from retrieval_pipeline.core.services.configuration.project import ProjectConfig, load_config
from retrieval_pipeline.core.services.evaluation.leaderboard import Leaderboard, build_leaderboard
from retrieval_pipeline.core.services.evaluation.pair_verdicts import PairVerdicts, latest_verdicts
from retrieval_pipeline.core.storage.store import ResultStore


def resolve_store_uri(uri: str | None) -> str | None:
    """A URI with a scheme is kept; a plain path becomes absolute, so every process agrees on it."""
    if uri is None or "://" in uri:
        return uri
    return str(Path(uri).expanduser().resolve())


def project_resource(
    config_path: str | Path | None = None,
    store_uri: str | None = None,
    labels: str | None = None,
    traffic_log: str | None = None,
) -> RetrievalProject:
    """The project a code location serves: `config_path`, else $RETRIEVAL_EVAL_CONFIG, else the embedded
    demo; `store_uri`, else $RETRIEVAL_EVAL_STORE, else the configuration's store. Both resolved now, so
    the webserver, the daemon and every run read the same files whatever their working folder.
    `traffic_log` (`nightly --traffic`) weighs every set by that query log instead of its `traffic:`."""
    path = Path(config_path).expanduser().resolve() if config_path else default_config_path().resolve()
    return RetrievalProject(
        config_path=str(path),
        store_uri=resolve_store_uri(store_uri or os.environ.get(STORE_ENV_VAR) or None),
        labels=labels,
        traffic_log=traffic_log,
    )


class RetrievalProject(ConfigurableResource):
    """The project configuration file and an optional override of its result store."""

    config_path: str | None = Field(
        default=None,
        description="Project configuration (YAML). Default: $RETRIEVAL_EVAL_CONFIG, else the embedded demo.",
    )
    store_uri: str | None = Field(
        default=None,
        description="Result store URI (a folder, s3://..., gs://...) replacing the configuration's `store`.",
    )
    labels: str | None = Field(
        default=None,
        description="The labels that score the runs, `human` or `human+machine`, replacing the configuration's `labels`.",
    )
    traffic_log: str | None = Field(
        default=None,
        description="A query log whose traffic weighs every set's questions, replacing each set's `traffic:`.",
    )

    _config: ProjectConfig | None = PrivateAttr(default=None)

    def setup_for_execution(self, context: InitResourceContext) -> None:
        self._config = None

    @property
    def resolved_config_path(self) -> Path:
        return Path(self.config_path) if self.config_path else default_config_path()

    @property
    def config(self) -> ProjectConfig:
        if self._config is None:
            self._config = load_config(self.resolved_config_path)
        return self._config

    @property
    def resolved_store_uri(self) -> str:
        return resolve_store_uri(self.store_uri) or self.config.store_uri

    def store(self, log=None) -> ResultStore:
        """Files the store skips (unreadable, foreign) become warnings in `log`, the step's or sensor's
        Dagster logger, so they show in the run's event log; without one they go to Python logging."""
        on_skip = (lambda skipped: log.warning(str(skipped))) if log is not None else None
        return ResultStore(self.resolved_store_uri, on_skip)

    def leaderboard(self, log=None) -> Leaderboard:
        """Every configured set against every configured retriever, as the `leaderboard` asset shows it."""
        return build_leaderboard(
            self.store(log),
            list(self.config.question_sets),
            list(self.config.retriever_identifiers),
            rank_by=self.config.rank_by,
        )

    def latest_verdicts(self, log=None) -> PairVerdicts:
        """Every configured pair's latest stored verdict, for the leaderboard's check."""
        return latest_verdicts(self.store(log), list(self.config.question_sets), list(self.config.retriever_identifiers))
