"""`kind: extractive`: a question built from the document's own words, with no model, so generation runs
offline, in tests and on the embedded demo.

The question is a keyword query, as users type into a search box: the `title_terms` most frequent content
words of the title (in the title's order), then the `text_terms` most frequent content words of the text
that the title lacks and that occur at least twice (more frequent first; ties: the earlier first).
Content words are those `forms.content_terms` keeps (three or more letters, English stopwords out) and
scikit-learn's longer list of English stopwords does not hold, each counted by its stem and shown as
first written; numbers are left out. A document without a title
gives `title_terms + text_terms` words of its text.

Every word comes from the document, so it writes `match`-form questions only: it is never asked for
`gap`, and a set grown with it measures how retrievers match a document's vocabulary, not how they
bridge a user's rewording.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from typing import Literal

from pydantic import Field

from retrieval_pipeline.core.golden.forms import content_terms
from retrieval_pipeline.core.retrieval.generators import (
    GeneratedQuestion,
    GenerationRequest,
    GeneratorKind,
    generator_fingerprint,
)
from retrieval_pipeline.core.retrieval.kinds import KindParams

RULE = 1
"""The rule's version, in the fingerprint: raised when the rule above changes the questions it writes."""
_WORD = re.compile(r"[a-z0-9]+")
"""The words `forms.content_terms` reads, so each gives at most one stem."""


class ExtractiveGeneratorParams(KindParams):
    kind: Literal["extractive"] = "extractive"
    title_terms: int = Field(3, ge=0, description="content words taken from the title")
    text_terms: int = Field(2, ge=0, description="content words taken from the text, beyond the title's")


class ExtractiveGeneratorKind(GeneratorKind[ExtractiveGeneratorParams]):
    Params = ExtractiveGeneratorParams

    def checked(self) -> None:
        if self.params.title_terms + self.params.text_terms == 0:
            raise self.invalid("title_terms and text_terms are both 0: the question would have no word", "text_terms")

    def build(self) -> ExtractiveGenerator:
        return ExtractiveGenerator(self.name, self.params)


class ExtractiveGenerator:
    forms = ("match",)
    concurrency = 1
    fail_fast_after = 0

    def __init__(self, name: str, params: ExtractiveGeneratorParams):
        self.name = name
        self._params = params
        self.fingerprint = generator_fingerprint("extractive", rule=RULE, **params.model_dump(exclude={"kind"}))

    def generate(self, request: GenerationRequest) -> GeneratedQuestion:
        title_terms, text_terms = self._params.title_terms, self._params.text_terms
        title = _content_words(request.title)
        if not title:
            title_terms, text_terms = 0, title_terms + text_terms
        text = _content_words(request.text)
        counts = Counter(stem for stem, _ in title + text)
        shown = {stem: word for stem, word in reversed(text + title)}  # the first spelling wins
        order = {stem: position for position, (stem, _) in reversed(list(enumerate(title + text)))}
        from_title = sorted(dict.fromkeys(stem for stem, _ in title), key=lambda stem: (-counts[stem], order[stem]))[:title_terms]
        in_title = {stem for stem, _ in title}
        others = [stem for stem in dict.fromkeys(stem for stem, _ in text) if stem not in in_title and counts[stem] >= 2]
        from_text = sorted(others, key=lambda stem: (-counts[stem], order[stem]))
        chosen = sorted(from_title, key=order.__getitem__) + from_text[:text_terms]
        return GeneratedQuestion(" ".join(shown[stem] for stem in chosen))


def _content_words(text: str) -> list[tuple[str, str]]:
    """(stem, word as written, lower-cased) of each content word of `text`, in order."""
    common = _common_words()
    words = (word for word in _WORD.findall(text.lower()) if not word.isdigit() and word not in common)
    return [(stem, word) for word in words for stem in _stem(word)]


@lru_cache(maxsize=1)
def _common_words() -> frozenset[str]:
    """scikit-learn's English stopwords (318, against the 33 bm25s drops): `from`, `which`, `were` are
    frequent in any text, never what it is about. scikit-learn is the [coverage] extra `generate` needs."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


@lru_cache(maxsize=65536)
def _stem(word: str) -> tuple[str, ...]:
    """The word's stem when `forms.content_terms` keeps it (cached: a corpus repeats its words)."""
    return tuple(content_terms(word))
