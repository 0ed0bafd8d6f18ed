"""The generation cache: each generator's questions by request, kept batch by batch, holding no example
query's text."""

from __future__ import annotations

from retrieval_pipeline.core.retrieval.generators import GeneratedQuestion, GenerationRequest
from retrieval_pipeline.core.services.generated.cache import FILE_NAME, GenerationCache


def test_a_question_is_read_back_by_its_generators_fingerprint_and_request_only(tmp_path):
    asked = GenerationRequest("6", "heat flow", "in a multilayer slab", "gap", ("private query about slabs",))
    with GenerationCache(tmp_path, "abc") as cache:
        cache.put_all([(asked, GeneratedQuestion("how does heat cross layered walls?", 120, 9))])

    with GenerationCache(tmp_path, "abc") as same, GenerationCache(tmp_path, "other") as other:
        assert same.get(asked) == GeneratedQuestion("how does heat cross layered walls?")
        assert same.get(GenerationRequest("6", "heat flow", "in a multilayer slab", "match")) is None
        assert other.get(asked) is None
    assert b"private query" not in (tmp_path / FILE_NAME).read_bytes()
