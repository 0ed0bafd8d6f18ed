"""A judge kind is parsed once into its kind object, which builds the judge: the built-in kinds keep their
fingerprints (judging caches are keyed by them), a team's kind is a few lines, one `JudgeKind` class."""

from __future__ import annotations

from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
from pydantic import Field

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.retrieval import kinds
from retrieval_pipeline.core.retrieval.judges import JUDGE_KINDS_GROUP, JUDGES, JudgeKind, MachineJudgement, judge_fingerprint
from retrieval_pipeline.core.retrieval.kinds import KindParams
from retrieval_pipeline.core.retrieval.retriever import BuildContext
from retrieval_pipeline.judges.callable import CallableJudgeKind

URL = "http://127.0.0.1:9/v1/chat/completions"


class LengthParams(KindParams):
    longer_than: int = Field(ge=0)


class LengthJudge:
    fail_fast_after = 0
    concurrency = 1

    def __init__(self, name: str, longer_than: int):
        self.name, self.longer_than = name, longer_than
        self.fingerprint = judge_fingerprint("length", 2, longer_than=longer_than)

    def judge(self, question: str, document: str) -> MachineJudgement:
        return MachineJudgement(len(document) > self.longer_than)


class LengthJudgeKind(JudgeKind[LengthParams]):
    """A team's kind as docs/judging.md shows it."""

    Params = LengthParams

    def build(self) -> LengthJudge:
        return LengthJudge(self.name, self.params.longer_than)


class BuildsNothing(LengthJudgeKind):
    def build(self):
        return object()


@pytest.fixture
def team_kinds(monkeypatch):
    claims = {
        "length": "LengthJudgeKind",
        "plain": "LengthJudge",
        "nothing": "BuildsNothing",
        "callable": "CallableJudgeKind",
    }
    entry_points = tuple(EntryPoint(kind, f"{__name__}:{target}", JUDGE_KINDS_GROUP) for kind, target in claims.items())
    installed = kinds.installed_entry_points
    monkeypatch.setattr(
        kinds, "installed_entry_points", lambda group: entry_points if group == JUDGE_KINDS_GROUP else installed(group)
    )


def built(name: str, spec: dict):
    params = dict(spec)
    return JUDGES.build(name, params.pop("kind"), params, BuildContext(base_dir=Path("."), source="config.yaml"))


def test_the_built_in_kinds_keep_their_fingerprints():
    """Values from before judges became kinds: a changed one would orphan every cached answer."""
    assert built("j", {"kind": "openai", "url": URL, "model": "m"}).fingerprint == "b2e3dee4cbc8"
    seeded = {"kind": "openai", "url": URL, "model": "m", "seed": 3, "relevant_from": 3, "max_tokens": 5, "extra_body": {"a": 1}}
    assert built("j", seeded).fingerprint == "d48d9991228c"
    assert built("j", {"kind": "callable", "function": "judge_functions:overlap_grade"}).fingerprint == "ea29169b6e26"
    rerank = {"kind": "rerank", "threshold": 0.5, "scorer": {"kind": "http", "url": "http://127.0.0.1:9/rerank", "model": "r"}}
    with pytest.raises(InvalidInputError, match="judges.j: field 'scorer.http.model': is not a known key"):
        built("j", rerank)


def test_a_kind_is_its_parameters_parsed_once_and_builds_the_judge():
    context = BuildContext(Path("."), "config.yaml")
    kind = CallableJudgeKind.parse("mine", {"function": "judge_functions:every_word", "version": "2"}, context)

    assert kind.params.version == "2" and kind.name == "mine"
    judge = kind.build()
    assert judge.name == "mine" and judge.judge("a b", "a b c").relevant is True


def test_a_teams_kind_is_a_few_lines_and_its_refusals_name_the_judge_and_the_field(team_kinds):
    judge = built("long", {"kind": "length", "longer_than": 3})

    assert judge.judge("q", "long enough").relevant and not judge.judge("q", "no").relevant
    with pytest.raises(InvalidInputError, match="config.yaml: judges.long: field 'longer_than': Input should be greater"):
        built("long", {"kind": "length", "longer_than": -1})


def test_a_registered_class_that_is_no_judge_kind_is_refused_naming_the_judge_and_the_class(team_kinds):
    with pytest.raises(InvalidInputError) as raised:
        built("old", {"kind": "plain", "longer_than": 2})

    assert (
        str(raised.value)
        == f"config.yaml: judges.old: field 'kind': kind 'plain' is {__name__}.LengthJudge, which is not a JudgeKind"
    )


def test_a_kind_that_builds_no_judge_is_refused_naming_what_it_lacks(team_kinds):
    with pytest.raises(
        InvalidInputError,
        match="judges.bad: kind 'nothing' built object, which lacks name, fingerprint, concurrency, fail_fast_after or judge",
    ):
        built("bad", {"kind": "nothing", "longer_than": 1})
