"""Which generated questions are dropped before anyone judges them, and why: each is counted by its first
reason, in this order (the thresholds are documented in docs/generating.md):

1. `empty`: no content word (forms.content_terms: three or more letters, English stopwords out).
2. `garbled`: a control or replacement character; less than `MIN_LETTER_SHARE` of its non-space
   characters letters; more than `MAX_WORDS` words; or, from four words up, one word more than
   `MAX_REPEAT_SHARE` of them (a model repeating itself).
3. `copied`: at least `COPY_THRESHOLD` of its consecutive word pairs occur, in that order, in its source
   document (title or text). Sharing the document's words is what a `match` question does; repeating its
   phrases pair after pair is copying a sentence, which measures nothing a retriever must do.
4. `near-duplicate of a set question`: as alike as `coverage` counts a query covered by a golden
   question (the same method and threshold), so it adds nothing the set does not ask.
5. `near-duplicate of another candidate`: its vector (the ones coverage clusters by) has a cosine of
   at least that threshold with a candidate kept before it, the distance at which coverage puts two
   queries in one cluster.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence

from retrieval_pipeline.core.golden.forms import content_terms

EMPTY = "empty"
GARBLED = "garbled"
COPIED = "copied from its document"
DUPLICATE_OF_SET = "near-duplicate of a set question"
DUPLICATE = "near-duplicate of another candidate"
REASONS = (EMPTY, GARBLED, COPIED, DUPLICATE_OF_SET, DUPLICATE)
COPY_THRESHOLD = 0.8
MAX_WORDS = 40
MIN_LETTER_SHARE = 0.6
MAX_REPEAT_SHARE = 0.5
_WORD = re.compile(r"[a-z0-9]+")


def text_problem(question: str, document: str) -> str | None:
    """The first of `empty`, `garbled`, `copied` the question is, judged on it and its document alone."""
    if not content_terms(question):
        return EMPTY
    if garbled(question):
        return GARBLED
    if copied_share(question, document) >= COPY_THRESHOLD:
        return COPIED
    return None


def garbled(question: str) -> bool:
    """What no person types as a search: see the module's rule 2."""
    if any(unicodedata.category(c) == "Cc" or c == "\ufffd" for c in question):
        return True
    visible = [c for c in question if not c.isspace()]
    if sum(c.isalpha() for c in visible) < MIN_LETTER_SHARE * len(visible):
        return True
    words = question.lower().split()
    if len(words) > MAX_WORDS:
        return True
    return len(words) >= 4 and Counter(words).most_common(1)[0][1] > MAX_REPEAT_SHARE * len(words)


def copied_share(question: str, document: str) -> float:
    """The share of the question's consecutive word pairs (lower-cased, stopwords kept) found in the
    document as consecutive words; 0 for a question of one word, which has no pair."""
    words = _WORD.findall(question.lower())
    pairs = list(zip(words, words[1:]))
    if not pairs:
        return 0.0
    text = _WORD.findall(document.lower())
    found = set(zip(text, text[1:]))
    return sum(pair in found for pair in pairs) / len(pairs)


def duplicate_reasons(similarity, texts: Sequence[str], threshold: float) -> list[str | None]:
    """Per text, in order: a near-duplicate of a set question, of an earlier text kept, or None (kept).
    `similarity` is coverage's (`traffic.similarity`), built on the set's questions."""
    import numpy
    import scipy.sparse

    if not texts:
        return []
    found = similarity.nearest(list(texts), with_vectors=True)
    alike = found.vectors @ found.vectors.T
    alike = alike.toarray() if scipy.sparse.issparse(alike) else numpy.asarray(alike)
    kept: list[int] = []
    reasons: list[str | None] = []
    for index in range(len(texts)):
        if found.similarity[index] >= threshold:
            reasons.append(DUPLICATE_OF_SET)
        elif kept and alike[index, kept].max() >= threshold:
            reasons.append(DUPLICATE)
        else:
            reasons.append(None)
            kept.append(index)
    return reasons
