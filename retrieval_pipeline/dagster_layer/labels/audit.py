"""The label audit in Dagster: a `labels_exist` check on each set, and a `label_audit` asset.

`labels_exist` is evaluated by the set's own step, right after the set is read: a failure fails the
set's partition, and an evaluation of a set whose latest materialization failed refuses to run, so
labels that name documents no corpus holds block evaluations until the set is fixed. Both call the
core's audit, so they say what `retrieval-eval audit` says.
"""

from dagster import (
    AssetCheckResult,
    AssetCheckSpec,
    AssetDep,
    AssetExecutionContext,
    AssetsDefinition,
    MaterializeResult,
    PartitionsDefinition,
    asset,
)

from retrieval_pipeline.core.services.labels.audit import audit_set, missing_labels
from retrieval_pipeline.dagster_layer.metadata.labels import (
    audit_metadata,
    labels_check_description,
    labels_check_metadata,
)
from retrieval_pipeline.dagster_layer.metadata.values import typed
from retrieval_pipeline.dagster_layer.names import EVALUATION_ASSET, GROUP, LABEL_AUDIT_ASSET, SET_ASSET, Names
from retrieval_pipeline.dagster_layer.partitions import SET_DIMENSION, ProjectPartitions, one_dimension, partitioned_check
from retrieval_pipeline.dagster_layer.resources import RetrievalProject
from retrieval_pipeline.dagster_layer.sensors import after_upstream

LABELS_CHECK = "labels_exist"


def labels_check_spec(partitions_def: PartitionsDefinition, names: Names) -> AssetCheckSpec:
    return partitioned_check(
        LABELS_CHECK,
        names.key(SET_ASSET),
        partitions_def,
        description="Every expected document id is in at least one known corpus (a corpus-aware "
        "retriever's or the set entry's `corpus:`); evaluations of the set wait until it passes.",
    )


def labels_check_result(project: RetrievalProject, set_identifier: str) -> AssetCheckResult:
    corpora, findings = missing_labels(project.config, set_identifier)
    return AssetCheckResult(
        check_name=LABELS_CHECK,
        passed=not findings,
        metadata=typed(labels_check_metadata(corpora, findings)),
        description=labels_check_description(corpora, findings),
    )


def build_label_audit(partitions: ProjectPartitions, names: Names) -> AssetsDefinition:
    @asset(
        key=names.key(LABEL_AUDIT_ASSET),
        partitions_def=partitions.sets,
        group_name=names.name(GROUP),
        required_resource_keys={names.resource},
        deps=[AssetDep(names.key(EVALUATION_ASSET), partition_mapping=one_dimension(SET_DIMENSION))],
        automation_condition=after_upstream(),
        description="The label audit of a set from its stored runs: suspect labels (every retriever misses "
        "them, two agree on another first document), unstable questions, repeated questions. Refreshed by "
        "declarative automation after the set's evaluations.",
    )
    def label_audit(context: AssetExecutionContext) -> MaterializeResult:
        project = names.project(context)
        report = audit_set(project.config, project.store(), context.partition_key)
        return MaterializeResult(metadata=typed(audit_metadata(report)))

    return label_audit
