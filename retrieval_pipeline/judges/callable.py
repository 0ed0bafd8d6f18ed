"""`kind: callable`: a function of the user's own, `package.module:function(question, document)`, returning a
grade 0-3 or a bool (yes or no, no grade).

What it returns is checked on every call: anything else is that row's error, never read as an answer. A
function calling `sys.exit` fails the judge: the pass stops, keeping the answers it got (exit 3). Its
code cannot be checksummed reliably, so its answers are keyed by the dotted name and an optional
`version`, which is what a user changes when the function's answers do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import Field

from retrieval_pipeline.core.retrieval.judges import (
    GRADES,
    JudgeFailed,
    JudgeFault,
    JudgeKind,
    MachineJudgement,
    judge_fingerprint,
)
from retrieval_pipeline.core.retrieval.kinds import DOTTED_PATTERN, KindContext, imported_callable
from retrieval_pipeline.judges.base import JudgeParams


class CallableJudgeParams(JudgeParams):
    kind: Literal["callable"] = "callable"
    function: str = Field(pattern=DOTTED_PATTERN, description="package.module:function")
    version: str | None = Field(None, min_length=1, description="put into the fingerprint: change it when the answers change")
    concurrency: int = Field(1, ge=1, description="pairs given to the function at once, each in a thread of its own")


class CallableJudgeKind(JudgeKind[CallableJudgeParams]):
    Params = CallableJudgeParams

    def build(self) -> CallableJudge:
        return CallableJudge(self.name, self.params, imported_callable(self.params.function, KindContext.of(self), "function"))


class CallableJudge:
    fail_fast_after = 0

    def __init__(self, name: str, params: CallableJudgeParams, function: Callable[[str, str], Any]):
        self.name = name
        self.concurrency = params.concurrency
        self._params = params
        self._function = function
        self.fingerprint = judge_fingerprint("callable", params.relevant_from, function=params.function, version=params.version)

    def judge(self, question: str, document: str) -> MachineJudgement:
        try:
            answer = self._function(question, document)
        except Exception as error:  # noqa: BLE001 - whatever the user's code raises is this row's error
            raise JudgeFault(f"judge function {self._params.function} raised {type(error).__name__}: {error}") from None
        except SystemExit as stop:  # the function means to end the process: the judge failed, not one row
            raise JudgeFailed(f"its function {self._params.function} called sys.exit({stop.code!r})") from None
        if isinstance(answer, bool):
            return MachineJudgement(answer)
        if isinstance(answer, int) and answer in GRADES:
            return MachineJudgement.graded(answer, self._params.relevant_from)
        raise JudgeFault(f"judge function {self._params.function} returned {answer!r}, not a grade 0-3 or a bool")
