"""The server over raw JSON-RPC bytes: shapes a typed client never sends."""

from __future__ import annotations

import json
import os
import subprocess

from lsp_harness import RAG_LSP


class RawConnection:
    def __init__(self, tmp_path) -> None:
        env = {**os.environ, "RAG_LSP_CACHE_DIR": str(tmp_path / "cache")}
        self.process = subprocess.Popen([RAG_LSP, "serve", "--log-file", str(tmp_path / "log")], env=env,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def send_bytes(self, body: bytes) -> None:
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def send(self, message: dict) -> None:
        self.send_bytes(json.dumps(message).encode())

    def receive(self) -> dict:
        header = b""
        while not header.endswith(b"\r\n\r\n"):
            chunk = self.process.stdout.read(1)
            assert chunk, "the server closed its output"
            header += chunk
        length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
        return json.loads(self.process.stdout.read(length))

    def response(self, request_id: int) -> dict:
        while True:
            message = self.receive()
            if message.get("id") == request_id and "method" not in message:
                return message


def test_requests_without_params_and_garbage(ledger_root, tmp_path):
    connection = RawConnection(tmp_path)
    try:
        connection.send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                         "params": {"capabilities": {}, "rootUri": ledger_root.as_uri()}})
        assert "capabilities" in connection.response(1)["result"]
        connection.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        # JSON-RPC allows leaving out params.
        connection.send({"jsonrpc": "2.0", "id": 2, "method": "ragLsp/status"})
        assert connection.response(2)["result"]["version"]
        # A body that is not JSON, then an unknown method: the server keeps answering.
        connection.send_bytes(b"{not json")
        connection.send({"jsonrpc": "2.0", "id": 3, "method": "ragLsp/noSuchThing", "params": {}})
        assert connection.response(3)["error"]["code"] == -32601
        # Indexing runs in the background; ask until the answer comes from a full index.
        for request_id in range(4, 200):
            connection.send({"jsonrpc": "2.0", "id": request_id, "method": "ragLsp/context",
                             "params": {"query": "ledger"}})
            result = connection.response(request_id)["result"]
            if result["items"] and "indexing" not in result:
                break
        assert result["items"][0]["path"] == "shop/ledger.py"
        connection.send({"jsonrpc": "2.0", "id": 500, "method": "shutdown"})
        connection.response(500)
        connection.send({"jsonrpc": "2.0", "method": "exit"})
        assert connection.process.wait(15) == 0
    finally:
        if connection.process.poll() is None:
            connection.process.kill()
