"""Framing and the connection's request/response bookkeeping, against an in-process peer over pipes."""

from __future__ import annotations

import io
import json
import os
import threading

import pytest

from rag_lsp.langservers.jsonrpc import (
    Connection,
    ConnectionLost,
    FramingError,
    MethodNotFound,
    RequestTimeout,
    ResponseError,
    encode,
    read_message,
)

from .lsp_helpers import wait_until


class Trickle(io.RawIOBase):
    """A raw stream that returns at most ``step`` bytes per read, like a pipe delivering a message in pieces."""

    def __init__(self, data: bytes, step: int):
        self._data = data
        self._step = step

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        chunk, self._data = self._data[: self._step], self._data[self._step :]
        buffer[: len(chunk)] = chunk
        return len(chunk)


def read_all(stream) -> list[dict]:
    messages = []
    while (message := read_message(stream)) is not None:
        messages.append(message)
    return messages


MESSAGES = [
    {"jsonrpc": "2.0", "id": 1, "result": {"text": "naïve 😀 ünïcödé"}},
    {"jsonrpc": "2.0", "method": "window/logMessage", "params": {"message": "x" * 5000}},
    {"jsonrpc": "2.0", "id": 2, "result": None},
]


def test_content_length_counts_utf8_bytes_not_characters():
    frame = encode({"text": "é😀"})
    header, body = frame.split(b"\r\n\r\n", 1)
    assert header == b"Content-Length: %d" % len(body)
    assert len(body) > len('{"text":"é😀"}')
    assert read_message(io.BytesIO(frame)) == {"text": "é😀"}


def test_concatenated_messages_are_read_one_by_one():
    assert read_all(io.BytesIO(b"".join(encode(m) for m in MESSAGES))) == MESSAGES


@pytest.mark.parametrize("step", [1, 3, 7, 4096])
def test_messages_split_across_reads_are_reassembled(step):
    data = b"".join(encode(m) for m in MESSAGES)
    assert read_all(io.BufferedReader(Trickle(data, step))) == MESSAGES


def test_other_headers_and_bare_newlines_are_accepted():
    body = json.dumps({"id": 1}).encode()
    data = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length: %d\n\n%s" % (len(body), body)
    assert read_message(io.BytesIO(data)) == {"id": 1}


@pytest.mark.parametrize(
    "data",
    [
        b"this is not a header\r\n\r\n",
        b"Content-Type: x\r\n\r\n{}",
        b"Content-Length: ten\r\n\r\n",
        b"Content-Length: -1\r\n\r\n",
        b"Content-Length: 10\r\n\r\n{}",
        b"Content-Length: 5\r\n\r\n{oops",
        b"Content-Length: 2\r\n\r\n[]",
        b"Content-Length: 2\r\n",
        b"X" * 10000,
    ],
    ids=["no-colon", "no-length", "bad-length", "negative", "short-body", "bad-json", "not-object", "eof-in-header",
         "endless-line"],
)  # fmt: skip
def test_garbage_is_a_framing_error(data):
    with pytest.raises(FramingError):
        read_message(io.BytesIO(data))


def test_clean_end_of_stream_is_none():
    assert read_message(io.BytesIO(b"")) is None


class Peer:
    """The far side of a ``Connection``: reads what the client writes and answers by hand."""

    def __init__(self, handle_request=None):
        client_read, self._server_write = os.pipe()
        self._server_read, client_write = os.pipe()
        err_read, self._err_write = os.pipe()
        self.closed_reasons: list[str] = []
        self.inbox = open(self._server_read, "rb")  # noqa: SIM115 - closed by close()
        self.outbox = open(self._server_write, "wb")  # noqa: SIM115 - closed by close()
        self.connection = Connection(
            open(client_read, "rb"),  # noqa: SIM115 - the connection's reader closes it
            open(client_write, "wb"),  # noqa: SIM115 - the connection's writer closes it
            open(err_read, "rb"),  # noqa: SIM115 - the connection's stderr drainer closes it
            handle_request=handle_request or (lambda method, params: None),
            on_close=self.closed_reasons.append,
            name="peer",
        )
        self.connection.start()

    def receive(self) -> dict:
        return read_message(self.inbox)

    def send(self, message: dict) -> None:
        self.outbox.write(encode(message))
        self.outbox.flush()

    def stderr(self, text: bytes) -> None:
        os.write(self._err_write, text)

    def close(self) -> None:
        for stream in (self.outbox, self.inbox):
            stream.close()
        os.close(self._err_write)


@pytest.fixture
def peer():
    made = []

    def make(**kwargs):
        made.append(Peer(**kwargs))
        return made[-1]

    yield make
    for p in made:
        p.connection.close()
        if not p.outbox.closed:
            p.close()


def answer_in_thread(peer: Peer, reply) -> threading.Thread:
    def run():
        request = peer.receive()
        peer.send({"jsonrpc": "2.0", "id": request["id"], **reply(request)})

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_a_request_gets_its_result(peer):
    p = peer()
    answer_in_thread(p, lambda request: {"result": {"echo": request["params"], "method": request["method"]}})
    assert p.connection.request("x/echo", {"a": "é"}, 2.0) == {"echo": {"a": "é"}, "method": "x/echo"}


def test_an_error_response_raises_response_error(peer):
    p = peer()
    answer_in_thread(p, lambda request: {"error": {"code": -32602, "message": "bad params"}})
    with pytest.raises(ResponseError) as caught:
        p.connection.request("x/fail", None, 2.0)
    assert (caught.value.code, caught.value.message) == (-32602, "bad params")


def test_a_timeout_cancels_the_request_and_a_late_answer_is_ignored(peer):
    p = peer()
    with pytest.raises(RequestTimeout):
        p.connection.request("x/slow", {}, 0.2)
    request, cancel = p.receive(), p.receive()
    assert "params" in request and request["method"] == "x/slow"
    assert cancel == {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": request["id"]}}
    p.send({"jsonrpc": "2.0", "id": request["id"], "result": "late"})
    answer_in_thread(p, lambda request: {"result": "next"})
    assert p.connection.request("x/next", {}, 2.0) == "next"


def test_requests_without_params_omit_the_member(peer):
    p = peer()
    answer_in_thread(p, lambda request: {"result": sorted(request)})
    assert p.connection.request("shutdown", None, 2.0) == ["id", "jsonrpc", "method"]


def test_server_requests_are_answered_by_the_handler(peer):
    def handle(method, params):
        if method == "workspace/configuration":
            return [None] * len(params["items"])
        raise MethodNotFound(method)

    p = peer(handle_request=handle)
    p.send({"jsonrpc": "2.0", "id": "a", "method": "workspace/configuration", "params": {"items": [{}, {}]}})
    p.send({"jsonrpc": "2.0", "id": 7, "method": "x/unknown"})
    p.send({"jsonrpc": "2.0", "method": "window/logMessage", "params": {"message": "ignored"}})
    assert p.receive() == {"jsonrpc": "2.0", "id": "a", "result": [None, None]}
    answer = p.receive()
    assert answer["id"] == 7 and answer["error"]["code"] == -32601


def test_end_of_output_fails_every_pending_request_and_reports_once(peer):
    p = peer()
    failures = []

    def call():
        try:
            p.connection.request("x/wait", {}, 5.0)
        except ConnectionLost as exc:
            failures.append(str(exc))

    threads = [threading.Thread(target=call) for _ in range(3)]
    for thread in threads:
        thread.start()
    for _ in threads:
        p.receive()
    p.close()
    for thread in threads:
        thread.join(2.0)
    assert failures == ["the server closed its output"] * 3
    assert p.closed_reasons == ["the server closed its output"]
    with pytest.raises(ConnectionLost):
        p.connection.request("x/after", {}, 1.0)


def test_unparseable_output_closes_the_connection(peer):
    p = peer()
    p.outbox.write(b"hello world\r\n\r\n")
    p.outbox.flush()
    assert wait_until(lambda: p.closed_reasons)
    assert p.closed_reasons[0].startswith("unparseable output from the server")


def test_stderr_tail_keeps_the_last_lines(peer):
    p = peer()
    p.stderr(b"".join(b"line %d\n" % i for i in range(10)) + b"\n")
    p.close()
    assert p.connection.stderr_tail(3, wait=2.0) == ["line 7", "line 8", "line 9"]
