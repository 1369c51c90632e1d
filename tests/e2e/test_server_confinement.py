"""The server reads nothing outside its workspace folders, whatever URIs and disk events a client sends."""

from __future__ import annotations

from conftest import write_tree
from raw_client import RawServer

OUTSIDE = {"vault/outside_secret.py": "def outside_only_function():\n    return 'vault'\n"}


def test_documents_outside_the_roots_are_not_read_and_links_are_not_followed(ledger_root, tmp_path):
    outside = write_tree(tmp_path / "outside", OUTSIDE)
    secret = outside / "vault/outside_secret.py"
    (ledger_root / "linked").symlink_to(outside / "vault", target_is_directory=True)
    with RawServer(tmp_path) as server:
        server.initialize([ledger_root])
        server.wait_indexed()
        # A cursor question or a completion in a file outside every root that the editor has not opened.
        for method, params in (
                ("ragLsp/context", {"query": "", "textDocument": {"uri": secret.as_uri()},
                                    "position": {"line": 0, "character": 6}}),
                ("ragLsp/context", {"query": "ledger", "textDocument": {"uri": secret.as_uri()}}),
                ("ragLsp/completionContext", {"textDocument": {"uri": secret.as_uri()},
                                              "position": {"line": 1, "character": 4}})):
            error = server.request(method, params)["error"]
            assert error["code"] == -32602 and "neither open nor inside a workspace folder" in error["message"]
        # Disk events naming files through the link, or the link itself: nothing outside is indexed.
        server.notify("workspace/didChangeWatchedFiles", {"changes": [
            {"uri": (ledger_root / "linked/outside_secret.py").as_uri(), "type": 1},
            {"uri": (ledger_root / "linked").as_uri(), "type": 1}]})
        server.notify("workspace/didCreateFiles", {"files": [{"uri": (ledger_root / "linked/outside_secret.py").as_uri()}]})
        answer = server.result("ragLsp/context", {"query": "outside_only_function vault", "topK": 20})
        assert all(item["root"] == str(ledger_root) and not item["path"].startswith("linked")
                   for item in answer["items"])
        assert all("outside_only_function" not in item["content"] for item in answer["items"])
        assert server.result("ragLsp/status")["files"] == 6
        # A document the editor opened may be outside the roots: its text is the client's, and it is not indexed.
        server.notify("textDocument/didOpen", {"textDocument": {
            "uri": secret.as_uri(), "languageId": "python", "version": 1, "text": "def typed_here():\n    pass\n"}})
        completion = server.result("ragLsp/completionContext", {
            "textDocument": {"uri": secret.as_uri()}, "position": {"line": 1, "character": 4}})
        assert completion["warnings"] == ["the file is outside every workspace folder"]
        assert server.stop() == 0
