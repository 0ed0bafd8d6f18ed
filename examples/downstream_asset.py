"""A downstream asset of your own, on top of the evaluation: the questions every retriever misses.

A question no configured retriever finds in its top 3 is either labelled wrong or a gap every
pipeline shares; either way it is worth a look before tuning anything. The asset receives the
evaluation's latest runs of every partition as ONE pyarrow Table (set and retriever are columns) and
the golden questions for their text, and returns a table Dagster stores with your IO manager.

Run it as its own code location beside the project's assets:

    dagster dev -f examples/downstream_asset.py
"""

import pyarrow as pa
import pyarrow.compute as pc
from dagster import AssetIn, Definitions, asset, definitions

from retrieval_pipeline.dagster_layer.definitions import build_definitions


@asset(
    ins={"evaluations": AssetIn("retrieval_evaluation"), "questions": AssetIn("golden_question_set")},
    description="Questions that no retriever finds in its top 3 (one a retriever failed on is left to the others).",
)
def questions_every_retriever_misses(evaluations: pa.Table, questions: pa.Table) -> pa.Table:
    per_question = evaluations.group_by(["set_identifier", "question_id"]).aggregate(
        [("top3_hit", "any"), ("retriever_identifier", "count_distinct")]
    )
    missed = per_question.filter(pc.invert(per_question["top3_hit_any"]))  # a null (every retriever failed) is dropped
    text = questions.select(["set_identifier", "question_id", "question", "form", "hard_class"])
    return (
        missed.join(text, ["set_identifier", "question_id"])
        .select(["set_identifier", "question_id", "question", "form", "hard_class", "retriever_identifier_count_distinct"])
        .rename_columns({"retriever_identifier_count_distinct": "retrievers"})
        .sort_by([("set_identifier", "ascending"), ("question_id", "ascending")])
    )


@definitions
def defs() -> Definitions:
    return Definitions.merge(build_definitions(), Definitions(assets=[questions_every_retriever_misses]))
