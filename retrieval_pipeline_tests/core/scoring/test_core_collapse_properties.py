"""Property-based checks of the collapse and hit rules: they hold for every ranking, not just examples."""

from __future__ import annotations

from core_helpers import collapse, is_hit
from hypothesis import given, settings
from hypothesis import strategies as st

# A small alphabet (with the empty id) makes repeats and empties frequent, as chunk stores produce.
document_ids = st.sampled_from(["", "a", "b", "c", "d", "e", "f", "g"])
rankings = st.lists(document_ids, max_size=40)
depths = st.integers(min_value=1, max_value=10)
labels = st.lists(st.sampled_from(["a", "b", "c", "x", "y"]), unique=True, max_size=3)

# Applied per test rather than as a global profile, so other suites keep their own settings.
PROPERTY = settings(max_examples=100, deadline=None)


def first_occurrences(ranking):
    seen = []
    for document_id in ranking:
        if document_id and document_id not in seen:
            seen.append(document_id)
    return seen


@PROPERTY
@given(rankings, depths)
def test_collapse_never_keeps_more_than_k_ids(ranking, k):
    assert len(collapse(ranking, k)) <= k


@PROPERTY
@given(rankings, depths)
def test_collapse_keeps_the_first_k_distinct_ids_in_rank_order(ranking, k):
    assert list(collapse(ranking, k)) == first_occurrences(ranking)[:k]


@PROPERTY
@given(rankings, depths)
def test_collapse_is_a_subsequence_of_the_raw_ranking(ranking, k):
    remaining = iter(ranking)
    assert all(any(document_id == raw for raw in remaining) for document_id in collapse(ranking, k))


@PROPERTY
@given(rankings, depths)
def test_collapse_never_keeps_an_empty_id(ranking, k):
    assert "" not in collapse(ranking, k)


@PROPERTY
@given(rankings, depths)
def test_collapse_never_keeps_a_duplicate(ranking, k):
    collapsed = collapse(ranking, k)
    assert len(set(collapsed)) == len(collapsed)


@PROPERTY
@given(rankings, depths)
def test_collapse_fills_k_whenever_the_ranking_has_k_distinct_ids(ranking, k):
    assert len(collapse(ranking, k)) == min(k, len(set(ranking) - {""}))


@PROPERTY
@given(rankings)
def test_empty_label_question_hits_at_every_cutoff_iff_nothing_real_was_retrieved(ranking):
    collapsed = collapse(ranking, 3)
    nothing_retrieved = all(document_id == "" for document_id in ranking)
    assert is_hit(collapsed, (), 1) is nothing_retrieved
    assert is_hit(collapsed, (), 3) is nothing_retrieved


@PROPERTY
@given(rankings, labels.filter(bool))
def test_labelled_question_hits_at_k_iff_a_target_is_among_the_first_k_distinct(ranking, expected):
    collapsed = collapse(ranking, 3)
    distinct = first_occurrences(ranking)
    for k in (1, 3):
        assert is_hit(collapsed, expected, k) is any(document_id in expected for document_id in distinct[:k])


@PROPERTY
@given(rankings, labels.filter(bool))
def test_a_top1_hit_is_always_a_top3_hit(ranking, expected):
    collapsed = collapse(ranking, 3)
    assert not is_hit(collapsed, expected, 1) or is_hit(collapsed, expected, 3)
