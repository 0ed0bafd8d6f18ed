"""Generated questions kept apart from the human ones until they are shown to rank retrievers alike.

A set's generated questions (`GoldenQuestion.generated`) are asked with the others, in the same pass,
and their results are stored as a run of their own under the derived set `<set>.generated`: a history,
a baseline and a verdict of its own that gate nothing. The set's own run, its figures and its verdict,
are the human questions' until the set records `generated_questions` (`validate-generated --accept`);
then they count there too, and the slice is still stored. The verdict's sentence says which, so no
figure is ever read without knowing whether generated questions are in it.

A generated question confirmed by a machine judge only has no human expected id: under `labels: human`
it would score as a question nothing answers, so it is left out of both runs (the sentence counts it)
and scored under `labels: human+machine`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.golden.generated import generated_set_identifier
from retrieval_pipeline.core.golden.questions import GeneratedQuestionsCounted, GoldenQuestionSet
from retrieval_pipeline.core.scoring.results import RunResult


@dataclass(frozen=True)
class GeneratedSplit:
    """A set with generated questions, as one pass asks it and as its two runs score it."""

    asked: GoldenQuestionSet
    """Every question either run scores, in the set's order: the one pass of the retriever."""
    counted: GoldenQuestionSet
    """The set's own run: the human questions, and the generated ones once the set counts them."""
    generated: GoldenQuestionSet | None
    """The generated questions as `<set>.generated`; None when none of them scores under these labels."""
    unscored: int
    """Generated questions with no expected id under these labels (a machine judge's yes only)."""

    def note(self) -> str:
        """The sentence every verdict of the set's own run ends with."""
        identifier = self.counted.identifier
        recorded = self.counted.generated_questions
        count = 0 if self.generated is None else len(self.generated.questions)
        if recorded is None:
            note = f"{count} generated question(s) kept apart (not counted): see {generated_set_identifier(identifier)}"
        else:
            why = counted_because(recorded)
            note = f"{count} generated question(s) counted ({why}); also in {generated_set_identifier(identifier)}"
        if self.unscored:
            note += f"; {self.unscored} confirmed by a machine judge only, scored under labels human+machine"
        return note + "."


def counted_because(recorded: GeneratedQuestionsCounted) -> str:
    """Why a set counts its generated questions, as its verdicts and its agreement asset say it."""
    known = [bound for bound in recorded.tau_low.values() if bound is not None]
    low = f"tau lower bound {min(known):.2f}" if known else "no tau"
    if recorded.because == "validated":
        return f"validated: {low} >= {recorded.threshold:g}"
    return f"accepted by {recorded.by}: {low}, threshold {recorded.threshold:g}"


def split_generated(question_set: GoldenQuestionSet) -> GeneratedSplit | None:
    """`question_set` as the labels score it (machine_labels.scored_under); None without generated questions."""
    generated = [question for question in question_set.questions if question.generated is not None]
    if not generated:
        return None
    scored = [question for question in generated if question.expected_document_ids]
    kept = {question.id for question in scored}
    human = [question for question in question_set.questions if question.generated is None]
    counts = question_set.generated_questions is not None
    asked = tuple(question for question in question_set.questions if question.generated is None or question.id in kept)
    counted = asked if counts else tuple(human)
    if not counted:
        raise InvalidInputError(
            f"set {question_set.identifier!r} holds only generated questions: they are kept apart until checked "
            "against human ones (docs/generating.md), so there is nothing to evaluate; add human questions first"
        )
    apart = None
    if scored:
        apart = question_set.model_copy(
            update={"identifier": generated_set_identifier(question_set.identifier), "questions": tuple(scored)}
        )
    return GeneratedSplit(
        asked=question_set.model_copy(update={"questions": asked}),
        counted=question_set.model_copy(update={"questions": counted}),
        generated=apart,
        unscored=len(generated) - len(scored),
    )


def sliced_run(run: RunResult, question_set: GoldenQuestionSet, run_id: str = "") -> RunResult:
    """The run's results on `question_set`'s questions, as a run of that set (a new run id unless given)."""
    positions = run.questions.positions
    questions = run.questions.take(positions[question.id] for question in question_set.questions)
    return replace(run, set_identifier=question_set.identifier, questions=questions, run_id=run_id)
