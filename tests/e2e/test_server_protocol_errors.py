"""Every request gets a response: a result, or a JSON-RPC error that names what was wrong.

Sent as raw JSON, since a typed client refuses to send most of these.
"""

from __future__ import annotations

import pytest
from raw_client import RawServer

INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32600, -32601, -32602

# (method, params, the error code, words the message must contain)
MALFORMED = [
    ("textDocument/definition", {}, METHOD_NOT_FOUND, "textDocument/definition"),
    ("textDocument/definition", None, METHOD_NOT_FOUND, "textDocument/definition"),
    ("codeLens/resolve", {"data": {"uri": "file:///x.py"}}, INVALID_PARAMS, "params.range"),
    ("codeLens/resolve", None, INVALID_PARAMS, "codeLens/resolve"),
    ("textDocument/codeLens", "a string", INVALID_PARAMS, "params.textDocument"),
    ("textDocument/codeLens", {"textDocument": {"uri": 7}}, INVALID_PARAMS, "only file: URIs"),
    ("workspace/executeCommand", [1, 2], INVALID_PARAMS, "params.command"),
    ("workspace/executeCommand", {"command": "ragLsp.server.contextForSymbol", "arguments": 5}, INVALID_PARAMS,
     "params.arguments"),
    ("workspace/executeCommand", {"command": "ragLsp.server.contextForSymbol", "arguments": ["x"]}, INVALID_PARAMS,
     "needs an argument with 'qualname'"),
    ("workspace/symbol", [], INVALID_PARAMS, "workspace/symbol"),
    ("ragLsp/context", {"query": 5}, INVALID_PARAMS, "'query' must be a string"),
    ("ragLsp/lookup", "Ledger.post", INVALID_PARAMS, "'symbol'"),
    ("ragLsp/completionContext", {"textDocument": {}, "position": {"line": -1}}, INVALID_PARAMS, "expected a file URI"),
    ("no/suchMethod", {}, METHOD_NOT_FOUND, "no/suchMethod"),
]


def test_requests_whose_params_do_not_decode_get_an_error_naming_the_field(ledger_root, tmp_path):
    with RawServer(tmp_path) as server:
        server.initialize([ledger_root])
        ids = [(server.request_async(method, params), method, params, code, words)
               for method, params, code, words in MALFORMED]
        for request_id, method, params, code, words in ids:
            response = server.response(request_id, timeout=20)
            assert "error" in response, (method, params, response)
            assert response["error"]["code"] == code, (method, params, response)
            assert words in response["error"]["message"], (method, params, response)
        # Still answering, and nothing was answered twice.
        assert server.result("ragLsp/lookup", {"symbol": "Ledger.post"})["items"]
        assert server.duplicates == []
        assert server.stop() == 0


@pytest.mark.parametrize("message, words", [
    ({"jsonrpc": "1.0", "id": 50, "method": "ragLsp/status"}, "'jsonrpc' must be \"2.0\""),
    ({"id": 51, "method": "ragLsp/status"}, "'jsonrpc' must be \"2.0\""),
    ({"jsonrpc": "2.0", "id": 52, "method": 17}, "'method' must be a string"),
])
def test_requests_with_a_bad_envelope_are_invalid_requests(ledger_root, tmp_path, message, words):
    with RawServer(tmp_path) as server:
        server.initialize([ledger_root])
        server.send(message)
        error = server.response(message["id"], timeout=20)["error"]
        assert error["code"] == INVALID_REQUEST and words in error["message"]
        assert server.stop() == 0


def test_an_id_that_is_not_an_id_and_a_body_that_is_not_an_object_get_an_error_with_a_null_id(ledger_root, tmp_path):
    with RawServer(tmp_path) as server:
        server.initialize([ledger_root])
        server.send({"jsonrpc": "2.0", "id": {"nested": 1}, "method": "ragLsp/status"})
        assert "'id' must be an integer or a string" in server.response(None, timeout=20)["error"]["message"]
        server.null_responses.clear()
        server.send([{"jsonrpc": "2.0", "id": 60, "method": "ragLsp/status"}])
        assert "batches are not supported" in server.response(None, timeout=20)["error"]["message"]
        assert server.result("ragLsp/status")["version"]
        assert server.stop() == 0


def test_a_request_after_shutdown_is_refused_not_ignored(ledger_root, tmp_path):
    with RawServer(tmp_path) as server:
        server.initialize([ledger_root])
        server.result("shutdown")
        error = server.request("ragLsp/status", None, timeout=20)["error"]
        assert error["code"] == INVALID_REQUEST and "shutting down" in error["message"]
        server.notify("exit")
        assert server.process.wait(15) == 0


def test_bad_notifications_are_skipped_and_the_server_goes_on(ledger_root, tmp_path):
    with RawServer(tmp_path) as server:
        server.initialize([ledger_root])
        uri = (ledger_root / "shop/ledger.py").as_uri()
        server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "version": "one", "text": 3}})
        server.notify("textDocument/didChange", "nonsense")
        server.notify("$/cancelRequest", {"id": [1]})
        server.notify("window/workDoneProgress/cancel", {"token": ["a", {"b": 1}]})  # found by the long fuzz
        server.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": uri, "type": 99}]})
        assert server.result("ragLsp/lookup", {"symbol": "Ledger.post"})["items"]
        assert server.stop() == 0
        log = server.log_file.read_text()
        assert "notification textDocument/didOpen skipped" in log and "params.textDocument.version" in log
        assert "progress cancel ignored: 'token' must be an integer or a string" in log
        assert "a notification handler failed" not in log
