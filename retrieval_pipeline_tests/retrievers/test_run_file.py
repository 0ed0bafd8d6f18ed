"""Replaying run files: TREC and JSONL, question text to query id, bad files, and agreement with ir_measures."""

from __future__ import annotations

import hashlib
import json
import random
import re
import textwrap
from pathlib import Path

import pytest

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.golden.beir import import_beir, read_jsonl, read_qrels
from retrieval_pipeline.core.retrieval.retriever import BatchRetriever, BuildContext, RetrieverFault, VersionedIndex
from retrieval_pipeline.core.services.configuration.project import load_config
from retrieval_pipeline.core.services.evaluation.runner import RetryPolicy, run_question_set
from retrieval_pipeline.retrievers.run_file import RunFileKind, RunFileRetriever, load_run

QUERIES = [
    {"_id": "q1", "text": "how do turbofan engines fail"},
    {"_id": "q2", "text": "why does sourdough rise"},
    {"_id": "q3", "text": "where do bees find flowers"},
]

# q1: scores tie at 2.0 for d2/d10/d9 (document id descending: d9, d2, d10); the rank column disagrees
# on purpose, as trec_eval ignores it. Columns are separated by mixed whitespace on one line.
TREC_RUN = """\
q1 Q0 d10 1 2.0 sys
q1 Q0 d2 2 2.0 sys

q1\tQ0  d9 3 2.0 sys
q1 Q0 d7 4 3.5 sys
q1 Q0 d1 5 -1 sys
q2 Q0 d5 1 0.25 sys
"""


def write_queries(folder: Path, queries=QUERIES) -> Path:
    path = folder / "queries.jsonl"
    path.write_text("".join(json.dumps(query) + "\n" for query in queries), encoding="utf-8")
    return path


@pytest.fixture
def context(tmp_path) -> BuildContext:
    write_queries(tmp_path)
    return BuildContext(base_dir=tmp_path, source="test.yaml")


def build(context: BuildContext, identifier: str = "replay", **params) -> RunFileRetriever:
    return RunFileKind.parse(identifier, {"queries": "queries.jsonl", **params}, context).build()


def test_trec_run_ranks_by_score_then_document_id_descending_like_trec_eval(tmp_path, context):
    (tmp_path / "run.trec").write_text(TREC_RUN, encoding="utf-8")
    retriever = build(context, path="run.trec")

    assert retriever.retrieve("how do turbofan engines fail", 12) == ["d7", "d9", "d2", "d10", "d1"]
    assert retriever.retrieve("how do turbofan engines fail", 2) == ["d7", "d9"]
    assert retriever.retrieve("  why does sourdough rise ", 12) == ["d5"]
    assert isinstance(retriever, BatchRetriever)
    assert retriever.retrieve_batch([q["text"] for q in QUERIES], 3).to_pylist() == [["d7", "d9", "d2"], ["d5"], []]


def test_question_absent_from_the_run_retrieves_nothing(tmp_path, context):
    (tmp_path / "run.trec").write_text(TREC_RUN, encoding="utf-8")

    assert build(context, path="run.trec").retrieve("where do bees find flowers", 12) == []


def test_question_unknown_to_the_query_source_is_a_fault_naming_the_source(tmp_path, context):
    (tmp_path / "run.trec").write_text(TREC_RUN, encoding="utf-8")

    with pytest.raises(RetrieverFault, match=r"'what is a glacier' is not in .*queries\.jsonl"):
        build(context, path="run.trec").retrieve("what is a glacier", 12)


def test_jsonl_run_keeps_the_given_order_and_accepts_integer_ids(tmp_path, context):
    lines = [{"query_id": "q1", "document_ids": ["d3", "d1", 7]}, {"query_id": "q2", "document_ids": []}]
    (tmp_path / "run.jsonl").write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    retriever = build(context, path="run.jsonl")

    assert retriever.retrieve("how do turbofan engines fail", 12) == ["d3", "d1", "7"]
    assert retriever.retrieve("why does sourdough rise", 12) == []


def test_format_parameter_overrides_the_suffix(tmp_path, context):
    (tmp_path / "run.txt").write_text(json.dumps({"query_id": "q2", "document_ids": ["d5"]}) + "\n", encoding="utf-8")

    assert build(context, path="run.txt", format="jsonl").retrieve("why does sourdough rise", 12) == ["d5"]


def test_gzipped_run_is_read_and_its_format_taken_from_the_inner_suffix(tmp_path, context):
    import gzip

    (tmp_path / "run.jsonl.gz").write_bytes(gzip.compress(b'{"query_id": "q2", "document_ids": ["d5"]}\n'))

    assert build(context, path="run.jsonl.gz").retrieve("why does sourdough rise", 12) == ["d5"]


def test_chunk_separator_maps_chunk_ids_to_documents_keeping_duplicates(tmp_path, context):
    (tmp_path / "run.trec").write_text(
        "q1 Q0 234_0 1 3 s\nq1 Q0 234_1 2 2 s\nq1 Q0 a_b_7 3 1 s\nq1 Q0 plain 4 0 s\n", encoding="utf-8"
    )

    retriever = build(context, path="run.trec", chunk_separator="_")

    assert retriever.retrieve("how do turbofan engines fail", 12) == ["234", "234", "a_b", "plain"]


def test_index_version_is_the_checksum_of_the_loaded_file(tmp_path, context):
    run = tmp_path / "run.trec"
    run.write_text(TREC_RUN, encoding="utf-8")
    first = build(context, path="run.trec")
    run.write_text(TREC_RUN + "q3 Q0 d4 1 1 sys\n", encoding="utf-8")
    second = build(context, path="run.trec")

    assert isinstance(first, VersionedIndex)
    assert first.index_version() == "sha256:" + hashlib.sha256(TREC_RUN.encode()).hexdigest()
    assert second.index_version() != first.index_version()
    assert first.retrieve("where do bees find flowers", 12) == []  # the instance serves what it loaded
    assert second.retrieve("where do bees find flowers", 12) == ["d4"]


@pytest.mark.parametrize(
    ("content", "line", "message"),
    [
        ("q1 Q0 d1 1 1.0 sys\n\nq1 Q0 d2 2 1.0\n", 3, "expected 6 whitespace-separated columns .* found 5"),
        ("q1 Q0 d1 1 1.0 sys\nq1 Q0 d2 2 high sys\n", 2, "the score 'high' is not a number"),
        ("q1 Q0 d1 first 1.0 sys\n", 1, "the rank 'first' is not a number"),
        ("q1 Q0 d1 1 1.0 sys\nq1 Q0 d2 2 1.0 sys extra\n", 2, "found 7"),
    ],
)
def test_malformed_trec_line_names_the_retriever_the_file_and_the_line(tmp_path, context, content, line, message):
    (tmp_path / "run.trec").write_text(content, encoding="utf-8")

    with pytest.raises(InvalidInputError, match=message) as raised:
        build(context, "broken_run", path="run.trec")

    assert raised.value.source == f"{tmp_path / 'run.trec'}:{line}"
    assert raised.value.key == "retrievers.broken_run"


def test_malformed_jsonl_line_names_the_retriever_the_file_and_the_line(tmp_path, context):
    (tmp_path / "run.jsonl").write_text('{"query_id": "q1", "document_ids": ["d1"]}\n{"query_id": "q2", "document_ids": "d5"}\n')

    with pytest.raises(InvalidInputError, match="document_ids.*must be a list of document ids") as raised:
        build(context, "broken_run", path="run.jsonl")

    assert raised.value.source == f"{tmp_path / 'run.jsonl'}:2"
    assert raised.value.key == "retrievers.broken_run"


def test_missing_run_file_names_the_file(tmp_path, context):
    with pytest.raises(InvalidInputError, match="cannot read the run file") as raised:
        build(context, path="nowhere/run.trec")

    assert str(tmp_path / "nowhere" / "run.trec") in str(raised.value)
    assert "retrievers.replay" in str(raised.value)


def test_both_question_set_and_queries_is_refused(tmp_path, context):
    (tmp_path / "run.trec").write_text(TREC_RUN, encoding="utf-8")

    with pytest.raises(InvalidInputError, match="not both") as raised:
        build(context, path="run.trec", question_set="some.set")

    assert raised.value.field == "queries"


def write_set(path: Path, identifier: str, questions: list[tuple[str, str, list[str]]]) -> Path:
    lines = [f"identifier: {identifier}", "name: Replay test set", "questions:"]
    for question_id, text, expected in questions:
        lines += [f"  - id: {question_id}", f"    question: {text}", "    form: match", f"    expected_document_ids: {expected}"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_config(folder: Path, retriever_params: str) -> Path:
    engines = [("q1", "how do turbofan engines fail", ["d7"]), ("q2", "why does sourdough rise", ["d9"])]
    other = [("x1", "how do turbofan engines fail", ["d7"]), ("x2", "where do bees find flowers", ["d4"])]
    write_set(folder / "engines.yaml", "engines", engines)
    write_set(folder / "other.yaml", "other", other)
    (folder / "run.trec").write_text(TREC_RUN + "x2 Q0 d4 1 1 sys\n", encoding="utf-8")
    config = folder / "config.yaml"
    config.write_text(
        textwrap.dedent(
            """\
            store: results
            cache_dir: cache
            question_sets:
              - file: engines.yaml
              - file: other.yaml
            retrievers:
              replay:
                kind: run_file
                path: run.trec
            """
        )
        + textwrap.indent(retriever_params, " " * 4),
        encoding="utf-8",
    )
    return config


def test_question_text_resolves_through_the_named_set_of_a_configuration(tmp_path):
    config = load_config(write_config(tmp_path, "question_set: engines\n"))
    retriever = config.retriever("replay")

    result = run_question_set(config.question_set("engines"), retriever)

    assert retriever.retrieve("how do turbofan engines fail", 12) == ["d7", "d9", "d2", "d10", "d1"]
    assert [q.retrieved_document_ids for q in result.questions] == [("d7", "d9", "d2"), ("d5",)]
    assert (result.hit_rate(1), result.hit_rate(3)) == (0.5, 0.5)


def test_text_in_several_sets_with_different_ids_is_ambiguous_only_when_asked(tmp_path):
    config = load_config(write_config(tmp_path, ""))
    retriever = config.retriever("replay")

    result = run_question_set(config.question_set("other"), retriever, retry=RetryPolicy(backoff_seconds=0))

    assert retriever.retrieve("where do bees find flowers", 12) == ["d4"]
    ambiguous, resolved = result.questions
    assert "ambiguous" in ambiguous.error
    assert "query 'q1' in set 'engines'" in ambiguous.error and "query 'x1' in set 'other'" in ambiguous.error
    assert resolved.error is None and resolved.retrieved_document_ids == ("d4",)


def test_unknown_question_set_is_a_configuration_error(tmp_path):
    config = load_config(write_config(tmp_path, "question_set: missing\n"))

    with pytest.raises(InvalidInputError, match="unknown question set 'missing'") as raised:
        config.retriever("replay")

    assert (raised.value.key, raised.value.field) == ("retrievers.replay", "question_set")


def test_run_loaded_to_the_evaluation_depth_reads_the_file_again_when_asked_deeper(tmp_path):
    write_queries(tmp_path)
    (tmp_path / "run.trec").write_text(TREC_RUN, encoding="utf-8")
    shallow = build(BuildContext(base_dir=tmp_path, source="test.yaml", fetch_limit=2), path="run.trec")

    assert shallow.retrieve("how do turbofan engines fail", 2) == ["d7", "d9"]
    assert shallow.retrieve("how do turbofan engines fail", 12) == ["d7", "d9", "d2", "d10", "d1"]  # a fusion's depth


def test_run_file_changed_before_a_deeper_read_is_a_fault_not_a_mixed_ranking(tmp_path):
    write_queries(tmp_path)
    run = tmp_path / "run.trec"
    run.write_text(TREC_RUN, encoding="utf-8")
    shallow = build(BuildContext(base_dir=tmp_path, source="test.yaml", fetch_limit=2), path="run.trec")
    run.write_text(TREC_RUN.replace("d7", "d8"), encoding="utf-8")

    with pytest.raises(RetrieverFault, match="changed since it was loaded"):
        shallow.retrieve("how do turbofan engines fail", 12)
    assert shallow.retrieve("how do turbofan engines fail", 2) == ["d7", "d9"]


def test_load_run_reports_the_number_of_queries(tmp_path):
    (tmp_path / "run.trec").write_text(TREC_RUN, encoding="utf-8")

    rankings = load_run(tmp_path / "run.trec")

    assert len(rankings) == 2
    assert rankings.top("q1", 3) == ["d7", "d9", "d2"]


# --- Oracle: the same run scored by the core and by ir_measures -------------------------------------

TOKEN = re.compile(r"[a-z0-9]+")
STOPWORDS = frozenset("a an and are as at be by do does for from how in is it of on or the to what which with".split())


def overlap_run(collection: Path, depth: int = 50) -> dict[str, list[tuple[str, float]]]:
    """Rank documents by the number of distinct query terms they contain: small integers, so many ties."""
    documents = {
        str(record["_id"]): set(TOKEN.findall(f"{record.get('title', '')} {record.get('text', '')}".lower()))
        for _, record in read_jsonl(collection / "corpus.jsonl")
    }
    run = {}
    for _, record in read_jsonl(collection / "queries.jsonl"):
        terms = set(TOKEN.findall(record["text"].lower())) - STOPWORDS
        scored = sorted(((len(terms & words), doc) for doc, words in documents.items()), reverse=True)[:depth]
        run[str(record["_id"])] = [(doc, float(score)) for score, doc in scored]
    return run


@pytest.mark.slow
def test_run_file_hit_rates_equal_ir_measures_success_at_1_and_3_with_ties(shared_data, tmp_path):
    ir_measures = pytest.importorskip("ir_measures")
    collection = shared_data / "cranfield"
    run = overlap_run(collection)
    lines = []
    shuffle = random.Random(7)
    for query_id, ranking in run.items():
        ranking = ranking[:]
        shuffle.shuffle(ranking)  # file order and the rank column carry no meaning for trec_eval
        lines += [f"{query_id} Q0 {doc} {rank} {score:g} overlap\n" for rank, (doc, score) in enumerate(ranking, 1)]
    run_path = tmp_path / "overlap.trec"
    run_path.write_text("".join(lines), encoding="utf-8")

    golden = import_beir(collection, identifier="cranfield", split="test")
    retriever = RunFileKind.parse(
        "overlap", {"path": str(run_path), "queries": str(collection / "queries.jsonl")}, BuildContext(tmp_path, "test")
    ).build()
    result = run_question_set(golden, retriever)

    qrels = [
        ir_measures.Qrel(query_id, document_id, 1)
        for query_id, relevant in read_qrels(collection / "qrels" / "test.tsv").items()
        for document_id in relevant
    ]
    expected = ir_measures.calc_aggregate(
        [ir_measures.Success @ 1, ir_measures.Success @ 3], qrels, ir_measures.read_trec_run(str(run_path))
    )
    assert result.complete and result.question_count == 225
    assert result.hit_rate(1) == pytest.approx(expected[ir_measures.Success @ 1], abs=1e-12)
    assert result.hit_rate(3) == pytest.approx(expected[ir_measures.Success @ 3], abs=1e-12)

    # The test can tell tie orders apart: breaking ties by ascending document id scores differently.
    relevant = {q.id: set(q.expected_document_ids) for q in golden.questions}
    ascending = {qid: sorted(ranking, key=lambda item: (-item[1], item[0])) for qid, ranking in run.items()}
    top3_ascending = sum(bool(relevant[qid] & {doc for doc, _ in ascending[qid][:3]}) for qid in relevant) / len(relevant)
    assert top3_ascending != pytest.approx(result.hit_rate(3), abs=1e-12)
