"""No secret leaves the server: not from indexed files, not from an unsaved buffer, not from a language
server's hover text. Every response is checked as the raw JSON the client receives."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from conftest import write_tree
from raw_client import RawServer

AWS_KEY_ID = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
GITHUB_TOKEN = "ghp_aBcD1234aBcD1234aBcD1234aBcD1234eFgH"
DB_PASSWORD = "s3cr3tPassw0rd"
KEY_BODY = "MIIEowIBAAKCAQEAx1y2z3w4v5u6t7s8r9q0p1o2n3m4l5k6j7i8h9g0f1e2d3c4"
BUFFER_TOKEN = "xoxb-2400000001-2400000002-AbCdEfGhIjKlMnOpQrStUvWx"
SECRETS = (AWS_KEY_ID, AWS_SECRET, GITHUB_TOKEN, DB_PASSWORD, KEY_BODY, BUFFER_TOKEN)
FAKE_SERVER = Path(__file__).resolve().parents[1] / "fixtures" / "fake_lsp" / "fake_server.py"

WORKSPACE = {
    "shop/settings.py": f'''"""Production settings."""
import os

AWS_ACCESS_KEY_ID = "{AWS_KEY_ID}"
AWS_SECRET_ACCESS_KEY = "{AWS_SECRET}"
GITHUB_TOKEN = os.environ.get("GITHUB_TOKEN", "{GITHUB_TOKEN}")
DATABASE_URL = "postgres://shop:{DB_PASSWORD}@db.internal:5432/shop"
''',
    "shop/storage.py": '''from shop.settings import AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, DATABASE_URL


def upload(bucket, name, data):
    """Upload to S3 with the configured AWS keys."""
    client = connect(AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)
    return client.put(bucket, name, data)


def database():
    return open_database(DATABASE_URL)
''',
    "docs/deploy_notes.txt": "Deploy key for the mirror:\n-----BEGIN RSA PRIVATE KEY-----\n" + KEY_BODY +
                             "\n-----END RSA PRIVATE KEY-----\nRotate the deploy key every quarter.\n",
}


def leaked(response: object) -> list[str]:
    text = json.dumps(response)
    return [secret for secret in SECRETS if secret in text or secret.replace("/", "\\/") in text]


def test_no_answer_carries_a_secret_from_files_or_buffers(tmp_path):
    root = write_tree(tmp_path / "ws", WORKSPACE)
    with RawServer(tmp_path) as server:
        server.initialize([root])
        server.wait_indexed()
        storage = root / "shop/storage.py"
        server.notify("textDocument/didOpen", {"textDocument": {
            "uri": storage.as_uri(), "languageId": "python", "version": 1,
            "text": WORKSPACE["shop/storage.py"] + f'\nSLACK_TOKEN = "{BUFFER_TOKEN}"\n'}})
        responses = []
        for query in ("AWS_SECRET_ACCESS_KEY AWS_ACCESS_KEY_ID settings", "DATABASE_URL postgres password",
                      "deploy key private key mirror", "GITHUB_TOKEN", "SLACK_TOKEN"):
            response = server.request("ragLsp/context", {"query": query, "topK": 20, "budgetTokens": 8000})
            assert response["result"]["items"], query
            responses.append(response)
        items = [item for response in responses for item in response["result"]["items"]]
        assert {"shop/settings.py", "docs/deploy_notes.txt", "shop/storage.py"} <= {item["path"] for item in items}
        assert any("[redacted]" in item["content"] for item in items)
        for what in ("definitions", "references", "hover"):
            responses.append(server.request("ragLsp/lookup", {"symbol": "AWS_SECRET_ACCESS_KEY", "what": what}))
        responses.append(server.request("ragLsp/lookup", {"what": "documentSymbols",
                                                         "textDocument": {"uri": storage.as_uri()}}))
        # Completion at the call that uses the keys: the settings module's definitions are the context.
        completion = server.request("ragLsp/completionContext", {
            "textDocument": {"uri": storage.as_uri()}, "position": {"line": 5, "character": 20},
            "budgetTokens": 2000, "timeBudgetMs": 2000})
        assert completion["result"]["snippets"] and "AWS_SECRET_ACCESS_KEY" in completion["result"]["prompt"]
        responses.append(completion)
        responses.append(server.request("workspace/symbol", {"query": "AWS"}))
        responses.append(server.request("ragLsp/status"))
        for response in responses:
            assert "error" not in response, response
            assert leaked(response) == [], response
        assert server.stop() == 0


def test_hover_text_from_a_language_server_is_scrubbed(tmp_path):
    root = write_tree(tmp_path / "ws", WORKSPACE)
    options = {"languageServers": {"python": {"command": sys.executable,
                                              "args": [str(FAKE_SERVER), "--mode", "leaky-hover"]}}}
    with RawServer(tmp_path) as server:
        server.initialize([root], options=options)
        server.wait_indexed()
        deadline = time.monotonic() + 60
        while True:
            answer = server.result("ragLsp/lookup", {"symbol": "AWS_SECRET_ACCESS_KEY", "what": "hover"})
            hovers = [item.get("hover") or "" for item in answer["items"] if item["source"] == "python"]
            if hovers or time.monotonic() > deadline:
                break
            time.sleep(0.3)
        assert hovers and all(hover.startswith("**hover** `AWS_ACCESS_KEY_ID = '[redacted]") for hover in hovers)
        assert leaked(answer) == []
        assert server.stop() == 0
