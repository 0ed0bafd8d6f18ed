"""The caches of answers paid for (a judge's, a generator's): a file the disk damaged is one clear error
naming it, never an internal error, whichever kind of cache reads it."""

from __future__ import annotations

import pytest

from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.retrieval.generators import GeneratedQuestion, GenerationRequest
from retrieval_pipeline.core.retrieval.judges import MachineJudgement
from retrieval_pipeline.core.services.generated.cache import GenerationCache
from retrieval_pipeline.core.services.labels.judgement_cache import JudgementCache

ANSWERS = 2_000
"""Enough answers for the file to hold pages past the one its header is in."""
GENERATIONS = [
    (GenerationRequest(str(i), f"title {i}", f"text {i} " * 20, "match"), GeneratedQuestion(f"q {i} " * 10))
    for i in range(ANSWERS)
]
JUDGEMENTS = [(f"question {i} " * 10, f"document {i} " * 20, MachineJudgement(True)) for i in range(ANSWERS)]
KINDS = {
    "generation cache": (GenerationCache, GENERATIONS, lambda cache: [cache.get(request) for request, _ in GENERATIONS]),
    "judgement cache": (
        JudgementCache,
        JUDGEMENTS,
        lambda cache: [cache.get(question, document) for question, document, _ in JUDGEMENTS],
    ),
}


@pytest.mark.parametrize("kind", KINDS)
def test_a_cache_file_damaged_in_its_middle_is_one_error_naming_it(tmp_path, kind):
    cache_kind, answers, read = KINDS[kind]
    with cache_kind(tmp_path, "fingerprint") as cache:
        cache.put_all(answers)
        assert None not in read(cache)
    saved = tmp_path / cache_kind.file_name
    data = bytearray(saved.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 4096] = b"\xff" * 4096
    saved.write_bytes(bytes(data))

    with pytest.raises(InvalidInputError) as raised, cache_kind(tmp_path, "fingerprint") as cache:
        read(cache)
    assert f"cannot read the {kind}" in str(raised.value) and "delete it to start afresh" in str(raised.value)
    assert str(saved) in str(raised.value)
