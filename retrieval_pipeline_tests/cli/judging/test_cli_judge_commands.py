"""`judge`'s modes are commands of their own: `judge FILE` (by hand), `judge machine`, `judge calibrate`,
`judge apply`. Each help offers its own options only, and `--config` reaches each from before `judge` too."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from desk_project import answer, pool

from retrieval_pipeline.cli import main
from retrieval_pipeline.cli.errors import EXIT_INVALID
from retrieval_pipeline.core.services.labels.judging_files import read_judging_file, write_judging_file

HELP_OPTIONS = {
    (): {"--config", "--store", "--help"},
    ("by-hand",): {"--help"},
    ("machine",): {"--judge", "--probe", "--sample", "--seed", "--json", "--config", "--help"},
    ("calibrate",): {"--estimate", "--width", "--next", "--out", "--seed", "--set", "--json", "--config", "--store", "--help"},
    ("apply",): {"--machine", "--force", "--config", "--help"},
}
OPTION_ROW = re.compile(r"^  (?:-\w, )?(--[\w-]+)", re.MULTILINE)  # wrapped help lines are indented deeper

JUDGE_FUNCTION = """\
def grade(question, document):
    return 3 if question.split()[0].lower() in document.lower() else 0
"""


@pytest.fixture
def judged_desk(cli, desk, monkeypatch) -> Path:
    """The desk project, working folder, with `new`'s pool answered (so `apply` would change the set) and a
    callable machine judge `words` configured."""
    monkeypatch.chdir(desk)
    (desk.parent / "desk_judge.py").write_text(JUDGE_FUNCTION, encoding="utf-8")  # a team's function
    monkeypatch.syspath_prepend(str(desk.parent))
    config = yaml.safe_load((desk / "config.yaml").read_text(encoding="utf-8"))
    config["judges"] = {"words": {"kind": "callable", "function": "desk_judge:grade"}}
    (desk / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    assert cli("run", "desk.small", "new", "--config", "config.yaml").exit_code == 0
    assert pool(cli, desk, "pool.csv", "new").exit_code == 0
    answer(desk / "pool.csv", {("q1", "n1"): "yes", ("q2", "n2"): "no"})
    return desk


def files(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


@pytest.mark.parametrize("command", list(HELP_OPTIONS), ids=lambda command: " ".join(("judge", *command)))
def test_each_judge_command_offers_its_own_options_only(cli, command):
    result = cli("judge", *command, "--help")

    assert result.exit_code == 0, result.stderr
    assert set(OPTION_ROW.findall(result.stdout)) == HELP_OPTIONS[command]


def test_the_judge_help_lists_its_commands_in_the_order_of_the_work(cli):
    listed = cli("judge", "--help").stdout.split("Commands:")[1]

    assert re.findall(r"^  (\S+)", listed, re.MULTILINE) == ["by-hand", "machine", "calibrate", "apply"]


def test_judge_machine_fills_the_machine_columns_and_probe_asks_without_writing(cli, judged_desk):
    judged = cli("judge", "machine", "pool.csv", "--judge", "words", "--config", "config.yaml", "--json")

    assert judged.exit_code == 0, judged.stderr
    rows = read_judging_file(Path("pool.csv"))
    summary = json.loads(judged.stdout)
    assert (summary["rows"], summary["judged"], summary["errors"]) == (len(rows), len(rows), 0)
    assert {row["machine_judgement"] for row in rows} <= {"yes", "no"} and all(row["judged_by"] for row in rows)
    assert [row["judgement"] for row in rows if row["judgement"]] == ["yes", "no"]  # the person's, untouched
    written = Path("pool.csv").read_bytes()

    probed = cli(
        "judge", "machine", "pool.csv", "--judge", "words", "--probe", "--seed", "1", "--config", "config.yaml", "--json"
    )

    assert probed.exit_code == 0, probed.stderr
    assert json.loads(probed.stdout)["judge"] == "words" and json.loads(probed.stdout)["human_no_rows"] == 1
    assert Path("pool.csv").read_bytes() == written


@pytest.mark.parametrize(
    ("command", "problem"),
    [
        (("machine", "pool.csv", "--judge", "words", "--sample", "5"), "--sample samples the rows --probe asks about"),
        (("machine", "pool.csv", "--judge", "words", "--seed", "5"), "--seed samples the rows --probe asks about"),
        (("calibrate", "pool.csv", "--seed", "5"), "--seed draws the rows --next N writes"),
        (("apply", "pool.csv", "desk.yaml", "--force"), "--force applies machine answers below the thresholds"),
        (("machine", "pool.csv"), "Missing option '--judge'"),
    ],
)
def test_an_option_that_would_do_nothing_in_its_command_is_refused_before_any_work(cli, judged_desk, command, problem):
    before = files(judged_desk)

    result = cli("judge", *command, "--config", "config.yaml")

    assert result.exit_code == EXIT_INVALID and len(result.stderr.splitlines()) == 1 and problem in result.stderr
    assert files(judged_desk) == before


def test_config_before_judge_reaches_its_command_and_a_store_it_does_not_take_is_refused(cli, judged_desk):
    calibrated = cli("--config", "config.yaml", "judge", "calibrate", "pool.csv", "--json")
    also_after_judge = cli("judge", "--config", "config.yaml", "calibrate", "pool.csv", "--json")
    refused = cli("--store", "elsewhere", "judge", "apply", "pool.csv", "desk.yaml", "--config", "config.yaml")

    assert calibrated.exit_code == also_after_judge.exit_code == 0, calibrated.stderr + also_after_judge.stderr
    assert json.loads(calibrated.stdout) == json.loads(also_after_judge.stdout)
    assert refused.exit_code == EXIT_INVALID and "apply takes no --store" in refused.stderr
    assert not Path("elsewhere").exists()


@pytest.mark.parametrize("spelling", [("judge",), ("judge", "by-hand")])
def test_judge_file_and_judge_by_hand_file_are_the_same_session(tmp_path, spelling):
    row = {"question_id": "q1", "judgement": "", "question": "a question", "expected_document_ids": []}
    row.update(rejected_document_ids=[], expected_title="", ranked_by=["bm25@1"], title="A title", text="A text.")
    path = write_judging_file([{**row, "document_id": document} for document in ("d1", "d2")], tmp_path / "pool.jsonl")

    result = CliRunner().invoke(main, [*spelling, str(path)], input="yn", catch_exceptions=False)

    assert result.exit_code == 0, result.stderr
    assert [row["judgement"] for row in read_judging_file(path)] == ["yes", "no"]
    assert f"2 of 2 judged, saved in {path}." in result.stdout


def test_a_mistyped_command_is_named_not_taken_for_a_file(cli):
    result = cli("judge", "calibrat", "pool.csv")

    [line] = result.stderr.splitlines()
    assert result.exit_code == EXIT_INVALID and "judge: No such command 'calibrat'. Did you mean 'calibrate'?" in line
