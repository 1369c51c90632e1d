"""The index keeps chunks, BM25 and symbols in step across refreshes and single-file updates."""

import gc

import pytest
from conftest import write_tree

from rag_lsp.index.root_index import Index, IndexBudget
from rag_lsp.index.terms import tokenize

QUERIES = ["ledger post account", "convert currency rates", "rate limit", "checkout cart total"]


def snapshot(index: Index) -> dict:
    """What an index answers, independent of internal chunk ids."""
    by_chunk = lambda cid: (index.chunks[cid].path, index.chunks[cid].start_line)
    return {
        "chunks": sorted((c.path, c.start_line, c.end_line, c.qualname, c.content) for c in index.chunks.values()),
        "scores": {
            q: sorted((by_chunk(cid), round(score, 9)) for cid, score in index.bm25.scores(tokenize(q)).items())
            for q in QUERIES
        },
        "symbols": sorted((d.qualname, d.path, d.start_line) for name in list(index.symbols.names())
                          for d in index.symbols.by_name(name)),
    }


def test_refresh_indexes_the_workspace(ledger_root):
    index = Index(ledger_root, use_cache=False)
    stats = index.refresh()
    assert stats.files == 6
    assert stats.languages == {"python": 3, "typescript": 2, "markdown": 1}
    assert [d.qualname for d in index.symbols.lookup("Ledger.post")] == ["Ledger.post"]
    assert index.symbols.lookup("shop.currency.convert")[0].path == "shop/currency.py"


def test_set_file_and_remove_file_equal_a_fresh_index(ledger_root, tmp_path):
    live = Index(ledger_root, use_cache=False)
    live.refresh()
    new_ledger = (ledger_root / "shop/ledger.py").read_text().replace("def post", "def post_entry")
    live.set_file("shop/ledger.py", new_ledger)
    live.remove_file("web/format.ts")
    live.set_file("shop/audit.py", "def audit(ledger):\n    return ledger.accounts\n")

    (ledger_root / "shop/ledger.py").write_text(new_ledger)
    (ledger_root / "web/format.ts").unlink()
    (ledger_root / "shop/audit.py").write_text("def audit(ledger):\n    return ledger.accounts\n")
    fresh = Index(ledger_root, use_cache=False)
    fresh.refresh()
    assert snapshot(live) == snapshot(fresh)
    assert live.symbols.lookup("Ledger.post") == []
    assert live.symbols.lookup("Ledger.post_entry")[0].path == "shop/ledger.py"


def test_refresh_sees_changes_and_deletions(ledger_root):
    index = Index(ledger_root, use_cache=False)
    index.refresh()
    (ledger_root / "shop/limits.py").unlink()
    (ledger_root / "shop/new.py").write_text("def fresh_function():\n    pass\n")
    stats = index.refresh()
    assert (stats.parsed, stats.removed) == (1, 1)
    assert "shop/limits.py" not in index.files
    assert index.symbols.by_name("fresh_function")


def test_two_indexes_of_one_workspace_are_identical(ledger_root):
    first, second = Index(ledger_root, use_cache=False), Index(ledger_root, use_cache=False)
    first.refresh()
    second.refresh()
    assert snapshot(first) == snapshot(second)


def test_chunk_at_returns_the_innermost_chunk(ledger_root):
    index = Index(ledger_root, use_cache=False)
    index.refresh()
    _, chunk = index.chunk_at("shop/ledger.py", 13)
    assert chunk.qualname == "Ledger.post"
    assert index.chunk_at("shop/ledger.py", 999) is None


def test_parallel_parse_equals_serial(tmp_path, monkeypatch):
    files = {f"pkg/mod_{i:03}.py": (f"import os\nfrom pkg import mod_{(i + 1) % 80:03} as nxt\n\n\n"
                                    f"class Shape{i}:\n    def area(self, x):\n        return nxt.function_{i}(x)\n\n\n"
                                    f"def function_{i}(x):\n    return os.path.join(x, '{i}')\n") for i in range(80)}
    root = write_tree(tmp_path / "many", files)
    pooled = Index(root, use_cache=False)
    pooled.refresh()
    monkeypatch.setattr("rag_lsp.index.root_index.POOL_THRESHOLD", 10_000)
    serial = Index(root, use_cache=False)
    serial.refresh()
    assert snapshot(pooled) == snapshot(serial)
    assert len(pooled.files) == 80
    assert {path: list(pooled.references[path]) for path in files} == {path: list(serial.references[path]) for path in files}
    assert pooled.imports == serial.imports
    assert {path: pooled.symbols.in_file(path) for path in files} == {path: serial.symbols.in_file(path) for path in files}
    assert pooled.imports["pkg/mod_000.py"][1].aliases == (("mod_001", "nxt"),)


def test_missing_root_raises(tmp_path):
    with pytest.raises(FileNotFoundError):
        Index(tmp_path / "absent", use_cache=False).refresh()


def test_an_edit_reindexes_only_the_chunks_whose_text_changed(ledger_root, monkeypatch):
    index = Index(ledger_root, use_cache=False)
    index.refresh()
    calls = []
    monkeypatch.setattr(index.bm25, "add", lambda doc_id, terms: calls.append(("add", doc_id)))
    monkeypatch.setattr(index.bm25, "remove", lambda doc_id: calls.append(("remove", doc_id)))
    text = (ledger_root / "shop/ledger.py").read_text()
    # Two lines inserted at the top move every chunk down but change only the first one.
    edited = text.replace('"""Double-entry ledger."""', '"""Double-entry ledger.\n\nNow audited."""')
    index.set_file("shop/ledger.py", edited)
    assert [kind for kind, _ in calls] == ["add", "remove"]
    post = next(c for c in index.chunks.values() if c.qualname == "Ledger.post")
    assert (post.start_line, post.end_line) == (13, 16)


def test_the_file_and_byte_budgets_keep_the_first_files_in_path_order(ledger_root):
    whole = Index(ledger_root, use_cache=False)
    assert whole.refresh().truncated is None and len(whole.files) == 6
    paths = sorted(whole.files)
    by_files = Index(ledger_root, use_cache=False, budget=IndexBudget(files=2))
    stats = by_files.refresh()
    assert (stats.files, stats.truncated) == (2, "files") and sorted(by_files.files) == paths[:2]
    assert any("truncated" in warning for warning in stats.warnings)
    first_two = sum((ledger_root / path).stat().st_size for path in paths[:2])
    by_bytes = Index(ledger_root, use_cache=False, budget=IndexBudget(bytes=first_two))
    assert (by_bytes.refresh().truncated, sorted(by_bytes.files)) == ("bytes", paths[:2])


def test_a_spent_time_budget_keeps_what_was_indexed_and_says_so(ledger_root):
    index = Index(ledger_root, use_cache=False)
    index.refresh()
    before = snapshot(index)
    (ledger_root / "shop/currency.py").write_text("def convert_all(amounts):\n    return amounts\n")
    index.budget = IndexBudget(seconds=1e-9)
    stats = index.refresh()
    assert stats.truncated == "seconds" and stats.files == 6
    assert snapshot(index) == before
    index.budget = IndexBudget()
    assert index.refresh().truncated is None and index.symbols.by_name("convert_all")


def test_a_refresh_pauses_the_collector_while_it_installs_and_restores_it(ledger_root, monkeypatch):
    seen = []
    install = Index._install
    monkeypatch.setattr(Index, "_install", lambda self, *args: (seen.append(gc.isenabled()), install(self, *args)))
    assert gc.isenabled()
    Index(ledger_root, use_cache=False).refresh()
    assert seen and not any(seen)
    assert gc.isenabled()
