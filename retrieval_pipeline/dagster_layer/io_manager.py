"""The assets' values, as `load_asset_value` and downstream assets receive them: pyarrow Tables read
from the result store's own files (a set's questions, a partition's latest run, the leaderboard).

Several partitions come back as ONE table with the set (and retriever) as columns, so a group-by
replaces a dict of per-partition tables. Nothing is written here: the store saves each run once, inside
the evaluation. Dagster's UPathIOManager does not fit: it derives one path per partition from the asset
key, while a partition's value here is the newest of many run-stamped files; reusing the store keeps
one reader for every consumer (CLI, assets, IO manager) and no second copy of any file.
"""

from __future__ import annotations

from collections.abc import Callable

from dagster import ConfigurableIOManager, InputContext, OutputContext
from pydantic import PrivateAttr

from retrieval_pipeline.core.base.errors import StoreError, UnknownIdentifierError
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore
from retrieval_pipeline.dagster_layer.names import EVALUATION_ASSET, LEADERBOARD_ASSET, SET_ASSET
from retrieval_pipeline.dagster_layer.partitions import evaluation_pair
from retrieval_pipeline.dagster_layer.resources import RetrievalProject


def _question_set(store: ResultStore, context: InputContext, partition_key: str):
    return store.stored_question_set(partition_key)


def _evaluation(store: ResultStore, context: InputContext, partition_key: str):
    return store.latest_run_table(HistoryKey(*evaluation_pair(context.asset_partitions_def, partition_key)))


PARTITION_READERS: dict[str, Callable] = {SET_ASSET: _question_set, EVALUATION_ASSET: _evaluation}


class ResultStoreIOManager(ConfigurableIOManager):
    """Reads the assets' values from the result store, by asset name: the key's last part, whatever the
    component instance's prefix."""

    config_path: str | None = None
    store_uri: str | None = None
    """The `project` resource's own settings, so a value is read from the store the run wrote to. Not the
    resource itself: a nested resource would make this a context-manager resource, which a sensor
    evaluated outside a `with build_sensor_context(...)` block cannot open."""

    _project: RetrievalProject | None = PrivateAttr(default=None)

    @property
    def project(self) -> RetrievalProject:
        if self._project is None:
            self._project = RetrievalProject(config_path=self.config_path, store_uri=self.store_uri)
        return self._project

    def handle_output(self, context: OutputContext, obj: object) -> None:
        """The asset already stored its value through the result store; a returned value would be lost."""
        if obj is not None:
            raise TypeError(
                f"asset {context.asset_key.to_user_string()}: its value is written by the result store, so the "
                f"asset returns a MaterializeResult; got a {type(obj).__name__}"
            )

    def load_input(self, context: InputContext):
        name, asset = context.asset_key.path[-1], context.asset_key.to_user_string()
        if name == LEADERBOARD_ASSET:
            return self.project.leaderboard(context.log).to_table()
        if name not in PARTITION_READERS:
            raise UnknownIdentifierError("asset with a value in the result store", asset, [*PARTITION_READERS, LEADERBOARD_ASSET])
        return self._partitions(context, asset, PARTITION_READERS[name])

    def _partitions(self, context: InputContext, asset: str, read: Callable):
        import pyarrow as pa

        store = self.project.store(context.log)
        keys = context.asset_partition_keys if context.has_asset_partitions else context.asset_partitions_def.get_partition_keys()
        tables, missing = [], []
        for key in keys:
            table = read(store, context, key)
            if table is None:
                missing.append(key)
            else:
                tables.append(table)
        allow_missing = bool((context.definition_metadata or {}).get("allow_missing_partitions", False))
        if missing and (not allow_missing or not tables):
            listing = ", ".join(str(key) for key in missing)
            raise StoreError(
                f"{asset}: nothing stored for partition(s) {listing} in the result store {store.uri!r}; materialize them first"
            )
        for key in missing:
            context.log.warning(f"{asset}: partition {key} has nothing stored yet; skipped (allow_missing_partitions)")
        return tables[0] if len(tables) == 1 else pa.concat_tables(tables, promote_options="default")
