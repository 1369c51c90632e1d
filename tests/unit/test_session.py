"""The protocol-free session the server drives: roots, buffers, disk events, and answers during indexing."""

import gc
import threading
import weakref

from answers import ask, lookup_of, status_of, usage_of
from conftest import write_tree

from rag_lsp.features.focus import focus_query
from rag_lsp.features.workspace_symbols import workspace_symbols
from rag_lsp.index.tables import workspace_tables
from rag_lsp.path_kinds import is_test_path
from rag_lsp.retrieval.answer import ContextRequest
from rag_lsp.retrieval.rank import Cancelled
from rag_lsp.workspace.documents import TextEdit
from rag_lsp.workspace.session import Session


def session_for(*roots) -> Session:
    session = Session(use_cache=False)
    for root in roots:
        session.add_root(root)
    return session


def test_a_question_during_indexing_answers_from_what_is_indexed_and_says_so(tmp_path):
    root = write_tree(tmp_path / "ws", {f"pkg/mod_{i:03}.py": f"def widget_{i}():\n    return {i}\n"
                                        for i in range(300)})
    session = session_for(root)
    reached, release = threading.Event(), threading.Event()

    def progress(done: int, total: int) -> None:
        if 0 < done < total:
            reached.set()
            release.wait(10)

    worker = threading.Thread(target=session.index_roots, kwargs={"progress": progress})
    worker.start()
    assert reached.wait(30)
    answer = ask(session, ContextRequest("widget"))
    release.set()
    worker.join(30)
    assert 0 < answer["indexing"]["done"] < answer["indexing"]["total"] == 300
    assert answer["items"]
    done = answer["indexing"]["done"]
    expected = f"indexing in progress: {done} of 300 files indexed so far; the answer covers only what is indexed"
    assert answer["warnings"] == [expected]
    assert "indexing" not in ask(session, ContextRequest("widget"))


def test_before_indexing_the_state_is_pending_and_no_answer_calls_the_index_empty(tmp_path):
    root = write_tree(tmp_path / "ws", {"pkg/mod.py": "def widget():\n    return 1\n"})
    session = session_for(root)
    assert status_of(session)["indexing"] == {"done": 0, "total": 0, "running": True, "state": "pending"}
    answer = ask(session, ContextRequest("widget"))
    assert answer["indexing"] == {"done": 0, "total": 0}
    assert not any("index is empty" in warning for warning in answer["warnings"])
    session.index_roots()
    assert status_of(session)["indexing"] == {"done": 1, "total": 1, "running": False, "state": "done"}
    assert "warnings" not in ask(session, ContextRequest("widget"))


def test_closing_the_session_stops_indexing_at_its_next_batch(tmp_path):
    root = write_tree(tmp_path / "ws", {f"pkg/mod_{i:04}.py": f"def gadget_{i}():\n    return {i}\n"
                                        for i in range(1000)})
    session = session_for(root)
    batches = []

    def progress(done: int, total: int) -> None:
        batches.append(done)
        if len(batches) == 1:
            session.close()

    assert session.index_roots(progress=progress) == []
    assert len(batches) == 1 and batches[0] < 1000


def test_open_buffer_wins_over_the_disk_until_closed(ledger_root):
    session = session_for(ledger_root)
    session.index_roots()
    path = ledger_root / "shop/currency.py"
    session.open_document(path, "def exchange_unsaved(amount):\n    return amount\n", 1)
    session.index_roots()  # A refresh from disk must not overwrite the buffer.
    assert ask(session, ContextRequest("exchange_unsaved"))["items"][0]["path"] == "shop/currency.py"
    session.close_document(path)
    assert not any(i["qualname"] == "exchange_unsaved" for i in ask(session, ContextRequest("exchange_unsaved"))["items"])
    assert ask(session, ContextRequest("`convert`"))["items"][0]["qualname"] == "convert"


def test_edits_in_order_and_stale_versions(ledger_root):
    session = session_for(ledger_root)
    session.index_roots()
    path = ledger_root / "shop/limits.py"
    session.open_document(path, path.read_text(), 1)
    assert session.change_document(path, 2, [TextEdit(0, 0, 0, 0, "def throttle_burst():\n    pass\n")]) is None
    assert "not newer" in session.change_document(path, 2, [TextEdit(0, 0, 0, 0, "x")])
    assert session.documents[path].text.startswith("def throttle_burst")


def test_secret_and_binary_buffers_are_tracked_but_not_indexed(ledger_root):
    session = session_for(ledger_root)
    session.index_roots()
    assert session.open_document(ledger_root / ".env", "TOKEN=hunter2\n", 1) == "secret"
    assert session.open_document(ledger_root / "shop/blob.py", "A = 1\x00", 1) == "binary"
    assert session.documents[ledger_root / "shop/blob.py"].tree is None
    assert status_of(session)["files"] == 6


def test_two_roots_merge_by_score_and_the_focus_root_wins_ties(ledger_root, tmp_path):
    other = write_tree(tmp_path / "other", {"shop/ledger.py": "class Ledger:\n    def post(self):\n        pass\n"})
    session = session_for(ledger_root, other)
    session.index_roots()
    answer = ask(session, ContextRequest("`Ledger.post`", top_k=4), focus=other / "shop/ledger.py")
    assert {item["root"] for item in answer["items"]} == {str(ledger_root.resolve()), str(other.resolve())}
    assert answer["index"]["files"] == 7
    assert "symbols" in answer["strategies_run"]
    assert not {e["strategy"] for e in answer["strategies_skipped"]} & set(answer["strategies_run"])
    assert sum(i["tokens"] for i in answer["items"]) == answer["tokens"] <= answer["budget_tokens"]


def test_cancelled_question_stops(ledger_root):
    session = session_for(ledger_root)
    session.index_roots()
    cancel = threading.Event()
    cancel.set()
    try:
        ask(session, ContextRequest("ledger"), cancel=cancel)
    except Cancelled:
        return
    raise AssertionError("a cancelled question must raise Cancelled")


def test_lens_counts_references_and_test_files(tmp_path):
    root = write_tree(tmp_path / "ws", {
        "app/cart.py": "def total(items):\n    return sum(items)\n\n\ndef checkout(items):\n    return total(items)\n",
        "tests/test_cart.py": "from app.cart import total\n\n\ndef test_total():\n    assert total([1]) == 1\n",
    })
    session = session_for(root)
    session.index_roots()
    counts = usage_of(session, root / "app/cart.py", "total", "total")
    assert (counts["references"], counts["tests"], counts["found"]) == (2, 1, True)
    assert usage_of(session, root / "app/cart.py", "gone", "gone")["found"] is False


def test_focus_query_names_the_identifier_and_its_definition(ledger_root):
    session = session_for(ledger_root)
    session.index_roots()
    assert focus_query(session, ledger_root / "shop/ledger.py", 12, 20) == "`self.accounts` `Ledger.post`"


def test_workspace_symbols_are_fuzzy_ranked(ledger_root):
    session = session_for(ledger_root)
    session.index_roots()
    names = [d.qualname for _, d in workspace_symbols(session, "led")]
    assert names[0] == "Ledger"
    assert [d.qualname for _, d in workspace_symbols(session, "cnvrt")] == ["convert"]


def test_test_paths():
    assert all(map(is_test_path, ["tests/a.py", "a/test_x.py", "x_test.go", "cart.test.ts", "spec/cart_spec.rb",
                                  "src/test/java/CartTest.java"]))
    assert not any(map(is_test_path, ["app/cart.py", "src/contest.py"]))


def test_lookup_of_an_outline_outside_every_root_says_so(ledger_root, tmp_path):
    session = Session(use_cache=False)
    session.add_root(ledger_root)
    session.index_roots()
    outline = lookup_of(session, "", "documentSymbols", ledger_root / "shop/ledger.py")
    assert {(i["qualname"], i["source"]) for i in outline["items"]} >= {("Ledger.post", "tree-sitter")}
    outside = lookup_of(session, "", "documentSymbols", tmp_path / "elsewhere.py")
    assert outside["items"] == [] and "outside every workspace folder" in outside["unanswered"]


def test_a_new_file_saved_in_the_editor_stays_indexed_after_close(ledger_root):
    session = session_for(ledger_root)
    new = ledger_root / "shop/refunds.py"
    session.open_document(new, "def refund_everything():\n    return 0\n", 1)
    new.write_text("def refund_everything():\n    return 0\n")
    session.close_document(new)
    assert "shop/refunds.py" in session.roots[ledger_root.resolve()].index.files
    # A draft never saved, and a saved file the walk would leave out, leave the index on close.
    draft = ledger_root / "shop/draft.py"
    session.open_document(draft, "x = 1\n", 1)
    session.close_document(draft)
    ignored = ledger_root / "node_modules/pkg/saved.py"
    ignored.parent.mkdir(parents=True)
    session.open_document(ignored, "y = 2\n", 1)
    ignored.write_text("y = 2\n")
    session.close_document(ignored)
    files = session.roots[ledger_root.resolve()].index.files
    assert "shop/draft.py" not in files and "node_modules/pkg/saved.py" not in files


def test_after_prepare_answers_the_first_question_builds_no_table_and_no_graph(tmp_path, monkeypatch):
    from rag_lsp.index import file_bm25
    from rag_lsp.index.store import code_links
    from rag_lsp.index.tables import WorkspaceTables
    from rag_lsp.retrieval.ranking import candidates, centrality, rerank

    root = write_tree(tmp_path / "ws", {"shop/ledger.py": "from shop.money import Money\n\nclass Ledger:\n"
                                        "    def post(self, amount):\n        return Money(amount)\n",
                                        "shop/money.py": "class Money:\n    def __init__(self, v):\n"
                                        "        self.v = v\n"})
    # A warm start, whose references are the snapshot's columns.
    for _ in range(2):
        session = Session(cache_root=tmp_path / "cache")
        session.add_root(root)
        session.index_roots()
    # A reference cycle dropped before is collected, not kept with what prepare_answers builds, which leaves the
    # collector's sight (gc.freeze): a full collection during a question does not traverse it.
    class Cycle:
        pass

    garbage = Cycle()
    garbage.itself = garbage  # type: ignore[attr-defined]
    dropped = weakref.ref(garbage)
    del garbage
    try:
        session.prepare_answers()
        assert dropped() is None
        stems = candidates.path_stems(workspace_tables(session.roots[root.resolve()].index))
        assert stems and all(found is not stems for found in gc.get_objects())
    finally:
        gc.unfreeze()
    stored = session.roots[root.resolve()].index.references.stored
    assert stored is not None and stored._sorting is not None
    stored._sorting.join()
    assert stored._name_rows is not None
    built = []
    monkeypatch.setattr(code_links, "_update", lambda *args: built.append("links"))
    monkeypatch.setattr(centrality, "_graph_of", lambda *args: built.append("graph"))
    monkeypatch.setattr(WorkspaceTables, "_add", lambda *args: built.append("tables"))
    monkeypatch.setattr(candidates, "_path_stems", lambda *args: built.append("path stems"))
    monkeypatch.setattr(file_bm25, "_built", lambda *args: built.append("file table"))
    monkeypatch.setattr(rerank, "vendored_folders", lambda *args: built.append("workspace"))
    answer = ask(session, ContextRequest("why does Ledger.post fail"))
    assert answer["items"] and answer["items"][0]["path"] == "shop/ledger.py"
    assert built == []


def test_an_answer_from_an_index_cut_by_its_budget_says_so(tmp_path):
    from rag_lsp.workspace.settings import Settings

    root = write_tree(tmp_path / "ws", {f"pkg/mod_{i}.py": f"def widget_{i}():\n    return {i}\n" for i in range(5)})
    session = Session(Settings(max_index_files=2), use_cache=False)
    session.add_root(root)
    session.index_roots()
    answer = ask(session, ContextRequest("widget"))
    assert any("truncated: its files budget is spent" in warning for warning in answer["warnings"])
    whole = session_for(root)
    whole.index_roots()
    assert not any("truncated" in warning for warning in ask(whole, ContextRequest("widget")).get("warnings", []))
