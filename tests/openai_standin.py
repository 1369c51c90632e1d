"""A stand-in for an OpenAI-compatible server, on a loopback port, for the tests of the HTTP backends.

No embedding or chat model server runs on these machines (and none may be downloaded), so the tests of the
``openai`` embedder and of the chat enhancements talk to this: a real HTTP server speaking the same JSON
(``/v1/embeddings``, ``/v1/chat/completions``), whose answers the test decides. Embeddings are a bag of hashed
words, so texts sharing words are near each other; chat answers come from ``chat_answer``, a function of the
request the test sets. Every request is recorded for the test to inspect.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self

DIM = 64
_WORD = re.compile(r"[a-z]+")


def hashed_vector(text: str) -> list[float]:
    vector = [0.0] * DIM
    for word in _WORD.findall(text.lower()):
        vector[int(hashlib.sha1(word.encode()).hexdigest(), 16) % DIM] += 1.0
    return vector


class StandIn:
    """Start with ``with StandIn() as server:``; ``server.url`` is the ``/v1`` base URL."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict]] = []
        self.chat_answer: Callable[[dict], str] = lambda request: "{}"
        # Seconds to wait before answering (a timeout test), and an HTTP status to fail with instead.
        self.delay = 0.0
        self.fail_with: int | None = None
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stand_in.requests.append((self.path, body))
                time.sleep(stand_in.delay)
                if stand_in.fail_with is not None:
                    self._send(stand_in.fail_with, {"error": {"message": "stand-in failure " + "x" * 500}})
                elif self.path == "/v1/embeddings":
                    data = [{"index": n, "embedding": hashed_vector(text)} for n, text in enumerate(body["input"])]
                    self._send(200, {"object": "list", "data": list(reversed(data)), "model": body["model"]})
                elif self.path == "/v1/chat/completions":
                    content = stand_in.chat_answer(body)
                    self._send(200, {"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]})
                else:
                    self._send(404, {"error": "not found"})

            def _send(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    # The client gave up (a timeout test): nothing to answer.
                    pass

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def chat_requests(self) -> list[dict]:
        return [body for path, body in self.requests if path == "/v1/chat/completions"]
