"""The metadata of generated questions: a generator's pass (`generated_questions`) and whether a set's
generated questions rank the retrievers as its human ones do (`generated_set_agreement` and its check).

Counts, names and figures only: a generator's pass shows no question it wrote and no logged query (the
summary holds neither), and an error's cause is already scrubbed of secrets by the core.
"""

from __future__ import annotations

from typing import Any

from retrieval_pipeline.core.golden.questions import GoldenQuestionSet
from retrieval_pipeline.core.scoring.measures import figure_of
from retrieval_pipeline.core.scoring.stats.generated_agreement import MeasureAgreement
from retrieval_pipeline.core.services.generated.generation import GenerationSummary, PlannedGeneration
from retrieval_pipeline.core.services.generated.split import counted_because, generated_set_identifier
from retrieval_pipeline.core.services.generated.validation import GeneratedValidation
from retrieval_pipeline.dagster_layer.metadata.values import Column, Json, Link, Markdown, plotted, table

DROPPED_COLUMNS = (Column("reason", "string"), Column("candidates", "int"))
NO_GENERATED = "No generated questions: nothing to compare, nothing kept apart."


def generation_metadata(summary: GenerationSummary, planned: PlannedGeneration) -> dict[str, Any]:
    document, plan = summary.to_dict(), planned.plan
    return {
        "file": Link(str(planned.order.out)),
        "generated_by": summary.generated_by,
        "candidates": summary.written,
        "rows": summary.rows,
        "from": planned.order.origin,
        "log": plan.log or "none",
        "uncovered_clusters": plan.clusters,
        "requests": summary.planned,
        "asked": document["asked"],
        "from_cache": document["from_cache"],
        "errors": document["errors"],
        "errors_by_cause": Json(document["errors_by_cause"]),
        "dropped": document["dropped"],
        "dropped_by_reason": table(
            DROPPED_COLUMNS, ({"reason": reason, "candidates": n} for reason, n in document["dropped_by_reason"].items())
        ),
        "prompt_tokens": document["prompt_tokens"],
        "completion_tokens": document["completion_tokens"],
        "seconds": plotted(summary.seconds, 3),
    }


def agreement_metadata(
    question_set: GoldenQuestionSet, validation: GeneratedValidation | None, not_measured: str | None, chart: str | None
) -> dict[str, Any]:
    """`validation` None: the set has no generated questions, or `not_measured` says why they could not be
    compared; `chart`: the two rankings side by side as Markdown (an image), drawn above the core."""
    generated = sum(1 for question in question_set.questions if question.generated is not None)
    recorded = question_set.generated_questions
    metadata: dict[str, Any] = {
        "generated_questions": generated,
        "human_questions": len(question_set.questions) - generated,
        "counted": f"yes ({counted_because(recorded)})"
        if recorded is not None
        else f"no: kept apart in {generated_set_identifier(question_set.identifier)} until validate-generated --accept",
    }
    if validation is None:
        return metadata | {"agreement": NO_GENERATED if not generated else f"Not measured: {not_measured}"}
    metadata["agreement"] = agreement_description(validation)
    metadata["threshold"] = plotted(validation.threshold)
    metadata["reached"] = validation.reached
    for agreement in validation.agreements:
        key = agreement.measure
        metadata[f"{key}_tau"] = _tau_text(agreement, validation.threshold)
        metadata[f"{key}_tau_value"] = plotted(agreement.tau, 4)
        metadata[f"{key}_tau_low"] = plotted(agreement.interval[0], 4)
        metadata[f"{key}_tau_high"] = plotted(agreement.interval[1], 4)
    if chart is not None:
        metadata["rankings_chart"] = Markdown(chart)
    metadata["differences"] = _differences(validation)
    metadata["runs"] = Json({name: {"set": human, "generated": gen} for name, (human, gen) in validation.runs.items()})
    return metadata


def agreement_description(validation: GeneratedValidation) -> str:
    below = [a.measure for a in validation.agreements if not a.reaches(validation.threshold)]
    if not below:
        return f"Every measure's tau interval starts at or above generation.min_tau {validation.threshold:g}."
    low = {a.measure: a.interval[0] for a in validation.agreements}
    return (
        f"The tau interval starts below generation.min_tau {validation.threshold:g} for "
        + ", ".join(f"{m} ({low[m]:+.2f})" for m in below)
        + ": the generated questions do not rank the retrievers as the human ones do."
    )


def agreement_check_metadata(validation: GeneratedValidation | None) -> dict[str, Any]:
    if validation is None:
        return {}
    return {"threshold": plotted(validation.threshold)} | {
        f"{a.measure}_tau_low": plotted(a.interval[0], 4) for a in validation.agreements
    }


def _tau_text(agreement: MeasureAgreement, threshold: float) -> str:
    """`-1.00 [-1.00, +0.33]: the interval's lower bound -1.00 is below 0.8`, as `validate-generated` prints it."""
    tau = "n/a" if agreement.tau is None else f"{agreement.tau:+.2f}"
    low, high = agreement.interval
    return f"{tau} [{low:+.2f}, {high:+.2f}]: {agreement.gate_text(threshold)}"


def _differences(validation: GeneratedValidation):
    """A row per retriever: per measure, its score on the human questions, on the generated, and the difference."""
    columns = [Column("retriever", "string")]
    for agreement in validation.agreements:
        title = figure_of(agreement.measure).title
        columns += [
            Column(f"{agreement.measure}_human", "string", description=f"{title} on the human questions"),
            Column(f"{agreement.measure}_generated", "string", description=f"{title} on the generated questions"),
            Column(f"{agreement.measure}_difference", "string", description="Generated less human"),
        ]
    rows = []
    for name in validation.runs:
        row = {"retriever": name}
        for agreement in validation.agreements:
            figure, human, generated = figure_of(agreement.measure), agreement.human[name], agreement.generated[name]
            row[f"{agreement.measure}_human"] = figure.text(human)
            row[f"{agreement.measure}_generated"] = figure.text(generated)
            row[f"{agreement.measure}_difference"] = figure.change_text(generated - human)
        rows.append(row)
    return table(columns, rows)
