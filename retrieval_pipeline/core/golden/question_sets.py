"""Where golden sets come from: set files, BEIR folders and installed plugins, all in one registry.

A plugin registers a zero-argument callable under the entry-point group
`retrieval_pipeline.question_sets`; it returns the sets it provides.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.base.registry import Registry, installed_entry_points
from retrieval_pipeline.core.golden.generated import GENERATED_SUFFIX
from retrieval_pipeline.core.golden.questions import GoldenQuestionSet

QUESTION_SETS_GROUP = "retrieval_pipeline.question_sets"

QuestionSetRegistry = Registry[GoldenQuestionSet]
SetProvider = tuple[str, Callable[[], Iterable[GoldenQuestionSet]]]


def entry_point_providers() -> list[SetProvider]:
    providers = []
    for entry_point in installed_entry_points(QUESTION_SETS_GROUP):
        source = f"entry point '{entry_point.name}' ({entry_point.value})"
        providers.append((source, _loaded(entry_point, source)))
    return providers


def _loaded(entry_point, source: str) -> Callable[[], Iterable[GoldenQuestionSet]]:
    def provide() -> Iterable[GoldenQuestionSet]:
        sets = list(entry_point.load()())
        for question_set in sets:
            if not isinstance(question_set, GoldenQuestionSet):
                raise InvalidInputError(f"provided {type(question_set).__name__}, not a GoldenQuestionSet", source=source)
        return sets

    return provide


def build_question_set_registry(providers: Iterable[SetProvider]) -> QuestionSetRegistry:
    """Load every provider; the first identifier claimed twice stops everything, naming both sources, and
    so does a set named as another set's generated questions are stored (`<set>.generated`): its runs
    and that slice's would share one history, each the other's baseline."""
    registry: QuestionSetRegistry = Registry("question set")
    for source, provide in providers:
        for question_set in provide():
            registry.add(question_set.identifier, question_set, source)
    for identifier in registry:
        base = identifier.removesuffix(GENERATED_SUFFIX)
        if base != identifier and base in registry:
            raise InvalidInputError(
                f"{identifier!r} is the name set {base!r} ({registry.source_of(base)}) stores its generated questions "
                "under, apart from its own runs: give this set another identifier",
                source=registry.source_of(identifier),
                field="identifier",
            )
    return registry
