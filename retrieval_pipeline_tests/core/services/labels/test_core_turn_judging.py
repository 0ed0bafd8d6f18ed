"""Judging a turn needs the conversation before it: pooled rows carry it, a machine judge reads it, and the
label audit compares turns in their conversations."""

from __future__ import annotations

from retrieval_pipeline.core.golden.conversations import ConversationTurn
from retrieval_pipeline.core.golden.questions import GoldenQuestion, GoldenQuestionSet
from retrieval_pipeline.core.retrieval.judges import MachineJudgement
from retrieval_pipeline.core.scoring.results import QuestionResult, RunResult
from retrieval_pipeline.core.services.labels.judging_files import candidate_rows, read_judging_file, write_judging_file
from retrieval_pipeline.core.services.labels.label_audit import repeated_questions
from retrieval_pipeline.core.services.labels.machine_judging import machine_judge_file
from retrieval_pipeline.core.services.labels.pooling import pool


def turn(
    number: int, utterance: str, reply: str | None = None, expected: tuple[str, ...] = (), conversation: str = "wings"
) -> GoldenQuestion:
    return GoldenQuestion(
        id=f"{conversation}/{number}",
        question=utterance,
        form="gap",
        expected_document_ids=expected,
        turn=ConversationTurn(conversation=conversation, number=number, reply=reply),
    )


TALKS = GoldenQuestionSet(
    identifier="demo.talks",
    name="Talks",
    questions=(
        GoldenQuestion(id="q1", question="what is lift?", form="match", expected_document_ids=("1",)),
        turn(1, "wing sweep and lift?", reply="Sweep lowers the lift slope.", expected=("12",)),
        turn(2, "and at supersonic speeds?"),
    ),
)


class RecordingJudge:
    name, fingerprint, concurrency, fail_fast_after = "recording", "f1", 1, 0

    def __init__(self) -> None:
        self.asked: list[str] = []

    def judge(self, question: str, document: str) -> MachineJudgement:
        self.asked.append(question)
        return MachineJudgement(False)


def test_a_pooled_turn_carries_its_conversation_so_far_and_a_machine_judge_reads_it_first(tmp_path):
    ranked = {"q1": ("5",), "wings/1": ("7",), "wings/2": ("9",)}
    run = RunResult("demo.talks", "bm25", tuple(QuestionResult(i, "gap", None, (), r, 1.0, None) for i, r in ranked.items()))

    rows = candidate_rows(pool(TALKS, [run], depth=1))

    so_far = "user: wing sweep and lift?\nassistant: Sweep lowers the lift slope."
    assert [(row["question_id"], row.get("conversation")) for row in rows] == [
        ("q1", None),
        ("wings/1", None),
        ("wings/2", so_far),
    ]
    path = write_judging_file([{**row, "text": "a passage"} for row in rows], tmp_path / "pool.csv")
    assert path.read_text(encoding="utf-8").splitlines()[0].startswith("question_id,document_id,judgement,conversation,question,")
    assert read_judging_file(path)[2]["conversation"] == so_far
    judge = RecordingJudge()

    machine_judge_file(path, judge, tmp_path / "cache")

    assert judge.asked == ["what is lift?", "wing sweep and lift?", f"{so_far}\nuser: and at supersonic speeds?"]


def test_a_later_turn_typed_alike_in_two_conversations_is_no_duplicate_but_a_repeated_conversation_is():
    talks = GoldenQuestionSet(
        identifier="demo.talks",
        name="Talks",
        questions=(
            GoldenQuestion(id="q1", question="Wing sweep and lift?", form="match", expected_document_ids=("12",)),
            turn(1, "wing sweep and lift?", expected=("12",)),
            turn(2, "and at supersonic speeds?", expected=("40",)),
            turn(1, "heat transfer at the nose", expected=("3",), conversation="heat"),
            turn(2, "and at supersonic speeds?", expected=("41",), conversation="heat"),
            turn(1, "wing sweep and lift", expected=("12",), conversation="again"),
            turn(2, "and at supersonic speeds", expected=("42",), conversation="again"),
        ),
    )

    findings = [(f.kind, f.question_id, f.as_dict()["duplicate_of"]) for f in repeated_questions(talks)]

    assert findings == [
        ("duplicate_question", "wings/1", "q1"),  # an opening turn stands alone, as a question does
        ("duplicate_question", "again/1", "q1"),
        ("conflicting_labels", "again/2", "wings/2"),  # the same words after the same turn: the same question
    ]
