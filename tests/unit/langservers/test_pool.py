"""The pool of one root: shared clients per server, reasons for unserved languages, status, reconfiguring."""

from __future__ import annotations

import sys

import pytest
from answers import status_of

from rag_lsp.langservers.client import LanguageServerClient
from rag_lsp.langservers.pool import ServerPool

from .lsp_helpers import FAKE_SERVER, executable, process_alive, ready

# Taken before the tests point sys.executable elsewhere to control the lookup next to it.
PYTHON = sys.executable


def fake_override(mode: str = "ok") -> dict:
    return {"command": PYTHON, "args": [str(FAKE_SERVER), "--mode", mode]}


@pytest.fixture
def pools(tmp_path):
    made: list[ServerPool] = []

    def make(overrides=None, **options) -> ServerPool:
        made.append(ServerPool(tmp_path, overrides, start_timeout=5.0, **options))
        return made[-1]

    yield make
    for pool in made:
        pool.stop()


def test_clients_are_created_lazily_and_shared_by_languages_of_one_server(bin_dir, pools):
    executable(bin_dir, "typescript-language-server")
    executable(bin_dir, "clangd")
    pool = pools()
    assert pool.clients() == []
    typescript = pool.client_for("typescript")
    assert isinstance(typescript, LanguageServerClient) and typescript.state == "idle"
    assert pool.client_for("tsx") is typescript and pool.client_for("javascript") is typescript
    assert pool.client_for("c") is pool.client_for("cpp") is not typescript
    assert len(pool.clients()) == 2


def test_unserved_languages_get_reasons(bin_dir, pools):
    pool = pools({"go": {"enabled": False}, "rust": {"command": "/opt/nowhere/rust-analyzer"}})
    assert pool.client_for("python") == (
        "no python language server on PATH (tried pyright-langserver, basedpyright-langserver, jedi-language-server)"
    )
    assert pool.client_for("go") == "disabled by settings"
    assert pool.client_for("rust") == "command '/opt/nowhere/rust-analyzer' not found"
    assert pool.client_for("markdown") == "no server configured for markdown"
    assert pool.clients() == []


def test_status_lists_every_planned_server_by_first_language(bin_dir, pools):
    executable(bin_dir, "clangd")
    executable(bin_dir, "gopls")
    python_sep = {"python": {**fake_override(), "initialization_options": {"a": 1}}}
    pool = pools({**python_sep, "rust": {"enabled": False}})
    client = pool.client_for("python")
    ready(client)
    by_language = {entry["languages"][0]: entry for entry in status_of(pool)}
    assert list(by_language) == ["c", "go", "javascript", "python", "rust"]
    assert by_language["c"]["languages"] == ["c", "cpp"] and by_language["c"]["state"] == "idle"
    assert by_language["go"]["server"] == "gopls" and by_language["go"]["last_error"] is None
    assert by_language["python"] == status_of(client) and by_language["python"]["state"] == "ready"
    assert by_language["rust"]["state"] == "disabled" and by_language["rust"]["server"] == "rust-analyzer"
    assert by_language["javascript"]["state"] == "missing"
    # One missing server of three languages is one entry, as it would be one process.
    assert by_language["javascript"]["server"] == "typescript-language-server"
    assert by_language["javascript"]["languages"] == ["javascript", "typescript", "tsx"]
    assert by_language["javascript"]["last_error"].startswith("no javascript language server on PATH")
    assert {frozenset(entry) for entry in status_of(pool)} == {frozenset(status_of(client))}


def test_reconfigure_stops_only_clients_whose_server_changed(bin_dir, pools):
    executable(bin_dir, "clangd")
    pool = pools({"python": fake_override()})
    python = ready(pool.client_for("python"))
    clangd = pool.client_for("c")
    pid = status_of(python)["pid"]
    pool.reconfigure({"python": fake_override()})
    assert pool.client_for("python") is python and python.state == "ready"
    pool.reconfigure({"python": fake_override("error")})
    assert python.state == "stopped" and not process_alive(pid)
    replacement = pool.client_for("python")
    assert replacement is not python and replacement.spec.args[-1] == "error"
    assert pool.client_for("c") is clangd
    pool.reconfigure({"python": {"enabled": False}, "c": {"enabled": False}})
    assert pool.client_for("python") == "disabled by settings"
    assert pool.clients() == [] and clangd.state == "stopped"


def test_stop_stops_every_client_and_no_more_are_made(bin_dir, pools):
    pool = pools({"python": fake_override(), "markdown": fake_override("error")}, backoff_base=0.01)
    python, markdown = ready(pool.client_for("python")), ready(pool.client_for("markdown"))
    pids = [status_of(python)["pid"], status_of(markdown)["pid"]]
    pool.stop()
    assert python.state == markdown.state == "stopped"
    assert [entry for entry in status_of(pool) if entry["state"] == "stopped"] == [status_of(markdown), status_of(python)]
    assert not any(process_alive(pid) for pid in pids)
    assert isinstance(pool.client_for("python"), str)


def test_identical_overrides_share_one_process(bin_dir, pools):
    pool = pools({"python": fake_override(), "markdown": fake_override()})
    assert pool.client_for("python") is pool.client_for("markdown")
    assert pool.client_for("python").spec.languages == ("python", "markdown")
