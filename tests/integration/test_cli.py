"""The ``rag-lsp`` command as a user runs it: a real subprocess on real directories."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_tree

RAG_LSP = Path(sys.executable).parent / "rag-lsp"


def run(*args: str, stdin: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([str(RAG_LSP), *args], check=False, capture_output=True, text=True, input=stdin,
                          timeout=timeout, env=os.environ.copy())


def context_json(root: Path, query: str, *extra: str) -> dict:
    result = run("context", query, "--root", str(root), "--json", *extra)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_the_console_script_is_installed():
    assert RAG_LSP.is_file()
    assert run("--version").stdout.startswith("rag-lsp ")


def test_context_finds_the_named_method(ledger_root):
    answer = context_json(ledger_root, "why does `Ledger.post` raise KeyError when the currency is missing")
    first = answer["items"][0]
    # The method's neighbours in the file (the class header) are merged into its place (context-window stage).
    assert (first["path"], first["qualname"]) == ("shop/ledger.py", "Ledger.post")
    assert first["start_line"] <= 11 and first["end_line"] == 14
    assert any(reason.startswith("symbol: `Ledger.post`") for reason in first["why"])
    assert "def post(self, entry):" in first["content"]


def test_context_text_output_is_a_ranked_block(ledger_root):
    result = run("context", "where is rate limiting configured", "--root", str(ledger_root), "--top-k", "3")
    assert result.returncode == 0, result.stderr
    first_line = result.stdout.splitlines()[0]
    assert first_line.startswith("1. ") and " — " in first_line
    assert "shop/limits.py" in result.stdout


def test_budget_is_respected_and_reported(ledger_root):
    answer = context_json(ledger_root, "ledger currency convert rate limit checkout", "--budget-tokens", "60")
    assert answer["tokens"] <= 60
    assert sum(item["tokens"] for item in answer["items"]) == answer["tokens"]
    assert answer["truncated"] is True


def test_top_k_limits_items(ledger_root):
    assert len(context_json(ledger_root, "ledger currency rate limit", "--top-k", "2")["items"]) == 2


def test_query_file_and_stdin(ledger_root, tmp_path):
    trace = tmp_path / "trace.txt"
    trace.write_text('Traceback:\n  File "/srv/shop/ledger.py", line 13, in post\nKeyError: \'USD\'\n')
    from_file = run("context", "--query-file", str(trace), "--root", str(ledger_root), "--json")
    from_stdin = run("context", "--query-file", "-", "--root", str(ledger_root), "--json", stdin=trace.read_text())
    assert from_file.returncode == from_stdin.returncode == 0
    assert json.loads(from_file.stdout)["items"][0]["path"] == "shop/ledger.py"
    assert json.loads(from_file.stdout)["items"] == json.loads(from_stdin.stdout)["items"]


def test_same_query_same_answer(ledger_root):
    first = context_json(ledger_root, "convert currency ledger")
    second = context_json(ledger_root, "convert currency ledger")
    assert first["items"] == second["items"]


def test_index_prints_statistics_and_the_cache_is_reused(ledger_root):
    cold = json.loads(run("index", str(ledger_root), "--json").stdout)
    warm = json.loads(run("index", str(ledger_root), "--json").stdout)
    assert cold["files"] == warm["files"] == 6
    assert (cold["parsed"], warm["parsed"], warm["reused"]) == (6, 0, 6)
    text = run("index", str(ledger_root)).stdout
    assert "6 files" in text and "python 3" in text


def test_index_of_several_roots(ledger_root, tmp_path):
    other = write_tree(tmp_path / "other", {"main.go": "package main\n\nfunc main() {}\n"})
    reports = json.loads(run("index", str(ledger_root), str(other), "--json").stdout)
    assert [r["files"] for r in reports] == [6, 1]


# Bad input: each case gives a clear message or a counted skip, never a traceback.


def test_missing_root(tmp_path):
    result = run("context", "anything", "--root", str(tmp_path / "absent"))
    assert result.returncode == 3
    assert "root does not exist" in result.stderr and "Traceback" not in result.stderr
    assert run("index", str(tmp_path / "absent")).returncode == 3


def test_root_that_is_a_file(tmp_path):
    path = tmp_path / "file.txt"
    path.write_text("x")
    result = run("context", "anything", "--root", str(path))
    assert result.returncode == 3 and "not a directory" in result.stderr


def test_empty_repository(tmp_path):
    (tmp_path / "empty").mkdir()
    result = run("context", "anything at all", "--root", str(tmp_path / "empty"), "--json")
    assert result.returncode == 0
    answer = json.loads(result.stdout)
    assert answer["items"] == [] and "the index is empty" in " ".join(answer["warnings"])
    assert "index is empty" in result.stderr


def test_query_of_only_punctuation(ledger_root):
    result = run("context", "?!... ---", "--root", str(ledger_root), "--json")
    assert result.returncode == 0
    answer = json.loads(result.stdout)
    assert answer["items"] == [] and "no searchable words" in answer["warnings"][0]


def test_missing_query_and_unreadable_query_file(ledger_root, tmp_path):
    assert run("context", "--root", str(ledger_root)).returncode == 2
    result = run("context", "--query-file", str(tmp_path / "nope.txt"), "--root", str(ledger_root))
    assert result.returncode == 4 and "cannot read query file" in result.stderr


@pytest.mark.parametrize("option", ["--top-k", "--budget-tokens"])
def test_non_positive_numbers_are_usage_errors(ledger_root, option):
    result = run("context", "x", "--root", str(ledger_root), option, "0")
    assert result.returncode == 2 and "positive" in result.stderr


def test_hostile_files_are_skipped_and_counted(ledger_root):
    write_tree(ledger_root, {
        "static/app.min.js": "var a=1;" * 10,
        "static/huge.js": "x=1;" * (5 * 1024 * 1024 // 4),
        "static/bundle.js": "var q=" + "1+" * 30000 + "1;",
        "data/latin1.py": "caf\xe9 = 1\n".encode("latin-1"),
        "data/blob.py": b"\x00\x01\x02binary",
        ".env": "SECRET_TOKEN=hunter2\n",
        "keys/server.pem": "-----BEGIN PRIVATE KEY-----\n",
        "package-lock.json": "{}",
    })
    os.mkfifo(ledger_root / "pipe.py")
    (ledger_root / "loop").symlink_to(ledger_root / "loop")
    (ledger_root / "self").symlink_to(ledger_root)
    result = run("index", str(ledger_root), "--json", timeout=60)
    assert result.returncode == 0, result.stderr
    stats = json.loads(result.stdout)
    assert stats["files"] == 6
    assert stats["skipped"] == {
        "binary": 1, "lock_file": 1, "minified": 2, "non_utf8": 1, "secret": 2,
        "special_file": 1, "symlink": 2, "too_large": 1,
    }
    answer = context_json(ledger_root, "hunter2 SECRET_TOKEN private key")
    assert all(item["path"] not in (".env", "keys/server.pem") for item in answer["items"])
    assert "hunter2" not in json.dumps(answer["items"])
