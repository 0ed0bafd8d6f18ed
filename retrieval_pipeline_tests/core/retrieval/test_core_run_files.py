"""Reading run files in pieces and keeping each query's top documents: the same rankings as a full sort."""

from __future__ import annotations

import gzip
import hashlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.retrieval import run_files
from retrieval_pipeline.core.retrieval.run_files import load_run

SCORES = (-1.0, 0.0, 0.5, 2.0, 2.0, 7.25)  # few values, so ties at the depth boundary are common


def trec_order(rows: list[tuple[str, str, float]]) -> dict[str, list[str]]:
    """trec_eval's order, written out plainly: score descending, then document id descending."""
    rankings: dict[str, list[tuple[float, bytes, str]]] = {}
    for query, document, score in rows:
        rankings.setdefault(query, []).append((score, document.encode(), document))
    return {query: [doc for _, _, doc in sorted(ranked, reverse=True)] for query, ranked in rankings.items()}


@st.composite
def runs(draw) -> list[tuple[str, str, float]]:
    rows = []
    for query in draw(st.lists(st.sampled_from(["q1", "q2", "q10", "b7"]), min_size=1, max_size=4, unique=True)):
        documents = draw(st.lists(st.sampled_from([f"d{n}" for n in range(1, 40)]), min_size=1, max_size=25, unique=True))
        rows += [(query, document, draw(st.sampled_from(SCORES))) for document in documents]
    return draw(st.permutations(rows))


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rows=runs(),
    depth=st.integers(1, 8),
    piece_bytes=st.integers(8, 400),
    delimiter=st.sampled_from([" ", "\t"]),
    compressed=st.booleans(),
)
def test_top_documents_read_in_pieces_equal_a_full_trec_eval_sort(
    tmp_path, monkeypatch, rows, depth, piece_bytes, delimiter, compressed
):
    monkeypatch.setattr(run_files, "PIECE_BYTES", piece_bytes)  # many pieces, lines and queries cut across them
    text = "".join(delimiter.join([q, "Q0", d, str(rank), f"{s:g}", "run"]) + "\n" for rank, (q, d, s) in enumerate(rows, 1))
    stored = gzip.compress(text.encode()) if compressed else text.encode()
    path = tmp_path / ("run.trec.gz" if compressed else "run.trec")
    path.write_bytes(stored)

    rankings = load_run(path, depth=depth)

    expected = trec_order(rows)
    assert {query: rankings.top(query, depth) for query in rankings.spans} == {q: r[:depth] for q, r in expected.items()}
    assert rankings.checksum == hashlib.sha256(stored).hexdigest()


def test_rankings_refuse_a_deeper_request_than_they_hold(tmp_path):
    (tmp_path / "run.trec").write_text("q1 Q0 d1 1 3 s\nq1 Q0 d2 2 2 s\nq1 Q0 d3 3 1 s\n", encoding="utf-8")

    rankings = load_run(tmp_path / "run.trec", depth=2)

    assert rankings.top("q1", 2) == ["d1", "d2"] and rankings.top("q9", 2) == []
    with pytest.raises(ValueError, match="hold 2 documents per query, not 3"):
        rankings.top("q1", 3)
    assert load_run(tmp_path / "run.trec").top("q1", 3) == ["d1", "d2", "d3"]


@pytest.mark.parametrize("line", ["q1 Q0 d1 1 nan s", "q1  Q0 d1 1 NaN s"])
def test_nan_score_is_refused_naming_the_line(tmp_path, line):
    (tmp_path / "run.trec").write_text(f"q1 Q0 d0 1 3 s\n{line}\n", encoding="utf-8")

    with pytest.raises(InvalidInputError, match="the score '(nan|NaN)' is not a number") as raised:
        load_run(tmp_path / "run.trec", depth=3)

    assert raised.value.source == f"{tmp_path / 'run.trec'}:2"


def test_empty_document_id_between_single_spaces_is_read_as_trec_eval_would(tmp_path):
    """`q1 Q0  1 2 s` has an empty field to Arrow; split on whitespace it is a five-column line."""
    (tmp_path / "run.trec").write_text("q1 Q0 d1 1 3 s\nq1 Q0  2 1 s\n", encoding="utf-8")

    with pytest.raises(InvalidInputError, match="found 5") as raised:
        load_run(tmp_path / "run.trec")

    assert raised.value.source == f"{tmp_path / 'run.trec'}:2"


def test_corrupt_gzip_run_names_the_file(tmp_path):
    (tmp_path / "run.trec.gz").write_bytes(b"\x1f\x8b not really gzip")

    with pytest.raises(InvalidInputError, match="cannot read the run file") as raised:
        load_run(tmp_path / "run.trec.gz", key="retrievers.replay")

    assert raised.value.source == str(tmp_path / "run.trec.gz") and raised.value.key == "retrievers.replay"
