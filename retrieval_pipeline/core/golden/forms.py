"""A question's form, `match` or `gap`, and the documented rule that tags it when importing labels that lack forms.

A question is `match` when at least half of its content words (lower-cased alphanumeric tokens of
three or more characters, English stopwords removed, Snowball-stemmed) occur in at least one of its
target documents, and `gap` otherwise. Questions without targets are `gap`: nothing matches them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from enum import Enum
from functools import lru_cache

MATCH_THRESHOLD = 0.5
_TOKEN = re.compile(r"[a-z0-9]+")


class QuestionForm(str, Enum):
    """`match` shares vocabulary with its target; `gap` rewords it, where retrieval problems live."""

    MATCH = "match"
    GAP = "gap"


@lru_cache(maxsize=1)
def _stopwords() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN)


@lru_cache(maxsize=1)
def _stemmer():
    import Stemmer

    return Stemmer.Stemmer("english")


def content_terms(text: str) -> set[str]:
    stopwords = _stopwords()
    words = [w for w in _TOKEN.findall(text.lower()) if len(w) >= 3 and w not in stopwords]
    return set(_stemmer().stemWords(words))


def vocabulary_overlap(question: str, target_texts: Iterable[str]) -> float:
    """Best share of the question's content terms found in any one target document."""
    return best_overlap(content_terms(question), [content_terms(text) for text in target_texts])


def best_overlap(terms: set[str], target_terms: Iterable[set[str]]) -> float:
    """`vocabulary_overlap` on terms already extracted: many queries against the same targets."""
    if not terms:
        return 0.0
    return max((len(terms & target) / len(terms) for target in target_terms), default=0.0)


def tag_form(question: str, target_texts: Iterable[str]) -> str:
    return "match" if vocabulary_overlap(question, target_texts) >= MATCH_THRESHOLD else "gap"
