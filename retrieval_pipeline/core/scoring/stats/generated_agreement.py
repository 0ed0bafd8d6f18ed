"""Whether generated questions rank the retrievers as the human questions do.

Generated sets are trusted to compare retrievers, not to state absolute rates (their biases show in the
level far more than in the order), so the test is an order test: Kendall's tau between the retrievers'
ranking on the human questions and on the generated ones, per measure, with a percentile bootstrap
interval over questions (each side resampled on its own, since they are different questions). A resample
in which one side ties every retriever has no tau; it counts as 0, no evidence of agreement, so a set
too small to separate the retrievers cannot pass by luck.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from retrieval_pipeline.core.scoring.stats.agreement import kendall_tau
from retrieval_pipeline.core.scoring.stats.significance import BOOTSTRAP_RESAMPLES, SEED, percentile_bootstrap

_CHUNK = 250
"""Resamples drawn at once: a chunk's question weights are resamples × questions integers."""


@dataclass(frozen=True)
class MeasureAgreement:
    """One measure's two rankings of the same retrievers and how far they agree."""

    measure: str
    human: Mapping[str, float]
    """Retriever to its mean on the human questions."""
    generated: Mapping[str, float]
    tau: float | None
    """None where either side ties every retriever (or there is one retriever)."""
    interval: tuple[float, float]

    @property
    def differences(self) -> dict[str, float]:
        """Each retriever's mean on the generated questions less its mean on the human ones."""
        return {name: self.generated[name] - self.human[name] for name in self.human}

    def reaches(self, threshold: float) -> bool:
        return self.interval[0] >= threshold

    def gate_text(self, threshold: float) -> str:
        """Which bound gates: "tau +1.00 [+0.00, +1.00] below 0.8" read as a contradiction."""
        verdict = "reaches" if self.reaches(threshold) else "is below"
        return f"the interval's lower bound {self.interval[0]:+.2f} {verdict} {threshold:g}"


def measure_agreement(
    measure: str,
    human: Mapping[str, Sequence[float]],
    generated: Mapping[str, Sequence[float]],
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = SEED,
) -> MeasureAgreement:
    """`human` and `generated` map each retriever to its per-question scores, questions in the same order
    for every retriever of a side (the set's order)."""
    import numpy as np

    names = sorted(human)
    human_scores, generated_scores = _matrix("human", human, names), _matrix("generated", generated, names)

    def taus(rng: np.random.Generator, size: int) -> np.ndarray:
        resampled = zip(_resampled_means(rng, human_scores, size), _resampled_means(rng, generated_scores, size))
        return np.array([_tau(names, human_means, generated_means) for human_means, generated_means in resampled])

    low, high = percentile_bootstrap(taus, _CHUNK, resamples=resamples, seed=seed)
    human_means = dict(zip(names, human_scores.mean(axis=1).tolist()))
    generated_means = dict(zip(names, generated_scores.mean(axis=1).tolist()))
    return MeasureAgreement(
        measure, human_means, generated_means, kendall_tau(human_means, generated_means), (float(low), float(high))
    )


def _matrix(side: str, scores: Mapping[str, Sequence[float]], names: list[str]):
    """One row per retriever, one column per question; refused unless every retriever scored the same questions."""
    import numpy as np

    if sorted(scores) != names:
        raise ValueError(f"the {side} questions score other retrievers: {sorted(set(scores) ^ set(names))}")
    lengths = {name: len(scores[name]) for name in names}
    if not names or len(set(lengths.values())) != 1 or not next(iter(lengths.values())):
        raise ValueError(f"every retriever needs scores on the same {side} questions, at least one: {lengths}")
    return np.asarray([scores[name] for name in names], dtype=float)


def _tau(names: list[str], human_means, generated_means) -> float:
    tau = kendall_tau(dict(zip(names, human_means)), dict(zip(names, generated_means)))
    return 0.0 if tau is None else tau


def _resampled_means(rng, scores, size: int):
    """`size` resamples of the questions (columns) with replacement, as each retriever's mean per resample."""
    questions = scores.shape[1]
    weights = rng.multinomial(questions, [1 / questions] * questions, size=size)
    return (weights @ scores.T) / questions
