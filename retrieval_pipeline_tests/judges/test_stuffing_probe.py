"""`judge machine FILE --judge NAME --probe`: the question's words inserted into documents people rejected, and how
often the judge flips to yes, with a Wilson interval checked against scipy's."""

from __future__ import annotations

import json
import random

import pytest
from judge_functions import every_word
from judge_helpers import openai_judge
from scipy.stats import binomtest

from retrieval_pipeline.core.retrieval.judges import document_text
from retrieval_pipeline.core.services.labels.judging_files import write_judging_file
from retrieval_pipeline.core.services.labels.stuffing_probe import stuffed

TOPICS = [
    ("how do wings stall at high angles", "Engines", "turbofan engines compress air before combustion"),
    ("heat transfer in composite slabs", "Shock waves", "a normal shock raises pressure across a thin layer"),
    ("boundary layer transition on cones", "Panels", "flutter of flat panels in supersonic flow"),
    ("buckling of thin cylindrical shells", "Nozzles", "exhaust nozzles shape the jet of a rocket"),
    ("skin friction of rough plates", "Landing gear", "loads on landing gear during touchdown"),
    ("ablation of heat shields on reentry", "Propellers", "propeller efficiency at low advance ratios"),
]


def rejected_rows(count: int) -> list[dict]:
    """Rows people answered no: each question beside another topic's document; two answered yes, one empty."""
    rows = [
        {"question_id": f"q{n}", "document_id": f"d{n}", "judgement": "no", "question": q, "title": title, "text": text}
        for n, (q, title, text) in enumerate((TOPICS * 4)[:count], start=1)
    ]
    extra = [{**rows[0], "document_id": "yes1", "judgement": "yes"}, {**rows[1], "document_id": "open", "judgement": ""}]
    return rows + extra


def configure(tmp_path, **judges) -> str:
    import yaml

    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"store": "store", "judges": judges}), encoding="utf-8")
    return str(config)


def test_a_judge_that_counts_words_flips_on_every_stuffed_row_and_the_interval_is_wilsons(cli, tmp_path):
    path = write_judging_file(rejected_rows(20), tmp_path / "pool.csv")
    before = path.read_bytes()
    config = configure(tmp_path, words={"kind": "callable", "function": "judge_functions:every_word"})

    result = cli(
        "judge",
        "machine",
        str(path),
        "--judge",
        "words",
        "--probe",
        "--sample",
        "12",
        "--seed",
        "3",
        "--config",
        config,
        "--json",
    )

    assert result.exit_code == 0, result.output
    probe = json.loads(result.stdout)
    assert (probe["human_no_rows"], probe["sampled"], probe["no_as_written"], probe["flipped_to_yes"]) == (20, 12, 12, 12)
    assert probe["flip_share"] == 1.0 and probe["errors"] == 0
    expected = binomtest(12, 12).proportion_ci(confidence_level=0.95, method="wilson")
    assert probe["flip_share_interval_95"] == pytest.approx([expected.low, expected.high], abs=1e-9)
    assert path.read_bytes() == before  # the probe writes nothing into the file


def test_the_sample_is_seeded_and_smaller_samples_are_drawn_from_the_human_no_rows_only(cli, tmp_path):
    path = write_judging_file(rejected_rows(20), tmp_path / "pool.csv")
    config = configure(tmp_path, words={"kind": "callable", "function": "judge_functions:every_word"})

    runs = [
        cli("judge", "machine", str(path), "--judge", "words", "--probe", "--sample", "5", "--seed", seed, "--config", config)
        for seed in ("1", "1", "2")
    ]

    assert runs[0].stdout == runs[1].stdout
    assert "Stuffing probe of words on 5 of the 20 row(s) people answered no (seed 1): 5 of 5 flipped to yes" in runs[0].stdout
    assert "(seed 2)" in runs[2].stdout


def test_stuffing_inserts_each_question_word_once_at_one_word_boundary():
    text = stuffed("flutter of flat panels", "How do wings stall? Wings!", random.Random(0))

    assert text.split(" ").count("wings") == 1 and every_word("how do wings stall", text)
    assert text.replace("how do wings stall", "").split() == "flutter of flat panels".split()


def test_probe_without_a_judge_is_a_usage_error(cli, tmp_path):
    path = write_judging_file(rejected_rows(2), tmp_path / "pool.csv")

    result = cli("judge", "machine", str(path), "--probe")

    assert result.exit_code == 2 and "Missing option '--judge'" in result.stderr


@pytest.mark.slow
def test_the_minilm_judge_is_asked_each_sampled_row_as_written_and_stuffed_and_its_flips_are_counted(cli, chat, grader, tmp_path):
    rows = rejected_rows(8)
    path = write_judging_file(rows, tmp_path / "pool.jsonl")
    config = configure(tmp_path, minilm=openai_judge(chat.url()))

    result = cli(
        "judge",
        "machine",
        str(path),
        "--judge",
        "minilm",
        "--probe",
        "--sample",
        "6",
        "--seed",
        "5",
        "--config",
        config,
        "--json",
    )

    assert result.exit_code == 0, result.output
    probe = json.loads(result.stdout)
    assert chat.asked == 12  # six rows, each as written and stuffed
    rng = random.Random(5)
    chosen = rng.sample([row for row in rows if row["judgement"] == "no"], 6)
    written = [(row["question"], document_text(row["title"], row["text"])) for row in chosen]
    grades = [(grader.grade(q, d), grader.grade(q, stuffed(d, q, rng))) for q, d in written]
    assert probe["yes_as_written"] == sum(before >= 2 for before, _ in grades)
    assert probe["flipped_to_yes"] == sum(before < 2 <= after for before, after in grades)


def test_a_file_without_a_persons_no_says_there_is_nothing_to_probe(cli, tmp_path):
    rows = [{**row, "judgement": ""} for row in rejected_rows(3)]
    path = write_judging_file(rows, tmp_path / "pool.csv")
    config = configure(tmp_path, words={"kind": "callable", "function": "judge_functions:every_word"})

    result = cli("judge", "machine", str(path), "--judge", "words", "--probe", "--config", config)

    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == (
        f"Stuffing probe of words: no row of {path} has a person's no to stuff; "
        f"answer some rows first (retrieval-eval judge {path}), then probe again."
    )
