"""What the generator kinds share with the judge kinds: the context that parses a kind's parameters and
names the configuration's key in every refusal, here `generators.NAME`."""

from __future__ import annotations

from dataclasses import dataclass

from retrieval_pipeline.judges.base import JudgeContext


@dataclass(frozen=True)
class GeneratorContext(JudgeContext):
    """A JudgeContext whose refusals name `generators.NAME`, so the helpers a judge kind uses (headers,
    secrets, imported functions) refuse a generator's parameter under the generator's own key."""

    @property
    def key(self) -> str:
        return f"generators.{self.identifier}"
