"""`document_vectors`: the shards of every dense retriever that declares `shards` (or `shard_size`), one
partition per (retriever, shard), so shards encode in parallel on as many workers as there are.

Two static dimensions (shards zero-padded so the UI sorts them) make the partition grid a retriever per
row; a retriever with fewer shards has padding partitions that encode nothing. `retrieval_evaluation`
depends on every shard of its own retriever. docs/dagster.md has the metadata.
"""

import time
import warnings
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from dagster import (
    AssetDep,
    AssetExecutionContext,
    AssetsDefinition,
    BetaWarning,
    DimensionPartitionMapping,
    MaterializeResult,
    MultiPartitionKey,
    MultiPartitionMapping,
    MultiPartitionsDefinition,
    StaticPartitionMapping,
    StaticPartitionsDefinition,
    asset,
    define_asset_job,
)

from retrieval_pipeline.core.base.secrets import scrubbed_errors
from retrieval_pipeline.core.services.configuration.project import ProjectConfig
from retrieval_pipeline.dagster_layer.assets import progress_of
from retrieval_pipeline.dagster_layer.metadata.project import padding_shard_metadata, shard_metadata
from retrieval_pipeline.dagster_layer.metadata.values import typed
from retrieval_pipeline.dagster_layer.names import GROUP, VECTORS_ASSET, Names
from retrieval_pipeline.dagster_layer.partitions import RETRIEVER_DIMENSION, key_dimensions

VECTORS_JOB = "document_vectors_job"
SHARD_DIMENSION = "shard"


@dataclass(frozen=True)
class ShardPartitions:
    """Each sharded dense retriever of the configuration with its shard count, in configuration order."""

    counts: tuple[tuple[str, int], ...]

    @cached_property
    def definition(self) -> MultiPartitionsDefinition:
        width = len(str(self.largest - 1))
        shards = StaticPartitionsDefinition([f"{index:0{width}d}" for index in range(self.largest)])
        retrievers = StaticPartitionsDefinition([identifier for identifier, _ in self.counts])
        return MultiPartitionsDefinition({RETRIEVER_DIMENSION: retrievers, SHARD_DIMENSION: shards})

    @property
    def largest(self) -> int:
        return max(count for _, count in self.counts)

    def keys(self) -> list[MultiPartitionKey]:
        """The real shards (no padding), retriever by retriever."""
        return [self.key(identifier, index) for identifier, count in self.counts for index in range(count)]

    def key(self, identifier: str, index: int) -> MultiPartitionKey:
        width = len(str(self.largest - 1))
        return MultiPartitionKey({RETRIEVER_DIMENSION: identifier, SHARD_DIMENSION: f"{index:0{width}d}"})

    def shard(self, partition_key: str) -> tuple[str, int]:
        identifier, index = key_dimensions(self.definition, partition_key, RETRIEVER_DIMENSION, SHARD_DIMENSION)
        return identifier, int(index)


@dataclass(frozen=True)
class ShardedVectors:
    """What the shards add to the code location: the evaluation depending on them, their asset and job."""

    evaluation: AssetsDefinition
    assets: tuple[AssetsDefinition, ...] = ()
    jobs: tuple = ()


def sharded_vectors(config: ProjectConfig, evaluation: AssetsDefinition, names: Names) -> ShardedVectors:
    """The evaluation with one more dependency, each partition on every shard of its own retriever (none
    for a retriever without shards); nothing added when no retriever has shards."""
    shards = shard_partitions(config)
    if shards is None:
        return ShardedVectors(evaluation)
    vectors = build_document_vectors(shards, names)
    retrievers = {identifier: identifier for identifier, _ in shards.counts}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BetaWarning)
        mapping = MultiPartitionMapping(
            {RETRIEVER_DIMENSION: DimensionPartitionMapping(RETRIEVER_DIMENSION, StaticPartitionMapping(retrievers))}
        )
    dependency = AssetDep(vectors, partition_mapping=mapping)
    depending = evaluation.map_asset_specs(
        lambda spec: spec.merge_attributes(deps=[dependency]) if spec.key == evaluation.key else spec
    )
    job = define_asset_job(names.name(VECTORS_JOB), [vectors], description="Encode shards of dense retrievers.")
    return ShardedVectors(depending, (vectors,), (job,))


def shard_partitions(config: ProjectConfig) -> ShardPartitions | None:
    """The sharded retrievers (None when there is none: no asset then), read with no model loaded."""
    context = config.build_context()
    kinds = {identifier: config.retriever_kind_class(identifier) for identifier in config.retriever_specs}
    counts = [
        (identifier, kinds[identifier].shard_count(identifier, spec.params, context))
        for identifier, spec in config.retriever_specs.items()
        if kinds[identifier].shards_document_vectors
    ]
    sharded = tuple((identifier, count) for identifier, count in counts if count is not None)
    return ShardPartitions(sharded) if sharded else None


def build_document_vectors(shards: ShardPartitions, names: Names) -> AssetsDefinition:
    @asset(
        key=names.key(VECTORS_ASSET),
        partitions_def=shards.definition,
        group_name=names.name(GROUP),
        required_resource_keys={names.resource},
        kinds={"numpy"},
        description="One shard of a dense retriever's document vectors, encoded into the vector cache (reused "
        "when its documents, model and settings are unchanged); the evaluation reads every shard of its retriever.",
    )
    def document_vectors(context: AssetExecutionContext) -> MaterializeResult:
        identifier, index = shards.shard(context.partition_key)
        with scrubbed_errors():
            return MaterializeResult(
                metadata=typed(encoded_shard(names.project(context).config, identifier, index, progress_of(context)))
            )

    return document_vectors


def encoded_shard(config: ProjectConfig, identifier: str, index: int, progress) -> dict[str, Any]:
    """The shard encoded (or found in the cache), as metadata; a padding partition encodes nothing."""
    started, params, context = time.perf_counter(), config.retriever_specs[identifier].params, config.build_context(progress)
    count = config.retriever_kind_class(identifier).shard_count(identifier, params, context)
    if index >= count:
        return padding_shard_metadata(identifier, count)
    sharded, vectors = config.retriever_kind(identifier).reporting(progress).encode_shard(index)
    return shard_metadata(index, sharded, vectors, time.perf_counter() - started)
