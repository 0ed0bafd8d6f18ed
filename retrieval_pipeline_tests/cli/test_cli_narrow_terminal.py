"""Tables in a narrow terminal: identifiers fold, a figure never loses a character, and a column left out
to fit is named under its table.

The console script runs on a pseudo-terminal of the given width, as in a person's terminal (off a
terminal the tables keep their natural width); each figure column is read back and set against the
JSON of the same, deterministic, demo runs.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess

import pytest
from cli_helpers import console_script, subprocess_env
from printed_tables import assert_whole, change_text, figure_in, p_text, percent, printed_table

from retrieval_pipeline.core.services.configuration.lookup import demo_config_path

pty = pytest.importorskip("pty", reason="a pseudo-terminal needs a POSIX system")
fcntl = pytest.importorskip("fcntl", reason="a pseudo-terminal needs a POSIX system")
termios = pytest.importorskip("termios", reason="a pseudo-terminal needs a POSIX system")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not demo_config_path().exists(), reason="the embedded demo is not built yet"),
]
WIDTHS = (80, 60)
RETRIEVERS = ("bm25_stemmed", "bm25_titles")


def in_terminal(tmp_path, columns: int, *arguments: str) -> str:
    """What `retrieval-eval ARGUMENTS` shows on a terminal `columns` wide."""
    env = {**subprocess_env(), "COLUMNS": str(columns), "RETRIEVAL_EVAL_CACHE": str(tmp_path / "cache")}
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    process = subprocess.Popen(
        [*console_script(), *arguments],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=tmp_path,
    )
    os.close(follower)
    shown = bytearray()
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    assert process.wait(timeout=120) == 0
    return shown.decode()


@pytest.fixture
def demo_env(tmp_path, monkeypatch):
    monkeypatch.delenv("RETRIEVAL_EVAL_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path / "store"


def hit_rank(question: dict) -> str:
    """Where the first expected document came in the question's ranking, as the Questions table shows it."""
    ranks = [
        rank for rank, found in enumerate(question["retrieved_document_ids"], 1) if found in question["expected_document_ids"]
    ]
    return str(ranks[0]) if ranks else "—"


def slice_columns(rows: list[dict]) -> dict[str, str | None]:
    """What a slice-test table's columns read, from the JSON's tests (None: not a figure)."""
    return {
        "Δ": " ".join(change_text(row["measure"], row["delta"]) for row in rows),
        "p": " ".join(p_text(row["p_value"]) for row in rows),
        "corrected p": " ".join(p_text(row["corrected_p_value"]) for row in rows),
        "questions": " ".join(str(row["questions"]) for row in rows),
        "95% CI of Δ": None,
        "test": None,
        "≤ 0.05": None,
    }


@pytest.mark.parametrize("width", WIDTHS)
def test_compare_in_a_narrow_terminal_prints_every_figure_whole(cli, demo_env, tmp_path, width):
    document = json.loads(cli("compare", "demo.cranfield", *RETRIEVERS, "--json").stdout)
    text = in_terminal(tmp_path, width, "compare", "demo.cranfield", *RETRIEVERS)

    runs, n = document["runs"], document["question_count"]
    tests = {t["measure"]: t for t in document["paired_tests"]}
    overall = {"errors": " ".join(str(len(run["errored_question_ids"])) for run in runs)}
    for k in (1, 3):
        overall[f"top-{k}"] = " ".join(
            f"{figure_in(run, f'top-{k}')} ({run['hit_rates'][str(k)]['hit_count']}/{n})" for run in runs
        )
        overall[f"Δ top-{k}"] = "ref " + change_text("top", tests[f"top{k}"]["delta"])
        overall[f"p top-{k}"] = "ref " + p_text(tests[f"top{k}"]["p_value"])
    for name in ("MRR@10", "nDCG@10", "Judged@10"):
        overall[name] = " ".join(figure_in(run, name) for run in runs)
    assert_whole(text, "Overall", overall | {"ms": None}, always=("top-1", "Δ top-1", "p top-1"))

    forms = {
        run["retriever"]: " ".join(
            f"{percent(f['top1_hit_rate'])} / {percent(f['top3_hit_rate'])}" for f in run["by_form"].values()
        )
        for run in runs
    }
    assert_whole(text, "By form (top-1 / top-3)", forms, always=RETRIEVERS[:1])

    rows = document["slice_tests"]["bm25_titles"]
    title = f"bm25_titles against bm25_stemmed by slice (Holm-corrected over {len(rows)} tests)"
    assert_whole(text, title, slice_columns(rows), always=("Δ", "corrected p"))


@pytest.mark.parametrize("width", WIDTHS)
def test_run_in_a_narrow_terminal_prints_every_figure_whole(cli, demo_env, tmp_path, width):
    run = ("run", "demo.cranfield", "bm25_titles", "--store", str(demo_env), "--show", "none")
    assert cli(*run).exit_code == 0  # the baseline: the next runs are checked against it
    document = json.loads(cli(*run, "--json").stdout)
    text = in_terminal(tmp_path, width, *run[:-1], "all")

    questions = printed_table(text, "Questions")
    assert questions.column("id").replace(" ", "") == "".join(question["id"] for question in document["questions"])
    expected_ranks = " ".join(hit_rank(question) for question in document["questions"])
    assert_whole(text, "Questions", {"hit rank": expected_ranks, "ms": None, "top-1": None}, always=("top-1",))

    for breakdown, title in (("by_form", "By form"), ("by_hard_class", "By hard class")):
        groups, changes = document[breakdown].values(), document["regression"][breakdown].values()
        expected: dict[str, str | None] = {"questions": " ".join(str(group["questions"]) for group in groups)}
        for k in (1, 3):
            expected[f"top-{k}"] = " ".join(percent(group[f"top{k}_hit_rate"]) for group in groups)
            expected[f"Δ top-{k}"] = " ".join(change_text("top", change[f"top{k}_delta"]) for change in changes)
        for name in ("MRR@10", "nDCG@10", "Judged@10"):
            expected[name] = " ".join(figure_in(group, name) for group in groups)
        assert_whole(text, title, expected, always=("top-1", "top-3", "Δ top-1", "Δ top-3"))

    rows = document["regression"]["slice_tests"]
    title = f"Paired tests by slice (Holm-corrected over {len(rows)} tests)"
    assert_whole(text, title, slice_columns(rows), always=("Δ", "corrected p"))

    history = ("history", "demo.cranfield", "bm25_titles", "--store", str(demo_env))
    stored = json.loads(cli(*history, "--json").stdout)["runs"]
    text = in_terminal(tmp_path, width, *history)
    expected = {"status": None, "run at (UTC)": None}
    for k in (1, 3):
        expected[f"top-{k}"] = " ".join(percent(run[f"top{k}_hit_rate"]) for run in stored)
        expected[f"Δ top-{k}"] = " ".join(
            "—" if run[f"top{k}_delta"] is None else change_text("top", run[f"top{k}_delta"]) for run in stored
        )
    assert_whole(text, f"demo.cranfield × bm25_titles in {demo_env} (240 questions), newest first:", expected, always=("top-1",))
