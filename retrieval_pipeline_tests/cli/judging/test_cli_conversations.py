"""A conversational set goes through the labelling loop as a set of questions does: pool its turns, judge
them, apply the answers inside `conversations:`, then score, rescore and audit under the new labels."""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path

import pytest
import yaml
from cli_helpers import console_script, subprocess_env
from desk_project import CORPUS, answer, read_csv, write_run

TALKS = """\
# The support-desk conversations: labelled by the docs team.
identifier: desk.talks
name: Desk conversations
conversations:
  - id: reset
    turns:
      - turn: 1
        utterance: how do I reset my password
        form: match
        expected_document_ids: [d1]  # the reset page
      - turn: 2
        utterance: and if the mail never arrives?
        reply: Open settings and choose reset password.
        rewrite: what if the password reset mail never arrives
        form: gap
        nothing_to_retrieve: true
  - id: pay
    turns:
      - turn: 1
        utterance: can I pay in bitcoin
        form: gap
        nothing_to_retrieve: true  # nothing answers it, so far
"""


@pytest.fixture
def talks(tmp_path: Path) -> Path:
    """The desk's corpus, its conversations, and `new`: a run file ranking documents nobody judged."""
    root = tmp_path / "talks"
    root.mkdir()
    (root / "talks.yaml").write_text(TALKS, encoding="utf-8")
    (root / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in CORPUS), encoding="utf-8")
    write_run(root, "new", {"reset/1": ["n1", "d1"], "reset/2": ["n1"], "pay/1": ["n3"]})
    new = {"kind": "run_file", "path": "new.jsonl", "format": "jsonl", "corpus": "corpus.jsonl"}
    config = {"store": "results", "question_sets": [{"file": "talks.yaml"}], "retrievers": {"new": new}}
    (root / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return root


def command(cli, talks: Path, *args: str):
    return cli(*args, "--config", str(talks / "config.yaml"))


def evaluate(cli, talks: Path) -> dict:
    result = command(cli, talks, "run", "desk.talks", "new", "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def rescored_history(cli, talks: Path) -> list[dict]:
    result = command(cli, talks, "history", "desk.talks", "new", "--json", "--rescore")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)["runs"]


def test_pool_judge_apply_relabels_turns_in_place_and_the_runs_before_are_rescored_under_the_new_labels(cli, talks):
    before = evaluate(cli, talks)
    assert [q["id"] for q in before["questions"]] == ["reset/1", "reset/2", "pay/1"]
    assert (before["top1_hit_count"], before["top3_hit_count"]) == (0, 1)

    assert command(cli, talks, "pool", "desk.talks", "--depth", "3", "--out", str(talks / "pool.csv")).exit_code == 0
    rows = read_csv(talks / "pool.csv")
    assert [(r["question_id"], r["document_id"], r["conversation"], r["question"]) for r in rows] == [
        ("reset/1", "n1", "", "how do I reset my password"),
        ("reset/2", "n1", "user: how do I reset my password", "and if the mail never arrives?"),  # as the user typed it
        ("pay/1", "n3", "", "can I pay in bitcoin"),
    ]
    assert list(rows[0])[2:5] == ["judgement", "conversation", "question"]  # what the question follows, beside it
    answer(talks / "pool.csv", {("reset/1", "n1"): "yes", ("reset/2", "n1"): "yes", ("pay/1", "n3"): "no"})

    applied = command(cli, talks, "judge", "apply", str(talks / "pool.csv"), str(talks / "talks.yaml"))

    assert applied.exit_code == 0, applied.stderr
    assert applied.stdout.splitlines()[1:] == [
        "  reset/1: +1 expected (n1)",
        "  reset/2: +1 expected (n1); was an empty-label question, now a normal one",
        "  pay/1: +1 rejected (n3)",
    ]
    after_text = (talks / "talks.yaml").read_text(encoding="utf-8")
    diff = difflib.unified_diff(TALKS.splitlines(), after_text.splitlines(), n=0, lineterm="")
    assert [line for line in diff if line[:1] in "+-" and not line.startswith(("+++", "---"))] == [
        "-        expected_document_ids: [d1]  # the reset page",
        "+        expected_document_ids: [d1, n1]  # the reset page",
        "-        nothing_to_retrieve: true",
        "+        expected_document_ids: [n1]",
        "+        rejected_document_ids: [n3]",
    ]

    after = evaluate(cli, talks)
    assert (after["top1_hit_count"], after["top3_hit_count"]) == (2, 2)  # the two yeses, at rank 1
    assert after["set_changes"]["relabelled"] == ["reset/1", "reset/2", "pay/1"]
    newest, oldest = rescored_history(cli, talks)
    assert oldest["rescored_questions"] == ["reset/1", "reset/2", "pay/1"] and oldest["top1_hit_count"] == 2
    assert command(cli, talks, "audit", "desk.talks").exit_code == 0


def test_a_turn_whose_rewrite_changed_is_not_rescored_as_the_same_question(cli, talks):
    evaluate(cli, talks)
    reworded = TALKS.replace("what if the password reset mail never arrives", "what if the reset mail is lost")
    (talks / "talks.yaml").write_text(reworded, encoding="utf-8")

    newest = evaluate(cli, talks)
    [oldest, _] = reversed(rescored_history(cli, talks))

    reason = "asked with another text: its stored ranking answered another question"
    assert oldest["not_rescored_questions"] == [{"question_id": "reset/2", "reason": reason}]
    assert newest["set_changes"]["compared"] == 2


@pytest.mark.skipif(os.name != "posix", reason="a pseudo-terminal needs POSIX")
def test_a_person_judging_a_later_turn_in_the_terminal_sees_the_conversation_before_it(cli, talks):
    pexpect = pytest.importorskip("pexpect")
    evaluate(cli, talks)
    assert command(cli, talks, "pool", "desk.talks", "--out", str(talks / "pool.csv")).exit_code == 0
    env = {**subprocess_env(), "NO_COLOR": "1", "TERM": "xterm"}
    executable, *arguments = console_script()
    session = pexpect.spawn(
        executable, [*arguments, "judge", str(talks / "pool.csv")], env=env, encoding="utf-8", timeout=30, dimensions=(40, 400)
    )

    session.expect("1 of 3")
    session.send("s")
    session.expect("2 of 3")
    session.expect("Conversation so far:\r\nuser: how do I reset my password\r\n")
    session.expect(r"Question reset/2: and if the mail never arrives\?")
    session.send("q")
    session.expect(pexpect.EOF)
