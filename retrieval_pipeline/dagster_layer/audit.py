"""The label audit in Dagster: a `labels_exist` check on each set, and a `label_audit` asset.

`labels_exist` is evaluated by the set's own step, right after the set is read. A failure fails the
set's partition (the set is not materialized, assets.py), and an evaluation of a set whose latest
materialization failed refuses to run, so a set whose labels name documents no corpus holds is not
evaluated until it is fixed and materialized again. The audit refreshes itself after its set's
evaluations (declarative automation). Both call the core's audit, so they say what `retrieval-eval
audit` says.
"""

from collections import Counter

from dagster import (
    AssetCheckResult,
    AssetCheckSpec,
    AssetDep,
    AssetExecutionContext,
    AssetKey,
    AssetsDefinition,
    MaterializeResult,
    MetadataValue,
    PartitionsDefinition,
    TableColumn,
    TableSchema,
    asset,
)

from retrieval_pipeline.core.base.formatting import percent
from retrieval_pipeline.core.scoring.measures import HIT_RATE, TESTED, Figure
from retrieval_pipeline.core.services.audit import AuditReport, audit_set, missing_labels
from retrieval_pipeline.core.services.label_audit import OPTIMISTIC, Finding
from retrieval_pipeline.dagster_layer.checks import EVALUATION_ASSET
from retrieval_pipeline.dagster_layer.metadata import plotted, table
from retrieval_pipeline.dagster_layer.partitions import SET_DIMENSION, ProjectPartitions, one_dimension, partitioned_check
from retrieval_pipeline.dagster_layer.resources import RetrievalProject
from retrieval_pipeline.dagster_layer.sensors import after_upstream

LABELS_CHECK = "labels_exist"
SET_ASSET = "golden_question_set"
MAX_ROWS = 200

FINDINGS_SCHEMA = TableSchema(
    columns=[
        TableColumn("severity", "string"),
        TableColumn("kind", "string"),
        TableColumn("question_id", "string"),
        TableColumn("what_is_wrong", "string"),
    ]
)
OPTIMISTIC_SCHEMA = TableSchema(
    columns=[
        TableColumn("retriever", "string"),
        *[
            column
            for number, figure in enumerate(TESTED)
            for column in (
                TableColumn(figure.key, "string"),
                TableColumn(
                    OPTIMISTIC + figure.key, "string", description=None if number else "If every candidate were relevant"
                ),
            )
        ],
    ]
)


def labels_check_spec(partitions_def: PartitionsDefinition) -> AssetCheckSpec:
    return partitioned_check(
        LABELS_CHECK,
        SET_ASSET,
        partitions_def,
        description="Every expected document id is in at least one known corpus (a corpus-aware "
        "retriever's or the set entry's `corpus:`); evaluations of the set wait until it passes.",
    )


def labels_check_result(project: RetrievalProject, set_identifier: str) -> AssetCheckResult:
    corpora, findings = missing_labels(project.config, set_identifier)
    return AssetCheckResult(
        check_name=LABELS_CHECK,
        passed=not findings,
        metadata={
            "corpora": list(corpora),
            "missing_label_count": len(findings),
            "missing_labels": _findings_table(findings),
        },
        description=_missing_summary(findings) if findings else f"Every label is in {len(corpora)} known corpora.",
    )


def build_label_audit(partitions: ProjectPartitions, group: str) -> AssetsDefinition:
    @asset(
        partitions_def=partitions.sets,
        group_name=group,
        deps=[AssetDep(AssetKey(EVALUATION_ASSET), partition_mapping=one_dimension(SET_DIMENSION))],
        automation_condition=after_upstream(),
        description="The label audit of a set from its stored runs: suspect labels (every retriever misses "
        "them, two agree on another first document), unstable questions, repeated questions. Refreshed by "
        "declarative automation after the set's evaluations.",
    )
    def label_audit(context: AssetExecutionContext, project: RetrievalProject) -> MaterializeResult:
        return MaterializeResult(metadata=audit_metadata(audit_set(project.config, project.store(), context.partition_key)))

    return label_audit


def audit_metadata(report: AuditReport) -> dict:
    counts = dict(Counter(finding.kind for finding in report.findings))
    metadata = {
        "finding_count": len(report.findings),
        "suspect_label_count": counts.get("suspect_label", 0),
        "unstable_question_count": counts.get("unstable_question", 0),
        "findings_by_kind": counts,
        "retrievers": list(report.retrievers),
        "corpora": list(report.corpora),
    }
    if report.power is not None:
        metadata["power"] = report.power.sentence
        for cutoff in report.power.cutoffs:
            if cutoff.detectable_drop is not None:
                metadata[f"{Figure(HIT_RATE, cutoff.k).key}_detectable_drop"] = plotted(cutoff.detectable_drop)
            if cutoff.questions_needed is not None:
                metadata[f"{Figure(HIT_RATE, cutoff.k).key}_questions_needed"] = cutoff.questions_needed
    if report.findings:
        metadata["findings"] = _findings_table(list(report.findings))
    if report.optimistic_rates:
        texts = {
            name: {p + f.key: percent(rates[p + f.column]) for f in TESTED for p in ("", OPTIMISTIC)}
            for name, rates in report.optimistic_rates.items()
        }
        metadata["optimistic_rates"] = table(OPTIMISTIC_SCHEMA, ({"retriever": name, **row} for name, row in texts.items()))
    return metadata


def _findings_table(findings: list[Finding]) -> MetadataValue:
    rows = (
        {"severity": f.severity, "kind": f.kind, "question_id": f.question_id or "-", "what_is_wrong": f.message}
        for f in findings[:MAX_ROWS]
    )
    return table(FINDINGS_SCHEMA, rows)


def _missing_summary(findings: list[Finding]) -> str:
    first = findings[0]
    return (
        f"{len(findings)} label(s) name documents no corpus holds, e.g. question '{first.question_id}': "
        f"'{first.as_dict()['document_id']}'."
    )
