"""A warm start takes shortcuts (files rejected for their content are not read again while their size and
mtime hold; bulk builds run with the garbage collector paused); what it ends with must equal what a fresh
index of the same files builds: the lookup tables, the code graph and the counts of files left out."""

import shutil
from collections import Counter
from pathlib import Path, PurePosixPath

import numpy as np
import pytest
from conftest import write_tree

from rag_lsp.index import root_index
from rag_lsp.index.root_index import Index
from rag_lsp.index.store import import_table
from rag_lsp.index.store import snapshot as snapshot_format
from rag_lsp.index.store.code_links import MAX_DEFINITIONS, file_links
from rag_lsp.index.store.import_table import StoredImports
from rag_lsp.index.store.snapshot_file import SnapshotError, SnapshotFile, SnapshotWriter
from rag_lsp.index.tables import WorkspaceTables, workspace_tables
from rag_lsp.index.terms import tokenize
from rag_lsp.model import Import
from rag_lsp.retrieval.ranking.centrality import graph

POLYGLOT = Path(__file__).resolve().parents[1] / "fixtures" / "polyglot"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = shutil.copytree(POLYGLOT, tmp_path / "ws")
    (root / "assets").mkdir()
    (root / "assets" / "logo.txt").write_bytes(b"GIF89a\0\0\x01")
    (root / "scripts" / "latin1.py").write_bytes("# caf\xe9\n".encode("latin-1"))
    for odd in ("Makefile", "docs/v1.2/release.notes.md", ".github/workflows/ci.yml", "a/b/c/d/deep_file.py"):
        (root / odd).parent.mkdir(parents=True, exist_ok=True)
        (root / odd).write_text("build: all\n")
    return root


# How the tables hold the uses of names differs by design: a warm start reads which files use a name from the
# snapshot's columns, a fresh index from its files' lists. What they answer (``uses``) must be the same.
_HOW_USES_ARE_HELD = ("_users", "_references", "_used_in", "_stored", "_from_stored")


def derived(index: Index) -> dict:
    """The lookup tables' contents and answers, each file's references and the code graph, independent of
    entry objects."""
    with index.lock:
        found = workspace_tables(index)
        tables = vars(found)
        references = {path: list(index.references[path]) for path in sorted(index.references)}
        names = sorted({r.name for found_in in references.values() for r in found_in})
        uses = {name: found.uses(name) for name in names}
        built = graph(index)
    kept = {name: value for name, value in tables.items()
            if name not in ("_entries", "_version", "_memo", "_uses", "_by_directory", *_HOW_USES_ARE_HELD)}
    return {**kept, "paths": sorted(tables["_entries"]), "references": references, "uses": uses,
            "neighbours": built.neighbours, "centrality": built.centrality, "graph paths": built.paths}


def fresh(root: Path) -> Index:
    index = Index(root, use_cache=False)
    index.refresh()
    return index


def warm(root: Path) -> Index:
    index = Index(root)
    index.refresh()
    return index


def test_a_warm_start_builds_the_tables_and_graph_of_a_fresh_index(workspace):
    Index(workspace).refresh()
    assert derived(warm(workspace)) == derived(fresh(workspace))


def test_tables_synced_during_a_refresh_let_go_of_the_references_the_index_moved_into_its_files(
        tmp_path, monkeypatch):
    # Questions during a refresh bring the tables up to date with what is indexed, while the index holds the
    # references as objects; its spills and its snapshot then take them. The tables read them from there too,
    # holding none as objects once the refresh is done, and answer as a fresh index's tables do.
    monkeypatch.setattr(root_index, "SPILL_MIN_CHUNKS", 20)
    monkeypatch.setattr(root_index, "REFRESH_BATCH", 16)
    files = {f"pkg/mod_{i:03}.py": f"from pkg.mod_{(i + 1) % 150:03} import helper_{(i + 1) % 150}\n\n"
             f"def helper_{i}(x):\n    return helper_{(i + 1) % 150}(x) + shared(x)\n" for i in range(150)}
    root = write_tree(tmp_path / "many", files)
    index = Index(root)
    held = []

    def ask(done: int, total: int) -> None:
        with index.lock:
            tables = workspace_tables(index)
            held.append(len(tables._used_in))
            assert len(tables.uses("shared")) == len(tables._entries)

    index.refresh(progress=ask)
    assert max(held) > 0 and min(held) < max(held)
    tables = workspace_tables(index)
    assert not tables._references and not tables._used_in and not tables._users
    assert derived(index) == derived(fresh(root))


def test_the_path_tables_say_what_pathlib_says(workspace):
    """The tables split paths by string slicing; ``PurePosixPath`` is the reference."""
    tables = vars(workspace_tables(warm(workspace)))
    pure = {path: PurePosixPath(path) for path in tables["_entries"]}
    assert "docs/v1.2/release.notes.md" in pure and "Makefile" in pure
    parents = {path: [str(parent) for parent in list(p.parents)[:-1]] for path, p in pure.items()}
    assert tables["_dir_files"] == Counter(directory for found in parents.values() for directory in found)
    assert tables["_dirs_by_name"] == _grouped((d.rsplit("/", 1)[-1], d) for found in parents.values() for d in found)
    assert tables["_by_name"] == _grouped((p.name, path) for path, p in pure.items())
    assert tables["_words_of"] == {path: tuple(sorted(set(tokenize(str(p.with_suffix(""))))))
                                   for path, p in pure.items()}
    assert tables["_name_words_of"] == {path: tuple(sorted(set(tokenize(p.stem)) | set(tokenize(p.parent.name))))
                                        for path, p in pure.items()}


def test_the_uses_of_a_name_are_its_references_grouped_by_file_after_edits_too(workspace):
    """Uses are picked out of the files' references when asked for; grouping every reference is the reference."""
    index = warm(workspace)
    tables = workspace_tables(index)
    # Asked for before the edits, so that what is remembered must be forgotten.
    asked = {name: tables.uses(name) for name in ("audit", "run_jobs", "check_rate", "includes")}
    assert any(asked.values())
    index.set_file("scripts/run_jobs.py", "def run_jobs(limiter):\n    return audit(limiter)\n")
    index.remove_file("scripts/firewall.py")
    tables = workspace_tables(index)
    grouped: dict[str, dict[str, list]] = {}
    for path in index.files:
        for reference in index.references.get(path, ()):
            grouped.setdefault(reference.name, {}).setdefault(path, []).append(reference)
    assert "audit" in grouped
    for name, expected in grouped.items():
        assert tables.uses(name) == expected and list(tables.uses(name)) == list(expected)
    assert tables.uses("no_such_name") == {}


def answers_of(tables: WorkspaceTables, index: Index) -> dict:
    """What tables answer, in order: every name's uses (by file, in the tables' order) and the path lookups."""
    names = sorted({r.name for path in index.files for r in index.references.get(path, ())} | {"gone_name"})
    kept = {key: value for key, value in vars(tables).items()
            if key not in ("_version", "_memo", "_path_memo", "_uses", "_stored", "_from_stored", "_references",
                           "_users", "_used_in", "_entries", "_by_directory")}
    return {"uses": {name: list(tables.uses(name).items()) for name in names}, "paths": sorted(tables._entries),
            **kept}


def test_tables_brought_up_to_date_from_the_journal_equal_tables_compared_file_by_file(workspace):
    # Questions after edits bring the tables up to date from the files the index's journal names, forgetting
    # only the uses of the names those files used; a second set of tables compares every file.
    index = warm(workspace)
    tables = workspace_tables(index)
    names = sorted({r.name for path in index.files for r in index.references.get(path, ())})
    for name in names:
        tables.uses(name)
    edits = [lambda: index.set_file("scripts/run_jobs.py", "def run_jobs(limiter):\n    return audit(limiter)\n"),
             lambda: (index.set_file("scripts/firewall.py", "def gone_name():\n    return check_rate(1)\n"),
                      index.set_file("scripts/new_job.py", "def new_job():\n    return run_jobs(gone_name)\n")),
             lambda: index.remove_file("scripts/firewall.py"),
             lambda: (index.set_file("scripts/new_job.py", "def new_job():\n    return 2\n"),
                      index.set_file("scripts/run_jobs.py", "def run_jobs(limiter):\n    return includes(limiter)\n"))]
    for edit in edits:
        edit()
        assert index.changed_since(tables._version)
        synced = workspace_tables(index)
        compared = WorkspaceTables()
        compared.sync(index)
        assert answers_of(synced, index) == answers_of(compared, index)


def test_the_journal_names_each_change_until_it_cannot_reach_back(ledger_root, tmp_path, monkeypatch):
    index = Index(ledger_root, cache_root=tmp_path / "cache")
    index.refresh()
    start = index.version
    index.set_file("shop/ledger.py", "def post():\n    return 1\n")
    index.set_file("shop/ledger.py", "def post():\n    return 1\n")  # The same text is no change.
    index.set_file("shop/new.py", "x = 1\n")
    index.remove_file("shop/limits.py")
    assert index.changed_since(start) == ["shop/ledger.py", "shop/new.py", "shop/limits.py"]
    assert index.changed_since(index.version) == []
    assert index.changed_since(None) is None and index.changed_since((start[0] + 1, start[1])) is None
    monkeypatch.setattr(root_index, "JOURNAL_CHANGES", 2)
    middle = index.version
    index.set_file("shop/new.py", "x = 2\n")
    assert index.changed_since(middle) is None
    index.save()
    again = Index(ledger_root, cache_root=tmp_path / "cache")
    again.refresh()
    assert again.changed_since(again.version) == [] and again.changed_since((again.version[0], 0)) is None


def test_what_is_derived_from_the_paths_alone_outlives_an_edit_and_not_a_new_file(workspace):
    index = warm(workspace)
    built = []

    def derive():
        tables = workspace_tables(index)
        return (tables.memo("by paths", lambda: built.append("paths") or len(tables.paths), paths_only=True),
                tables.memo("by content", lambda: built.append("content") or len(index.files)))

    assert derive() == derive() and built == ["paths", "content"]
    index.set_file("scripts/run_jobs.py", "def run_jobs(limiter):\n    return limiter\n")
    derive()
    assert built == ["paths", "content", "content"]
    index.set_file("scripts/new_job.py", "def new_job():\n    return 1\n")
    assert derive()[0] == len(index.files) and built[3:] == ["paths", "content"]
    index.remove_file("scripts/new_job.py")
    assert derive()[0] == len(index.files) and built[5:] == ["paths", "content"]


def test_the_symbol_table_answers_from_the_definitions_of_the_files_after_edits_too(workspace):
    """Names hold one definition or a set of them; the reference is every file's definitions grouped by name."""
    Index(workspace).refresh()
    index = warm(workspace)
    # A name defined twice in one file, a file that defines nothing any more, a removed file, a new name.
    index.set_file("scripts/run_jobs.py", "def audit():\n    pass\n\n\ndef audit():\n    pass\n\n\nclass Jobs:\n"
                   "    def run(self):\n        pass\n")
    index.set_file("scripts/limits/rate_limiter.py", "x = 1\n")
    index.remove_file("scripts/firewall.py")
    index.set_file("scripts/run_jobs.py", "def audit():\n    pass\n\n\nclass Jobs:\n    def run(self):\n        pass\n")
    every = [d for path in index.files for d in index.symbols.in_file(path)]
    order = lambda d: (d.path, d.start_line, d.qualname)
    by_name = {d.name: sorted({e for e in every if e.name == d.name}, key=order) for d in every}
    assert set(index.symbols.names()) == set(by_name) and "audit" in by_name and "Jobs.run" in {d.qualname for d in every}
    for name, expected in by_name.items():
        assert index.symbols.by_name(name) == expected
    for qualname in {d.qualname for d in every}:
        assert index.symbols.lookup(qualname) == sorted({e for e in every if e.qualname == qualname}, key=order)
    assert index.symbols.by_name("no_such_name") == [] and index.symbols.lookup("no_such_name") == []


def module_map(index: Index) -> dict:
    """What the module map holds per file (its keys, family, directory flag, hint) and by last segment."""
    found = vars(index.symbols.modules)
    return {name: found[name] for name in ("_by_last", "_keys", "_family", "_directory", "_hints")}


def test_a_warm_start_builds_the_module_map_of_a_fresh_index_in_bulk(workspace):
    """The snapshot's files are registered in one pass (``ModuleMap.load``): the same map ``add`` builds file by
    file, Java package aliases included, and it resolves the same after an edit."""
    (workspace / "src" / "main" / "java" / "com" / "acme").mkdir(parents=True)
    (workspace / "src" / "main" / "java" / "com" / "acme" / "Orders.java").write_text(
        "package com.acme.shop;\n\npublic class Orders {}\n")
    Index(workspace).refresh()
    index = warm(workspace)
    assert index.stats.parsed == 0 and "src/main/java/com/acme/Orders.java" in index.symbols.modules._hints
    assert module_map(index) == module_map(fresh(workspace))
    assert index.symbols.modules.resolve("com.acme.shop.Orders") == ["src/main/java/com/acme/Orders.java"]
    index.set_file("scripts/run_jobs.py", "def run_jobs(limiter):\n    return audit(limiter)\n")
    (workspace / "scripts" / "run_jobs.py").write_text("def run_jobs(limiter):\n    return audit(limiter)\n")
    assert module_map(index) == module_map(fresh(workspace))


def imports(index: Index) -> dict:
    return {path: index.imports[path] for path in sorted(index.imports)}


def test_the_imports_stay_in_the_snapshot_and_equal_a_fresh_index_s_after_edits_too(workspace):
    """A warm start reads each file's imports from the snapshot when asked for; installed and removed files lie
    over them, and a save serves them from the new snapshot."""
    Index(workspace).refresh()
    (workspace / "scripts" / "audit.py").write_text("from scripts.limits import rate_limiter as rl\nimport os\n")
    (workspace / "scripts" / "firewall.py").unlink()
    index = warm(workspace)
    assert index.imports.stored is not None and index.imports.is_stored("scripts/run_jobs.py")
    assert imports(index) == imports(fresh(workspace)) and "scripts/audit.py" in index.imports
    index.set_file("scripts/run_jobs.py", "from scripts.audit import rl\n")
    (workspace / "scripts" / "run_jobs.py").write_text("from scripts.audit import rl\n")
    index.remove_file("scripts/audit.py")
    (workspace / "scripts" / "audit.py").unlink()
    assert not index.imports.is_stored("scripts/run_jobs.py") and "scripts/audit.py" not in index.imports
    assert imports(index) == imports(fresh(workspace))
    index.save()
    assert index.imports.is_stored("scripts/run_jobs.py") and imports(index) == imports(fresh(workspace))


def test_an_import_record_reads_back_and_a_damaged_one_reads_as_none():
    found = [Import("pkg.mod", "a.py", 3, ("x", "y"), (("x", "z"),)), Import("os", "a.py", 1, (), ())]
    record = import_table.encode(found)
    table = StoredImports(record + record[:5], np.array([0, len(record), len(record), len(record) + 5]),
                          ["a.py", "b.py", "c.py"])
    assert table.of("a.py") == found and list(table.files()) == ["a.py", "c.py"] and not table.holds("b.py")
    assert table.of("b.py") == [] and table.of("c.py") == []
    # The lines alone, read without making the imports, and what an import map answers stored or installed.
    assert table.lines_of("a.py") == {3, 1} and table.lines_of("b.py") == table.lines_of("c.py") == frozenset()
    imports = import_table.ImportMap(table)
    imports["b.py"] = [Import("os", "b.py", 7, (), ())]
    assert [imports.lines_of(path) for path in ("a.py", "b.py", "c.py", "d.py")] == [{1, 3}, {7}, set(), set()]


def _grouped(pairs) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for key, value in pairs:
        found.setdefault(key, set()).add(value)
    return found


def test_after_edits_between_runs_the_warm_tables_and_graph_equal_a_fresh_index(workspace):
    Index(workspace).refresh()
    limiter = workspace / "scripts" / "limits" / "rate_limiter.py"
    limiter.write_text(limiter.read_text().replace("class ", "class Renamed", 1))
    (workspace / "scripts" / "firewall.py").unlink()
    (workspace / "scripts" / "audit.py").write_text("from scripts.limits.rate_limiter import *\n\n\n"
                                                    "def audit(limiter):\n    return run_jobs(limiter)\n")
    index = warm(workspace)
    assert index.stats.parsed == 2 and index.stats.removed == 1
    assert derived(index) == derived(fresh(workspace))
    # And after an edit in the same process, which updates the tables and the graph in place.
    index.set_file("scripts/run_jobs.py", "def run_jobs(limiter):\n    return audit(limiter)\n")
    (workspace / "scripts" / "run_jobs.py").write_text("def run_jobs(limiter):\n    return audit(limiter)\n")
    assert derived(index) == derived(fresh(workspace))


def test_files_rejected_for_their_content_are_not_read_again_while_unchanged(workspace, monkeypatch):
    first = Index(workspace).refresh()
    assert (first.skipped["binary"], first.skipped["non_utf8"]) == (1, 1)
    read: list[str] = []
    real_load = root_index.load
    monkeypatch.setattr(root_index, "load", lambda walked, *args: read.append(walked.path) or real_load(walked, *args))
    again = Index(workspace).refresh()
    assert read == [] and again.skipped == first.skipped and again.skip_examples == first.skip_examples

    # A changed file is read again; one that became text is indexed, and the one deleted is forgotten.
    (workspace / "assets" / "logo.txt").write_text("a logo, described\n")
    (workspace / "scripts" / "latin1.py").unlink()
    index = Index(workspace)
    stats = index.refresh()
    assert read == ["assets/logo.txt"] and "assets/logo.txt" in index.files
    assert (stats.skipped["binary"], stats.skipped["non_utf8"]) == (0, 0) and index.rejected == {}

    # Still binary but changed: read once, and remembered with its new size.
    (workspace / "assets" / "logo.txt").write_bytes(b"GIF89a\0\0\x01\x02")
    assert Index(workspace).refresh().skipped["binary"] == 1
    assert Index(workspace).rejected == {}  # nothing loaded until a refresh
    read.clear()
    reloaded = Index(workspace)
    assert reloaded.refresh().skipped["binary"] == 1 and read == []
    size = (workspace / "assets" / "logo.txt").stat().st_size
    assert reloaded.rejected["assets/logo.txt"][::2] == (size, "binary")


def test_a_warm_start_loads_the_links_it_saved_and_they_equal_a_rebuild(workspace):
    Index(workspace).refresh()
    index = warm(workspace)
    # Loaded, not computed: no file's names were derived.
    assert index.links is not None and index.links.basis is not None and not index.links.names.defined
    loaded = dict(index.links.out)
    rebuilt = fresh(workspace)
    with rebuilt.lock:
        assert loaded == file_links(rebuilt).out
    assert any(loaded.values())


def _rewrite(path: Path, meta: dict | None = None, arrays: dict | None = None) -> None:
    """Copy a snapshot over itself with some metadata or arrays replaced."""
    source = SnapshotFile(path)
    writer = SnapshotWriter(path)
    for name in sorted(source.names()):
        try:
            writer.array(name, (arrays or {}).get(name, source.array(name)))
        except SnapshotError:
            writer.blob(name, bytes(source.blob(name)))
    writer.commit({**source.meta, **(meta or {})}).close()


@pytest.mark.parametrize("change", ["link out of range", "links cut short", "owner out of range",
                                    "reference columns of unequal lengths", "older format"])
def test_a_snapshot_with_bad_links_or_references_or_an_older_format_is_rebuilt(workspace, change):
    first = Index(workspace)
    first.refresh()
    path = first.cache.snapshot_path
    first.close()
    targets = SnapshotFile(path).array("link_targets")
    owners = SnapshotFile(path).array("reference_owners")
    if change == "link out of range":
        _rewrite(path, arrays={"link_targets": np.full_like(targets, 10_000)})
    elif change == "links cut short":
        _rewrite(path, arrays={"link_targets": targets[:-1].copy()})
    elif change == "owner out of range":
        _rewrite(path, arrays={"reference_owners": np.full_like(owners, -7)})
    elif change == "reference columns of unequal lengths":
        _rewrite(path, arrays={"reference_owners": owners[:-1].copy()})
    else:
        _rewrite(path, meta={"format": snapshot_format.FORMAT - 1})
    index = Index(workspace)
    stats = index.refresh()
    assert stats.reused == len(index.files) and stats.parsed == 0
    assert any("snapshot" in warning for warning in stats.warnings) == (change != "older format")
    assert derived(index) == derived(fresh(workspace))
    assert Index(workspace).refresh().reused == len(index.files)


def test_links_loaded_from_a_snapshot_follow_edits_of_contents_only(workspace):
    """No file added or removed: the loaded links are updated in place, from the names the snapshot's files
    had (a renamed class loses its users' links), between runs and then in the same process; only the changed
    files' names are derived (the others' users are read from the snapshot's columns)."""
    Index(workspace).refresh()
    limiter = workspace / "scripts" / "limits" / "rate_limiter.py"
    limiter.write_text(limiter.read_text().replace("class FixedWindow", "class SlidingWindow"))
    index = warm(workspace)
    assert index.stats.parsed == 1 and index.links is not None
    assert set(index.links.names.defined) == {"scripts/limits/rate_limiter.py"}
    assert derived(index) == derived(fresh(workspace))

    again = warm(workspace)
    assert again.links is not None and not again.links.names.defined
    firewall = (workspace / "scripts" / "firewall.py").read_text().replace("class Firewall", "class Gate")
    again.set_file("scripts/firewall.py", firewall)
    (workspace / "scripts" / "firewall.py").write_text(firewall)
    assert derived(again) == derived(fresh(workspace))
    assert set(again.links.names.defined) == {"scripts/firewall.py"}


def test_links_follow_a_name_whose_definers_cross_the_bound(tmp_path):
    """A name defined in more than ``MAX_DEFINITIONS`` files links nothing: its users' links change when an edit
    takes its definers across that bound, one file at a time or several in one update (the update skips the
    users of names defined too widely both before and after)."""
    files = {f"pkg/d{i}.py": ("def shared():\n    return 1\n" if i < MAX_DEFINITIONS else "x = 1\n")
             for i in range(MAX_DEFINITIONS + 3)}
    files["pkg/user.py"] = "def use():\n    return shared()\n"
    root = write_tree(tmp_path / "ws", files)
    Index(root).refresh()
    index = warm(root)

    def links_of_user() -> frozenset[str]:
        with index.lock:
            return file_links(index).out["pkg/user.py"]

    assert links_of_user() == {f"pkg/d{i}.py" for i in range(MAX_DEFINITIONS)}
    index.set_file(f"pkg/d{MAX_DEFINITIONS}.py", "def shared():\n    return 2\n")
    assert links_of_user() == set()
    index.set_file(f"pkg/d{MAX_DEFINITIONS}.py", "x = 1\n")
    assert links_of_user() == {f"pkg/d{i}.py" for i in range(MAX_DEFINITIONS)}
    # Three definers more in one update: six, from three.
    for i in range(MAX_DEFINITIONS, MAX_DEFINITIONS + 3):
        index.set_file(f"pkg/d{i}.py", "def shared():\n    return 3\n")
    assert links_of_user() == set()
    for i in range(MAX_DEFINITIONS, MAX_DEFINITIONS + 3):
        index.set_file(f"pkg/d{i}.py", "x = 1\n")
    assert links_of_user() == {f"pkg/d{i}.py" for i in range(MAX_DEFINITIONS)}


@pytest.mark.parametrize("edit", ["changed", "removed"])
def test_an_edit_between_a_save_s_links_and_its_writing_is_written_too(workspace, monkeypatch, edit):
    """A save lets a waiting thread take the index's lock between its links and its writing; an edit made
    then (an editor's buffer changed, a file deleted) is in the snapshot, postings and links included."""
    index = warm(workspace)
    path = "scripts/firewall.py"
    text = (workspace / path).read_text() + "\n\ndef zqx_meanwhile():\n    return 1\n"
    linked = []

    def links_then_edit(self: Index) -> None:
        file_links(self)
        if not linked:
            if edit == "changed":
                self.set_file(path, text)
            else:
                self.remove_file(path)
        linked.append(bool(self.bm25.pending) or self.bm25.segment.live < len(self.bm25.segment.alive))

    monkeypatch.setattr("rag_lsp.index.root_index.file_links", links_then_edit)
    index.save()
    # The edit left BM25 documents to merge after the links were first brought up to date; the writing merged
    # them, and the index is served from the written segment.
    assert linked == [True, True] and not index.bm25.pending
    assert index.cache is not None
    loaded = snapshot_format.load(SnapshotFile(index.cache.snapshot_path), index._snapshot_identity())
    files = {f.path: f for f in loaded.files}
    assert len(loaded.segment.doc_ids) == sum(len(f.chunk_ids) for f in loaded.files) == len(index.bm25)
    if edit == "changed":
        assert files[path].blob_id == index.files[path].blob_id
        assert loaded.segment.df("zqx") == index.bm25.df("zqx") == 1
    else:
        assert path not in files
    assert loaded.links is not None
