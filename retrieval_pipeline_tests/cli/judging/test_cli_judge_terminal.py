"""`retrieval-eval judge FILE` in a real terminal: a pseudo-terminal, real keystrokes, the console script."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cli_helpers import console_script, subprocess_env

from retrieval_pipeline.core.services.labels.judging_files import read_judging_file, write_judging_file

pexpect = pytest.importorskip("pexpect")

ROWS = [
    {
        "question_id": question_id,
        "document_id": document_id,
        "judgement": "",
        "question": question,
        "expected_document_ids": ["d1"],
        "rejected_document_ids": [],
        "expected_title": "Password reset",
        "ranked_by": ["dense@1"],
        "title": title,
        "text": f"The text of {title}.",
    }
    for question_id, document_id, question, title in (
        ("q1", "n1", "how do I reset my password", "Account recovery"),
        ("q1", "n2", "how do I reset my password", "Billing overview"),
        ("q2", "n3", "can I pay in bitcoin", "Payment methods"),
    )
]


def judge(path: Path):
    env = {**subprocess_env(), "NO_COLOR": "1", "TERM": "xterm"}
    command, *arguments = console_script()
    session = pexpect.spawn(
        command, [*arguments, "judge", str(path)], env=env, encoding="utf-8", timeout=30, dimensions=(40, 400)
    )
    return session


def answers(path: Path) -> list[str]:
    return [row["judgement"] for row in read_judging_file(path)]


@pytest.mark.skipif(os.name != "posix", reason="a pseudo-terminal needs POSIX")
@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_a_person_judges_with_single_keys_goes_back_skips_quits_and_resumes(tmp_path, suffix):
    path = write_judging_file(ROWS, tmp_path / f"pool{suffix}")

    session = judge(path)
    session.expect("1 of 3")
    session.expect("Question q1: how do I reset my password")
    session.expect("Labelled answer: Password reset")
    session.expect(r"Candidate n1 \(ranked by dense@1\): Account recovery")
    session.expect(r"\[y\]es  \[n\]o  \[s\]kip  \[b\]ack  \[q\]uit")
    session.send("y")
    session.expect("2 of 3")
    assert answers(path) == ["yes", "", ""]  # written as it is made, before the session ends
    session.send("b")
    session.expect(r"1 of 3 \(now: yes\)")
    session.send("n")
    session.expect("2 of 3")
    session.send("s")
    session.expect("3 of 3")
    session.send("q")
    session.expect("1 of 3 judged, saved in")
    session.expect(pexpect.EOF)
    assert answers(path) == ["no", "", ""]

    resumed = judge(path)
    resumed.expect("2 of 3")  # the first candidate without an answer
    resumed.send("y")
    resumed.expect("3 of 3")
    resumed.send("x")  # not a key: asked again
    resumed.send("n")
    resumed.expect("3 of 3 judged, saved in")
    resumed.expect(pexpect.EOF)
    assert answers(path) == ["no", "yes", "no"]

    done = judge(path)
    done.expect(
        "All 3 candidate\\(s\\) in .* are judged; merge them into a set file with retrieval-eval judge apply .* SET_FILE."
    )
    done.expect(pexpect.EOF)


@pytest.mark.parametrize("stdin", ["piped", "closed"])
def test_judging_by_hand_without_a_terminal_says_it_needs_one_and_what_to_run_instead(tmp_path, stdin):
    """As CI or a script runs it: no terminal on standard input, none to open either (a new session)."""
    import subprocess

    path = write_judging_file(ROWS, tmp_path / "pool.csv")
    before = path.read_bytes()

    result = subprocess.run(
        [*console_script(), "judge", str(path)],
        input="yyy\n" if stdin == "piped" else None,
        stdin=subprocess.DEVNULL if stdin == "closed" else None,
        capture_output=True,
        text=True,
        env=subprocess_env(),
        start_new_session=True,
        timeout=60,
    )

    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and "internal error" not in result.stderr
    assert "judges in a terminal" in result.stderr and f"retrieval-eval judge machine {path} --judge NAME" in result.stderr
    assert path.read_bytes() == before
