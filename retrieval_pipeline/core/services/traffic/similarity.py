"""How alike a logged query and a golden question are, on a scale from 0 to 1, by one of two methods.

- `EncoderSimilarity`: the cosine of their vectors from a configured retriever's encoder (the model, the
  settings and the query prefix it embeds questions with), so "covered" means near in the space that
  retriever searches.
- `LexicalSimilarity`, when no retriever embeds: BM25 (bm25s, English stemmer and stopwords) of the query
  against each question's text, divided by the question's BM25 against its own text (how much of the
  question's weight the query carries), times the share of the query's terms the question has (so a long
  query that happens to hold half a short question's words is not near it). A query holding exactly a
  question's terms scores 1, one sharing none of them 0 (capped at 1).

Each returns, per query, its nearest question, the similarity to it, and unit vectors that `clusters`
groups uncovered queries by (the encoder's own; for the lexical method, hashed stemmed terms, which need
scikit-learn; the similarities need the base install alone, so traffic weights need no extra).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from retrieval_pipeline.core.golden.forms import content_terms

ENCODER_THRESHOLD = 0.7
"""Calibrated on the shipped collections with all-MiniLM-L6-v2 (docs/coverage.md)."""
LEXICAL_THRESHOLD = 0.5
"""Calibrated on the shipped collections (docs/coverage.md)."""


@dataclass(frozen=True)
class Nearest:
    """Per query of a batch: `question` (index into the set's questions), `similarity` in [0, 1], and a
    unit row of `vectors` (a numpy array or a scipy sparse matrix) for clustering."""

    question: Any
    similarity: Any
    vectors: Any


class EncoderSimilarity:
    def __init__(self, name: str, encode: Callable[[Sequence[str]], Any], questions: Sequence[str]):
        self.name = name
        self.default_threshold = ENCODER_THRESHOLD
        self._encode = encode
        self._questions = _unit(encode(list(questions)))

    def nearest(self, queries: Sequence[str], with_vectors: bool = True) -> Nearest:
        vectors = _unit(self._encode(list(queries)))
        scores = vectors @ self._questions.T
        best = scores.argmax(axis=1)
        return Nearest(best, scores[range(len(best)), best].clip(0, 1), vectors)


class LexicalSimilarity:
    name = "lexical"
    default_threshold = LEXICAL_THRESHOLD

    def __init__(self, questions: Sequence[str]):
        import bm25s
        import numpy
        import Stemmer

        self._stemmer = Stemmer.Stemmer("english")
        self._index = bm25s.BM25()
        terms = self._terms(questions)
        self._index.index(terms, show_progress=False)
        own = [self._index.get_scores(question)[position] for position, question in enumerate(terms)]
        self._own = numpy.array([score if score > 0 else numpy.inf for score in own])
        holding: dict[str, list[int]] = {}
        for position, question in enumerate(terms):
            for term in set(question):
                holding.setdefault(term, []).append(position)
        self._holding = {term: numpy.array(positions) for term, positions in holding.items()}

    def nearest(self, queries: Sequence[str], with_vectors: bool = True) -> Nearest:
        """`with_vectors` False (no clustering wanted: traffic weights) needs no extra, scikit-learn unimported."""
        import numpy

        terms = self._terms(queries)
        nothing = numpy.zeros(len(self._own))  # a query of stopwords only: bm25s refuses an empty query
        weight = numpy.vstack([self._index.get_scores(query) if query else nothing for query in terms]) / self._own
        sizes = numpy.array([max(len(set(query)), 1) for query in terms], dtype=float)[:, None]
        scores = weight * (self._shared(terms) / sizes)
        best = scores.argmax(axis=1)
        return Nearest(best, scores[range(len(best)), best].clip(0, 1), term_vectors(queries) if with_vectors else None)

    def _shared(self, terms: list[list[str]]):
        """Per text (row) and question (column): how many distinct terms they share."""
        import numpy

        shared = numpy.zeros((len(terms), len(self._own)))
        for row, text in enumerate(terms):
            for term in set(text):
                if term in self._holding:
                    shared[row, self._holding[term]] += 1
        return shared

    def _terms(self, texts: Sequence[str]) -> list[list[str]]:
        import bm25s

        return bm25s.tokenize(list(texts), stopwords="en", stemmer=self._stemmer, return_ids=False, show_progress=False)


def term_vectors(texts: Sequence[str]):
    """Unit rows of hashed content terms (forms.content_terms: stemmed, stopwords out), TF-IDF-free: the
    lexical method's vectors for clustering, in bounded memory whatever the vocabulary (scikit-learn, which
    `measure_coverage` requires before anything is read)."""
    from sklearn.feature_extraction.text import HashingVectorizer

    return HashingVectorizer(analyzer=lambda text: sorted(content_terms(text)), n_features=2**20, alternate_sign=False).transform(
        texts
    )


def _unit(vectors):
    import numpy

    vectors = numpy.asarray(vectors, dtype=numpy.float32)
    norms = numpy.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / numpy.where(norms > 0, norms, 1)
