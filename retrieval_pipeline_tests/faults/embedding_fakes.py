"""An OpenAI-compatible embeddings endpoint on 127.0.0.1 that fails as it is told, for the fault suite.

`/embeddings/<fault>` answers tiny 3-wide vectors, except as the fault says; any other name (`fine`)
never fails, and answers 3 wide whatever `dimensions` asks. Only `Bearer <token>` is served; `unauthorized` refuses everyone, quoting what it was sent.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import ThreadingHTTPServer
from urllib.parse import urlsplit

from http_fakes import JsonService, serving

FAULTS = (
    "server_error",
    "unauthorized",
    "count",
    "ragged",
    "narrower",
    "nan",
    "strings",
    "duplicate_index",
    "not_json",
    "no_data",
    "timeout",
)


def vector(text: str, width: int = 3) -> list[float]:
    return [1.0, float(len(text)), float(text.count("e"))][:width]


class FaultyEmbeddings(JsonService):
    token = ""
    released: threading.Event  # set when the server stops: a `timeout` answer never comes before it
    calls: Counter[str]

    def do_POST(self):
        texts = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))["input"]
        fault = urlsplit(self.path).path.rsplit("/", 1)[-1]
        self.calls[fault] += 1
        if self.headers.get("Authorization") != f"Bearer {self.token}" or fault == "unauthorized":
            return self._send(401, {"error": f"unauthorized: {self.headers.get('Authorization')}"})
        if fault == "server_error":
            return self._send(503, {"error": "overloaded"})
        if fault == "timeout":
            self.released.wait()
            return None
        if fault == "not_json":
            return self._send(200, "<html>bad gateway</html>")
        if fault == "no_data":
            return self._send(200, {"object": "list", "embeddings": [vector(text) for text in texts]})
        narrower = fault == "narrower" and self.calls[fault] > 1  # the second batch comes back 2 wide
        rows = [vector(text, 2 if narrower else 3) for text in texts]
        if fault == "ragged":
            rows[-1] = rows[-1][:2]
        elif fault == "nan":
            rows[0][1] = float("nan")
        elif fault == "strings":
            rows = [[str(value) for value in row] for row in rows]
        elif fault == "count":
            rows = rows[:-1]
        data = [{"object": "embedding", "index": index, "embedding": row} for index, row in enumerate(rows)]
        if fault == "duplicate_index":
            data[-1]["index"] = 0
        return self._send(200, {"object": "list", "data": data})


@contextmanager
def faulty_embeddings(token: str) -> Iterator[tuple[str, Counter[str]]]:
    """(the base URL, to which `/<fault>` is added; the calls per fault) while the endpoint serves."""
    released, calls = threading.Event(), Counter()
    handler = type("Handler", (FaultyEmbeddings,), {"token": token, "released": released, "calls": calls})
    with serving(ThreadingHTTPServer(("127.0.0.1", 0), handler)) as url:
        try:
            yield url.removesuffix("/search") + "/embeddings", calls
        finally:
            released.set()
