"""The snapshot: a warm start loads the whole index in bulk and answers as a fresh index does; a damaged,
stale or unwritable snapshot costs a rebuild and a warning, never a failure."""

import os

import pytest
from conftest import write_tree
from test_index import snapshot

from rag_lsp.index.postings.bm25_index import BM25Index
from rag_lsp.index.root_index import Index
from rag_lsp.index.store import snapshot as snapshot_module
from rag_lsp.index.store.snapshot_file import SnapshotError, SnapshotFile, SnapshotWriter


def fresh(root) -> Index:
    index = Index(root, use_cache=False)
    index.refresh()
    return index


def test_a_warm_start_loads_the_snapshot_and_answers_like_a_fresh_index(ledger_root):
    Index(ledger_root).refresh()
    warm = Index(ledger_root)
    stats = warm.refresh()
    assert (stats.parsed, stats.reused) == (0, 6)
    assert warm.chunks.stored is not None and not warm.chunks.live
    assert snapshot(warm) == snapshot(fresh(ledger_root))
    assert [d.path for d in warm.symbols.lookup("Ledger.post")] == ["shop/ledger.py"]
    assert warm.imports == {p: i for p, i in fresh(ledger_root).imports.items() if i}
    assert warm.references == {p: r for p, r in fresh(ledger_root).references.items() if r}


def test_edits_after_a_warm_start_equal_a_fresh_index(ledger_root):
    Index(ledger_root).refresh()
    live = Index(ledger_root)
    live.refresh()
    new_ledger = (ledger_root / "shop/ledger.py").read_text().replace("def post", "def post_entry")
    live.set_file("shop/ledger.py", new_ledger)
    live.remove_file("web/format.ts")
    live.set_file("shop/audit.py", "def audit(ledger):\n    return ledger.accounts\n")
    (ledger_root / "shop/ledger.py").write_text(new_ledger)
    (ledger_root / "web/format.ts").unlink()
    (ledger_root / "shop/audit.py").write_text("def audit(ledger):\n    return ledger.accounts\n")
    assert snapshot(live) == snapshot(fresh(ledger_root))
    # Saving again and loading that equals it too.
    live.save()
    assert snapshot(live) == snapshot(fresh(ledger_root))


def test_files_changed_since_the_snapshot_are_parsed_again(ledger_root):
    Index(ledger_root).refresh()
    (ledger_root / "shop/currency.py").write_text("def convert_all(amounts):\n    return amounts\n")
    (ledger_root / "shop/limits.py").unlink()
    (ledger_root / "shop/added.py").write_text("def added():\n    return 1\n")
    warm = Index(ledger_root)
    stats = warm.refresh()
    assert (stats.parsed, stats.removed) == (2, 1)
    assert snapshot(warm) == snapshot(fresh(ledger_root))
    assert Index(ledger_root).refresh().parsed == 0


@pytest.mark.parametrize("damage", ["truncated", "garbage", "table", "postings"])
def test_a_damaged_snapshot_is_rebuilt_with_a_warning(ledger_root, damage):
    first = Index(ledger_root)
    first.refresh()
    path = first.cache.snapshot_path
    first.close()
    data = bytearray(path.read_bytes())
    if damage == "truncated":
        data = data[: len(data) // 2]
    elif damage == "garbage":
        data = bytearray(b"not a snapshot" * 50)
    elif damage == "table":
        data[-40] ^= 0xFF
    else:
        # Inside the entries: the table is intact, the arrays' contents are not.
        for offset in range(16, len(data) // 2, 7):
            data[offset] = 0xFF
    path.write_bytes(bytes(data))
    index = Index(ledger_root)
    stats = index.refresh()
    assert any("snapshot" in warning for warning in stats.warnings)
    assert snapshot(index) == snapshot(fresh(ledger_root))
    assert Index(ledger_root).refresh().reused == 6


def test_a_snapshot_of_another_cache_database_is_not_loaded(ledger_root):
    first = Index(ledger_root)
    first.refresh()
    kept = first.cache.snapshot_path.read_bytes()
    first.close()
    first.cache.path.unlink()
    # A new database (another epoch) beside the old snapshot.
    Index(ledger_root).close()
    first.cache.snapshot_path.write_bytes(kept)
    stats = Index(ledger_root).refresh()
    assert stats.parsed == 6


def test_an_unwritable_snapshot_keeps_the_index_in_memory(ledger_root):
    index = Index(ledger_root)
    index.cache.snapshot_path.mkdir(parents=True)
    stats = index.refresh()
    assert stats.files == 6 and index.chunks.live
    assert any("snapshot not written" in warning for warning in stats.warnings)
    assert snapshot(index) == snapshot(fresh(ledger_root))


def test_a_reader_keeps_its_snapshot_while_another_process_replaces_it(tmp_path):
    import numpy as np

    target = tmp_path / "index.snapshot"
    for value in (1, 2):
        writer = SnapshotWriter(target)
        writer.array("numbers", np.full(1000, value, dtype=np.int64))
        writer.commit({"value": value}).close()
        if value == 1:
            reader = SnapshotFile(target)
    assert reader.meta == {"value": 1} and set(reader.array("numbers").tolist()) == {1}
    assert SnapshotFile(target).meta == {"value": 2}
    assert [p.name for p in tmp_path.iterdir()] == ["index.snapshot"]
    target.write_bytes(b"")
    with pytest.raises(SnapshotError):
        SnapshotFile(target)


def test_many_files_are_moved_into_spills_while_indexing(tmp_path, monkeypatch):
    # Midway the chunks held as objects and, once SPILL_MAX_CHUNKS of them wait, BM25's documents (merged into
    # one segment) go to spill files (no definitions); only the refresh's last save writes the cache's snapshot,
    # which a warm start then loads whole.
    monkeypatch.setattr("rag_lsp.index.root_index.SPILL_MIN_CHUNKS", 20)
    monkeypatch.setattr("rag_lsp.index.root_index.SPILL_MAX_CHUNKS", 100)
    written = []
    merged = []

    def counted(kind):
        write = getattr(snapshot_module, kind)
        return lambda *args: written.append(kind) or write(*args)

    for kind in ("spill", "save"):
        monkeypatch.setattr(snapshot_module, kind, counted(kind))
    merge = BM25Index.merged
    monkeypatch.setattr(BM25Index, "merged", lambda bm25: merged.append(
        (bm25.pending, bm25.segment.live, bm25.segment.post_doc.flags.writeable)) or merge(bm25))
    files = {f"pkg/mod_{i:03}.py": f"def function_{i}(x):\n    return x + {i}\n" for i in range(150)}
    root = write_tree(tmp_path / "many", files)
    index = Index(root)
    index.refresh()
    assert written == ["spill", "save"]
    assert len(index.chunks) == 150 and not index.chunks.live
    # The spill wrote the documents indexed until then as one segment; the save wrote them with the rest, the
    # segment then served from the spill file (read-only, mapped); the index is served from the save's.
    spilled = merged[0][0]
    assert 0 < spilled < 150 and merged[0][1] == 0
    assert merged[1:] == [(150 - spilled, spilled, False)]
    assert not index.bm25.pending and index.bm25.segment.live == 150
    assert not index.bm25.segment.post_doc.flags.writeable
    assert snapshot(index) == snapshot(fresh(root))
    assert os.path.getsize(index.cache.snapshot_path) > 0
    warm = Index(root)
    assert warm.refresh().parsed == 0
    assert snapshot(warm) == snapshot(index)


def test_chunks_asked_together_are_the_chunks_asked_one_by_one(ledger_root):
    # A file's chunks are built from the stored columns together (``many``), their lines and text read without
    # building them (``pieces_of``) and their paths read together (``paths_of``): each equals the one-by-one answer of another warm index, for stored chunks (one of them
    # built already), chunks indexed since the snapshot, and removed ones.
    Index(ledger_root).refresh()

    def warm() -> Index:
        index = Index(ledger_root)
        index.refresh()
        index.chunks[next(iter(index.chunks))]
        index.remove_file("web/format.ts")
        index.set_file("shop/audit.py", "def audit(ledger):\n    return ledger.accounts\n")
        return index

    removed = fresh(ledger_root).files["web/format.ts"].chunk_ids
    together, alone = warm(), warm()
    present = list(alone.chunks)
    assert alone.chunks.live and alone.chunks.stored is not None
    assert set(removed) <= set(alone.chunks.stored.ids.tolist()) - set(present)
    asked = [*present, *removed, max(present) + 1000]
    assert together.chunks.paths_of(asked) == [alone.chunks.path_of(i) for i in present] + [None] * (len(removed) + 1)
    assert together.chunks.pieces_of(present) == [(c.start_line, c.end_line, c.content)
                                                  for c in (alone.chunks[i] for i in present)]
    assert together.chunks.many(present[::-1]) == [alone.chunks[i] for i in present[::-1]]
    for asked_together in (together.chunks.many, together.chunks.pieces_of):
        with pytest.raises(KeyError):
            asked_together([present[0], removed[0]])
    again = warm()
    for path, entry in again.files.items():
        assert again.chunks_of(path) == [(i, alone.chunks[i]) for i in entry.chunk_ids]


def test_past_a_size_a_refresh_spills_at_that_size_not_at_doubling_ones(tmp_path, monkeypatch):
    # Spills come at doubling sizes (rewriting amortised) until SPILL_MAX_CHUNKS, then each time that many chunks
    # are held as objects (memory bounded); the index is the same either way.
    for name, value in (("SPILL_MIN_CHUNKS", 20), ("SPILL_MAX_CHUNKS", 40), ("REFRESH_BATCH", 16)):
        monkeypatch.setattr(f"rag_lsp.index.root_index.{name}", value)
    held = []
    spill = snapshot_module.spill
    monkeypatch.setattr(snapshot_module, "spill", lambda index, writer, postings: held.append(
        (len(index.chunks.live), postings)) or spill(index, writer, postings))
    files = {f"pkg/mod_{i:03}.py": f"def function_{i}(x):\n    return x + {i}\n" for i in range(150)}
    root = write_tree(tmp_path / "many", files)
    index = Index(root)
    index.refresh()
    # Doubling: 32 of 32, 32 of 64; then at most 40 (and the batch that reached it). BM25's documents go with
    # them once 40 wait (64 at the second), and are then served from the spill.
    assert held == [(32, False), (32, True), (48, True)] and len(index.chunks) == 150
    assert not index.bm25.pending
    assert snapshot(index) == snapshot(fresh(root))


def test_a_save_after_edits_copies_the_stored_chunks_around_the_edited_ones(tmp_path):
    # A save copies the chunks still stored in runs of consecutive rows and writes those held as objects one
    # by one: an edited file in the middle (one chunk changed, one kept with its id but moved down a line), a
    # removed file and a new one break the runs. Served from the new snapshot, and loaded from it again, the
    # index equals a fresh one.
    files = {f"pkg/mod_{i:02}.py": f"import os\n\n\ndef first_{i}(x):\n    return os.path.join(x)\n\n\n"
                                   f"def second_{i}(y):\n    return first_{i}(y) + {i}\n" for i in range(12)}
    root = write_tree(tmp_path / "edits", files)
    Index(root).refresh()
    index = Index(root)
    index.refresh()
    assert not index.chunks.live
    changes = {"pkg/mod_05.py": "\n" + files["pkg/mod_05.py"].replace("(y) + 5", "(y) - 5"),
               "pkg/new.py": "def brand_new():\n    return 1\n"}
    for path, text in changes.items():
        (root / path).write_text(text)
        index.set_file(path, text)
    (root / "pkg/mod_07.py").unlink()
    index.remove_file("pkg/mod_07.py")
    assert index.chunks.live
    index.save()
    assert not index.chunks.live
    expected = uses(fresh(root))
    assert snapshot(index) == snapshot(fresh(root)) and uses(index) == expected
    # Row for row, owners included: the runs copied from the old snapshot and those written from objects join
    # in path order.
    assert reference_rows(index) == reference_rows(fresh(root))
    warm = Index(root)
    warm.refresh()
    assert snapshot(warm) == snapshot(fresh(root)) and uses(warm) == expected
    assert reference_rows(warm) == reference_rows(fresh(root))


def uses(index: Index) -> dict:
    """Each file's references and imports, read through the index's maps."""
    return {path: (index.references.get(path), index.imports.get(path)) for path in sorted(index.files)}


def reference_rows(index: Index) -> list[tuple]:
    """The reference columns of the snapshot the index is served from, a row each, numbers made strings."""
    stored = index.references.stored
    assert stored is not None
    (files, names, lines, kinds, owners), strings = stored.columns()
    return [(stored.paths[f], strings[n], line, strings[k], owner) for f, n, line, k, owner
            in zip(files.tolist(), names.tolist(), lines.tolist(), kinds.tolist(), owners.tolist(), strict=True)]
