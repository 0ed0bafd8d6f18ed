"""How alike a logged query and a golden question are, on a scale from 0 to 1, by one of two methods.

- `EncoderSimilarity`: the cosine of their vectors from a configured retriever's encoder (the model, the
  settings and the query prefix it embeds questions with), so "covered" means near in the space that
  retriever searches.
- `LexicalSimilarity`, when no retriever embeds: BM25 (bm25s, English stemmer and stopwords) of the query
  against each question's text, divided by the question's BM25 against its own text (how much of the
  question's weight the query carries), times the share of the query's terms the question has (so a long
  query that happens to hold half a short question's words is not near it). A query holding exactly a
  question's terms scores 1, one sharing none of them 0 (capped at 1).

Each returns, per query, its nearest question, the similarity to it, and unit vectors that `traffic_clusters`
groups uncovered queries by (the encoder's own; for the lexical method, hashed stemmed terms).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from retrieval_pipeline.core.base.errors import InvalidInputError

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
        self._vocabulary = {term: n for n, term in enumerate(sorted({term for question in terms for term in question}))}
        self._has = self._incidence(terms).T.tocsc()

    def nearest(self, queries: Sequence[str], with_vectors: bool = True) -> Nearest:
        """`with_vectors` False (no clustering wanted) leaves scikit-learn unimported."""
        import numpy

        terms = self._terms(queries)
        nothing = numpy.zeros(len(self._own))  # a query of stopwords only: bm25s refuses an empty query
        weight = numpy.vstack([self._index.get_scores(query) if query else nothing for query in terms]) / self._own
        sizes = numpy.array([max(len(set(query)), 1) for query in terms], dtype=float)[:, None]
        scores = weight * ((self._incidence(terms) @ self._has).toarray() / sizes)
        best = scores.argmax(axis=1)
        return Nearest(best, scores[range(len(best)), best].clip(0, 1), term_vectors(queries) if with_vectors else None)

    def _incidence(self, terms: list[list[str]]):
        """One row per text, a 1 for each distinct term of the questions' vocabulary it holds."""
        import scipy.sparse

        rows = [sorted({self._vocabulary[t] for t in text if t in self._vocabulary}) for text in terms]
        indices = [index for row in rows for index in row]
        pointers = [0, *accumulate(len(row) for row in rows)]
        shape = (len(rows), len(self._vocabulary))
        return scipy.sparse.csr_matrix(([1.0] * len(indices), indices, pointers), shape=shape)

    def _terms(self, texts: Sequence[str]) -> list[list[str]]:
        import bm25s

        return bm25s.tokenize(list(texts), stopwords="en", stemmer=self._stemmer, return_ids=False, show_progress=False)


def term_vectors(texts: Sequence[str]):
    """Unit rows of hashed content terms (forms.content_terms: stemmed, stopwords out), TF-IDF-free: the
    lexical method's vectors for clustering, in bounded memory whatever the vocabulary."""
    HashingVectorizer = scikit_learn("feature_extraction.text").HashingVectorizer

    from retrieval_pipeline.core.golden.forms import content_terms

    return HashingVectorizer(analyzer=lambda text: sorted(content_terms(text)), n_features=2**20, alternate_sign=False).transform(
        texts
    )


def scikit_learn(module: str):
    """A scikit-learn module, or the one-line error naming the extra that installs it."""
    import importlib

    try:
        return importlib.import_module(f"sklearn.{module}")
    except ModuleNotFoundError:
        raise InvalidInputError(
            "clustering the uncovered traffic needs scikit-learn: pip install 'retrieval-pipeline[coverage]'"
        ) from None


def _unit(vectors):
    import numpy

    vectors = numpy.asarray(vectors, dtype=numpy.float32)
    norms = numpy.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / numpy.where(norms > 0, norms, 1)
