"""``rag-lsp lookup`` and ``context --language-servers`` as a user runs them, with the real servers the test setup
installs (pyright from the test extras, typescript-language-server from scripts/setup_langservers.sh)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from langservers_env import copy_polyglot, langserver_env, require

RAG_LSP = Path(sys.executable).parent / "rag-lsp"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(RAG_LSP), *args], check=False, capture_output=True, text=True, timeout=180, env=langserver_env())


def test_lookup_from_the_patterns_names_its_source(ledger_root):
    result = run("lookup", "convert", "--what", "references", "--root", str(ledger_root), "--no-language-servers",
                 "--json", "--no-cache")
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert {(i["path"], i["source"]) for i in answer["items"]} == {("shop/ledger.py", "tree-sitter")}
    assert answer["language_servers"] == []


def test_implementations_without_a_server_are_not_guessed(ledger_root):
    result = run("lookup", "Ledger", "--what", "implementations", "--root", str(ledger_root),
                 "--no-language-servers", "--no-cache")
    assert result.returncode == 0
    assert result.stdout == ""
    assert "implementations need a language server and none is in use" in result.stderr


def test_lookup_usage_errors(ledger_root):
    assert run("lookup", "--what", "documentSymbols", "--root", str(ledger_root)).returncode == 2
    assert run("lookup", "", "--root", str(ledger_root)).returncode == 2
    assert run("lookup", "x", "--root", str(ledger_root / "missing")).returncode == 3


def test_lookup_and_context_start_real_servers_and_stop_them(tmp_path):
    require("pyright-langserver")
    require("typescript-language-server")
    root = copy_polyglot(tmp_path / "polyglot")
    result = run("lookup", "Limiter", "--what", "implementations", "--root", str(root), "--json", "--no-cache")
    assert result.returncode == 0, result.stderr
    found = {(i["qualname"], i["source"]) for i in json.loads(result.stdout)["items"]}
    assert {("FixedWindow", "typescript-language-server"), ("TokenBucket", "typescript-language-server")} <= found

    result = run("context", "why does `RateLimiter.allow` let every request through", "--root", str(root),
                 "--language-servers", "--json", "--no-cache")
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    notes = {note["server"]: note for note in answer["language_servers"]}
    assert notes["pyright"]["answered"] >= 1
    assert any("pyright" in item["sources"] for item in answer["items"])
