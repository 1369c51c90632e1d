"""A JSON-RPC client over raw bytes for ``rag-lsp serve``: sends what a typed client never would.

pygls's ``LanguageClient`` refuses to send malformed params and answers the
server's own requests its way; tests of bad input, the fuzzer and the soak
need to send anything and to choose how the server's requests are answered.
A reader thread collects every message; each wait has a deadline and fails at
once when the server process has exited, so a dead server fails a test
instead of hanging it.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Self

from lsp_harness import RAG_LSP

# How the client answers the server's requests (window/workDoneProgress/create, client/registerCapability, ...).
ACCEPT, REFUSE, IGNORE = "accept", "refuse", "ignore"


class ServerGone(AssertionError):
    """The server process exited (or closed its output) while a response was awaited."""


class RawServer:
    """One ``rag-lsp serve`` process and everything it sent, by request id and in arrival order."""

    def __init__(self, tmp_path: Path, *, cache: Path | None = None, env: dict[str, str] | None = None,
                 answer: Callable[[dict], str] | str = ACCEPT, log_name: str = "server.log",
                 prefix: tuple[str, ...] = ()) -> None:
        self.log_file = tmp_path / log_name
        environment = {**(os.environ if env is None else env),
                       "RAG_LSP_CACHE_DIR": str(cache or tmp_path / "cache")}
        self.process = subprocess.Popen([*prefix, RAG_LSP, "serve", "--log-file", str(self.log_file)], env=environment,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self._answer = answer if callable(answer) else (lambda _message: answer)
        self._ids = itertools.count(1)
        self._lock = threading.Condition()
        self._write_lock = threading.Lock()
        # Responses by their id's JSON text (an id may be any JSON value when the request was malformed).
        self.responses: dict[str, dict] = {}
        # Responses that arrived for an id that already had one (a server must never send two).
        self.duplicates: list[dict] = []
        # Errors answered with a null id (a request whose id could not be read, a body that is not JSON).
        self.null_responses: list[dict] = []
        self.notifications: list[dict] = []
        self.server_requests: list[dict] = []
        self.closed = False
        self._reader = threading.Thread(target=self._read, name="raw-client-reader", daemon=True)
        self._reader.start()

    # Sending.

    def send_bytes(self, body: bytes, header: bytes | None = None) -> None:
        frame = (header if header is not None else b"Content-Length: %d\r\n\r\n" % len(body)) + body
        with self._write_lock:
            try:
                assert self.process.stdin is not None
                self.process.stdin.write(frame)
                self.process.stdin.flush()
            except (BrokenPipeError, ValueError) as exc:
                raise ServerGone(f"the server's input is closed: {exc}") from exc

    def send(self, message: object) -> None:
        self.send_bytes(json.dumps(message).encode())

    def next_id(self) -> int:
        return next(self._ids)

    def request_async(self, method: str, params: object = None, *, omit_params: bool = False) -> int:
        """Send a request without waiting; returns its id."""
        request_id = self.next_id()
        message: dict = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if not omit_params:
            message["params"] = params
        self.send(message)
        return request_id

    def request(self, method: str, params: object = None, timeout: float = 30, **kwargs) -> dict:
        """Send a request and return its whole response (``result`` or ``error``)."""
        return self.response(self.request_async(method, params, **kwargs), timeout)

    def result(self, method: str, params: object = None, timeout: float = 30) -> object:
        """The ``result`` of a request; an error response fails the caller."""
        response = self.request(method, params, timeout)
        assert "error" not in response, f"{method} failed: {response['error']}"
        return response["result"]

    def notify(self, method: str, params: object = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def initialize(self, folders: list[Path], *, progress: bool = True, options: object = None,
                   process_id: int | None = None, timeout: float = 30) -> dict:
        capabilities = {"window": {"workDoneProgress": progress},
                        "workspace": {"didChangeWatchedFiles": {"dynamicRegistration": True},
                                      "codeLens": {"refreshSupport": True}, "workspaceFolders": True}}
        result = self.result("initialize", {
            "processId": process_id, "capabilities": capabilities, "initializationOptions": options,
            "workspaceFolders": [{"uri": folder.as_uri(), "name": folder.name} for folder in folders]}, timeout)
        self.notify("initialized", {})
        assert isinstance(result, dict)
        return result

    # Receiving.

    def response(self, request_id: object, timeout: float = 30) -> dict:
        """The response to ``request_id`` (None: the first answer with a null id); ServerGone when the server
        exits first, TimeoutError after ``timeout``."""
        if request_id is None:
            self.wait_for(lambda: bool(self.null_responses), timeout, "an answer with a null id")
            return self.null_responses[0]
        deadline = time.monotonic() + timeout
        key = json.dumps(request_id)
        with self._lock:
            while key not in self.responses:
                if self.closed:
                    raise ServerGone(f"the server exited (code {self.process.poll()}) before answering "
                                     f"request {request_id!r}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no response to request {request_id!r} in {timeout} s")
                self._lock.wait(min(left, 0.5))
            return self.responses[key]

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 60, what: str = "a condition") -> None:
        deadline = time.monotonic() + timeout
        with self._lock:
            while not predicate():
                if self.closed:
                    raise ServerGone(f"the server exited (code {self.process.poll()}) while waiting for {what}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"{what} did not happen in {timeout} s")
                self._lock.wait(min(left, 0.5))

    def wait_indexed(self, timeout: float = 60) -> dict:
        """Ask ``ragLsp/status`` until no indexing is pending or running; returns that status."""
        deadline = time.monotonic() + timeout
        while True:
            status = self.result("ragLsp/status", None, timeout=max(1.0, deadline - time.monotonic()))
            assert isinstance(status, dict)
            indexing = status["indexing"]
            if indexing.get("state", "running" if indexing["running"] else "done") == "done":
                return status
            if time.monotonic() > deadline:
                raise TimeoutError(f"indexing did not finish in {timeout} s: {status['indexing']}")
            time.sleep(0.05)

    def progress_kinds(self) -> list[str]:
        with self._lock:
            return [n["params"]["value"].get("kind", "") for n in self.notifications if n.get("method") == "$/progress"]

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        try:
            while True:
                length = None
                while True:
                    line = stream.readline()
                    if not line:
                        return
                    if line in (b"\r\n", b"\n"):
                        break
                    name, _, value = line.decode("ascii", "replace").partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value.strip())
                if length is None:
                    continue
                body = stream.read(length)
                if len(body) < length:
                    return
                self._dispatch(json.loads(body))
        finally:
            with self._lock:
                self.closed = True
                self._lock.notify_all()

    def _dispatch(self, message: dict) -> None:
        if "method" in message and "id" in message:
            with self._lock:
                self.server_requests.append(message)
            self._answer_server(message)
            return
        with self._lock:
            if "method" in message:
                self.notifications.append(message)
            elif message.get("id") is None:
                self.null_responses.append(message)
            elif json.dumps(message.get("id")) in self.responses:
                self.duplicates.append(message)
            else:
                self.responses[json.dumps(message.get("id"))] = message
            self._lock.notify_all()

    def _answer_server(self, message: dict) -> None:
        how = self._answer(message)
        if how == IGNORE:
            return
        reply: dict = {"jsonrpc": "2.0", "id": message["id"]}
        if how == REFUSE:
            reply["error"] = {"code": -32601, "message": f"no handler for {message['method']}"}
        else:
            reply["result"] = None
        try:
            self.send(reply)
        except ServerGone:
            pass

    # Ending.

    def stop(self, timeout: float = 15) -> int | None:
        """shutdown + exit, then the exit code (None when the server had to be killed)."""
        try:
            if self.process.poll() is None:
                self.request("shutdown", None, timeout)
                self.notify("exit")
            return self.process.wait(timeout)
        except (ServerGone, TimeoutError, subprocess.TimeoutExpired):
            self.kill()
            return None

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(10)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.kill()
