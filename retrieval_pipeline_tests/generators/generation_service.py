"""A real chat-completions endpoint on 127.0.0.1 speaking the OpenAI protocol, standing in for a model that
writes questions: deterministic, not a language model (none ships its weights to this machine), so every
test knows what it answers.

`/v1/chat/completions` checks the bearer token and reads the default prompt's layout: for `gap` it asks
`how do engineers study <the title's longest word>?`, for `match` `what does <the title's three longest
words> show?`, each behind a `Question:` label as models write it; `usage` counts the prompt's words.
Other paths answer as broken endpoints do: 429 (with `Retry-After: 0`), 500 (`/v1/echo`: quoting the
request's key), the main path's question with the request's key written into it (`/v1/leaky`), slowly,
non-JSON, a reply of symbols, the document's opening copied, a usage of 10**30
tokens, a question holding a lone surrogate (`"\\ud800"` in the JSON); `fail_after` makes the main path
answer 500 after that many.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from chat_service import SECRET, TOKEN_VAR, completion

__all__ = ["SECRET", "TOKEN_VAR", "GenerationService", "openai_generator"]
DOCUMENT = re.compile(r"Document:\n(?P<title>[^\n]*)(?:\n\n(?P<text>.*))?\n\nReply with", re.S)
FAST = {"timeout_seconds": 20, "retries": 1, "backoff_seconds": 0.01}


def openai_generator(url: str, **params) -> dict:
    return {
        "kind": "openai",
        "url": url,
        "model": "stand-in",
        "headers": {"Authorization": {"env": TOKEN_VAR, "prefix": "Bearer "}},
        **FAST,
        **params,
    }


class GenerationService(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), GenerationHandler)
        self.lock = threading.Lock()
        self.calls: Counter[str] = Counter()
        self.prompts: list[str] = []
        self.fail_after: int | None = None
        self.answered = 0

    def url(self, path: str = "/v1/chat/completions") -> str:
        return f"http://127.0.0.1:{self.server_address[1]}{path}"

    def handle_error(self, request, client_address):
        """A client that gave up (timeout, Ctrl-C) breaks the pipe: the test's point, not a failure."""


class GenerationHandler(BaseHTTPRequestHandler):
    server: GenerationService
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        path = self.path.split("?", 1)[0]
        content = body["messages"][0]["content"]
        with self.server.lock:
            self.server.calls[path] += 1
            self.server.prompts.append(content)
        route = {
            "/v1/chat/completions": self.question,
            "/v1/rate-limited": lambda content: (429, {"error": {"message": "Rate limit reached"}}),
            "/v1/overloaded": lambda content: (500, {"error": "overloaded"}),
            "/v1/echo": lambda content: (500, {"error": f"overloaded serving {self.headers.get('Authorization')}"}),
            "/v1/leaky": self.leaky,
            "/v1/slow": self.slow,
            "/v1/html": lambda content: (200, "<html>bad gateway</html>"),
            "/v1/symbols": lambda content: (200, completion("#### ???? 1234 !!!! ****", 5)),
            "/v1/copier": self.copy,
            "/v1/huge-usage": lambda content: (200, completion("Question: how is heat transfer measured?", 10**30)),
            "/v1/surrogate": lambda content: (200, completion("Question: how is \ud800 measured?", 5)),
        }[path]
        status, payload = route(content)
        data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if status == 429:
                self.send_header("Retry-After", "0")
            self.end_headers()
            self.wfile.write(data)
        except OSError:  # the client gave up waiting
            pass

    def question(self, content: str):
        if self.headers.get("Authorization") != f"Bearer {SECRET}":
            return 401, {"error": {"message": "Incorrect API key provided"}}
        with self.server.lock:
            if self.server.fail_after is not None and self.server.answered >= self.server.fail_after:
                return 500, {"error": "overloaded"}
            self.server.answered += 1
        title = DOCUMENT.search(content)["title"]
        words = sorted(re.findall(r"[a-z]{3,}", title.lower()), key=len, reverse=True)
        if "everyday words" in content:
            question = f"how do engineers study {words[0]}?"
        else:
            question = f"what does {' '.join(words[:3])} show?"
        return 200, completion(f"Question: {question}", len(content.split()))

    def leaky(self, content: str):
        status, payload = self.question(content)
        payload["choices"][0]["message"]["content"] += f" ({self.headers.get('Authorization')})"
        return status, payload

    def copy(self, content: str):
        found = DOCUMENT.search(content)
        return 200, completion(" ".join((found["text"] or found["title"]).split()[:12]), 10)

    def slow(self, content: str):
        time.sleep(1.0)
        return 200, completion("what is slow?", 1)
