"""The machine-judge contract: what a judge answers for one (question, document) pair, how a model's reply
is read, and the fingerprint that names a judge's answers.

A judge kind is a `JudgeKind` registered under the entry-point group `retrieval_pipeline.judges` (as retriever
kinds are under `retrieval_pipeline.retrievers`); each entry of the configuration's `judges:` section is
parsed once into its kind, whose `build()` makes the judge (`JUDGES`, built as every family of kinds is).
A judge's answers are never a person's: they are written to their own columns of a judging file
(`machine_judgement`, `machine_grade`, `judged_by`), and `judged_by` carries the fingerprint, so answers
of a changed prompt or model never pass for the old ones.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from retrieval_pipeline.core.retrieval.kinds import Kind, KindFamily, ParamsT
from retrieval_pipeline.core.retrieval.retriever import RetrieverFault

JUDGE_KINDS_GROUP = "retrieval_pipeline.judges"
GRADES = range(4)
"""UMBRELA's scale: 0 nothing to do with the question, 1 related but no answer, 2 partly answers it,
3 answers it (Upadhyay et al. 2024)."""
DEFAULT_RELEVANT_FROM = 2
FINGERPRINT_CHARS = 12
_DIGIT = re.compile(r"\d")


class JudgeFault(RetrieverFault):
    """One row the judge could not answer (a reply without a grade, a function returning something else):
    counted as that row's error, never replaced by a guess."""


class JudgeFailed(Exception):
    """The judge as a whole failed, not one row (its function called `sys.exit`): the pass stops, keeping
    every answer it got before, and the command says so (exit 3)."""


@dataclass(frozen=True)
class Grade:
    """A grade on UMBRELA's 0-3 scale."""

    value: int

    def __post_init__(self) -> None:
        if isinstance(self.value, bool) or not isinstance(self.value, int) or self.value not in GRADES:
            raise ValueError(f"a grade is an integer from 0 to 3, not {self.value!r}")

    def relevant(self, relevant_from: int) -> bool:
        return self.value >= relevant_from


@dataclass(frozen=True)
class MachineJudgement:
    """One judge's answer for one pair: yes or no, the grade when the judge gives one (a rerank score over
    a threshold or a function returning a bool give none), and the tokens the endpoint reported, if any."""

    relevant: bool
    grade: Grade | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.relevant, bool):
            raise ValueError(f"relevant is a bool, not {self.relevant!r}")
        for tokens in (self.prompt_tokens, self.completion_tokens):
            if tokens is not None and (isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0):
                raise ValueError(f"a token count is a non-negative integer, not {tokens!r}")

    @classmethod
    def graded(cls, grade: int, relevant_from: int, **tokens: int | None) -> MachineJudgement:
        checked = Grade(grade)
        return cls(checked.relevant(relevant_from), checked, **tokens)


@runtime_checkable
class Judge(Protocol):
    """Answers one pair at a time; `concurrency` pairs may be asked at once, and `fail_fast_after` leading
    rows that cannot reach the service stop a pass (0: never)."""

    name: str
    fingerprint: str
    concurrency: int
    fail_fast_after: int

    def judge(self, question: str, document: str) -> MachineJudgement: ...


class JudgeKind(Kind[ParamsT, Judge]):
    """One entry of `judges:`: its `Params` checked once, refusals naming `judges.NAME`; `build` makes the judge."""

    section = "judges"


JUDGES: KindFamily[JudgeKind, Judge] = KindFamily(
    JudgeKind, JUDGE_KINDS_GROUP, Judge, lacks="name, fingerprint, concurrency, fail_fast_after or judge()"
)


def grade_of_reply(reply: str) -> int:
    """The reply's first digit, which must be 0-3: a model asked for one grade that answers `5` or nothing
    usable has not graded, and reading a later digit would be guessing."""
    found = _DIGIT.search(reply)
    shown = reply if len(reply) <= 80 else reply[:77] + "..."
    if found is None:
        raise JudgeFault(f"the reply holds no grade 0-3: {shown!r}")
    if int(found.group()) not in GRADES:
        raise JudgeFault(f"the reply's first digit is {found.group()}, not a grade 0-3: {shown!r}")
    return int(found.group())


def judge_fingerprint(kind: str, relevant_from: int, **answer_changing: Any) -> str:
    """A short hash of what changes a judge's answers (kind, model, prompt, relevant_from, seed...), never
    of headers: they hold the secrets, and a new key does not change an answer."""
    identity = json.dumps({"kind": kind, "relevant_from": relevant_from, **answer_changing}, sort_keys=True, default=str)
    return hashlib.sha256(identity.encode()).hexdigest()[:FINGERPRINT_CHARS]


def judged_by(name: str, fingerprint: str) -> str:
    """The `judged_by` cell: the judge's configured name and its fingerprint."""
    return f"{name}@{fingerprint}"


def document_text(title: str, text: str) -> str:
    """What a judge reads of a document: its title, a blank line, then its text."""
    return f"{title}\n\n{text}" if title and text else title or text
