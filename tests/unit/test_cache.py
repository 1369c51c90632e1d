"""The SQLite cache makes a second run re-parse only what changed, and never breaks a run."""

import shutil
import sqlite3
from importlib import resources
from pathlib import Path

import pytest

from rag_lsp.index import cache as cache_module
from rag_lsp.index.parsing.parse import blob_id
from rag_lsp.index.root_index import Index, analyse

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "languages"


def test_warm_run_reuses_everything(ledger_root, isolated_cache):
    cold = Index(ledger_root).refresh()
    assert (cold.parsed, cold.reused) == (6, 0)
    warm_index = Index(ledger_root)
    warm = warm_index.refresh()
    assert (warm.parsed, warm.reused) == (0, 6)
    assert warm.chunks == cold.chunks and warm.definitions == cold.definitions
    assert [d.path for d in warm_index.symbols.lookup("Ledger.post")] == ["shop/ledger.py"]


def test_only_changed_files_are_parsed_again(ledger_root):
    Index(ledger_root).refresh()
    (ledger_root / "shop/currency.py").write_text("def convert(amount):\n    return amount\n")
    stats = Index(ledger_root).refresh()
    assert (stats.parsed, stats.reused) == (1, 5)


def test_touched_but_unchanged_file_is_reused_by_blob_id(ledger_root):
    Index(ledger_root).refresh()
    path = ledger_root / "shop/currency.py"
    path.write_text(path.read_text())  # New mtime, same content.
    stats = Index(ledger_root).refresh()
    assert (stats.parsed, stats.reused) == (0, 6)


def test_deleted_files_leave_the_cache(ledger_root):
    Index(ledger_root).refresh()
    (ledger_root / "shop/limits.py").unlink()
    index = Index(ledger_root)
    index.refresh()
    assert "shop/limits.py" not in index.cache.load_all()


def test_corrupt_cache_is_discarded_with_a_warning(ledger_root):
    first = Index(ledger_root)
    first.refresh()
    path = first.cache.path
    first.close()
    path.write_bytes(b"this is not a database" * 100)
    index = Index(ledger_root)
    stats = index.refresh()
    assert stats.parsed == 6
    assert any("corrupt" in w or "discarding" in w for w in stats.warnings)
    assert Index(ledger_root).refresh().reused == 6


def test_cache_from_another_version_is_discarded(ledger_root):
    first = Index(ledger_root)
    first.refresh()
    first.close()
    with sqlite3.connect(first.cache.path) as db:
        db.execute("UPDATE meta SET value='old' WHERE key='fingerprint'")
    stats = Index(ledger_root).refresh()
    assert stats.parsed == 6
    assert any("another rag_lsp version" in w for w in stats.warnings)


def test_unwritable_cache_directory_disables_the_cache(ledger_root, tmp_path):
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where a directory should be")
    index = Index(ledger_root, cache_root=blocker)
    stats = index.refresh()
    assert stats.files == 6
    assert any("cache disabled" in w for w in stats.warnings)


def test_cache_location_is_per_root_and_configurable(tmp_path, isolated_cache):
    one = cache_module.cache_path_for(tmp_path / "a")
    two = cache_module.cache_path_for(tmp_path / "b")
    assert one != two and one.parent.parent == isolated_cache
    assert cache_module.cache_path_for(tmp_path / "a", tmp_path / "elsewhere").is_relative_to(tmp_path / "elsewhere")


def _package_copy(tmp_path):
    """rag_lsp's data and query files copied to a directory that stands in for the package."""
    package = resources.files("rag_lsp")
    copy = tmp_path / "rag_lsp"
    for folder in ("data", "queries"):
        shutil.copytree(str(package.joinpath(folder)), copy / folder)
    return copy


def test_fingerprint_changes_with_the_declaration_patterns_and_the_query_fragments(tmp_path, monkeypatch):
    copy = _package_copy(tmp_path)
    monkeypatch.setattr(cache_module.resources, "files", lambda _package: copy)
    fingerprint = cache_module.fingerprint.__wrapped__
    before = fingerprint()
    assert fingerprint() == before
    declarations = copy / "data" / "declarations.toml"
    declarations.write_text(declarations.read_text() + "\n# one more pattern\n")
    after_declarations = fingerprint()
    assert after_declarations != before
    fragment = copy / "queries" / "_ecmascript" / "tags.scm"
    fragment.write_text(fragment.read_text() + "\n; one more pattern\n")
    assert fingerprint() != after_declarations


@pytest.mark.parametrize("sample", sorted(FIXTURES.glob("*/sample.*")), ids=lambda p: p.parent.name)
def test_a_payload_decodes_to_the_parse_it_encodes(sample):
    # Parse workers send their results as this payload (file_work.analyse_encoded), and the warm start reads
    # it back: every object must come back equal, field by field, in every language.
    path = f"src/{sample.name}"
    parsed, tokens = analyse(path, sample.read_text(encoding="utf-8"), blob_id(sample.read_bytes()))
    raw = cache_module.encode(parsed, tokens)
    entry = cache_module.decode(path, parsed.blob_id, 7, 9, raw)
    assert parsed.chunks and parsed.definitions
    assert entry.parsed == parsed
    assert entry.tokens == tokens
    assert (entry.size, entry.mtime_ns, entry.payload) == (7, 9, raw)
