"""What every built-in judge kind takes: `relevant_from`, the grade from which an answer is yes."""

from __future__ import annotations

from pydantic import Field

from retrieval_pipeline.core.retrieval.judges import DEFAULT_RELEVANT_FROM, GRADES
from retrieval_pipeline.core.retrieval.kinds import KindParams


class JudgeParams(KindParams):
    """Every judge kind's parameters: unknown keys refused, and the grade from which an answer is yes."""

    relevant_from: int = Field(DEFAULT_RELEVANT_FROM, ge=GRADES.start, le=GRADES.stop - 1)
