"""`retrieval-eval coverage`: the covered share against our own count, privacy of the queries, and the loop
from uncovered queries to new golden questions (`--sample`, `judge apply`)."""

from __future__ import annotations

import csv
import gzip
import json
import shutil
from pathlib import Path

import pytest
from printed_tables import printed_table
from traffic_project import DEMO, SECRET, SET_FILE, built_traffic, traffic_config

from retrieval_pipeline.core.golden.forms import tag_form
from retrieval_pipeline.core.golden.query_logs import normalised
from retrieval_pipeline.core.golden.question_files import load_question_set_file
from retrieval_pipeline.core.retrieval.corpus import read_document_texts

EMAIL = r"[\w.]+@[\w.]+"


def _csv_log(path: Path, rows: list[dict]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, ["query", "count"])
        writer.writeheader()
        writer.writerows(rows)
    return path


def _coverage(cli, config: Path, *args: str, set_name: str = "demo.cranfield") -> dict:
    result = cli("coverage", set_name, "traffic", "--config", str(config), "--json", *args)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_the_covered_share_is_the_paraphrased_traffic_and_no_query_text_is_shown(cli, tmp_path, shared_data):
    traffic = built_traffic(shared_data)
    config = traffic_config(tmp_path, _csv_log(tmp_path / "log.csv", traffic.rows), count="count")
    document = _coverage(cli, config)
    assert document["traffic"] == {
        "total": traffic.total,
        "covered": traffic.total - traffic.off_topic,
        "covered_share": pytest.approx((traffic.total - traffic.off_topic) / traffic.total),
    }
    assert {q["id"]: q["traffic"] for q in document["questions"]} == traffic.by_question
    assert sum(c["traffic"] for c in document["uncovered_clusters"]) == traffic.off_topic
    assert all("examples" not in c for c in document["uncovered_clusters"])
    text = json.dumps(document).casefold()
    assert not any(normalised(row["query"]) in text for row in traffic.rows)


def test_a_redacted_string_reaches_no_output_nor_sample_file(cli, tmp_path, shared_data):
    traffic = built_traffic(shared_data)
    log = tmp_path / "log.jsonl.gz"
    with gzip.open(log, "wt", encoding="utf-8") as handle:
        handle.writelines(json.dumps(row) + "\n" for row in traffic.rows)
    config = traffic_config(tmp_path, log, count="count", examples=True, redact=[EMAIL])
    sample = tmp_path / "sample.jsonl"
    plain = cli(
        "coverage",
        "demo.cranfield",
        "traffic",
        "--config",
        str(config),
        "--threshold",
        "0.99",
        "--sample",
        "40",
        "--out",
        str(sample),
    )
    as_json = cli("coverage", "demo.cranfield", "traffic", "--config", str(config), "--json", "--threshold", "0.99")
    assert plain.exit_code == as_json.exit_code == 0, plain.stderr + as_json.stderr
    assert "[redacted]" in sample.read_text() and "[redacted]" in as_json.stdout
    for output in (plain.stdout, as_json.stdout, sample.read_text()):
        assert SECRET not in output and "example.org" not in output


def test_sampling_without_examples_allowed_is_refused_and_writes_nothing(cli, tmp_path, shared_data):
    config = traffic_config(tmp_path, _csv_log(tmp_path / "log.csv", built_traffic(shared_data).rows), count="count")
    out = tmp_path / "sample.csv"
    result = cli("coverage", "demo.cranfield", "traffic", "--config", str(config), "--sample", "3", "--out", str(out))
    assert result.exit_code == 2
    assert "query_logs.traffic: field 'examples'" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_a_bad_log_line_is_named_by_file_and_line(cli, tmp_path, shared_data):
    rows = built_traffic(shared_data).rows
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(row) + "\n" for row in rows[:4]) + '{"count": 3}\n')
    result = cli("coverage", "demo.cranfield", "traffic", "--config", str(traffic_config(tmp_path, log, count="count")))
    assert result.exit_code == 2
    assert f"{log}:5: field 'query': is missing" in result.stderr


def test_the_terminal_report_gives_the_logs_earliest_and_latest_time(cli, tmp_path, shared_data):
    rows = built_traffic(shared_data).rows[:3]
    log = tmp_path / "log.jsonl"
    times = ["2026-11-03T08:00:00", "2026-11-01T09:30:00", "2026-11-02T23:59:59"]
    log.write_text("".join(json.dumps({**row, "ts": ts}) + "\n" for row, ts in zip(rows, times)))
    config = traffic_config(tmp_path, log, count="count", timestamp="ts")
    result = cli("coverage", "demo.cranfield", "traffic", "--config", str(config))
    assert result.exit_code == 0, result.stderr
    assert "Lines read: 3; bad: 0; blank: 0; logged 2026-11-01T09:30:00 to 2026-11-03T08:00:00" in result.stdout
    untimed = cli("coverage", "demo.cranfield", "traffic", "--config", str(traffic_config(tmp_path, log, count="count")))
    assert "Lines read: 3; bad: 0; blank: 0\n" in untimed.stdout


def test_judged_samples_become_new_questions_that_cover_their_traffic(cli, tmp_path, shared_data):
    traffic = built_traffic(shared_data)
    config = traffic_config(tmp_path, _csv_log(tmp_path / "log.csv", traffic.rows), count="count", examples=True)
    set_file = shutil.copy(SET_FILE, tmp_path / "set.yaml")
    before = _coverage(cli, config, set_name=str(set_file))
    sample = tmp_path / "sample.csv"
    result = cli(
        "coverage", str(set_file), "traffic", "--config", str(config), "--sample", "4", "--out", str(sample), "--depth", "3"
    )
    assert result.exit_code == 0, result.stderr
    rows = list(csv.DictReader(sample.open(encoding="utf-8")))
    first = {}
    for row in rows:
        row["judgement"] = "yes" if first.setdefault(row["question_id"], row["document_id"]) == row["document_id"] else "no"
    with sample.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)

    applied = cli("judge", "apply", str(sample), str(set_file), "--config", str(config))
    assert applied.exit_code == 0, applied.stderr
    added = {q.id: q for q in load_question_set_file(set_file).questions if q.id.startswith("new-")}
    counts = {normalised(row["query"]): int(row["count"]) for row in traffic.rows}
    texts = read_document_texts(DEMO / "cranfield-corpus.jsonl.gz", set(first.values()), "corpus")
    assert set(added) == set(first) and len(added) == 4
    for question_id, question in added.items():
        assert question.expected_document_ids == (first[question_id],)
        assert set(question.rejected_document_ids) == {r["document_id"] for r in rows if r["question_id"] == question_id} - {
            first[question_id]
        }
        assert (question.source_log, question.source_traffic) == ("traffic", counts[question.question])
        assert question.form.value == tag_form(question.question, [" ".join(texts[first[question_id]])])
        assert question.hard_class is None
    after = _coverage(cli, config, set_name=str(set_file))
    assigned = {q["id"]: q["traffic"] for q in after["questions"]}
    assert all(assigned[question_id] >= question.source_traffic for question_id, question in added.items())
    assert after["traffic"]["covered"] >= before["traffic"]["covered"] + sum(q.source_traffic for q in added.values())


@pytest.mark.parametrize(("sample", "noun"), [(1, "uncovered query"), (2, "uncovered queries")])
def test_the_sample_line_counts_queries_and_rows_in_the_right_number(cli, tmp_path, shared_data, sample, noun):
    log = _csv_log(tmp_path / "log.csv", built_traffic(shared_data).rows)
    config = traffic_config(tmp_path, log, count="count", examples=True)
    out = tmp_path / "sample.jsonl"

    result = cli("coverage", "demo.cranfield", "traffic", "--config", str(config), "--sample", str(sample), "--out", str(out))

    assert result.exit_code == 0, result.stderr
    rows = out.read_text().splitlines()
    assert len({json.loads(row)["question_id"] for row in rows}) == sample
    rows_text = "1 row" if len(rows) == 1 else f"{len(rows)} rows"
    assert f"Sampled {sample} {noun}, {rows_text} to judge, into {out}" in result.stdout


OFF_TOPIC = (
    "gift cards", "pizza delivery", "parking permit", "yoga classes", "wedding venues", "dog grooming",
    "tax refund", "guitar lessons", "ski rental", "phone repair", "knitting patterns", "violin tuning",
    "cheese fondue", "marathon training",
)  # fmt: skip


def test_the_report_lists_the_ten_largest_clusters_and_the_asked_questions_and_counts_the_rest(cli, tmp_path):
    """Each off-topic query is a cluster of its own; two questions of the 240 are asked. The terminal shows
    10 clusters and says how many more there are and how much traffic they carry; --all shows every one,
    --json holds everything, questions with no traffic included."""
    asked = load_question_set_file(SET_FILE).questions[:2]
    rows = [{"query": topic, "count": 100 - n} for n, topic in enumerate(OFF_TOPIC)]
    rows += [{"query": question.question, "count": 7 - n} for n, question in enumerate(asked)]
    config = traffic_config(tmp_path, _csv_log(tmp_path / "log.csv", rows), count="count")
    document = _coverage(cli, config)
    shown = cli("coverage", "demo.cranfield", "traffic", "--config", str(config))
    every = cli("coverage", "demo.cranfield", "traffic", "--config", str(config), "--all")
    assert shown.exit_code == every.exit_code == 0, shown.stderr + every.stderr

    clusters = document["uncovered_clusters"]
    assert len(clusters) == len(OFF_TOPIC) and len(document["questions"]) == 240
    assert [row["#"] for row in printed_table(shown.stdout, "Uncovered traffic by cluster").rows()] == [
        str(n) for n in range(1, 11)
    ]
    rest = sum(cluster["traffic"] for cluster in clusters[10:])
    total = document["traffic"]["total"]
    assert f"4 more clusters: {rest:,} queries, {rest / total:.1%} of the traffic (--all lists every one)" in shown.stdout
    assert len(printed_table(every.stdout, "Uncovered traffic by cluster").rows()) == len(OFF_TOPIC)
    assert "more clusters" not in every.stdout
    for output in (shown.stdout, every.stdout):
        questions = printed_table(output, "Most asked questions").rows()
        assert [(row["question"], row["traffic"]) for row in questions] == [(asked[0].id, "7"), (asked[1].id, "6")]
    assert len(shown.stdout.splitlines()) < 40


def test_a_sample_is_never_written_over_the_query_log_it_is_drawn_from(cli, tmp_path, shared_data):
    log = _csv_log(tmp_path / "log.csv", built_traffic(shared_data).rows)
    config = traffic_config(tmp_path, log, count="count")
    before = log.read_bytes()

    result = cli("coverage", "demo.cranfield", "traffic", "--config", str(config), "--sample", "3", "--out", str(log))

    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"error: --out {log} is the query log this command reads ({log}): write to another file"
    ]
    assert log.read_bytes() == before


def test_counts_whose_sum_overflows_64_bits_are_refused_naming_the_line_never_a_negative_total(cli, tmp_path, shared_data):
    rows = built_traffic(shared_data).rows[:3]
    log = tmp_path / "log.jsonl"
    huge = 2**63 - 1  # each fits in 64 bits; the first two add up past them
    log.write_text("".join(json.dumps({**row, "count": huge}) + "\n" for row in rows))
    result = cli(
        "coverage", "demo.cranfield", "traffic", "--config", str(traffic_config(tmp_path, log, count="count")), "--lexical"
    )
    assert result.exit_code == 2, result.stdout
    assert result.stderr.startswith(f"error: {log}:1: field 'count': must be a whole number from 1 to 1,000,000,000,000,000")
    assert len(result.stderr.strip().splitlines()) == 1 and result.stdout == ""


@pytest.mark.parametrize("threshold", ["nan", "NaN", "-nan"])
def test_a_threshold_that_is_not_a_number_is_refused_by_the_option_parser_in_one_line(cli, tmp_path, shared_data, threshold):
    config = traffic_config(tmp_path, _csv_log(tmp_path / "log.csv", built_traffic(shared_data).rows), count="count")
    result = cli("coverage", "demo.cranfield", "traffic", "--config", str(config), "--lexical", "--threshold", threshold)
    assert result.exit_code == 2 and result.stdout == ""
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: ") and "--threshold" in line and "not a number" in line


def test_a_redact_pattern_that_is_not_a_regular_expression_is_refused_naming_the_file_the_log_and_the_pattern(cli, tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_text('{"query": "refund for bob@example.org"}\n')
    config = traffic_config(tmp_path, log, redact=[EMAIL, r"ab(?i)c"])  # an inline flag after the start
    result = cli("coverage", "demo.cranfield", "traffic", "--config", str(config), "--lexical")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [
        f"error: {config}: query_logs.traffic: field 'redact': pattern 2, `ab(?i)c`, is not a regular expression: "
        "global flags not at the start of the expression at position 2"
    ]
