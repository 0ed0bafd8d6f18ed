"""Generated questions in Dagster (docs/generating.md).

`generated_questions` writes a generator's candidates for a set's gaps, on demand only: a generator costs
money, so no job, schedule, sensor or automation condition selects it; the work is the core's, as
`retrieval-eval generate` does it. `generated_set_agreement` reads stored runs only, costs nothing, and
follows each set's evaluations by declarative automation like the label audit: per set, because the
agreement is a set's (its history, its check and its decision to count its generated questions are the
set's), and a set whose generated questions disagree then warns on its own partition only. Its check
`generated_agreement` warns, never fails: the generated questions stay apart until someone accepts them.
No `from __future__ import annotations`: Dagster reads the asset's config class from its annotation.
"""

from typing import Literal

from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetDep,
    AssetExecutionContext,
    AssetsDefinition,
    Config,
    Failure,
    MaterializeResult,
    asset,
)
from pydantic import Field

from retrieval_pipeline.core.base.errors import RetrievalEvalError
from retrieval_pipeline.core.services.generated.generation import planned_generation
from retrieval_pipeline.core.services.generated.plan import GenerationOrder
from retrieval_pipeline.core.services.generated.validation import set_agreement
from retrieval_pipeline.core.services.traffic.coverage import named_set
from retrieval_pipeline.dagster_layer.metadata import generated as generated_ui
from retrieval_pipeline.dagster_layer.metadata.values import typed
from retrieval_pipeline.dagster_layer.names import (
    AGREEMENT_ASSET,
    EVALUATION_ASSET,
    GENERATION_ASSET,
    GROUP,
    JUDGING_GROUP,
    Names,
)
from retrieval_pipeline.dagster_layer.partitions import SET_DIMENSION, ProjectPartitions, one_dimension, partitioned_check
from retrieval_pipeline.dagster_layer.resources import RetrievalProject
from retrieval_pipeline.dagster_layer.sensors import after_upstream
from retrieval_pipeline.reports.agreement_chart import agreement_chart_png
from retrieval_pipeline.reports.charts import markdown_image

AGREEMENT_CHECK = "generated_agreement"


class GenerationConfig(Config):
    question_set: str = Field(description="A configured set, or the path of a set file.")
    generator: str = Field(description="A generator of the configuration's `generators:` section.")
    count: int = Field(ge=1, description="How many questions to ask the generator for.")
    source: Literal["log", "corpus"] = Field(
        "log", description="log: the log's uncovered clusters, by traffic; corpus: documents no question expects."
    )
    log: str | None = Field(None, description="A `query_logs` name or a log file (default: the set's `traffic:` log).")
    out: str = Field(description="The judging file to write (.csv or .jsonl), relative to the configuration.")
    depth: int = Field(10, ge=1, description="Each retriever's top K, judged beside each question.")
    seed: int = Field(0, description="The seed of the corpus's sample of documents.")


def build_generated_questions(names: Names) -> AssetsDefinition:
    @asset(
        key=names.key(GENERATION_ASSET),
        group_name=names.name(JUDGING_GROUP),
        required_resource_keys={names.resource},
        description="A generator's candidate questions for a set's gaps, in the judging-file shape (on demand: a "
        "generator costs money). Judge the file, then `retrieval-eval judge apply` it.",
    )
    def generated_questions(context: AssetExecutionContext, config: GenerationConfig) -> MaterializeResult:
        return generate_questions(context, config, names.project(context))

    return generated_questions


def generate_questions(context: AssetExecutionContext, config: GenerationConfig, project: RetrievalProject) -> MaterializeResult:
    out = project.config.resolve(config.out)
    order = GenerationOrder(
        config.question_set, config.generator, config.count, out, config.source, config.log, depth=config.depth, seed=config.seed
    )
    try:
        planned = planned_generation(project.config, order)
        summary = planned.generate()
    except RetrievalEvalError as error:  # a mistyped run config or a stopped generator: one line, as the command says it
        raise Failure(str(error)) from None
    for cause, count in summary.tally.errors.most_common():
        context.log.warning(f"{count} request(s) not answered: {cause}")
    return MaterializeResult(metadata=typed(generated_ui.generation_metadata(summary, planned)))


def build_generated_agreement(partitions: ProjectPartitions, names: Names) -> AssetsDefinition:
    check = partitioned_check(
        AGREEMENT_CHECK,
        names.key(AGREEMENT_ASSET),
        partitions.sets,
        description="Warns when, for top-1, top-3 or nDCG, the lower bound of the tau interval between the "
        "retrievers' rankings on the set's human and generated questions falls below generation.min_tau. "
        "Passes for a set without generated questions.",
    )

    @asset(
        key=names.key(AGREEMENT_ASSET),
        partitions_def=partitions.sets,
        group_name=names.name(GROUP),
        required_resource_keys={names.resource},
        deps=[AssetDep(names.key(EVALUATION_ASSET), partition_mapping=one_dimension(SET_DIMENSION))],
        automation_condition=after_upstream(),
        check_specs=[check],
        description="Whether a set's generated questions rank the retrievers as its human questions do, from "
        "their latest stored runs (`retrieval-eval validate-generated`). Refreshed by declarative automation "
        "after the set's evaluations.",
    )
    def generated_set_agreement(context: AssetExecutionContext) -> MaterializeResult:
        project = names.project(context)
        question_set = named_set(project.config, context.partition_key)
        config = project.config
        agreement = set_agreement(question_set, project.store(), list(config.retriever_specs), config.generation.min_tau)
        validation = agreement.validation
        alt = f"the retrievers' rankings on {context.partition_key}'s human and generated questions"
        chart = markdown_image(agreement_chart_png(validation), alt) if validation is not None else None
        metadata = generated_ui.agreement_metadata(question_set, validation, agreement.not_measured, chart)
        result = AssetCheckResult(
            check_name=AGREEMENT_CHECK,
            passed=agreement.passed,
            severity=AssetCheckSeverity.WARN,
            metadata=typed(generated_ui.agreement_check_metadata(validation)),
            description=metadata["agreement"],
        )
        return MaterializeResult(metadata=typed(metadata), check_results=[result])

    return generated_set_agreement
