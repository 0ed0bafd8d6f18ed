"""A project with a query log built from public text, whose covered and off-topic traffic is known.

The log holds paraphrases of the demo set's Cranfield questions (one content word dropped, so each is
still nearest its own question) and SciFact claims, which no aeronautics question covers; counts fall off
like Zipf's law (`ZIPF_TOP // rank`). `Traffic` is what the test expects, computed here, not by the tool.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import yaml

import retrieval_pipeline.demo
from retrieval_pipeline.core.golden.question_files import load_question_set_file

DEMO = Path(retrieval_pipeline.demo.__file__).parent
SET_FILE = DEMO / "demo.cranfield.yaml"
ZIPF_TOP = 600
SECRET = "alice.smith@example.org"


@dataclass(frozen=True)
class Traffic:
    rows: list[dict]
    by_question: dict[str, int]
    off_topic: int

    @property
    def total(self) -> int:
        return sum(self.by_question.values()) + self.off_topic


def paraphrase(question: str) -> str:
    """The question without its longest word past the first: still the question, not its words."""
    words = question.split()
    longest = max(range(1, len(words)), key=lambda i: len(words[i]))
    return " ".join(words[:longest] + words[longest + 1 :])


def built_traffic(shared_data: Path, covered: int = 40, off_topic: int = 30) -> Traffic:
    questions = [q for q in load_question_set_file(SET_FILE).questions if len(q.question.split()) >= 8][:covered]
    claims = [json.loads(line)["text"] for line in (shared_data / "scifact" / "queries.jsonl").open()][:off_topic]
    rows, by_question, outside = [], {q.id: 0 for q in load_question_set_file(SET_FILE).questions}, 0
    for rank, text in enumerate([*(q.question for q in questions), *claims], start=1):
        count = ZIPF_TOP // rank
        if rank <= len(questions):
            by_question[questions[rank - 1].id] += count
            rows.append({"query": paraphrase(text), "count": count})
        else:
            outside += count
            rows.append({"query": text, "count": count})
    rows[0] = {**rows[0], "query": f"{rows[0]['query']} {SECRET}"}
    return Traffic(rows, by_question, outside)


def traffic_config(folder: Path, log: Path, **log_settings) -> Path:
    """A configuration with the demo set, a BM25 retriever over the demo corpus and the log as `traffic`."""
    config = {
        "store": str(folder / "results"),
        "question_sets": [{"file": str(SET_FILE)}],
        "retrievers": {"bm25": {"kind": "lexical", "corpus": str(DEMO / "cranfield-corpus.jsonl.gz")}},
        "query_logs": {"traffic": {"path": str(log), **log_settings}},
    }
    path = folder / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def logged_project(folder: Path, shared_data: Path, **log_settings) -> tuple[Path, Traffic]:
    """`built_traffic` written as a JSONL log (with its counts) and `traffic_config` naming it `traffic`."""
    traffic = built_traffic(shared_data)
    log = folder / "log.jsonl"
    log.write_text("".join(json.dumps(row) + "\n" for row in traffic.rows))
    return traffic_config(folder, log, count="count", **log_settings), traffic
