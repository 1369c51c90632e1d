"""The references a snapshot holds stay columns and are made into objects when asked for; what they answer must
be what the parsed files' own lists say, before and after files are installed over them or removed."""

import threading

import numpy as np
from conftest import write_tree

from rag_lsp.index.enclosing import ON_IMPORT, TOP_LEVEL
from rag_lsp.index.parsing.parse import parse_file
from rag_lsp.index.root_index import Index
from rag_lsp.index.store.reference_table import ReferenceColumns, ReferenceMap, StoredReferences
from rag_lsp.index.tables import workspace_tables
from rag_lsp.model import Reference

FILES = {
    "a.py": [Reference("run", "a.py", 3), Reference("Ledger", "a.py", 1, "base"), Reference("run", "a.py", 9)],
    "b.py": [],
    "c.py": [Reference("post", "c.py", 2), Reference("run", "c.py", 4), Reference("post", "c.py", 7)],
}


def stored(files: dict[str, list[Reference]]) -> StoredReferences:
    """Columns as the snapshot writes them: a file's rows together, in file order."""
    strings = sorted({r.name for refs in files.values() for r in refs} | {r.kind for refs in files.values() for r in refs})
    number = {s: i for i, s in enumerate(strings)}
    rows = [(i, number[r.name], r.line, number[r.kind]) for i, refs in enumerate(files.values()) for r in refs]
    return StoredReferences(columns(rows, [TOP_LEVEL] * len(rows)), strings, list(files))


def columns(rows: list[tuple[int, int, int, int]], owners: list[int]) -> ReferenceColumns:
    """(file, name, line, kind) rows and their owners as the snapshot stores them."""
    table = np.array(rows, dtype=np.int32).reshape(-1, 4)
    return ReferenceColumns(*table.T.copy(), np.array(owners, dtype=np.int32))


def test_stored_references_answer_what_the_lists_say():
    table = stored(FILES)
    assert {path: table.of(path) for path in FILES} == FILES
    assert list(table.files()) == ["a.py", "c.py"] and not table.holds("b.py")
    for name in ("run", "post", "Ledger"):
        grouped = {path: [r for r in refs if r.name == name] for path, refs in FILES.items()}
        assert table.uses_of(name) == {path: refs for path, refs in grouped.items() if refs}
        assert table.files_of(name) == [path for path, refs in grouped.items() if refs]
    assert list(table.uses_of("run")) == ["a.py", "c.py"] and table.uses_of("no_such_name") == {}
    assert table.files_of("no_such_name") == []
    assert stored({}).uses_of("run") == {} and len(stored({})) == 0


def test_uses_of_every_name_in_a_random_table_are_the_lists_own(monkeypatch):
    # Names spread over many files, in and out of order within a file: the rows read in name order must give
    # each name's uses grouped by file in the snapshot's order, each file's in its own order.
    rng = np.random.default_rng(7)
    names = [f"name{i}" for i in range(40)]
    files = {f"f{number:03}.py": [Reference(names[int(rng.integers(0, 40) ** 2 // 40)], f"f{number:03}.py",
                                            int(rng.integers(1, 500)), "call" if rng.random() < 0.8 else "base")
                                  for _ in range(int(rng.integers(0, 30)))]
             for number in range(60)}
    # The first name asked for starts the sort in a thread; held back here, every name of the first round is
    # found by scanning the name column, and every name of the second in name order.
    release = threading.Event()
    sort = StoredReferences._sort
    monkeypatch.setattr(StoredReferences, "_sort", lambda self: (release.wait(), sort(self)))
    table = stored(files)
    for ordered in (False, True):
        for name in names:
            grouped = {path: [r for r in refs if r.name == name] for path, refs in files.items()}
            assert table.files_of(name) == [path for path, refs in grouped.items() if refs]
            assert table.uses_of(name) == {path: refs for path, refs in grouped.items() if refs}
        assert (table._name_rows is not None) is ordered
        release.set()
        table._sorting.join()


def test_files_installed_or_removed_hide_the_snapshot_rows():
    references = ReferenceMap(stored(FILES))
    assert dict(references) == {"a.py": FILES["a.py"], "c.py": FILES["c.py"]}
    mine = [Reference("audit", "a.py", 1)]
    references["a.py"] = mine
    assert references["a.py"] is mine and not references.is_stored("a.py") and references.is_stored("c.py")
    assert references.pop("c.py") == FILES["c.py"] and "c.py" not in references
    assert references.get("c.py") is None and dict(references) == {"a.py": mine}
    references["new.py"] = []
    assert sorted(references) == ["a.py", "new.py"] and len(references) == 2


def test_an_index_serves_each_files_own_references_warm_and_after_edits(ledger_root):
    Index(ledger_root).refresh()
    index = Index(ledger_root)
    index.refresh()
    assert index.references.stored is not None

    def parsed() -> dict[str, list[Reference]]:
        found = {path: parse_file(path, (ledger_root / path).read_text()).references for path in sorted(index.files)}
        return {path: refs for path, refs in found.items() if refs}

    assert {path: list(index.references[path]) for path in index.references} == parsed()
    tables = workspace_tables(index)
    assert tables.use_files("convert") == 1
    asked = tables.uses("convert")
    assert list(asked) == ["shop/ledger.py"] and [r.name for r in asked["shop/ledger.py"]] == ["convert"]
    assert list(tables.uses("toFixed")) == ["web/format.ts"]
    (ledger_root / "shop/audit.py").write_text("def audit(ledger):\n    return convert(ledger, 1)\n")
    index.set_file("shop/audit.py", (ledger_root / "shop/audit.py").read_text())
    index.remove_file("web/format.ts")
    (ledger_root / "web/format.ts").unlink()
    assert {path: list(index.references[path]) for path in index.references} == parsed()
    tables = workspace_tables(index)
    # Counted before the uses are made (a file installed since the snapshot, one from it), then after.
    assert tables.use_files("convert") == 2 and tables.use_files("toFixed") == 0
    expected = {path: [r for r in refs if r.name == "convert"] for path, refs in parsed().items()}
    assert tables.uses("convert") == {path: refs for path, refs in expected.items() if refs}
    assert sorted(tables.uses("convert")) == ["shop/audit.py", "shop/ledger.py"] and tables.uses("toFixed") == {}
    assert tables.use_files("convert") == 2


def test_a_save_serves_the_references_from_the_new_snapshot(tmp_path):
    root = write_tree(tmp_path / "ws", {"m.py": "def f():\n    g()\n", "n.py": "def g():\n    f()\n"})
    index = Index(root)
    index.refresh()
    index.set_file("m.py", "def f():\n    h()\n")
    assert not index.references.is_stored("m.py")
    index.save()
    assert index.references.is_stored("m.py") and [r.name for r in index.references["m.py"]] == ["h"]


def test_first_uses_are_each_owners_lowest_line_per_file_without_import_lines():
    # Rows of a file in any line order; a line's owner is one (as the enclosing definition is), some on import
    # lines. Each file's first uses: per owner its lowest line, in line order, files in the snapshot's order.
    rng = np.random.default_rng(11)
    files = {f"f{number:02}.py": [Reference(f"name{int(rng.integers(0, 4))}", f"f{number:02}.py", int(rng.integers(1, 90)))
                                  for _ in range(int(rng.integers(0, 25)))]
             for number in range(30)}
    strings = [f"name{i}" for i in range(4)] + ["call"]
    rows = [(i, strings.index(r.name), r.line, 4) for i, refs in enumerate(files.values()) for r in refs]
    owner_of = {line: ON_IMPORT if line % 11 == 0 else TOP_LEVEL if line % 7 == 0 else line // 10 for line in range(90)}
    table = StoredReferences(columns(rows, [owner_of[line] for _, _, line, _ in rows]), strings, list(files))
    for name in strings[:4]:
        expected = {}
        for path, refs in files.items():
            firsts: dict[int, int] = {}
            for line in sorted(r.line for r in refs if r.name == name and owner_of[r.line] != ON_IMPORT):
                firsts.setdefault(owner_of[line], line)
            if firsts:
                expected[path] = sorted((line, owner) for owner, line in firsts.items())
        assert table.first_uses(name) == expected
        assert list(table.first_uses(name)) == list(expected)
