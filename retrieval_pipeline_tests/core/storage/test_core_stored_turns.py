"""A run of conversations stored and read back with its turns, and runs stored before turns existed."""

from __future__ import annotations

import pyarrow.parquet as pq
from conversation_helpers import conversation_run
from core_helpers import run_from_codes

from retrieval_pipeline.core.storage.run_summary import RunSummary
from retrieval_pipeline.core.storage.store import HistoryKey, ResultStore

ASKED = {"wings": "113", "flow": "1-", "heat": "11-31"}
KEY = HistoryKey("demo.conversations", "bm25_current")


def stored_file(root, side, stored):
    return next(root.glob(f"{side}/**/{stored.file_name}"))


def test_a_stored_run_of_conversations_reads_back_with_its_turns_and_figures_by_depth(tmp_path):
    store = ResultStore(str(tmp_path))
    run = conversation_run(ASKED, singles="1-")
    stored = store.save(run)

    loaded = store.load(stored)
    assert loaded == run
    assert loaded.questions.values("conversation")[:4] == ["wings", "wings", "wings", "flow"]
    assert loaded.questions.values("turn")[-3:] == [5, None, None]
    table = pq.read_table(stored_file(tmp_path, "questions", stored))
    assert table.column("turn").to_pylist()[:3] == [1, 2, 3]

    summary = RunSummary.of(KEY, store.read_summary(stored))
    by_depth = {key: (rates.questions, rates.hit_count(1), rates.hit_count(3)) for key, rates in summary.turns.by_depth.items()}
    assert by_depth == {"1": (3, 3, 3), "2": (3, 2, 2), "3": (2, 0, 1), "4+": (2, 1, 2)}
    assert (summary.turns.all_hit.conversations, summary.turns.all_hit.all_hit) == (3, 1)
    assert summary.turns.turns.questions == 10 and summary.turns.turns.hit_count(1) == 6


def test_a_run_of_single_questions_stores_no_turns(tmp_path):
    store = ResultStore(str(tmp_path))
    stored = store.save(run_from_codes("13", set_identifier="demo.conversations", retriever_identifier="bm25_current"))
    row = store.read_summary(stored)
    assert row["by_turn_depth"] == [] and row["conversation_count"] is None
    assert RunSummary.of(KEY, row).turns is None
    assert store.load(stored).questions.values("turn") == [None, None]


def test_a_run_stored_before_turns_existed_still_reads_without_them(tmp_path):
    store = ResultStore(str(tmp_path))
    stored = store.save(conversation_run(ASKED))
    questions, summary = stored_file(tmp_path, "questions", stored), stored_file(tmp_path, "summaries", stored)
    pq.write_table(pq.read_table(questions).drop_columns(["conversation", "turn"]), questions)  # as before turns
    old_columns = ["by_turn_depth", "by_turn_depth_metrics", "conversation_count", "conversations_all_hit_count"]
    pq.write_table(pq.read_table(summary).drop_columns(old_columns), summary)

    loaded = store.load(stored)
    assert loaded.questions.values("conversation") == [None] * 10 and loaded.by_turn_depth() == {}
    assert loaded.hit_count(1) == 6  # its figures rebuilt from the ids as always
    assert RunSummary.of(KEY, store.read_summary(stored)).turns is None
