"""The stuffing probe: does the judge say yes to a document only because it repeats the question's words?

Alaofi et al. 2025 fooled LLM judges by inserting a query's words into passages people had judged not
relevant. Here a seeded random sample of the rows humans answered `no` is asked twice: as written, and with
the question's words inserted at a random word boundary of the document. A flip is a no that became a yes;
its share is over the rows the judge answered no as written (a row it already said yes to cannot flip, and
is counted apart as the judge's yes to what people rejected), with a 95% Wilson interval.
"""

from __future__ import annotations

import random
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from retrieval_pipeline.core.retrieval.judges import Judge, document_text
from retrieval_pipeline.core.scoring.stats.intervals import wilson_interval
from retrieval_pipeline.core.services.labels.judgement_cache import JudgementCache
from retrieval_pipeline.core.services.labels.judging_files import NO, judged_question, read_judging_file
from retrieval_pipeline.core.services.labels.machine_judging import Tally, ask_all

DEFAULT_SAMPLE = 50
DEFAULT_SEED = 0
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class ProbeResult:
    human_no: int  # rows of the file humans answered no
    sampled: int
    yes_as_written: int  # the judge said yes to a document people rejected, before any stuffing
    no_as_written: int  # the rows that could flip
    flipped: int
    errors: int
    seed: int

    @property
    def share(self) -> float | None:
        return self.flipped / self.no_as_written if self.no_as_written else None

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.flipped, self.no_as_written)

    def to_dict(self) -> dict[str, Any]:
        low, high = self.interval
        return {
            "human_no_rows": self.human_no,
            "sampled": self.sampled,
            "seed": self.seed,
            "yes_as_written": self.yes_as_written,
            "no_as_written": self.no_as_written,
            "flipped_to_yes": self.flipped,
            "flip_share": self.share,
            "flip_share_interval_95": [low, high],
            "errors": self.errors,
        }


def stuffed(document: str, question: str, rng: random.Random) -> str:
    """The document with the question's words (each once, in the question's order) inserted between two of
    its words, at a position `rng` picks."""
    words = list(dict.fromkeys(_WORD.findall(question.lower())))
    parts = document.split(" ")
    position = rng.randint(0, len(parts))
    return " ".join([*parts[:position], *words, *parts[position:]])


def stuffing_probe(
    path: Path, judge: Judge, cache_folder: Path, sample: int = DEFAULT_SAMPLE, seed: int = DEFAULT_SEED
) -> ProbeResult:
    """Ask `judge` about up to `sample` of the file's human-no rows, as written and stuffed; answers come from
    and go to the judgement cache like any pass's."""
    rows = [row for row in read_judging_file(path) if row["judgement"] == NO]
    rng = random.Random(seed)
    chosen = rng.sample(rows, min(sample, len(rows)))
    written = [(judged_question(row), document_text(row.get("title", ""), row.get("text", ""))) for row in chosen]
    pairs = written + [  # stuffed with the words of the question as typed, not of the conversation before it
        (question, stuffed(document, row.get("question", ""), rng)) for (question, document), row in zip(written, chosen)
    ]
    tally = Tally()
    workers = ThreadPoolExecutor(judge.concurrency, thread_name_prefix=f"probe {judge.name}")
    try:
        with JudgementCache(cache_folder, judge.fingerprint) as cache:
            answers = ask_all(judge, pairs, cache, tally, workers)
    finally:
        workers.shutdown(wait=False, cancel_futures=True)
    both = [(before, after) for before, after in zip(answers[: len(chosen)], answers[len(chosen) :]) if before and after]
    yes_before = sum(1 for before, _ in both if before.relevant)
    flipped = sum(1 for before, after in both if not before.relevant and after.relevant)
    return ProbeResult(len(rows), len(chosen), yes_before, len(both) - yes_before, flipped, len(chosen) - len(both), seed)
