"""Calibrating a machine judge against people: `judge FILE --calibrate`.

The rows of a judging file that carry both a person's `judgement` and a judge's `machine_judgement` are
the calibration sample: kappa, its interval and what it rests on (agreement.py). The rows to answer next
are drawn at random, seeded, stratified by the machine's answer in proportion to its yes and no among
the rows no person answered: never chosen by the judge (rows it is unsure of would flatter or damn it),
and a sample that stays a random sample of the pool, as prediction-powered estimates need. The machine's
answer is left out of the file written, so the person answers blind. The retrievers' ranking under
human labels and under human + machine labels, from their latest stored runs rescored, says whether
the machine labels would change which retriever wins.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from retrieval_pipeline.core.base.errors import InvalidInputError, quoted
from retrieval_pipeline.core.golden.machine_labels import HUMAN, HUMAN_AND_MACHINE, scored_under, with_answers
from retrieval_pipeline.core.golden.questions import GoldenQuestionSet
from retrieval_pipeline.core.scoring.measures import TESTED
from retrieval_pipeline.core.scoring.rescoring import under_current_labels
from retrieval_pipeline.core.scoring.results import RunResult
from retrieval_pipeline.core.scoring.stats.agreement import Agreement, kappa_agreement, kendall_tau, rows_for_width
from retrieval_pipeline.core.services.configuration.project import ProjectConfig
from retrieval_pipeline.core.services.labels.judging_files import FIELDS, YES, numbered_judging_rows
from retrieval_pipeline.core.services.labels.pooling import latest_runs
from retrieval_pipeline.core.storage.store import ResultStore

MACHINE, JUDGED_BY = "machine_judgement", "judged_by"
BLIND = tuple(name for name in FIELDS if name not in (MACHINE, JUDGED_BY, "machine_grade"))
"""The columns a file of rows to answer next keeps: the machine's answer is not shown to the person."""


@dataclass(frozen=True)
class Answered:
    """One row's answers: None where nobody (person or machine) answered."""

    question_id: str
    document_id: str
    human: bool | None
    machine: bool | None
    judged_by: str


@dataclass(frozen=True)
class RankingAgreement:
    """The retrievers' deepest tested hit rate under each label choice, and Kendall's tau between them."""

    figure: str
    scores: dict[str, dict[str, float]]
    """Label choice to retriever to rate."""
    tau: float | None
    left_out: tuple[tuple[str, str], ...] = ()
    """(retriever, why) for each latest run that could not be rescored."""


@dataclass(frozen=True)
class Calibration:
    agreement: Agreement | None
    """None when no row carries both answers."""
    width: float
    more_rows: int | None
    rows: int
    machine_only: int
    """Rows the machine answered and no person did: where the next human answers come from."""
    judged_by: tuple[str, ...]
    ranking: RankingAgreement | None = None
    ranking_note: str | None = None


def answered_rows(numbered: Sequence[tuple[str, dict]]) -> list[Answered]:
    """Each row's answers, from rows as the judging-file reader gives them: it has refused a
    `machine_judgement` other than yes, no or nothing, naming its line, and lower-cased the rest.

    A (question, document) on two rows is refused naming both: counted twice, its answers would weigh
    double in the calibration sample (a gate passed on rows counted twice) and in the rows drawn next."""
    answered = []
    seen: dict[tuple[str, str], str] = {}
    for where, row in numbered:
        pair = (row["question_id"], row["document_id"])
        first = seen.setdefault(pair, where)
        if first != where:
            raise InvalidInputError(
                f"question {quoted(pair[0])}, document {quoted(pair[1])} is also on the row at {first}: each pair is one "
                "row, or its answers would count twice in the calibration; keep one of the two rows",
                source=where,
            )
        machine = row.get(MACHINE) or ""
        answered.append(
            Answered(
                row["question_id"],
                row["document_id"],
                row["judgement"] == YES if row["judgement"] else None,
                machine == YES if machine else None,
                str(row.get(JUDGED_BY) or ""),
            )
        )
    return answered


def calibration_sample(answered: Sequence[Answered]) -> Agreement | None:
    """The agreement on the rows a person and the machine both answered; None when there are none."""
    pairs = [(row.human, row.machine) for row in answered if row.human is not None and row.machine is not None]
    return kappa_agreement(pairs) if pairs else None


def calibration(answered: Sequence[Answered], width: float) -> Calibration:
    agreement = calibration_sample(answered)
    return Calibration(
        agreement=agreement,
        width=width,
        more_rows=rows_for_width(agreement, width) if agreement is not None else None,
        rows=len(answered),
        machine_only=sum(1 for row in answered if row.machine is not None and row.human is None),
        judged_by=tuple(sorted({row.judged_by for row in answered if row.machine is not None and row.judged_by})),
    )


def next_rows(answered: Sequence[Answered], count: int, seed: int) -> list[int]:
    """Positions (in file order) of up to `count` rows the machine answered and no person did: a seeded
    random sample, each machine answer's share of it as among those rows (largest remainders)."""
    waiting = [i for i, row in enumerate(answered) if row.machine is not None and row.human is None]
    strata = [[i for i in waiting if answered[i].machine is answer] for answer in (True, False)]
    count = min(count, len(waiting))
    quotas = [count * len(stratum) // len(waiting) if waiting else 0 for stratum in strata]
    remainders = sorted(range(2), key=lambda s: -(count * len(strata[s]) % max(len(waiting), 1)))
    for s in remainders[: count - sum(quotas)]:
        quotas[s] += 1
    generator = random.Random(seed)
    return sorted(i for stratum, quota in zip(strata, quotas) for i in generator.sample(stratum, quota))


def ranking_agreement(
    question_set: GoldenQuestionSet, runs: Sequence[RunResult], answered: Sequence[Answered]
) -> RankingAgreement:
    """Each run rescored under the set's labels grown by the file's human answers, then by the machine's
    on the rows no person answered; the figure is the deepest tested hit rate every run reaches."""
    human = with_answers(question_set, {(r.question_id, r.document_id): r.human for r in answered if r.human is not None}, False)
    machine = {(r.question_id, r.document_id): r.machine for r in answered if r.machine is not None and r.human is None}
    labelled = {HUMAN: human, HUMAN_AND_MACHINE: scored_under(with_answers(human, machine, True), HUMAN_AND_MACHINE)}
    reach = min((run.cutoffs[-1] for run in runs), default=0)
    figure = next((f for f in reversed(TESTED) if f.k <= reach), TESTED[0])
    scores: dict[str, dict[str, float]] = {choice: {} for choice in labelled}
    left_out = []
    for run in runs:
        rescorings = {choice: under_current_labels(run, labels) for choice, labels in labelled.items()}
        refused = next((r.refused for r in rescorings.values() if r.refused is not None), None)
        if refused is not None:
            left_out.append((run.retriever_identifier, refused))
            continue
        for choice, rescoring in rescorings.items():
            scores[choice][run.retriever_identifier] = rescoring.run.hit_rate(figure.k)
    tau = kendall_tau(scores[HUMAN], scores[HUMAN_AND_MACHINE]) if len(scores[HUMAN]) > 1 else None
    return RankingAgreement(figure.key, scores, tau, tuple(left_out))


def set_of_rows(sets: Sequence[GoldenQuestionSet], answered: Sequence[Answered]) -> GoldenQuestionSet:
    """The one set among `sets` that asks every question the file names (the set it was pooled from)."""
    wanted = {row.question_id for row in answered}
    holding = [s for s in sets if wanted <= {q.id for q in s.questions}]
    if len(holding) != 1:
        found = ", ".join(s.identifier for s in holding) or "none"
        raise InvalidInputError(
            f"the file's questions are in {len(holding)} configured sets ({found}): name one with --set", field="set"
        )
    return holding[0]


def calibrate_file(
    judging_path: Path, width: float, config: ProjectConfig, store: ResultStore, set_identifier: str | None
) -> tuple[Calibration, list[tuple[str, dict]], list[Answered]]:
    """The file's calibration, its rows and their answers; the ranking from the latest stored runs of its
    set (named, or the one configured set asking all its questions, else the ranking says why not)."""
    numbered = numbered_judging_rows(judging_path)
    answered = answered_rows(numbered)
    result = calibration(answered, width)
    try:
        question_set, runs = pooled_set_runs(config, store, set_identifier, answered)
        ranked = replace(result, ranking=ranking_agreement(question_set, runs, answered))
    except InvalidInputError as error:
        if set_identifier is not None:
            raise
        ranked = replace(result, ranking_note=error.problem)
    return ranked, numbered, answered


def pooled_set_runs(
    config: ProjectConfig, store: ResultStore, set_identifier: str | None, answered: Sequence[Answered]
) -> tuple[GoldenQuestionSet, list[RunResult]]:
    """The set the file was pooled from (named, or the one configured set asking all its questions) and
    the latest stored run of each retriever on it."""
    identifiers = [set_identifier] if set_identifier else list(config.question_sets)
    question_set = set_of_rows([config.question_set(identifier) for identifier in identifiers], answered)
    return question_set, latest_runs(store, question_set.identifier)
