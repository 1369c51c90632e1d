"""An index its indexing built by parsing is replaced by one loaded from the snapshot it then saved
(``Session.settle``, ``Index.hand_over``): the same answers, the old index let go before the new one loads,
no edit lost on the way, questions and the replacement waiting for each other."""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from collections.abc import Iterator

import pytest
from answers import ask, lookup_of

from rag_lsp.index.root_index import Index
from rag_lsp.index.store.snapshot_file import SnapshotError
from rag_lsp.mcp_server.live_workspace import LiveWorkspace
from rag_lsp.retrieval.answer import ContextRequest
from rag_lsp.server.app import build_server
from rag_lsp.workspace import reload
from rag_lsp.workspace.session import Session

QUESTIONS = ("Ledger.post", "why does Ledger.post raise KeyError", "how are amounts converted to euros")
# How long a test waits for another thread to reach a point it must reach (never met when the code is right).
PATIENCE = 30


@pytest.fixture
def any_build_counts(monkeypatch):
    """The fixture workspaces are a few files: every index their refresh parsed counts as built."""
    monkeypatch.setattr(reload, "RELOAD_MIN_PARSED", 1)


@pytest.fixture
def built(ledger_root, any_build_counts) -> Iterator[Session]:
    """A session whose index of the ledger its refresh built by parsing, closed after the test."""
    session = indexed(ledger_root)
    yield session
    session.close()


def answers(session: Session) -> list[dict]:
    found = [ask(session, ContextRequest(question)) for question in QUESTIONS]
    found.append(lookup_of(session, "Ledger.post", "definition"))
    for answer in found:
        # When and how fast it was answered: not what it answered.
        answer.pop("elapsed_ms", None)
        answer.pop("answered_at", None)
    return found


def indexed(root_path, **kwargs) -> Session:
    session = Session(**kwargs)
    session.add_root(root_path)
    session.index_roots()
    return session


def index_of(session: Session) -> Index:
    return session.root_list()[0][1].index


def test_a_built_index_is_replaced_by_its_snapshot_and_answers_the_same(built, ledger_root):
    session = built
    before = answers(session)
    old = index_of(session)
    files, stats, version = dict(old.files), old.stats, old.version
    gone = weakref.ref(old)
    del old
    session.settle()
    new = index_of(session)
    # Let go, with what the questions derived from it, before the new one loaded.
    assert gone() is None
    assert new.version != version
    assert {path: (e.blob_id, e.chunk_ids) for path, e in new.files.items()} == \
        {path: (e.blob_id, e.chunk_ids) for path, e in files.items()}
    assert new.stats is stats
    assert answers(session) == before
    # An edit after the replacement is indexed, and a later settle leaves an index that changed alone.
    source = ledger_root / "shop" / "ledger.py"
    session.open_document(source, source.read_text() + "\ndef reconcile_accounts():\n    pass\n", 1)
    assert ask(session, ContextRequest("reconcile_accounts"))["items"][0]["path"] == "shop/ledger.py"
    session.settle()
    assert index_of(session) is new


def test_without_a_cache_the_anonymous_snapshot_is_loaded(ledger_root, any_build_counts):
    session = indexed(ledger_root, use_cache=False)
    try:
        before, old = answers(session), index_of(session)
        session.settle()
        assert index_of(session) is not old
        assert answers(session) == before
    finally:
        session.close()


def test_an_index_not_built_by_parsing_or_changed_since_its_save_is_kept(ledger_root, any_build_counts, monkeypatch):
    cold = indexed(ledger_root)
    try:
        # Edited after its save: the snapshot no longer holds what it holds.
        source = ledger_root / "shop" / "ledger.py"
        cold.open_document(source, source.read_text() + "\n# edited\n", 1)
        edited = index_of(cold)
        cold.settle()
        assert index_of(cold) is edited
    finally:
        cold.close()
    warm = indexed(ledger_root)
    try:
        # Loaded from the snapshot already (nothing parsed).
        loaded = index_of(warm)
        assert loaded.stats.parsed == 0
        warm.settle()
        assert index_of(warm) is loaded
    finally:
        warm.close()
    monkeypatch.setattr(reload, "RELOAD_MIN_PARSED", 10_000)
    small = indexed(ledger_root.parent / "ws", cache_root=ledger_root.parent / "other-cache")
    try:
        # Too few files parsed to be worth a load.
        kept = index_of(small)
        assert kept.stats.parsed > 0
        small.settle()
        assert index_of(small) is kept
    finally:
        small.close()


def test_an_index_not_worth_replacing_keeps_no_question_waiting(ledger_root):
    # The ledger's few files are below RELOAD_MIN_PARSED: settling (every server start does it) passes by
    # without closing the gate, so a question under way neither waits for it nor makes it wait.
    session = indexed(ledger_root)
    try:
        index = index_of(session)
        settled = threading.Thread(target=session.settle)
        with session.answering():
            settled.start()
            settled.join(PATIENCE)
            assert not settled.is_alive()
        assert index_of(session) is index
    finally:
        session.close()


def test_an_edit_made_through_the_replaced_index_reaches_its_heir(built):
    session = built
    old = index_of(session)
    heir = reload.heir_of(old)
    edited = threading.Thread(target=old.set_file, args=("shop/late.py", "def arrived_late():\n    pass\n"))
    removed = threading.Thread(target=old.remove_file, args=("shop/currency.py",))
    with heir.lock:
        source = old.hand_over(heir)
        assert source is not None
        edited.start()
        removed.start()
        # Both wait for the heir's loading (its lock), not for the old index.
        time.sleep(0.2)
        assert edited.is_alive() and removed.is_alive()
        heir.adopt(source)
    edited.join(PATIENCE)
    removed.join(PATIENCE)
    assert "shop/late.py" in heir.files and "shop/currency.py" not in heir.files
    assert heir.symbols.lookup("arrived_late")
    assert "shop/late.py" not in old.files and "shop/currency.py" in old.files


def test_a_question_under_way_keeps_the_replacement_waiting(built):
    session = built
    old = index_of(session)
    settled = threading.Thread(target=session.settle)
    with session.answering():
        settled.start()
        settled.join(0.3)
        # A question under way keeps the replacement waiting.
        assert settled.is_alive() and index_of(session) is old
    settled.join(PATIENCE)
    assert not settled.is_alive() and index_of(session) is not old


def test_a_question_asked_while_the_new_index_loads_waits_for_it(built, monkeypatch):
    session = built
    loading, release = threading.Event(), threading.Event()
    adopt = Index.adopt

    def slow_adopt(index, source):
        loading.set()
        assert release.wait(PATIENCE)
        return adopt(index, source)

    monkeypatch.setattr(Index, "adopt", slow_adopt)
    seen: list[Index] = []

    def question() -> None:
        with session.answering():
            seen.append(index_of(session))

    settled = threading.Thread(target=session.settle)
    settled.start()
    assert loading.wait(PATIENCE)
    asked = threading.Thread(target=question)
    asked.start()
    asked.join(0.3)
    assert asked.is_alive() and not seen
    release.set()
    asked.join(PATIENCE)
    settled.join(PATIENCE)
    assert seen == [index_of(session)] and seen[0].files


def test_a_snapshot_that_does_not_load_leaves_the_root_indexed_anew(built, monkeypatch):
    session = built
    before, old = answers(session), index_of(session)
    adopt = Index.adopt
    failures = []

    def failing_once(index, source):
        if not failures:
            failures.append(source)
            raise SnapshotError("snapshot is damaged: a test says so")
        return adopt(index, source)

    monkeypatch.setattr(Index, "adopt", failing_once)
    session.settle()
    assert failures
    new = index_of(session)
    assert new is not old and session.root_list()[0][1].indexed
    assert new.files.keys() == old.files.keys()
    assert answers(session) == before
    assert any("did not load again" in warning for warning in new.cache.warnings)


def test_the_server_answers_as_a_question_under_way(ledger_root, tmp_path, any_build_counts):
    server = build_server(cache_root=tmp_path / "cache")
    try:
        server.session.add_root(ledger_root)
        server.session.index_roots()
        old = index_of(server.session)
        settled = threading.Thread(target=server.session.settle)

        def answer() -> bool:
            settled.start()
            settled.join(0.3)
            # The replacement waits for this answer to end.
            return settled.is_alive() and index_of(server.session) is old

        assert asyncio.run(server.run(answer))
        settled.join(PATIENCE)
        assert index_of(server.session) is not old
    finally:
        server.thread_pool.shutdown(wait=True)
        server.session.close()


def test_the_mcp_server_replaces_its_built_index_after_indexing(ledger_root, any_build_counts, monkeypatch):
    adopted: list[Index] = []
    adopt = Index.adopt

    def recorded(index, source):
        loaded = adopt(index, source)
        adopted.append(index)
        return loaded

    monkeypatch.setattr(Index, "adopt", recorded)
    workspace = LiveWorkspace([ledger_root], language_servers=False, polling=True)
    workspace.start()
    try:
        assert workspace.wait_indexed(PATIENCE)
        # The tool call waits for a replacement under way, or runs before it starts.
        assert workspace.call("context", {"question": "Ledger.post"}).result["items"]
        deadline = time.monotonic() + PATIENCE
        while not adopted and time.monotonic() < deadline:
            time.sleep(0.05)
        assert adopted == [index_of(workspace.session)]
        assert workspace.call("context", {"question": "Ledger.post"}).result["items"]
    finally:
        workspace.close()
