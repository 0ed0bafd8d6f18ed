"""`judge FILE --estimate`: each retriever's hit rates and nDCG three ways, from its latest stored run.

- human only: the questions whose every pooled row a person answered, scored under those answers;
- machine-filled: every question, each pooled row labelled by the machine's answer (biased as the judge is);
- prediction-powered (prediction_powered.py): the machine-filled figure corrected by the error it makes
  on the human-labelled questions, with an honest 95% interval.

A question with nothing pooled is scored the same under both and enters as known. The human-labelled
questions must be a random sample of the pooled ones (draw questions at random and answer all their
rows) for the intervals to hold; which ones they are is said in the output.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from retrieval_pipeline.core.golden.machine_labels import with_answers
from retrieval_pipeline.core.golden.questions import GoldenQuestionSet
from retrieval_pipeline.core.scoring.measures import TESTED
from retrieval_pipeline.core.scoring.rescoring import under_current_labels
from retrieval_pipeline.core.scoring.results import RunResult
from retrieval_pipeline.core.scoring.stats.prediction_powered import Estimate, classical_mean, ppi_mean
from retrieval_pipeline.core.services.labels.calibration import Answered


@dataclass(frozen=True)
class FigureEstimate:
    figure: str
    human_only: Estimate
    machine_filled: float
    powered: Estimate


@dataclass(frozen=True)
class RetrieverEstimates:
    retriever: str
    figures: tuple[FigureEstimate, ...]


@dataclass(frozen=True)
class Estimates:
    labelled: tuple[str, ...]
    """The pooled questions a person answered every row of."""
    pooled: int
    questions: int
    retrievers: tuple[RetrieverEstimates, ...]
    left_out: tuple[tuple[str, str], ...] = ()
    """(retriever, why) for each latest run that could not be rescored."""


def estimates(question_set: GoldenQuestionSet, runs: Sequence[RunResult], answered: Sequence[Answered]) -> Estimates:
    pooled = {row.question_id for row in answered}
    labelled = tuple(
        q.id
        for q in question_set.questions
        if q.id in pooled and all(r.human is not None for r in answered if r.question_id == q.id)
    )
    if not labelled:
        raise ValueError("no pooled question has a human answer on every row: answer whole questions, drawn at random")
    human = with_answers(question_set, {(r.question_id, r.document_id): r.human for r in answered if r.human is not None}, False)
    machine = with_answers(
        question_set, {(r.question_id, r.document_id): r.machine for r in answered if r.machine is not None}, False
    )
    results, left_out = [], []
    for run in runs:
        rescorings = [under_current_labels(run, labels) for labels in (human, machine)]
        refused = next((r.refused for r in rescorings if r.refused is not None), None)
        if refused is not None:
            left_out.append((run.retriever_identifier, refused))
            continue
        by_human, by_machine = (_figures(rescoring.run) for rescoring in rescorings)
        figures = tuple(_estimate(name, by_human[name], by_machine[name], pooled, labelled) for name in by_machine)
        results.append(RetrieverEstimates(run.retriever_identifier, figures))
    return Estimates(labelled, len(pooled), len(question_set.questions), tuple(results), tuple(left_out))


def _figures(run: RunResult) -> dict[str, dict[str, float]]:
    """Each question's tested hits and nDCG at the deepest cut-off (0 for an errored question), by id."""
    ids, answered = run.questions.ids, run.questions.answered
    values = {figure.key: run.questions.hits(figure.k).astype(float) for figure in TESTED if figure.k <= run.cutoffs[-1]}
    ndcg = f"ndcg@{run.cutoffs[-1]}"
    values[ndcg] = run.questions.metrics(run.cutoffs)[ndcg] * answered
    return {name: dict(zip(ids, column.tolist())) for name, column in values.items()}


def _estimate(
    name: str, human: dict[str, float], machine: dict[str, float], pooled: set[str], labelled: Sequence[str]
) -> FigureEstimate:
    exact = [machine[i] for i in machine if i not in pooled]
    predicted = [machine[i] for i in machine if i in pooled]
    kept = [i for i in labelled if i in machine and i in human]
    return FigureEstimate(
        figure=name,
        human_only=classical_mean([human[i] for i in kept], exact, len(predicted)),
        machine_filled=sum(machine.values()) / len(machine),
        powered=ppi_mean(predicted, [machine[i] for i in kept], [human[i] for i in kept], exact),
    )
