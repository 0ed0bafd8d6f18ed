"""A machine judge's pass that cannot go on keeps every answer it got: a disk that fills mid-pass (the
judging file or the judgement cache refused), tried for real under a file-size limit in a child process."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from retrieval_pipeline.core.retrieval.judges import MachineJudgement
from retrieval_pipeline.core.services.labels.judging_files import read_judging_file, write_judging_file
from retrieval_pipeline.core.services.labels.machine_judging import machine_judge_file

ROWS = 37
LABEL = "parity@f1"


class ParityJudge:
    """Yes for an even question number: a judge whose every answer the test can check, counting its calls."""

    name, fingerprint, concurrency, fail_fast_after = "parity", "f1", 1, 0

    def __init__(self) -> None:
        self.asked: list[str] = []

    def judge(self, question: str, document: str) -> MachineJudgement:
        self.asked.append(question)
        return MachineJudgement(int(question.split()[-1]) % 2 == 0)


PASS_UNDER_A_FILE_SIZE_LIMIT = textwrap.dedent(
    """
    import json, resource, sys
    from pathlib import Path
    from retrieval_pipeline.cli.errors import CommandError, reported_errors
    from retrieval_pipeline.core.retrieval.judges import MachineJudgement
    from retrieval_pipeline.core.services.labels.machine_judging import Tally, machine_judge_file

    class ParityJudge:
        name, fingerprint, concurrency, fail_fast_after = "parity", "f1", 1, 0
        asked = 0

        def judge(self, question, document):
            ParityJudge.asked += 1
            return MachineJudgement(int(question.split()[-1]) % 2 == 0)

    path, cache, limit = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))  # every file this process writes: a disk that fills
    tally = Tally()
    try:
        with reported_errors():
            machine_judge_file(path, ParityJudge(), cache, tally)
        exit_code, message = 0, ""
    except CommandError as error:
        exit_code, message = error.exit_code, error.format_message()
    print(json.dumps({"exit_code": exit_code, "message": message, "answered": tally.asked, "called": ParityJudge.asked}))
    """
)


def _judging_file(folder: Path, text_size: int) -> Path:
    rows = [
        {
            "question_id": f"q{n}",
            "document_id": f"d{n}",
            "judgement": "",
            "question": f"question {n}",
            "title": "",
            "text": "t" * text_size,
        }
        for n in range(ROWS)
    ]
    return write_judging_file(rows, folder / "pool.jsonl")


def _pass_under_limit(path: Path, cache: Path, limit: int) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", PASS_UNDER_A_FILE_SIZE_LIMIT, str(path), str(cache), str(limit)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _answered_in_file(path: Path) -> dict[str, str]:
    return {row["question_id"]: row["machine_judgement"] for row in read_judging_file(path) if row.get("judged_by") == LABEL}


def _stated(message: str, pattern: str) -> int:
    found = re.search(pattern, message)
    return int(found.group(1)) if found else 0


@pytest.mark.parametrize(
    ("text_size", "headroom", "refused"),
    [(3000, 1000, "pool.jsonl: cannot write"), (20, 30_000, "cannot write the judgement cache")],
    ids=["the-judging-file-fills", "the-cache-fills"],
)
def test_a_disk_that_fills_mid_pass_keeps_every_answer_it_got_and_says_what_it_kept(tmp_path, text_size, headroom, refused):
    path = _judging_file(tmp_path, text_size)
    cache = tmp_path / "cache"
    limit = path.stat().st_size + headroom  # the file as pooled fits; the cache or the answered file outgrows it

    stopped = _pass_under_limit(path, cache, limit)

    assert stopped["exit_code"] == 3, stopped  # incomplete, as docs/cli.md says: never 4 (a bug), never silent
    message = stopped["message"]
    assert refused in message and "then run the same command again to resume" in message
    in_file = _answered_in_file(path)
    only_cached = _stated(message, r"(\d+) more answers? only in the judgement cache")
    assert _stated(message, r"(\d+) rows? carry parity's answer in") == len(in_file)
    # the file is written at the end (the cache is the pass's journal), so a full disk may leave it unanswered
    assert 0 < len(in_file) + only_cached and 0 < _stated(message, rf"the pass stopped after (\d+) of {ROWS} rows") <= ROWS
    assert not list(tmp_path.glob(".pool.jsonl.*"))  # no half-written file left beside it
    assert "could not be saved anywhere" not in message
    assert stopped["called"] == stopped["answered"] == len(in_file) + only_cached  # every answer paid for was kept
    assert all(answer == ("yes" if int(qid[1:]) % 2 == 0 else "no") for qid, answer in in_file.items())

    again = ParityJudge()
    summary = machine_judge_file(path, again, cache)  # the disk has room again

    assert len(again.asked) == ROWS - len(in_file) - only_cached  # no answer asked twice
    assert summary.judged == ROWS and summary.tally.cached == only_cached
    assert len(_answered_in_file(path)) == ROWS
