"""`kind: rerank`: the order it makes, its parameters, and its two scorers for real (a rerank endpoint on
127.0.0.1 scoring with a bundled embedding model; a tiny cross-encoder built in the test)."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner
from fixed_retrievers import Fixed
from http_service import CORPUS, SECRET, TOKEN_VAR, Service, running
from rerank_service import MINILM_TOKENIZER, MiniLM, RerankHandler

from retrieval_pipeline.cli import main
from retrieval_pipeline.core.base.errors import InvalidInputError
from retrieval_pipeline.core.retrieval.retriever import BuildContext, RetrieverFault, ServiceUnreachable
from retrieval_pipeline.core.services.evaluation.runner import run_question_set
from retrieval_pipeline.retrievers.rerank.retriever import RerankKind, RerankParams, RerankRetriever

QUESTION = "which machines turn moving sea water into power"
AUTH = {"Authorization": {"env": TOKEN_VAR, "prefix": "Bearer "}}
FAST = {"timeout_seconds": 5, "retries": 2, "backoff_seconds": 0.01}


class ByText:
    """A scorer reading each document's score from a table, recording what it was sent."""

    concurrency = 1

    def __init__(self, scores: dict[str, float]):
        self.scores = scores
        self.sent: list[list[str]] = []

    def score(self, question: str, texts: Sequence[str]) -> list[float]:
        self.sent.append(list(texts))
        return [self.scores[text] for text in texts]

    def version(self) -> str:
        return "by-text"


def write_corpus(folder: Path) -> Path:
    path = folder / "corpus.jsonl"
    path.write_text("".join(json.dumps({"_id": doc, "text": text}) + "\n" for doc, text in CORPUS.items()), encoding="utf-8")
    return path


def context(folder: Path, first: Fixed) -> BuildContext:
    members = {first.identifier: first}
    return BuildContext(folder, "test.yaml", build_retriever=members.__getitem__, known_retrievers=members)


def build(folder: Path, first: Fixed, scorer: dict, **params) -> RerankRetriever:
    write_corpus(folder)
    config = {"retriever": first.identifier, "corpus": "corpus.jsonl", "scorer": scorer, **params}
    return RerankKind.parse("reranked", config, context(folder, first)).build()


def stubbed(first: Fixed, scorer: ByText, depth: int) -> RerankRetriever:
    params = RerankParams.model_validate(
        {
            "retriever": first.identifier,
            "corpus": "c.jsonl",
            "depth": depth,
            "scorer": {"kind": "http", "url": "http://127.0.0.1:9/"},
        }
    )
    return RerankRetriever("reranked", params, first, {doc: doc.upper() for doc in "abcdef"}, scorer)


def test_the_top_depth_are_rescored_and_the_rest_keep_the_first_stage_order():
    first = Fixed("first", ["a", "b", "a", "", "c", "d", "e", "f"])  # repeats and empty ids count once / not at all
    scorer = ByText({"A": 0.1, "B": 0.5, "C": 0.5, "D": 0.9})
    reranked = stubbed(first, scorer, depth=4)
    # d first; b and c tie, so the first stage's order stands; a last of the four; e and f as they came.
    assert reranked.retrieve("q", 10) == ["d", "b", "c", "a", "e", "f"]
    assert scorer.sent == [["A", "B", "C", "D"]]
    # Asked depth deep even for a shorter limit; here the first four positions hold two documents.
    assert reranked.retrieve("q", 2) == ["b", "a"]
    assert first.asked == [10, 4]


def test_a_document_the_corpus_lacks_is_a_fault_naming_it():
    reranked = stubbed(Fixed("first", ["a", "zz"]), ByText({"A": 1.0}), depth=5)
    with pytest.raises(RetrieverFault, match=r"first returned document 'zz', which the corpus c\.jsonl does not hold"):
        reranked.retrieve("q", 5)


def test_the_index_version_follows_the_first_stage_and_the_scorer():
    class Versioned(Fixed):
        version = "v1"

        def index_version(self) -> str:
            return self.version

    first = Versioned("first", ["a"])
    scorer = ByText({"A": 1.0})
    reranked = stubbed(first, scorer, depth=5)
    before = reranked.index_version()
    first.version = "v2"
    assert reranked.index_version() != before
    after_rebuild = reranked.index_version()
    scorer.version = lambda: "another model"
    assert reranked.index_version() != after_rebuild


@pytest.mark.parametrize(
    ("params", "field", "expected"),
    [
        ({"retriever": "nowhere"}, "retriever", "unknown retriever 'nowhere'; available: first"),
        ({"depth": 0}, "depth", "greater than or equal to 1"),
        ({"corpus": "missing.jsonl"}, "corpus", "corpus file .*missing.jsonl does not exist"),
        ({"scorer": {"kind": "cross_encoder", "model": "no-such-folder"}}, "scorer.model", "no model folder at .*no-such-folder"),
        ({"scorer": {"kind": "http", "url": "ftp://x"}}, r"scorer\.http\.url", "String should match pattern"),
        ({"scorer": {"kind": "llm"}}, "scorer", "'llm'"),
    ],
)
def test_bad_parameters_are_one_error_naming_the_retriever_and_key(tmp_path, params, field, expected):
    write_corpus(tmp_path)
    config = {"retriever": "first", "corpus": "corpus.jsonl", "scorer": {"kind": "http", "url": "http://127.0.0.1:9/"}, **params}
    with pytest.raises(InvalidInputError, match=rf"test\.yaml: retrievers\.reranked: field '{field}': .*{expected}"):
        RerankKind.parse("reranked", config, context(tmp_path, Fixed("first", [])))


def test_its_corpus_gives_the_label_audit_its_ids_and_judging_files_its_texts(tmp_path):
    write_corpus(tmp_path)
    config = {"retriever": "first", "corpus": "corpus.jsonl", "scorer": {"kind": "http", "url": "http://127.0.0.1:9/"}}
    built = context(tmp_path, Fixed("first", []))
    assert RerankKind.parse("reranked", config, built).corpus() == frozenset(CORPUS)
    assert RerankKind.parse("reranked", config, built).corpus_texts({"d3"}) == {"d3": ("", CORPUS["d3"])}


def test_a_missing_extra_is_named_before_anything_is_built(tmp_path, monkeypatch):
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text("{}", encoding="utf-8")
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    write_corpus(tmp_path)
    config = {"retriever": "first", "corpus": "corpus.jsonl", "scorer": {"kind": "cross_encoder", "model": "model"}}
    with pytest.raises(InvalidInputError, match=r"field 'scorer': .*needs sentence-transformers: pip install -e '\.\[rerank\]'"):
        RerankKind.parse("reranked", config, context(tmp_path, Fixed("first", [])))


def test_a_rerank_over_itself_is_refused(tmp_path):
    write_corpus(tmp_path)
    (tmp_path / "set.yaml").write_text("identifier: s\nname: s\nquestions: []\n", encoding="utf-8")
    (tmp_path / "config.yaml").write_text(
        "question_sets: [{file: set.yaml}]\nretrievers:\n"
        "  loop: {kind: rerank, retriever: loop, corpus: corpus.jsonl, scorer: {kind: http, url: 'http://127.0.0.1:9/'}}\n",
        encoding="utf-8",
    )
    from retrieval_pipeline.core.services.configuration.project import load_config

    with pytest.raises(InvalidInputError, match=r"retrievers\.loop: field 'retriever': rerank includes itself: loop -> loop"):
        load_config(tmp_path / "config.yaml").retriever("loop")


# The endpoint scorer against a real service.


@pytest.fixture(scope="module")
def minilm() -> MiniLM:
    return MiniLM()


@pytest.fixture
def rerank_service(minilm):
    with running(Service(type("Scoring", (RerankHandler,), {"model": minilm}))) as server:
        yield server


def http_scorer(service: Service, path: str = "/rerank", **params) -> dict:
    return {"kind": "http", "url": service.url(path), "headers": AUTH, **FAST, **params}


@pytest.mark.slow
def test_the_order_is_the_first_stages_top_depth_sorted_by_the_services_scores(tmp_path, rerank_service, minilm, token):
    first = Fixed("first", list(CORPUS))
    reranked = build(tmp_path, first, http_scorer(rerank_service), depth=3)
    head = list(CORPUS)[:3]
    scores = minilm.scores(QUESTION, [CORPUS[doc] for doc in head])
    expected = sorted(head, key=lambda doc: -scores[head.index(doc)]) + list(CORPUS)[3:]
    assert reranked.retrieve(QUESTION, 5) == expected
    [request] = rerank_service.requests
    assert request["body"] == {"query": QUESTION, "documents": [CORPUS[doc] for doc in head], "top_n": 3}


@pytest.mark.slow
def test_text_embeddings_inference_shape_through_the_configurable_paths(tmp_path, rerank_service, minilm, token):
    first = Fixed("first", list(CORPUS))
    tei = http_scorer(rerank_service, "/tei", documents_field="texts", top_n_field=None, results_path="", score_field="score")
    scores = minilm.scores(QUESTION, list(CORPUS.values()))
    assert build(tmp_path, first, tei).retrieve(QUESTION, 5) == sorted(CORPUS, key=lambda doc: -scores[list(CORPUS).index(doc)])
    assert "top_n" not in rerank_service.requests[0]["body"]


@pytest.mark.slow
def test_server_errors_are_retried_then_recorded_with_the_secret_masked(tmp_path, rerank_service, token):
    first = Fixed("first", list(CORPUS))
    recovers = build(tmp_path, first, http_scorer(rerank_service, "/rerank-flaky?fail=2"))
    assert len(recovers.retrieve(QUESTION, 5)) == 5
    assert rerank_service.calls["/rerank-flaky"] == 3  # two 500s, then the answer: the HTTP kind's retries
    failing = build(tmp_path, first, http_scorer(rerank_service, "/rerank-flaky"))
    with pytest.raises(RetrieverFault, match=r"failed after 3 attempts; last: HTTP 500") as raised:
        failing.retrieve(QUESTION, 5)
    assert SECRET not in str(raised.value) and "***" in str(raised.value)


@pytest.mark.slow
def test_the_authorization_header_comes_from_the_environment(tmp_path, rerank_service, monkeypatch):
    first = Fixed("first", list(CORPUS))
    monkeypatch.delenv(TOKEN_VAR, raising=False)
    with pytest.raises(
        InvalidInputError, match=rf"field 'scorer.headers.Authorization': the environment variable {TOKEN_VAR} is not set"
    ):
        build(tmp_path, first, http_scorer(rerank_service))
    monkeypatch.setenv(TOKEN_VAR, "wrong-token-1234")
    wrong = build(tmp_path, first, http_scorer(rerank_service))
    with pytest.raises(RetrieverFault, match="HTTP 401") as raised:
        wrong.retrieve(QUESTION, 5)
    assert "wrong-token-1234" not in str(raised.value)
    monkeypatch.setenv(TOKEN_VAR, SECRET)
    ranking = build(tmp_path, first, http_scorer(rerank_service)).retrieve(QUESTION, 5)
    assert SECRET not in json.dumps(ranking) and sorted(ranking) == sorted(CORPUS)


@pytest.mark.slow
def test_an_unreachable_scorer_stops_the_run_as_the_http_kind_does(tmp_path, token):
    from http_service import golden_set

    with running(Service()) as closed:
        url = closed.url("/rerank")
    reranked = build(tmp_path, Fixed("first", list(CORPUS)), {"kind": "http", "url": url, "retries": 0, "fail_fast_after": 2})
    result = run_question_set(golden_set(*[f"question {n}" for n in range(6)]), reranked)
    errors = [question.error for question in result.questions]
    assert isinstance(reranked, RerankRetriever) and reranked.fail_fast_after == 2
    assert all("connection refused" in error for error in errors[:2])
    assert all(error.startswith("not asked, the run stopped early: connection refused") for error in errors[2:])
    with pytest.raises(ServiceUnreachable):
        reranked.retrieve(QUESTION, 5)


@pytest.mark.slow
def test_retrieval_eval_run_reranks_a_lexical_first_stage_end_to_end(tmp_path, rerank_service, token):
    write_corpus(tmp_path)
    (tmp_path / "set.yaml").write_text(
        "identifier: rerank.small\nname: Rerank\nquestions:\n"
        "  - {id: q1, question: 'turbines in sea water making electricity', form: match, expected_document_ids: [d5]}\n"
        "  - {id: q2, question: 'how bees find flowers', form: gap, expected_document_ids: [d4]}\n",
        encoding="utf-8",
    )
    scorer = json.dumps(http_scorer(rerank_service))
    (tmp_path / "config.yaml").write_text(
        "store: results\ncache_dir: cache\nquestion_sets: [{file: set.yaml}]\nretrievers:\n"
        "  bm25: {kind: lexical, corpus: corpus.jsonl, stopwords: null, min_score: -1}\n"
        f"  reranked: {{kind: rerank, retriever: bm25, depth: 5, corpus: corpus.jsonl, scorer: {scorer}}}\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(main, ["run", "rerank.small", "reranked", "--config", str(tmp_path / "config.yaml"), "--json"])
    assert result.exit_code == 0, result.output
    run = json.loads(result.stdout)
    assert run["latency_mode"] == "per_question" and set(run["latency_ms"]) >= {"p50", "p95"}
    assert rerank_service.calls["/rerank"] == 2 and SECRET not in result.output


# The local scorer: a tiny random cross-encoder built here, loaded the way a real one is.


@pytest.mark.slow
def test_a_local_cross_encoder_folder_rescores(tmp_path, monkeypatch):
    pytest.importorskip("sentence_transformers", reason="the cross_encoder scorer needs the [rerank] extra")
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification, BertTokenizerFast

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    torch.manual_seed(0)
    model_dir = tmp_path / "tiny-cross-encoder"
    config = BertConfig(
        vocab_size=30522, hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=37, num_labels=1
    )
    BertForSequenceClassification(config).eval().save_pretrained(model_dir)
    BertTokenizerFast(tokenizer_file=str(MINILM_TOKENIZER)).save_pretrained(model_dir)
    first = Fixed("first", list(CORPUS))
    reranked = build(tmp_path, first, {"kind": "cross_encoder", "model": "tiny-cross-encoder", "max_length": 64}, depth=4)
    # The same model read directly through transformers: the rerank sorts the top four by its logits.
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = BertForSequenceClassification.from_pretrained(model_dir).eval()
    head = list(CORPUS)[:4]
    with torch.no_grad():
        batch = tokenizer(
            [QUESTION] * 4, [CORPUS[doc] for doc in head], padding=True, truncation=True, max_length=64, return_tensors="pt"
        )
        logits = model(**batch).logits[:, 0].tolist()
    expected = [head[i] for i in sorted(range(4), key=lambda i: -logits[i])] + list(CORPUS)[4:]
    assert reranked.retrieve(QUESTION, 5) == expected
    assert reranked.concurrency == 1 and reranked.index_version()
