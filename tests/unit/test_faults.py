"""Faults the index meets on a real disk: a damaged cache, a full disk, files that change under the walk.
In each, the index answers exactly as a fresh index of what is on disk, and says what went wrong."""

from __future__ import annotations

import functools
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from answers import context_of
from conftest import LEDGER_WORKSPACE, write_tree

from rag_lsp.index import cache as cache_module
from rag_lsp.index import root_index
from rag_lsp.index.root_index import Index
from rag_lsp.retrieval.answer import ContextRequest

QUESTIONS = ("ledger post account currency", "convert rate", "rate limit clients", "checkout cart price")


def answers(index: Index) -> list[list[tuple]]:
    return [[(i["path"], i["start_line"], i["end_line"], i["content"], i["score"]) for i in
             context_of(index, ContextRequest(q, top_k=10))["items"]] for q in QUESTIONS]


def fresh_answers(root: Path) -> list[list[tuple]]:
    index = Index(root, use_cache=False)
    index.refresh()
    return answers(index)


def many_files(root: Path, count: int) -> Path:
    return write_tree(root, {**LEDGER_WORKSPACE, **{f"gen/module_{i:04}.py": (
        f'"""Generated module {i}."""\n\n\ndef handler_{i}(request):\n    return request.value * {i}\n\n\n'
        f"class Widget{i}:\n    def render(self):\n        return 'widget {i}'\n") for i in range(count)}})


def test_a_truncated_cache_is_discarded_and_the_answers_are_unchanged(ledger_root, tmp_path):
    first = Index(ledger_root, cache_root=tmp_path / "c")
    first.refresh()
    path = first.cache.path
    first.close()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    index = Index(ledger_root, cache_root=tmp_path / "c")
    stats = index.refresh()
    assert stats.files == 6 and stats.warnings
    assert answers(index) == fresh_answers(ledger_root)
    index.close()
    assert Index(ledger_root, cache_root=tmp_path / "c").refresh().reused == 6


def damage_a_page(path) -> None:
    """Overwrite the 4 KiB page in the middle of a database file with random bytes."""
    data = bytearray(path.read_bytes())
    middle = len(data) // 2 // 4096 * 4096
    data[middle: middle + 4096] = os.urandom(4096)
    path.write_bytes(bytes(data))


def test_a_cache_with_a_damaged_page_is_discarded_and_the_answers_are_unchanged(tmp_path):
    root = many_files(tmp_path / "ws", 200)
    first = Index(root, cache_root=tmp_path / "c")
    first.refresh()
    path = first.cache.path
    first.close()
    damage_a_page(path)
    index = Index(root, cache_root=tmp_path / "c")
    stats = index.refresh()
    assert stats.files == 206
    assert any("corrupt" in w or "discard" in w or "disabled" in w for w in stats.warnings), stats.warnings
    assert answers(index) == fresh_answers(root)


def test_a_damaged_page_found_after_a_warm_start_renews_the_database_and_the_snapshot(tmp_path):
    """The pages are checked beside the warm start, which has loaded the snapshot by the time the verdict comes:
    it warns, starts an empty database under a new epoch and writes the snapshot again, so the next start is
    warm and answers the same."""
    root = many_files(tmp_path / "ws", 200)
    first = Index(root, cache_root=tmp_path / "c")
    first.refresh()
    assert first.cache is not None
    path, epoch = first.cache.path, first.cache.epoch
    first.close()
    damage_a_page(path)
    index = Index(root, cache_root=tmp_path / "c")
    stats = index.refresh()
    assert any("corrupt" in w for w in stats.warnings), stats.warnings
    assert index.cache is not None and index.cache.epoch != epoch and index.cache.snapshot_path.exists() and index.cache.load_all() == {}
    assert answers(index) == fresh_answers(root)
    index.close()
    again = Index(root, cache_root=tmp_path / "c")
    stats = again.refresh()
    assert stats.parsed == 0 and not stats.warnings and answers(again) == fresh_answers(root)


def test_a_cache_write_killed_midway_leaves_a_usable_cache(tmp_path):
    root = many_files(tmp_path / "ws", 1500)
    cache = tmp_path / "c"
    script = ("import sys; from pathlib import Path; from rag_lsp.index.root_index import Index; "
              "Index(sys.argv[1], cache_root=Path(sys.argv[2])).refresh()")
    writer = subprocess.Popen([sys.executable, "-c", script, str(root), str(cache)], start_new_session=True)
    database = cache_module.cache_path_for(root, cache)
    deadline = time.monotonic() + 60
    # Killed while it writes: once the file holds some batches, before the walk's 1,506 files are all in.
    while time.monotonic() < deadline and writer.poll() is None:
        if database.exists() and database.stat().st_size > 200_000:
            break
        time.sleep(0.01)
    assert writer.poll() is None, "the writer ended before it could be killed"
    os.killpg(writer.pid, signal.SIGKILL)
    writer.wait(10)
    with sqlite3.connect(database) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        rows = db.execute("SELECT count(*) FROM files").fetchone()[0]
    assert 0 < rows < 1506, "the kill came after the first batches were stored and before the last"
    index = Index(root, cache_root=cache)
    stats = index.refresh()
    assert (stats.files, stats.reused) == (1506, rows) and stats.parsed == 1506 - rows
    assert answers(index) == fresh_answers(root)


def test_a_full_disk_disables_the_cache_and_the_answers_are_unchanged(tmp_path, monkeypatch):
    """ENOSPC as SQLite reports it (SQLITE_FULL): a database limited to a few pages fills up mid-refresh."""
    connect = sqlite3.connect

    def small_database(*args, **kwargs):
        db = connect(*args, **kwargs)
        db.execute("PRAGMA max_page_count = 12")
        return db

    monkeypatch.setattr(cache_module.sqlite3, "connect", small_database)
    refreshed_despite(tmp_path, "full")


def refreshed_despite(tmp_path: Path, warned: str) -> None:
    """A cold refresh of 300 files with a fault injected: every file indexed, a warning that says ``warned``,
    and the answers of an index without a cache."""
    root = many_files(tmp_path / "ws", 300)
    index = Index(root, cache_root=tmp_path / "c")
    stats = index.refresh()
    assert stats.files == 306
    assert any(warned in w for w in stats.warnings), stats.warnings
    assert answers(index) == fresh_answers(root)


@pytest.fixture
def small_filesystem(tmp_path):
    """A 256 KiB tmpfs, when this process may mount one (root in a container that allows it)."""
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)], check=False,
                          capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.decode().strip()}); "
                    "test_a_full_disk_disables_the_cache_and_the_answers_are_unchanged injects the same fault")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_real_full_filesystem_under_the_cache(tmp_path, small_filesystem):
    root = many_files(tmp_path / "ws", 300)
    index = Index(root, cache_root=small_filesystem)
    stats = index.refresh()
    assert stats.files == 306
    assert any("full" in w or "disabled" in w for w in stats.warnings), stats.warnings
    assert answers(index) == fresh_answers(root)
    index.close()
    # The next start finds no half-written database: it is discarded or consistent, and answers stay the same.
    again = Index(root, cache_root=small_filesystem)
    again.refresh()
    assert answers(again) == fresh_answers(root)


def test_spills_onto_a_full_filesystem_leave_the_index_in_memory(tmp_path, small_filesystem, monkeypatch):
    # A refresh's spills go to anonymous files in the temporary directory, here a nearly full one: each fails
    # (its buffered writing fails again when the file is closed), and the index keeps what it holds.
    (small_filesystem / "filler").write_bytes(b"\0" * (240 << 10))
    monkeypatch.setattr(tempfile, "TemporaryFile", functools.partial(tempfile.TemporaryFile, dir=small_filesystem))
    monkeypatch.setattr("rag_lsp.index.root_index.SPILL_MIN_CHUNKS", 20)
    refreshed_despite(tmp_path, "index spill not written")


@pytest.mark.parametrize("change", ["delete", "rewrite", "grow", "to_directory", "to_symlink"])
def test_a_file_changed_between_the_walk_and_the_read(ledger_root, tmp_path, monkeypatch, change):
    target = ledger_root / "shop/currency.py"
    real_load = root_index.load

    def changing_load(walked, *args, **kwargs):
        if walked.path == "shop/currency.py":
            if change == "delete":
                target.unlink()
            elif change == "rewrite":
                target.write_text("def exchange(amount):\n    return amount\n")
            elif change == "grow":
                target.write_text("def exchange(amount):\n    return amount\n" * 40_000)
            elif change == "to_directory":
                target.unlink()
                target.mkdir()
            else:
                target.unlink()
                target.symlink_to(tmp_path / "elsewhere.py")
                (tmp_path / "elsewhere.py").write_text("def outside():\n    pass\n")
        return real_load(walked, *args, **kwargs)

    monkeypatch.setattr(root_index, "load", changing_load)
    index = Index(ledger_root, use_cache=False)
    stats = index.refresh()
    monkeypatch.setattr(root_index, "load", real_load)
    indexed = index.files.get("shop/currency.py")
    if change == "rewrite":
        assert indexed is not None and index.symbols.lookup("exchange")
    else:
        assert indexed is None and sum(stats.skipped.values()) >= 1
    assert not index.symbols.lookup("outside")
    # A second refresh sees the disk as it is now, exactly as a fresh index does.
    index.refresh()
    assert answers(index) == fresh_answers(ledger_root)
