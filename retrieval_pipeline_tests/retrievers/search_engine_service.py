"""An Elasticsearch-shaped `_search` endpoint on 127.0.0.1 that refuses, as Elasticsearch does with HTTP
400, any body Elasticsearch would not accept for the queries the docs template (`match`, `multi_match`,
`knn`), and answers in Elasticsearch's shape. It ranks by term overlap for the text queries and by exact
cosine over the document vectors it is given for `knn`."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np

TOP_LEVEL = {"query", "knn", "size", "from", "_source"}


class BadRequest(ValueError):
    """Elasticsearch's `parsing_exception` / `x_content_parse_exception`: the body is not a valid search."""


class SearchEngine(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, documents: dict[str, str], ids: list[str] | None = None, vectors: np.ndarray | None = None):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.documents = documents
        self.ids = ids or []
        self.vectors = vectors
        self.bodies: list[dict] = []
        self.lock = threading.Lock()

    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/docs/_search"

    def search(self, body: dict) -> list[tuple[str, float]]:
        """Validates the body as Elasticsearch would, then ranks."""
        if not isinstance(body, dict) or set(body) - TOP_LEVEL:
            raise BadRequest(f"unknown key(s) {sorted(set(body) - TOP_LEVEL)} for a search request")
        size = body.get("size", 10)
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise BadRequest(f"[size] must be a non-negative integer, got {size!r}")
        if not isinstance(body.get("_source", True), (bool, list)):
            raise BadRequest("[_source] must be a boolean or a list of fields")
        if ("query" in body) == ("knn" in body):
            raise BadRequest("give one of [query] and [knn]")
        ranked = self._knn(body["knn"]) if "knn" in body else self._text(body["query"])
        return ranked[:size]

    def _text(self, query) -> list[tuple[str, float]]:
        if not isinstance(query, dict) or len(query) != 1:
            raise BadRequest("[query] must hold exactly one query")
        ((kind, clause),) = query.items()
        if kind == "match":
            if not isinstance(clause, dict) or len(clause) != 1:
                raise BadRequest("[match] query must name exactly one field")
            ((_, value),) = clause.items()
            text = value.get("query") if isinstance(value, dict) else value
            if isinstance(value, dict) and set(value) - {"query", "operator", "fuzziness", "boost"}:
                raise BadRequest(f"[match] unknown option(s) {sorted(set(value) - {'query', 'operator', 'fuzziness', 'boost'})}")
        elif kind == "multi_match":
            if not isinstance(clause, dict) or set(clause) - {"query", "fields", "type", "operator"}:
                raise BadRequest("[multi_match] unknown option")
            fields = clause.get("fields", [])
            if not isinstance(fields, list) or not all(isinstance(field, str) for field in fields):
                raise BadRequest("[multi_match] [fields] must be a list of strings")
            text = clause.get("query")
        else:
            raise BadRequest(f"unknown query [{kind}]")
        if not isinstance(text, str):
            raise BadRequest(f"[{kind}] [query] must be a string, got {text!r}")
        terms = set(text.lower().split())
        scored = [(len(terms & set(body.lower().split())), doc) for doc, body in self.documents.items()]
        return [(doc, float(score)) for score, doc in sorted(scored, key=lambda item: (-item[0], item[1])) if score > 0]

    def _knn(self, knn) -> list[tuple[str, float]]:
        if not isinstance(knn, dict) or set(knn) - {"field", "query_vector", "k", "num_candidates", "filter"}:
            raise BadRequest("[knn] unknown option")
        vector, k, candidates = knn.get("query_vector"), knn.get("k"), knn.get("num_candidates", 100)
        if knn.get("field") != "embedding":
            raise BadRequest(f"[knn] field [{knn.get('field')}] is not a dense_vector field")
        if not isinstance(vector, list) or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in vector):
            raise BadRequest("[knn] [query_vector] must be an array of numbers")
        if len(vector) != self.vectors.shape[1]:
            raise BadRequest(f"the query vector has {len(vector)} dimensions; the field has {self.vectors.shape[1]}")
        if not isinstance(k, int) or not isinstance(candidates, int) or not 0 < k <= candidates <= 10_000:
            raise BadRequest("[knn] needs integers 0 < k <= num_candidates <= 10000")
        query = np.asarray(vector, dtype=np.float32)
        scores = self.vectors @ (query / np.linalg.norm(query))
        order = np.argsort(-scores, kind="stable")[:k]
        return [(self.ids[i], float(scores[i])) for i in order]


class _Handler(BaseHTTPRequestHandler):
    server: SearchEngine
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        if self.headers.get("Content-Type", "").split(";")[0] != "application/json":
            return self._answer(406, {"error": "Content-Type header is not supported", "status": 406})
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        except ValueError:
            return self._answer(400, {"error": {"type": "x_content_parse_exception"}, "status": 400})
        with self.server.lock:
            self.server.bodies.append(body)
        try:
            hits = self.server.search(body)
        except BadRequest as error:
            return self._answer(400, {"error": {"type": "parsing_exception", "reason": str(error)}, "status": 400})
        total = {"value": len(hits), "relation": "eq"}
        found = [{"_index": "docs", "_id": doc, "_score": score} for doc, score in hits]
        self._answer(200, {"took": 1, "timed_out": False, "hits": {"total": total, "max_score": None, "hits": found}})

    def _answer(self, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
