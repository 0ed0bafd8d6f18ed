"""`judge apply FILE SET_FILE --machine`: human answers into the human lists as always, a machine judge's
answers into the set's machine lists, and only when the judge is calibrated well enough.

The gate reads the file's own calibration sample (rows a person and the judge both answered): fewer
rows than `judging.min_calibration_rows`, or a kappa below `judging.min_kappa` (or none: both answered
one way throughout), is refused naming both figures and their thresholds. `--force` applies anyway,
and the set says so (`machine_calibration.forced: true`, with the kappa and n at apply time), so a
forced label never reads as a calibrated one. One judge's answers per set: a file judged by another
judge than the set's `machine_judged_by`, or by several, is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from retrieval_pipeline.core.base.errors import InvalidInputError, quoted
from retrieval_pipeline.core.golden.judgements import Judgement, LabelChange, asked
from retrieval_pipeline.core.golden.machine_labels import MachineChange, machine_merged
from retrieval_pipeline.core.golden.question_files import load_question_set_file
from retrieval_pipeline.core.golden.questions import MachineCalibration
from retrieval_pipeline.core.golden.set_file_edits import relabel_set_file
from retrieval_pipeline.core.services.configuration.project import ProjectConfig
from retrieval_pipeline.core.services.labels.calibration import MACHINE, answered_rows, calibration_sample
from retrieval_pipeline.core.services.labels.judging_files import human_labels, is_candidate_row, question_rows


@dataclass(frozen=True)
class MachineApplied:
    human: list[LabelChange]
    machine: list[MachineChange]
    judged_by: str
    calibration: MachineCalibration


def apply_with_machine(
    judging_path: Path, set_path: Path, config: ProjectConfig, force: bool = False, record_judge: bool = False
) -> MachineApplied:
    """`record_judge`: the set's machine provenance is written even when no question of it changes (the
    generated questions about to be added carry this judge's labels, generated/questions.py)."""
    question_set = load_question_set_file(set_path)
    sample = question_rows(judging_path, question_set, candidates=True)  # people judged candidates' rows too
    known = {question.id for question in question_set.questions}
    numbered = [(where, row) for where, row in sample if not is_candidate_row(row, known)]
    answered = answered_rows(numbered)
    judged_by = _one_judge(sample, question_set.machine_judged_by)
    agreement = calibration_sample(answered_rows(sample))
    kappa, n = (agreement.kappa, agreement.n) if agreement is not None else (None, 0)
    thresholds = config.judging
    weak = not thresholds.calibrated(n, kappa)
    if weak and not force:
        shown = "undefined" if kappa is None else f"{kappa:.3f}"
        raise InvalidInputError(
            f"the machine judge is not calibrated well enough to apply its labels: n={n} rows with both answers "
            f"(needs >= {thresholds.min_calibration_rows}), kappa {shown} (needs >= {thresholds.min_kappa:g}); "
            "answer more rows (judge calibrate FILE --next N --out FILE) or apply with --force",
            source=str(judging_path),
        )
    human, human_changes = human_labels(question_set, numbered, config)
    known = {question.id: question for question in question_set.questions}
    answers = {}
    for (where, row), answer in zip(numbered, answered):
        if answer.machine is not None and answer.human is None:
            asked(
                question_set,
                known,
                Judgement(answer.question_id, answer.document_id, answer.machine, where, row.get("question", "")),
            )
            answers[(answer.question_id, answer.document_id)] = answer.machine
    machine, machine_changes = machine_merged(question_set, human, answers)
    recorded = MachineCalibration(kappa=kappa, n=n, forced=weak)
    if human or machine or record_judge:
        header = {"machine_judged_by": judged_by, "machine_calibration": recorded.model_dump(mode="json")}
        recorded_before = machine or question_set.machine_judged_by or record_judge
        relabel_set_file(set_path, human, machine, header if recorded_before else None)
    return MachineApplied(human_changes, machine_changes, judged_by, recorded)


def _one_judge(numbered: list[tuple[str, dict]], set_judge: str | None) -> str:
    """The one `judged_by` of the rows the machine answered (the set's own judge, when it has one)."""
    judges: dict[str, str] = {}
    for where, row in numbered:
        if row.get(MACHINE):
            judges.setdefault(str(row.get("judged_by") or ""), where)
    if "" in judges:
        raise InvalidInputError("a machine answer without the judge that gave it", source=judges[""], field="judged_by")
    if not judges:
        raise InvalidInputError("no row carries a machine answer: run `judge machine FILE --judge NAME` first", field=MACHINE)
    if len(judges) > 1 or (set_judge is not None and set_judge not in judges):
        named = ", ".join(quoted(judge) for judge in judges)
        also = f"; the set's machine labels are {quoted(set_judge)}'s" if set_judge else ""
        raise InvalidInputError(f"one judge's answers per set: the file holds {named}{also}", field="judged_by")
    return next(iter(judges))
