"""Machine judging in Dagster: `machine_judgements` fills a judging file's machine columns with a configured
judge, on demand only: a judge costs money (tokens), so no job, schedule or sensor selects it. The work is
the core's `machine_judge_file`, as `retrieval-eval judge FILE --judge NAME` does it. Its check
`machine_judge_agreement` is the judge's calibration against people (Cohen's kappa), a warning, never a
failure: answers reach a set only through `judge --apply --machine`, which has its own gate. No `from
__future__ import annotations`: Dagster reads the asset's config class from its annotation.
"""

from pathlib import Path

from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetCheckSpec,
    AssetExecutionContext,
    AssetsDefinition,
    Config,
    Failure,
    MaterializeResult,
    asset,
)
from pydantic import Field

from retrieval_pipeline.core.base.errors import UnknownIdentifierError
from retrieval_pipeline.core.scoring.stats.agreement import Agreement
from retrieval_pipeline.core.services.configuration.schema import JudgingSection
from retrieval_pipeline.core.services.labels.judging_files import SUFFIXES
from retrieval_pipeline.core.services.labels.machine_judging import judge_agreement, machine_judge_file
from retrieval_pipeline.dagster_layer.metadata.labels import judging_metadata
from retrieval_pipeline.dagster_layer.metadata.values import plotted, typed
from retrieval_pipeline.dagster_layer.names import JUDGING_ASSET, JUDGING_GROUP, Names
from retrieval_pipeline.dagster_layer.resources import RetrievalProject

AGREEMENT_CHECK = "machine_judge_agreement"


class MachineJudgingConfig(Config):
    judge: str = Field(description="A judge of the configuration's `judges:` section.")
    file: str = Field(
        description="A judging file written by `retrieval-eval pool`, or a folder of them: its newest .csv or .jsonl."
    )


def latest_judging_file(file: str, project: RetrievalProject) -> Path:
    """The file named, or the newest judging file of the folder named (relative to the configuration)."""
    path = project.config.resolve(file)
    if path.is_dir():
        files = [candidate for candidate in path.iterdir() if candidate.suffix in SUFFIXES and candidate.is_file()]
        if not files:
            raise Failure(f"no judging file ({' or '.join(SUFFIXES)}) in {path}")
        return max(files, key=lambda candidate: (candidate.stat().st_mtime, candidate.name))
    if not path.is_file():
        raise Failure(f"no judging file at {path}")
    return path


def agreement_check(agreement: Agreement | None, thresholds: JudgingSection) -> AssetCheckResult:
    """Passes when at least `min_calibration_rows` rows carry both answers and kappa reaches `min_kappa`."""
    n = agreement.n if agreement is not None else 0
    kappa = agreement.kappa if agreement is not None else None
    interval = "" if kappa is None else f"[{agreement.low:.3f}, {agreement.high:.3f}]"
    return AssetCheckResult(
        check_name=AGREEMENT_CHECK,
        passed=thresholds.calibrated(n, kappa),
        severity=AssetCheckSeverity.WARN,
        metadata={
            "kappa": plotted(kappa),
            "kappa_interval_95": interval,
            "n": n,
            "min_kappa": thresholds.min_kappa,
            "min_calibration_rows": thresholds.min_calibration_rows,
        },
    )


def build_machine_judgements(names: Names) -> AssetsDefinition:
    @asset(
        key=names.key(JUDGING_ASSET),
        group_name=names.name(JUDGING_GROUP),
        required_resource_keys={names.resource},
        description="A judging file's machine columns filled by a configured judge (on demand: a judge costs money).",
        check_specs=[
            AssetCheckSpec(
                AGREEMENT_CHECK,
                asset=names.key(JUDGING_ASSET),
                description="Cohen's kappa of the judge with people on the rows both answered, against judging.min_kappa.",
            )
        ],
    )
    def machine_judgements(context: AssetExecutionContext, config: MachineJudgingConfig) -> MaterializeResult:
        project = names.project(context)
        path = latest_judging_file(config.file, project)
        try:
            judge = project.config.judge(config.judge)
        except UnknownIdentifierError as error:  # a mistyped run config: one line, as `judge --judge` says it
            raise Failure(str(error)) from None
        summary = machine_judge_file(path, judge, project.config.judgement_cache)
        for cause, count in summary.tally.errors.most_common():
            context.log.warning(f"{count} row(s) not judged: {cause}")
        agreement = agreement_check(judge_agreement(path, summary.judged_by), project.config.judging)
        return MaterializeResult(metadata=typed(judging_metadata(summary, path, config.judge)), check_results=[agreement])

    return machine_judgements
