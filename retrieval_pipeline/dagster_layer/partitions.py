"""Partitions come from the project configuration, read when the definitions load.

Static partitions, not dynamic ones: the configuration is the single place where sets and retrievers
are declared, so the partitions are a pure function of it. Adding a set or a retriever is an edit of
the configuration followed by a reload of the code location ("Reload" in the UI, or a restart of
`dagster dev`); there is no second registry (a dynamic-partitions table in the instance) to keep in
step with the file, and a partition can never name a set the configuration no longer has.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import cached_property

from dagster import (
    AssetCheckSpec,
    AssetKey,
    BetaWarning,
    MultiPartitionKey,
    MultiPartitionsDefinition,
    MultiToSingleDimensionPartitionMapping,
    PartitionsDefinition,
    PreviewWarning,
    StaticPartitionsDefinition,
)

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.services.configuration.project import ProjectConfig

SET_DIMENSION = "set"
RETRIEVER_DIMENSION = "retriever"


@dataclass(frozen=True)
class ProjectPartitions:
    set_identifiers: tuple[str, ...]
    retriever_identifiers: tuple[str, ...]

    @cached_property
    def sets(self) -> StaticPartitionsDefinition:
        return StaticPartitionsDefinition(list(self.set_identifiers))

    @cached_property
    def retrievers(self) -> StaticPartitionsDefinition:
        return StaticPartitionsDefinition(list(self.retriever_identifiers))

    @cached_property
    def evaluations(self) -> MultiPartitionsDefinition:
        return MultiPartitionsDefinition({SET_DIMENSION: self.sets, RETRIEVER_DIMENSION: self.retrievers})

    def evaluation_key(self, set_identifier: str, retriever_identifier: str) -> MultiPartitionKey:
        return MultiPartitionKey({SET_DIMENSION: set_identifier, RETRIEVER_DIMENSION: retriever_identifier})

    def evaluation_keys(self, retriever_identifier: str | None = None) -> list[MultiPartitionKey]:
        """Every (set, retriever) pair in configuration order, or only one retriever's pairs."""
        return [
            self.evaluation_key(set_identifier, retriever)
            for retriever in self.retriever_identifiers
            if retriever_identifier is None or retriever == retriever_identifier
            for set_identifier in self.set_identifiers
        ]

    def dimensions(self, partition_key: str) -> tuple[str, str]:
        return evaluation_pair(self.evaluations, partition_key)


def evaluation_pair(partitions_def: MultiPartitionsDefinition, partition_key: str) -> tuple[str, str]:
    """The (set, retriever) of an evaluation's partition key."""
    return key_dimensions(partitions_def, partition_key, SET_DIMENSION, RETRIEVER_DIMENSION)


def key_dimensions(partitions_def: MultiPartitionsDefinition, partition_key: str, *dimensions: str) -> tuple[str, ...]:
    """The named dimensions of a partition key, given as a MultiPartitionKey or its string (its dimensions
    in the order of their names, joined by `|`): the one place a key is read back."""
    if not isinstance(partition_key, MultiPartitionKey):
        partition_key = partitions_def.get_partition_key_from_str(partition_key)
    named = named_dimensions(partition_key)
    return tuple(named[dimension] for dimension in dimensions)


def named_dimensions(partition_key: str | MultiPartitionKey | None) -> dict[str | None, str]:
    """Every dimension of a key by its name; a plain key as its one unnamed dimension; no key, none."""
    if isinstance(partition_key, MultiPartitionKey):
        return dict(partition_key.keys_by_dimension)
    return {None: partition_key} if partition_key is not None else {}


def project_partitions(config: ProjectConfig, source: str) -> ProjectPartitions:
    """Set identifiers need the sets loaded (files, BEIR folders, plugins); retrievers are not built.
    A configuration without sets or without retrievers is refused: it would have nothing to partition."""
    partitions = ProjectPartitions(tuple(config.question_sets), tuple(config.retriever_identifiers))
    for what, identifiers in (("question set", partitions.set_identifiers), ("retriever", partitions.retriever_identifiers)):
        if not identifiers:
            raise InvalidInputError(f"no {what} is configured; the Dagster pipeline needs at least one", source=source)
    return partitions


def one_dimension(dimension: str) -> MultiToSingleDimensionPartitionMapping:
    """Explicit rather than inferred, so it stays right even if set and retriever keys ever coincide.
    The mapping class is marked beta in Dagster 1.13; its warning would repeat at every load."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BetaWarning)
        return MultiToSingleDimensionPartitionMapping(partition_dimension_name=dimension)


def partitioned_check(name: str, asset: AssetKey, partitions_def: PartitionsDefinition, **spec) -> AssetCheckSpec:
    """A check recorded against each partition, so the UI shows it per partition. Partitioned checks are a
    preview feature in Dagster 1.13; its warning would repeat at every load."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PreviewWarning)
        return AssetCheckSpec(name, asset=asset, partitions_def=partitions_def, **spec)
