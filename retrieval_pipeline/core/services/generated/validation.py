"""Whether a set's generated questions rank the configured retrievers as its human questions do.

Read from the store, never asked again: each retriever's latest complete run of the set (its human
questions) and of `<set>.generated` (split.py), per question, for top-1, top-3 and nDCG at the
runs' deepest cut-off. The order test is core/scoring/stats/generated_agreement.py's: Kendall's tau between the
two rankings with a bootstrap interval over questions. The generated questions may count in the set's
verdicts once every measure's lower bound reaches `generation.min_tau` (`validate-generated --accept`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from retrieval_pipeline.core.base.errors import InvalidInputError, NotAcceptableError, quoted
from retrieval_pipeline.core.golden.question_files import load_question_set_file
from retrieval_pipeline.core.golden.questions import GeneratedQuestionsCounted, GoldenQuestionSet
from retrieval_pipeline.core.golden.set_file_edits import relabel_set_file
from retrieval_pipeline.core.scoring.results import RunResult
from retrieval_pipeline.core.scoring.stats.generated_agreement import MeasureAgreement, measure_agreement
from retrieval_pipeline.core.services.generated.split import generated_set_identifier
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore

HIT_CUTOFFS = (1, 3)


@dataclass(frozen=True)
class GeneratedValidation:
    set_identifier: str
    human_questions: int
    generated_questions: int
    runs: dict[str, tuple[str, str]]
    """Retriever to the run ids read: (the set's, the generated slice's)."""
    agreements: tuple[MeasureAgreement, ...]
    """One per measure, keyed by its stored name (`top1`, `top3`, `ndcg@10`)."""
    threshold: float

    @property
    def tau_low(self) -> dict[str, float]:
        return {agreement.measure: agreement.interval[0] for agreement in self.agreements}

    @property
    def reached(self) -> bool:
        """Every measure's interval lower bound at or above the threshold: the generated questions may count."""
        return all(agreement.reaches(self.threshold) for agreement in self.agreements)

    def to_dict(self) -> dict:
        return {
            "set": self.set_identifier,
            "generated_set": generated_set_identifier(self.set_identifier),
            "human_questions": self.human_questions,
            "generated_questions": self.generated_questions,
            "runs": {name: {"set": human, "generated": generated} for name, (human, generated) in self.runs.items()},
            "threshold": self.threshold,
            "reached": self.reached,
            "measures": [
                {
                    "measure": agreement.measure,
                    "tau": agreement.tau,
                    "interval": list(agreement.interval),
                    "human": dict(agreement.human),
                    "generated": dict(agreement.generated),
                    "difference": agreement.differences,
                }
                for agreement in self.agreements
            ],
        }


def validate_generated(
    question_set: GoldenQuestionSet, store: ResultStore, retrievers: Sequence[str], threshold: float
) -> GeneratedValidation:
    """Over those of `retrievers` (the configured ones) with a complete run of both the set and its slice."""
    identifier = question_set.identifier
    human_ids = [question.id for question in question_set.questions if question.generated is None]
    generated_ids = [question.id for question in question_set.questions if question.generated is not None]
    if not generated_ids:
        raise InvalidInputError(f"set {quoted(identifier)} has no generated questions: add them with judge apply first")
    if not human_ids:
        raise InvalidInputError(f"set {quoted(identifier)} has no human questions to validate its generated ones against")
    pairs = {}
    for retriever in retrievers:
        human, generated = (_latest(store, name, retriever) for name in (identifier, generated_set_identifier(identifier)))
        if human is not None and generated is not None:
            pairs[retriever] = (human, generated)
    if len(pairs) < 2:
        raise InvalidInputError(
            f"validating set {quoted(identifier)} needs the latest complete runs of at least two retrievers on both it and "
            f"{generated_set_identifier(identifier)}; {len(pairs)} of {', '.join(retrievers) or 'none'} have them: "
            f"run `retrieval-eval run {identifier} RETRIEVER` for more"
        )
    depth = _one_depth(identifier, [run for both in pairs.values() for run in both])
    human_ids = _common(identifier, "human", human_ids, [human for human, _ in pairs.values()])
    generated_ids = _common(identifier, "generated", generated_ids, [generated for _, generated in pairs.values()])
    human_scores = {name: _scores(human, human_ids, depth) for name, (human, _) in pairs.items()}
    generated_scores = {name: _scores(generated, generated_ids, depth) for name, (_, generated) in pairs.items()}
    agreements = tuple(
        measure_agreement(
            measure,
            {name: scores[measure] for name, scores in human_scores.items()},
            {name: scores[measure] for name, scores in generated_scores.items()},
        )
        for measure in next(iter(human_scores.values()))
    )
    runs = {name: (human.run_id, generated.run_id) for name, (human, generated) in pairs.items()}
    return GeneratedValidation(identifier, len(human_ids), len(generated_ids), runs, agreements, threshold)


@dataclass(frozen=True)
class SetAgreement:
    """What a set's agreement check reads: no validation for a set without generated questions, or with
    `not_measured` saying why its generated questions could not be compared."""

    validation: GeneratedValidation | None = None
    not_measured: str | None = None

    @property
    def passed(self) -> bool:
        """Nothing to compare passes; generated questions not measured, or ranking otherwise, do not."""
        return self.not_measured is None and (self.validation is None or self.validation.reached)


def set_agreement(
    question_set: GoldenQuestionSet, store: ResultStore, retrievers: Sequence[str], threshold: float
) -> SetAgreement:
    if not any(question.generated is not None for question in question_set.questions):
        return SetAgreement()
    try:
        return SetAgreement(validate_generated(question_set, store, retrievers, threshold))
    except InvalidInputError as error:  # too few runs of both, or runs cut at different depths
        return SetAgreement(not_measured=str(error))


def _latest(store: ResultStore, set_identifier: str, retriever: str) -> RunResult | None:
    return store.first_readable(stored for stored in store.history(HistoryKey(set_identifier, retriever)) if stored.complete)


def _one_depth(identifier: str, runs: list[RunResult]) -> int:
    """nDCG is taken at the runs' deepest cut-off, the same for every run, or the rankings would not compare."""
    depths = sorted({max(run.cutoffs) for run in runs})
    if len(depths) > 1 or depths[0] < max(HIT_CUTOFFS):
        raise InvalidInputError(
            f"the latest runs of set {quoted(identifier)} were cut at {', '.join(map(str, depths))}: validating needs one "
            f"deepest cut-off of at least {max(HIT_CUTOFFS)}; run them again under the same cut-offs"
        )
    return depths[0]


def _common(identifier: str, side: str, ids: list[str], runs: list[RunResult]) -> list[str]:
    """The set's questions that every run measured (a run older than a question lacks it)."""
    common = [question_id for question_id in ids if all(question_id in run.questions.positions for run in runs)]
    if not common:
        raise InvalidInputError(
            f"the latest runs of set {quoted(identifier)} measured none of its {side} questions: run the retrievers again"
        )
    return common


def _scores(run: RunResult, ids: list[str], depth: int) -> dict[str, list[float]]:
    """Each question's hit at 1 and at 3 (1 or 0) and its nDCG, in `ids`' order."""
    questions = run.questions.take(run.questions.positions[question_id] for question_id in ids)
    scores = {f"top{k}": questions.hits(k).astype(float).tolist() for k in HIT_CUTOFFS}
    scores[f"ndcg@{depth}"] = questions.metrics(run.cutoffs)[f"ndcg@{depth}"].tolist()
    return scores


def record_counted(set_path: Path, validation: GeneratedValidation, by: str | None, at: str) -> GeneratedQuestionsCounted:
    """Write into the set file that its generated questions count in its verdicts: `validated` when every
    lower bound reaches the threshold (refused otherwise, unless a person, `by`, decides it whatever the
    figures: a `person` decision)."""
    in_file = load_question_set_file(set_path).identifier
    if in_file != validation.set_identifier:
        raise InvalidInputError(f"holds set {quoted(in_file)}, not {quoted(validation.set_identifier)}", source=str(set_path))
    if by is None and not validation.reached:
        measure, low = min(validation.tau_low.items(), key=lambda item: item[1])
        raise NotAcceptableError(
            f"not accepted: the tau interval of {measure} starts at {low:.2f}, below generation.min_tau "
            f"{validation.threshold:g}; the generated questions stay apart (a person may count them anyway: --accept --by NAME)"
        )
    counted = GeneratedQuestionsCounted(
        because="validated" if validation.reached else "person",
        tau_low=validation.tau_low,
        threshold=validation.threshold,
        questions=validation.generated_questions,
        by=by,
        at=at,
    )
    relabel_set_file(set_path, {}, None, {"generated_questions": counted.model_dump(mode="json")})
    return counted
