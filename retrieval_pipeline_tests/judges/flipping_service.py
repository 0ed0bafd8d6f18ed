"""A chat-completions endpoint on 127.0.0.1 that disagrees with the human labels at a known rate: it answers
the default prompt with 3 for a (question, document) pair the qrels call relevant and 0 for another, the other
way round on a given set of pairs. Nothing is learnt: the point is a judge whose confusion matrix against
the people is known exactly before it is asked."""

from __future__ import annotations

import json
from http.server import ThreadingHTTPServer

from chat_service import PROMPT, SECRET, ChatHandler, completion


class FlippingJudge(ThreadingHTTPServer):
    """Answers the default prompt with 3 for a relevant pair and 0 for another, the other way round on `flips`."""

    daemon_threads = True

    def __init__(self, questions: dict[str, str], documents: dict[str, str], relevant: set, flips: set):
        super().__init__(("127.0.0.1", 0), FlippingHandler)
        self.questions, self.documents, self.relevant, self.flips = questions, documents, relevant, flips

    def document(self, shown: str) -> str:
        """The pooled document whose text starts as the prompt's: the judging file keeps a document's opening."""
        (found,) = [document for text, document in self.documents.items() if text.startswith(shown.rstrip("…"))]
        return found

    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1/chat/completions"


class FlippingHandler(ChatHandler):
    """The chat service's handler (its replies, its quiet log), grading by the qrels and the flips."""

    server: FlippingJudge

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        found = PROMPT.search(body["messages"][0]["content"])
        if self.headers.get("Authorization") != f"Bearer {SECRET}" or found is None:
            self.answer(400, {"error": {"message": "unknown caller or prompt"}})
            return
        pair = (self.server.questions[found["question"]], self.server.document(found["document"]))
        yes = (pair in self.server.relevant) != (pair in self.server.flips)
        self.answer(200, completion("3" if yes else "0", 100))
