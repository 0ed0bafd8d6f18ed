"""A stand-in OpenAI-compatible chat endpoint on 127.0.0.1 for the `openai` rewriter: a fixed rule, clearly
not a language model. It reads the default prompt's conversation and last message and answers
`Question: "<the conversation's opening user message> <the last message>"` (a label and quotes, as
models add them), with a usage; `/v1/overloaded`
answers 500 and `/v1/echo` repeats the Authorization header it was sent in a 400, as leaky services do."""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SECRET = "sk-rewrite-3c91f0a7b2d4"
TOKEN_VAR = "RETRIEVAL_EVAL_TEST_REWRITER_TOKEN"
PROMPT = re.compile(r"Conversation:\n(?P<history>.*?)\n\nLast message: (?P<last>.*?)\n\nReply with", re.S)


class ChatRewriterService(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), Handler)
        self.lock = threading.Lock()
        self.bodies: list[dict] = []

    def url(self, path: str = "/v1/chat/completions") -> str:
        return f"http://127.0.0.1:{self.server_address[1]}{path}"


class Handler(BaseHTTPRequestHandler):
    server: ChatRewriterService
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        with self.server.lock:
            self.server.bodies.append(body)
        path = self.path.split("?", 1)[0]
        if path == "/v1/overloaded":
            return self.answer(500, {"error": "overloaded"})
        if path == "/v1/echo":
            return self.answer(400, {"error": f"bad request with key {self.headers.get('Authorization')}"})
        if self.headers.get("Authorization") != f"Bearer {SECRET}":
            return self.answer(401, {"error": {"message": "Incorrect API key provided"}})
        found = PROMPT.search(body["messages"][0]["content"])
        opening = found["history"].splitlines()[0].removeprefix("user: ")
        text = f'Question: "{opening} {found["last"]}"'
        usage = {"prompt_tokens": len(body["messages"][0]["content"].split()), "completion_tokens": len(text.split())}
        self.answer(200, {"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}], "usage": usage})

    def answer(self, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
