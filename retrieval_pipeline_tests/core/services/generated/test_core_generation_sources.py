"""What a generator is asked about: the count shared by traffic, the forms mixed as the set's are, and the
corpus's documents no question expects and no logged query reaches (the demo's real BM25 and corpus)."""

from __future__ import annotations

import yaml
from hypothesis import given
from hypothesis import strategies as st
from traffic_project import DEMO, SET_FILE

from retrieval_pipeline.core.golden.query_logs import QueryCounts
from retrieval_pipeline.core.services.configuration.project import load_config
from retrieval_pipeline.core.services.generated.sources import allotted, asked_form, corpus_sources, reached_documents


@given(st.lists(st.integers(min_value=1, max_value=10_000), min_size=1, max_size=30), st.integers(min_value=1, max_value=500))
def test_the_shares_sum_to_the_count_and_each_is_within_one_of_its_quota(traffic, count):
    shares = allotted(traffic, count)

    assert sum(shares) == count
    assert all(abs(share - count * part / sum(traffic)) < 1 for share, part in zip(shares, traffic))


def test_the_largest_remainders_go_to_the_most_traffic_first_on_a_tie():
    assert allotted([5, 3, 2], 4) == [2, 1, 1]
    assert allotted([1, 1, 1], 2) == [1, 1, 0]


def test_the_forms_asked_keep_the_sets_mix_in_every_first_part():
    forms = [asked_form(index, 0.3) for index in range(10)]

    assert forms.count("gap") == 3 and {asked_form(n, 0.0) for n in range(4)} == {"match"}
    assert {asked_form(n, 1.0) for n in range(3)} == {"gap"} and asked_form(10**12, 1.0) == "gap"
    assert all(abs(forms[:n].count("gap") - 0.3 * n) < 1 for n in range(1, 11))


def test_corpus_documents_are_those_no_question_expects_and_no_logged_query_reaches(tmp_path):
    config = tmp_path / "config.yaml"
    retriever = {"kind": "lexical", "corpus": str(DEMO / "cranfield-corpus.jsonl.gz")}
    config.write_text(yaml.safe_dump({"question_sets": [{"file": str(SET_FILE)}], "retrievers": {"bm25": retriever}}))
    project = load_config(config)
    question_set = project.question_set("demo.cranfield")
    log = QueryCounts("log", {"propeller slipstream lift": 3, "heat conduction in composite slabs": 1}, lines=2)

    reached = reached_documents(project, log, ["bm25"], 5)
    sources = corpus_sources(project, question_set, reached, 20, 0.0, ["bm25"], seed=7)

    expected = {document for question in question_set.questions for document in question.expected_document_ids}
    assert len(reached) >= 5 and len(sources) == 20
    assert not {source.document_id for source in sources} & (expected | reached)
    assert all(source.title or source.text for source in sources)
    assert [s.document_id for s in corpus_sources(project, question_set, reached, 20, 0.0, ["bm25"], seed=7)] == [
        source.document_id for source in sources
    ]
