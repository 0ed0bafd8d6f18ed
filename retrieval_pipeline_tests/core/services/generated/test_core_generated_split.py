"""A set's generated questions are asked in the same pass but kept out of its figures and verdict until the
set counts them, stored as the run of `<set>.generated`: real BM25 on the embedded demo."""

from __future__ import annotations

import pytest

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.golden.generated import GeneratedProvenance
from retrieval_pipeline.core.golden.questions import GeneratedQuestionsCounted
from retrieval_pipeline.core.services.configuration.lookup import demo_config_path
from retrieval_pipeline.core.services.configuration.project import load_config
from retrieval_pipeline.core.services.configuration.settings import EvaluationSettings
from retrieval_pipeline.core.services.evaluation.record import evaluate_and_record
from retrieval_pipeline.core.services.generated.split import split_generated
from retrieval_pipeline.core.services.library import evaluated
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore

pytestmark = pytest.mark.slow  # the demo's BM25 index over 1,400 abstracts
VALIDATED = GeneratedQuestionsCounted(
    because="validated", tau_low={"top1": 0.9}, threshold=0.8, questions=3, at="2026-12-03T16:00:00+00:00"
)


@pytest.fixture(scope="module")
def demo():
    config = load_config(demo_config_path())
    return config, config.question_set("demo.cranfield"), config.retriever("bm25_stemmed")


def grown(question_set, count: int = 3, machine_only: int = 0):
    """The set with `count` of its questions asked again as generated ones; the last `machine_only` of them
    confirmed by a machine judge alone."""
    added = []
    for position, question in enumerate(question_set.questions[:count]):
        source = question.expected_document_ids[0]
        provenance = GeneratedProvenance(generated_by="extractive@abc", source="document", document_id=source, asked_form="match")
        machine = position >= count - machine_only
        added.append(
            question.model_copy(
                update={
                    "id": f"gen-{position}",
                    "expected_document_ids": () if machine else (source,),
                    "machine_expected_document_ids": (source,) if machine else (),
                    "rejected_document_ids": (),
                    "generated": provenance,
                }
            )
        )
    judged = {"machine_judged_by": "judge@abc"} if machine_only else {}
    return question_set.model_copy(update={"questions": question_set.questions + tuple(added), **judged})


def test_a_runs_figures_stay_the_human_questions_and_the_generated_slice_is_stored_apart(demo, tmp_path):
    _, question_set, retriever = demo
    store = ResultStore(str(tmp_path / "store"))

    alone = evaluate_and_record(question_set, retriever, ResultStore(str(tmp_path / "alone")), EvaluationSettings())
    apart = evaluate_and_record(grown(question_set), retriever, store, EvaluationSettings())

    assert apart.run.set_fingerprint == alone.run.set_fingerprint
    assert apart.run.metrics() == alone.run.metrics() and apart.run.hit_rate(1) == alone.run.hit_rate(1)
    assert (
        apart.report.summary
        == f"{alone.report.summary} 3 generated question(s) kept apart (not counted): see demo.cranfield.generated."
    )
    assert apart.generated.run.set_identifier == "demo.cranfield.generated" and apart.generated.run.question_count == 3
    assert [stored.run_id for stored in store.history(HistoryKey("demo.cranfield.generated", "bm25_stemmed"))] == [
        apart.generated.stored.run_id
    ]
    assert alone.generated is None


def test_once_the_set_counts_them_the_run_holds_them_and_says_why(demo, tmp_path):
    _, question_set, retriever = demo
    counted = grown(question_set).model_copy(update={"generated_questions": VALIDATED})

    evaluation = evaluate_and_record(counted, retriever, ResultStore(str(tmp_path / "store")), EvaluationSettings())

    assert evaluation.run.question_count == len(question_set.questions) + 3
    assert evaluation.report.summary.endswith(
        "3 generated question(s) counted (validated: tau lower bound 0.90 >= 0.8); also in demo.cranfield.generated."
    )
    assert evaluation.generated.run.question_count == 3


def test_a_generated_question_only_a_machine_confirmed_is_scored_under_human_and_machine_labels_only(demo):
    _, question_set, _ = demo
    set_with_machine = grown(question_set, count=3, machine_only=1)

    split = split_generated(set_with_machine)

    assert len(split.generated.questions) == 2 and split.unscored == 1
    assert split.note().endswith("; 1 confirmed by a machine judge only, scored under labels human+machine.")
    assert len(split.asked.questions) == len(question_set.questions) + 2


def test_a_set_of_generated_questions_alone_is_refused_naming_it(demo):
    _, question_set, _ = demo
    only_generated = grown(question_set)
    only_generated = only_generated.model_copy(update={"questions": only_generated.questions[-3:]})

    with pytest.raises(InvalidInputError, match="set 'demo.cranfield' holds only generated questions"):
        split_generated(only_generated)


def test_a_set_without_generated_questions_is_not_split(demo):
    assert split_generated(demo[1]) is None


def test_the_library_without_a_store_keeps_them_apart_too(demo):
    _, question_set, retriever = demo

    evaluation = evaluated(grown(question_set), retriever, None, EvaluationSettings())

    assert evaluation.run.question_count == len(question_set.questions)
    assert evaluation.report.summary.endswith("3 generated question(s) kept apart (not counted): see demo.cranfield.generated.")
