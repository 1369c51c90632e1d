"""The index keeps chunks, BM25 and symbols in step across refreshes and single-file updates."""

import gc
import random

import numpy as np
import pytest
from conftest import write_tree

from rag_lsp.index.index_records import IndexBudget
from rag_lsp.index.parsing.parse import blob_id
from rag_lsp.index.root_index import Index
from rag_lsp.index.store.chunk_layout import Layout
from rag_lsp.index.terms import tokenize
from rag_lsp.model import Chunk

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


def test_files_defining_and_counting_a_names_definitions(tmp_path):
    # The code graph links a file to the files defining the names it uses while they are few (``code_links``).
    files = {f"pkg/m{i}.py": "def shared():\n    pass\n" for i in range(4)}
    files["pkg/many.py"] = "class A:\n    def twice(self):\n        pass\n\n\nclass B:\n    def twice(self):\n        pass\n"
    files["pkg/three.py"] = "def three():\n    pass\n"
    files["pkg/three_b.py"] = "def three():\n    pass\n"
    files["pkg/three_c.py"] = "def three():\n    pass\n"
    index = Index(write_tree(tmp_path / "ws", files), use_cache=False)
    index.refresh()
    symbols = index.symbols
    assert symbols.files_defining("twice", 3) == {"pkg/many.py"}  # two definitions, one file
    assert symbols.files_defining("three", 3) == {"pkg/three.py", "pkg/three_b.py", "pkg/three_c.py"}
    assert symbols.files_defining("three", 2) is None
    assert symbols.files_defining("shared", 3) is None and len(symbols.files_defining("shared", 4) or ()) == 4
    assert symbols.files_defining("absent", 3) == set()
    # Counting a name's definitions, as ``by_name`` would list them, without sorting them.
    for name in ("twice", "three", "shared", "absent"):
        assert symbols.count(name) == len(symbols.by_name(name))
    assert [symbols.count(name) for name in ("twice", "three", "shared", "absent")] == [2, 3, 4, 0]
    index.remove_file("pkg/three_c.py")
    assert symbols.count("three") == 2


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


def scanned_chunk_at(index: Index, path: str, line: int) -> int | None:
    """The innermost chunk over a line, found by walking the file's chunks (what the layout must answer)."""
    covering = [(c.end_line - c.start_line, position, cid) for position, (cid, c) in enumerate(index.chunks_of(path))
                if c.start_line <= line <= c.end_line]
    return min(covering)[2] if covering else None


def scanned_definition_chunk(index: Index, definition) -> int | None:
    for chunk_id, chunk in index.chunks_of(definition.path):
        if chunk.qualname == definition.qualname and chunk.start_line >= definition.start_line:
            return chunk_id
    return scanned_chunk_at(index, definition.path, definition.start_line)


def assert_layouts_answer_as_a_scan(index: Index) -> None:
    # The layouts answer first, before the scans build any chunk, so that a warm index's come from its columns.
    lines = range(40)
    definitions = {path: index.symbols.in_file(path) for path in sorted(index.files)}
    found = {path: ([index.chunk_at(path, line) for line in lines], [index.definition_chunk(d) for d in found_in])
                    for path, found_in in definitions.items()}
    assert max(c.end_line for c in index.chunks.values()) < lines[-1]
    for path, (at_lines, starting) in found.items():
        assert [f[0] if f else None for f in at_lines] == [scanned_chunk_at(index, path, line) for line in lines]
        assert starting == [scanned_definition_chunk(index, d) for d in definitions[path]]


def test_line_and_definition_lookups_follow_each_version_of_a_file(ledger_root, tmp_path):
    index = Index(ledger_root, cache_root=tmp_path / "cache")
    index.refresh()
    assert_layouts_answer_as_a_scan(index)
    # Lookups made the layouts; an edit that moves every definition down must not be answered from them.
    source = (ledger_root / "shop/ledger.py").read_text()
    index.set_file("shop/ledger.py", "import os\n\n\n" + source.replace("def post", "def post_entry"))
    assert_layouts_answer_as_a_scan(index)
    assert index.chunk_at("shop/ledger.py", 16)[1].qualname == "Ledger.post_entry"
    index.save()
    warm = Index(ledger_root, cache_root=tmp_path / "cache")
    warm.refresh()
    assert_layouts_answer_as_a_scan(warm)


def test_a_layout_answers_as_a_scan_of_nested_and_tied_chunks():
    # Nested chunks, chunks of equal length over one line, and a definition split over several chunks:
    # what the ledger's flat chunks do not show.
    rng = random.Random(7)
    for _ in range(200):
        chunks = []
        for chunk_id in range(rng.randint(1, 12)):
            start = rng.randint(1, 30)
            chunks.append((chunk_id * 3, Chunk("a.py", start, start + rng.randint(0, 8), 0, 0, None,
                                               rng.choice(["A", "A.f", "B"]), "code", "python", "", "")))
        layout = Layout.of([cid for cid, _ in chunks], (np.array([c.start_line for _, c in chunks]),
                                                         np.array([c.end_line for _, c in chunks]),
                                                         [c.qualname for _, c in chunks]))
        for line in range(40):
            covering = [(c.end_line - c.start_line, position, cid) for position, (cid, c) in enumerate(chunks)
                        if c.start_line <= line <= c.end_line]
            assert layout.innermost(line) == (min(covering)[2] if covering else None)
            for qualname in ("A", "A.f", "B", "C"):
                first = next((cid for cid, c in chunks if c.qualname == qualname and c.start_line >= line), None)
                assert layout.starting(qualname, line) == first


def test_parallel_parse_equals_serial(tmp_path, monkeypatch):
    files = {f"pkg/mod_{i:03}.py": (f"import os\nfrom pkg import mod_{(i + 1) % 80:03} as nxt\n\n\n"
                                    f"class Shape{i}:\n    def area(self, x):\n        return nxt.function_{i}(x)\n\n\n"
                                    f"def function_{i}(x):\n    return os.path.join(x, '{i}')\n") for i in range(80)}
    root = write_tree(tmp_path / "many", files)
    # A refresh parses from the text and the blob id of the bytes on disk, which a byte-order mark is part of.
    with_bom = b"\xef\xbb\xbfdef marked():\n    return 1\n"
    (root / "pkg" / "marked.py").write_bytes(with_bom)
    # Read only when its turn to be parsed comes, and refused then.
    (root / "pkg" / "packed.py").write_bytes(b"\x00\x01\x02 not text")
    pooled = Index(root, use_cache=False)
    reported: list[tuple[int, int]] = []
    pooled_stats = pooled.refresh(progress=lambda done, total: reported.append((done, total)))
    # Every walked file is done at the end, the one refused as it was read included.
    assert reported[-1] == (82, 82) and reported == sorted(reported)
    monkeypatch.setattr("rag_lsp.index.root_index.POOL_THRESHOLD", 10_000)
    serial = Index(root, use_cache=False)
    serial_stats = serial.refresh()
    for index, stats in ((pooled, pooled_stats), (serial, serial_stats)):
        assert "pkg/packed.py" in index.rejected and "pkg/packed.py" not in index.files
        assert stats.skipped["binary"] == 1 and not stats.truncated
    assert snapshot(pooled) == snapshot(serial)
    assert len(pooled.files) == 81
    assert pooled.files["pkg/marked.py"].blob_id == serial.files["pkg/marked.py"].blob_id == blob_id(with_bom)
    assert pooled.symbols.in_file("pkg/marked.py")[0].name == "marked"
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
