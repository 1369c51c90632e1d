"""The pages of the index's files a question reads are counted in the process's resident size until dropped;
past ``MAPPED_BUDGET`` the session drops them, and the language server and the MCP server ask it to after every
answer."""

from __future__ import annotations

import asyncio
import platform

import pytest
from answers import ask
from conftest import mapped_resident_kb

from rag_lsp.features.context import answer_context
from rag_lsp.mcp_server.live_workspace import LiveWorkspace
from rag_lsp.retrieval.answer import ContextRequest
from rag_lsp.server.app import build_server
from rag_lsp.workspace import session as session_module
from rag_lsp.workspace.session import Session

pytestmark = pytest.mark.skipif(platform.system() != "Linux", reason="reads /proc/self/smaps")


def test_the_index_files_pages_are_dropped_past_the_budget(ledger_root, monkeypatch):
    session = Session()
    try:
        session.add_root(ledger_root)
        session.index_roots()
        snapshot = session.root_list()[0][1].index.cache.snapshot_path
        answer = ask(session, ContextRequest("Ledger.post"))
        assert mapped_resident_kb(snapshot) > 0
        monkeypatch.setattr(session_module, "MAPPED_BUDGET", 1 << 40)
        assert not session.bound_mapped()
        assert mapped_resident_kb(snapshot) > 0
        monkeypatch.setattr(session_module, "MAPPED_BUDGET", 0)
        assert session.bound_mapped()
        assert mapped_resident_kb(snapshot) == 0
        # The next question maps what it reads again, and answers as before.
        again = ask(session, ContextRequest("Ledger.post"))
        assert again["items"] and again == {**answer, "elapsed_ms": again["elapsed_ms"],
                                            "answered_at": again["answered_at"]}
        assert mapped_resident_kb(snapshot) > 0
    finally:
        session.close()


def test_the_server_drops_them_after_an_answer(ledger_root, tmp_path, monkeypatch):
    monkeypatch.setattr(session_module, "MAPPED_BUDGET", 0)
    server = build_server(cache_root=tmp_path / "cache")
    try:
        server.session.add_root(ledger_root)
        server.session.index_roots()
        snapshot = server.session.root_list()[0][1].index.cache.snapshot_path
        request = ContextRequest("Ledger.post")
        answer_context(server.session, request)
        assert mapped_resident_kb(snapshot) > 0
        answer = asyncio.run(server.run(answer_context, server.session, request))
        assert answer.items
        server.thread_pool.shutdown(wait=True)
        assert mapped_resident_kb(snapshot) == 0
    finally:
        server.session.close()


def test_a_warm_start_keeps_none_of_the_pages_its_loading_read(ledger_root):
    cold = Session()
    cold.add_root(ledger_root)
    cold.index_roots()
    snapshot = cold.root_list()[0][1].index.cache.snapshot_path
    cold.close()
    warm = Session()
    try:
        warm.add_root(ledger_root)
        (stats,) = warm.index_roots()
        assert stats.reused == stats.files > 0
        assert mapped_resident_kb(snapshot) == 0
        assert ask(warm, ContextRequest("Ledger.post"))["items"]
    finally:
        warm.close()


def test_the_mcp_server_drops_them_after_a_tool_call(ledger_root, monkeypatch):
    workspace = LiveWorkspace([ledger_root], language_servers=False, polling=True)
    workspace.start()
    try:
        assert workspace.wait_indexed(60)
        snapshot = workspace.session.root_list()[0][1].index.cache.snapshot_path
        answer_context(workspace.session, ContextRequest("Ledger.post"))
        assert mapped_resident_kb(snapshot) > 0
        monkeypatch.setattr(session_module, "MAPPED_BUDGET", 0)
        assert workspace.call("context", {"question": "Ledger.post"}).result["items"]
        assert mapped_resident_kb(snapshot) == 0
    finally:
        workspace.close()
