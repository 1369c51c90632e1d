"""JSON-RPC 2.0 over LSP's base protocol (``Content-Length`` framing) on a child process's pipes.

Hand-rolled rather than borrowed from pygls because the core must not import
the protocol libraries, and because rag_lsp needs a *synchronous* client that
many worker threads call at once, each with its own hard timeout.

One ``Connection`` owns three threads: a reader that parses the server's
stdout and completes pending requests, a writer that drains a queue of encoded
messages into stdin, and a drainer that keeps the last lines of stderr. The
writer exists so that no caller ever blocks on a full pipe: a server that
stops reading must cost a timeout, never a hung worker thread.
"""

from __future__ import annotations

import collections
import contextlib
import json
import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Any, BinaryIO

log = logging.getLogger("rag_lsp.langservers")

MAX_HEADER_LINE = 8192
MAX_HEADERS = 32
# A workspace/symbol answer of a large repository runs to megabytes; a length
# beyond this is taken for garbage rather than waited for.
MAX_BODY = 256 * 1024 * 1024
STDERR_LINES = 50
STDERR_LINE_CHARS = 400


class FramingError(Exception):
    """The byte stream is not LSP framing carrying a JSON object; the connection cannot recover."""


class ConnectionLost(Exception):
    """The connection closed (or was closed) before the request was answered; str() is the reason."""


class RequestTimeout(Exception):
    """No answer within the caller's timeout; the request was cancelled."""


class ResponseError(Exception):
    """The peer answered with a JSON-RPC error object."""

    def __init__(self, code: int, message: str, data: Any = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


class MethodNotFound(Exception):
    """Raised by a request handler for a method it does not answer (sent back as -32601)."""


def encode(message: dict) -> bytes:
    """One framed message.

    Lone surrogates (text decoded with ``surrogateescape``) become ``?``: they
    cannot be UTF-8, and both count as one code point and one UTF-16 unit.
    """
    body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "replace")
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def read_message(stream: BinaryIO) -> dict | None:
    """The next message from ``stream``, or None at a clean end of stream (between messages).

    ``Content-Length`` counts bytes of the UTF-8 body, not characters. Other
    headers (``Content-Type``) are skipped. Anything else raises ``FramingError``.
    """
    length = None
    lines = 0
    while True:
        line = stream.readline(MAX_HEADER_LINE)
        if not line:
            if lines == 0:
                return None
            raise FramingError("end of stream inside a header")
        if not line.endswith(b"\n"):
            raise FramingError(f"header line too long or unterminated: {line[:60]!r}")
        if line in (b"\r\n", b"\n"):
            break
        lines += 1
        if lines > MAX_HEADERS:
            raise FramingError("too many header lines")
        name, colon, value = line.decode("ascii", "replace").partition(":")
        if not colon:
            raise FramingError(f"not a header: {line[:60]!r}")
        if name.strip().lower() == "content-length":
            try:
                length = int(value.strip())
            except ValueError:
                raise FramingError(f"bad Content-Length: {value.strip()[:40]!r}") from None
            if not 0 <= length <= MAX_BODY:
                raise FramingError(f"Content-Length out of range: {length}")
    if length is None:
        raise FramingError("a message without Content-Length")
    body = stream.read(length)
    if len(body) < length:
        raise FramingError("end of stream inside a message body")
    try:
        message = json.loads(body)
    except ValueError as exc:
        raise FramingError(f"invalid JSON body: {exc}") from None
    if not isinstance(message, dict):
        raise FramingError("a message that is not a JSON object")
    return message


class _Pending:
    """A request waiting for its response; completed under the connection's lock."""

    __slots__ = ("error", "event", "result")

    def __init__(self):
        self.event = threading.Event()
        self.result: Any = None
        self.error: Exception | None = None


class Connection:
    """A JSON-RPC client over one server's stdout (read), stdin (written) and stderr (kept as a tail).

    ``handle_request(method, params)`` answers the server's own requests on the
    reader thread, so it must be quick; raising ``MethodNotFound`` answers
    -32601. ``handle_notification(method, params)``, when given, sees the
    server's notifications on the same thread, and must be quick too.
    ``on_close(reason)`` is called once, from a connection thread, when the
    server's output ends or cannot be parsed or its input cannot be written;
    it is not called after ``close()``.
    """

    def __init__(
        self,
        stdout: BinaryIO,
        stdin: BinaryIO,
        stderr: BinaryIO | None,
        *,
        handle_request: Callable[[str, Any], Any],
        on_close: Callable[[str], None],
        name: str = "server",
        handle_notification: Callable[[str, Any], None] | None = None,
    ):
        self._stdout = stdout
        self._stdin = stdin
        self._stderr = stderr
        self._handle_request = handle_request
        self._handle_notification = handle_notification
        self._on_close = on_close
        self._name = name
        self._lock = threading.Lock()
        self._pending: dict[int, _Pending] = {}
        self._next_id = 0
        self._closed: str | None = None
        self._outbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._stderr_tail: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
        # When the server last said anything (an answer, even a late one, a request, a notification).
        self.last_heard = time.monotonic()
        self._threads = [
            threading.Thread(target=self._read_loop, name=f"lsp-read-{name}", daemon=True),
            threading.Thread(target=self._write_loop, name=f"lsp-write-{name}", daemon=True),
        ]
        if stderr is not None:
            self._threads.append(threading.Thread(target=self._drain_stderr, name=f"lsp-err-{name}", daemon=True))

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    @property
    def closed(self) -> bool:
        return self._closed is not None

    def request(self, method: str, params: Any, timeout: float) -> Any:
        """Send a request and wait for its result.

        Raises ``RequestTimeout`` (after sending ``$/cancelRequest``),
        ``ResponseError`` or ``ConnectionLost``.
        """
        pending = _Pending()
        with self._lock:
            if self._closed is not None:
                raise ConnectionLost(self._closed)
            self._next_id += 1
            request_id = self._next_id
            self._pending[request_id] = pending
        self._send({"jsonrpc": "2.0", "id": request_id, "method": method, **_params(params)})
        if not pending.event.wait(timeout):
            with self._lock:
                unanswered = self._pending.pop(request_id, None) is not None
            if unanswered:
                self._send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": request_id}})
                raise RequestTimeout(f"{method} got no answer within {timeout:.2f} s")
        if pending.error is not None:
            raise pending.error
        return pending.result

    def notify(self, method: str, params: Any = None) -> None:
        """Queue a notification; never blocks and never raises (a dead connection drops it)."""
        self._send({"jsonrpc": "2.0", "method": method, **_params(params)})

    def stderr_tail(self, lines: int = 5, wait: float = 0.0) -> list[str]:
        """The last non-empty stderr lines, after waiting up to ``wait`` s for stderr to reach its end."""
        if wait > 0 and self._stderr is not None and len(self._threads) == 3 and self._threads[2].is_alive():
            self._threads[2].join(wait)
        return list(self._stderr_tail)[-lines:]

    def close(self, reason: str = "closed") -> None:
        """Fail pending requests with ``ConnectionLost(reason)`` and stop writing; idempotent.

        The pipes are not closed here: closing a buffered stream waits for a
        read or write in progress on another thread. Each connection thread
        closes its own stream when it ends, which happens once the process
        (group) is gone.
        """
        self._lose(reason, notify=False)

    def _send(self, message: dict) -> None:
        if self._closed is None:
            self._outbox.put(encode(message))

    def _lose(self, reason: str, *, notify: bool) -> None:
        with self._lock:
            if self._closed is not None:
                return
            self._closed = reason
            pending, self._pending = self._pending, {}
            for waiter in pending.values():
                waiter.error = ConnectionLost(reason)
                waiter.event.set()
        self._outbox.put(None)
        if notify:
            self._on_close(reason)

    def _write_loop(self) -> None:
        with _closing(self._stdin):
            while True:
                data = self._outbox.get()
                if data is None or self._closed is not None:
                    return
                try:
                    self._stdin.write(data)
                    self._stdin.flush()
                except (OSError, ValueError) as exc:
                    self._lose(f"writing to the server failed: {exc}", notify=True)
                    return

    def _read_loop(self) -> None:
        with _closing(self._stdout):
            try:
                while True:
                    message = read_message(self._stdout)
                    if message is None:
                        reason = "the server closed its output"
                        break
                    self.last_heard = time.monotonic()
                    self._dispatch(message)
            except FramingError as exc:
                reason = f"unparseable output from the server: {exc}"
            except (OSError, ValueError) as exc:
                reason = f"reading from the server failed: {exc}"
        self._lose(reason, notify=True)

    def _dispatch(self, message: dict) -> None:
        method = message.get("method")
        if isinstance(method, str):
            if "id" in message:
                self._answer(message["id"], method, message.get("params"))
            elif self._handle_notification is not None:
                self._handle_notification(method, message.get("params"))
            else:
                log.debug("%s: notification %s ignored", self._name, method)
            return
        request_id = message.get("id")
        with self._lock:
            waiter = self._pending.pop(request_id, None) if isinstance(request_id, int) else None
            if waiter is None:
                log.debug("%s: response to unknown or abandoned request %r", self._name, request_id)
                return
            if "error" in message:
                waiter.error = _response_error(message["error"])
            else:
                waiter.result = message.get("result")
            waiter.event.set()

    def _answer(self, request_id: Any, method: str, params: Any) -> None:
        try:
            reply: dict = {"result": self._handle_request(method, params)}
        except MethodNotFound:
            reply = {"error": {"code": -32601, "message": f"method not found: {method}"}}
        except Exception as exc:  # A bug in a handler must not kill the reader thread.
            log.warning("%s: answering %s failed", self._name, method, exc_info=True)
            reply = {"error": {"code": -32603, "message": str(exc)}}
        self._send({"jsonrpc": "2.0", "id": request_id, **reply})

    def _drain_stderr(self) -> None:
        stderr = self._stderr
        if stderr is None:
            return
        with _closing(stderr):
            for raw in iter(stderr.readline, b""):
                line = raw.decode("utf-8", "replace").rstrip()
                if line:
                    log.debug("%s stderr: %s", self._name, line)
                    self._stderr_tail.append(line[:STDERR_LINE_CHARS])


@contextlib.contextmanager
def _closing(stream: BinaryIO):
    """Close ``stream`` when its thread is done with it, ignoring a pipe that is already broken."""
    try:
        yield
    finally:
        try:
            stream.close()
        except (OSError, ValueError):
            # Flushing into a dead process fails; the descriptor is released all the same.
            pass


def _params(params: Any) -> dict:
    """The ``params`` member, omitted when there are none (``shutdown`` and ``exit`` take no params)."""
    return {} if params is None else {"params": params}


def _response_error(error: Any) -> ResponseError:
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        code = error.get("code")
        return ResponseError(code if isinstance(code, int) else -32603, error["message"], error.get("data"))
    return ResponseError(-32603, f"unreadable error object: {error!r:.100}")
