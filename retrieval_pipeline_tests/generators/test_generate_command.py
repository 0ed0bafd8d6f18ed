"""`retrieval-eval generate` end to end on real text: the demo's Cranfield corpus ranked by real BM25, a query
log of Cranfield questions the set does not ask, the built-in extractive kind and a chat endpoint on
127.0.0.1. What is written is the judging-file shape `pool` writes, with each candidate's provenance, and
no logged query leaves the tool unless the log allows it."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from generation_project import EXTRACTIVE, by_question, generate, generation_project, logged_queries
from generation_service import openai_generator
from judge_helpers import DEMO

from retrieval_pipeline.core.golden.forms import tag_form
from retrieval_pipeline.core.golden.generated import COLUMNS
from retrieval_pipeline.core.golden.question_files import load_question_set_file
from retrieval_pipeline.core.retrieval.corpus import read_document_texts
from retrieval_pipeline.core.services.generated.sources import allotted
from retrieval_pipeline.core.services.labels.judging_files import FIELDS, read_judging_file

pytestmark = pytest.mark.slow  # real BM25 over the demo's corpus for every command, a server on 127.0.0.1


def test_from_the_corpus_each_candidate_presumes_its_unexpected_source_document_and_lists_the_retrievers_top(cli, tmp_path):
    config = generation_project(tmp_path, EXTRACTIVE)
    out = tmp_path / "candidates.jsonl"

    result = generate(cli, config, "--from", "corpus", "--count", "10", "--generator", "extractive", "--out", str(out), "--json")

    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    candidates = by_question(read_judging_file(out))  # the shape every judge command reads
    assert summary["requests"] == 10 and summary["candidates"] == len(candidates) == 10 - summary["dropped"]
    expected = {d for q in load_question_set_file(tmp_path / "set.yaml").questions for d in q.expected_document_ids}
    texts = read_document_texts(
        DEMO / "cranfield-corpus.jsonl.gz", {row[0]["source_document_id"] for row in candidates.values()}, "corpus"
    )
    for question_id, rows in candidates.items():
        first = rows[0]
        source = first["source_document_id"]
        assert question_id.startswith("gen-") and source not in expected
        assert first["document_id"] == source and all(row["expected_document_ids"] == [source] for row in rows)
        assert {row["document_id"] for row in rows[1:]} <= {row["document_id"] for row in rows if row["ranked_by"]}
        assert all(entry.rpartition("@")[0] in ("bm25", "titles") for row in rows for entry in row["ranked_by"])
        assert (first["generated_from"], first["asked_form"], first["cluster_log"]) == ("document", "match", "")
        assert first["generated_by"] == summary["generated_by"] and first["generated_by"].startswith("extractive@")
        assert first["form"] == tag_form(first["question"], [" ".join(texts[source])])
        assert all(row["judgement"] == "" and list(row)[: len(FIELDS)] == list(FIELDS) for row in rows)
        assert set(COLUMNS) <= set(first)


def test_from_a_log_the_count_is_shared_among_the_uncovered_clusters_by_traffic(cli, tmp_path, service):
    config = generation_project(tmp_path, {"chat": openai_generator(service.url())})
    coverage = cli("coverage", "demo.cranfield", "site", "--config", str(config), "--json")
    clusters = json.loads(coverage.stdout)["uncovered_clusters"]
    out = tmp_path / "candidates.csv"

    result = generate(cli, config, "site", "--count", "12", "--generator", "chat", "--out", str(out), "--json")

    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert service.calls["/v1/chat/completions"] == summary["requests"] == 12
    shares = dict(zip(range(1, len(clusters) + 1), allotted([cluster["traffic"] for cluster in clusters], 12)))
    written = Counter(rows[0]["cluster_rank"] for rows in by_question(read_judging_file(out)).values())
    assert all(count <= shares[int(rank)] for rank, count in written.items())
    for rows in by_question(read_judging_file(out)).values():
        traffic = {cluster["rank"]: cluster["traffic"] for cluster in clusters}[int(rows[0]["cluster_rank"])]
        assert (rows[0]["generated_from"], rows[0]["cluster_log"], rows[0]["cluster_traffic"]) == (
            "cluster",
            "site",
            str(traffic),
        )


def test_without_examples_allowed_no_logged_query_reaches_the_endpoint_the_file_the_cache_or_the_output(cli, tmp_path, service):
    config = generation_project(tmp_path, {"chat": openai_generator(service.url())})
    out = tmp_path / "candidates.csv"

    result = generate(cli, config, "site", "--count", "6", "--generator", "chat", "--out", str(out))

    assert result.exit_code == 0, result.stderr
    written = [out.read_text(encoding="utf-8"), result.stdout, result.stderr, *service.prompts]
    cache = b"".join(path.read_bytes() for path in (tmp_path / "cache" / "generations").iterdir())
    for row in logged_queries():
        assert not any(row["query"] in text for text in written)
        assert row["query"].encode() not in cache
    assert not any("Users asked questions like these" in prompt for prompt in service.prompts)


def test_with_examples_allowed_each_clusters_most_asked_queries_reach_the_prompt(cli, tmp_path, service):
    config = generation_project(tmp_path, {"chat": openai_generator(service.url())}, examples=True)

    result = generate(cli, config, "site", "--count", "4", "--generator", "chat", "--out", str(tmp_path / "c.csv"))

    assert result.exit_code == 0, result.stderr
    queries = [row["query"] for row in logged_queries()[3:]]
    assert all("Users asked questions like these" in prompt for prompt in service.prompts)
    assert all(any(f"- {query}\n" in prompt for query in queries) for prompt in service.prompts)


def test_asking_for_examples_of_a_log_that_does_not_allow_them_is_refused_before_any_request(cli, tmp_path, service):
    config = generation_project(tmp_path, {"chat": openai_generator(service.url())})
    out = tmp_path / "candidates.csv"

    result = generate(cli, config, "site", "--count", "4", "--generator", "chat", "--examples", "--out", str(out))

    assert result.exit_code == 2
    assert result.stderr.startswith("error: ") and len(result.stderr.strip().splitlines()) == 1
    assert "query_logs.site" in result.stderr and "examples: true" in result.stderr
    assert service.calls == {} and not out.exists()


def test_a_second_run_asks_nothing_and_writes_the_same_file(cli, tmp_path, service):
    config = generation_project(tmp_path, {"chat": openai_generator(service.url())})
    out = tmp_path / "candidates.csv"
    first = generate(cli, config, "site", "--count", "6", "--generator", "chat", "--out", str(out), "--json")
    written = out.read_bytes()

    second = generate(cli, config, "site", "--count", "6", "--generator", "chat", "--out", str(out), "--json")

    assert first.exit_code == second.exit_code == 0
    assert service.calls["/v1/chat/completions"] == 6
    assert (json.loads(second.stdout)["asked"], json.loads(second.stdout)["from_cache"]) == (0, 6)
    assert out.read_bytes() == written
