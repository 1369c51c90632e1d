"""The vector store (exact and approximate search), its cache on disk, and embedding kept in step with the
index: only changed chunks are embedded again, and nothing twice across restarts."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import write_tree
from counting import CountingEmbedder, install

from rag_lsp.index.root_index import Index
from rag_lsp.index.vectors.ann import HnswlibAnn, UsearchAnn
from rag_lsp.index.vectors.embedding import VectorIndex, chunk_text
from rag_lsp.index.vectors.vector_cache import VectorCache
from rag_lsp.index.vectors.vector_store import VectorStore


def unit_rows(count: int, dim: int, seed: int = 3) -> np.ndarray:
    rows = np.random.default_rng(seed).normal(size=(count, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def brute_force(ids: list[int], rows: np.ndarray, query: np.ndarray, count: int) -> list[int]:
    scores = rows @ query
    return [ids[i] for i in sorted(range(len(ids)), key=lambda i: (-scores[i], ids[i]))[:count]]


def test_exact_search_is_brute_force_through_adds_and_removes():
    rows = unit_rows(300, 32)
    ids = list(range(1000, 1300))
    store = VectorStore(32, ann_threshold=10_000)
    store.add(ids[:200], rows[:200])
    store.add(ids[200:], rows[200:])
    store.remove(ids[::3])
    kept = [i for n, i in enumerate(ids) if n % 3]
    kept_rows = np.stack([rows[n] for n in range(300) if n % 3])
    for query in unit_rows(5, 32, seed=9):
        assert [chunk_id for chunk_id, _ in store.search(query, 10)] == brute_force(kept, kept_rows, query, 10)
    assert len(store) == len(kept) and ids[0] not in store and ids[1] in store


def test_ties_are_broken_by_chunk_id():
    store = VectorStore(4, ann_threshold=10_000)
    same = np.tile(np.array([[1.0, 0, 0, 0]], dtype=np.float32), (5, 1))
    store.add([9, 3, 7, 1, 5], same)
    assert [chunk_id for chunk_id, _ in store.search(np.array([1.0, 0, 0, 0], dtype=np.float32), 3)] == [1, 3, 5]


@pytest.mark.parametrize("kind", [UsearchAnn, HnswlibAnn])
def test_approximate_indexes_find_what_exact_search_finds(kind):
    rows = unit_rows(2000, 32)
    ann = kind(32)
    ann.add(list(range(2000)), rows)
    ann.remove([0, 1, 2])
    queries = rows[10:30]
    recall = np.mean([len({k for k, _ in ann.search(q, 10)} & set(brute_force(list(range(3, 2000)), rows[3:], q, 10)))
                      / 10 for q in queries])
    assert recall >= 0.9
    assert all(key not in (0, 1, 2) for q in queries for key, _ in ann.search(q, 10))


def test_the_store_switches_to_an_approximate_index_above_its_threshold():
    store = VectorStore(32, ann_threshold=500)
    store.add(list(range(400)), unit_rows(400, 32))
    assert store.search_kind == "exact"
    store.add(list(range(400, 600)), unit_rows(200, 32, seed=5))
    assert store.search_kind == "usearch"
    query = unit_rows(1, 32, seed=11)[0]
    assert len(store.search(query, 10)) == 10


def test_the_cache_keeps_vectors_by_model_and_text_and_survives_corruption(tmp_path):
    cache = VectorCache(tmp_path / "vectors.sqlite")
    rows = unit_rows(3, 8)
    cache.put_many("m1", ["a", "b", "c"], rows)
    assert set(cache.get_many("m1", ["a", "c", "z"], 8)) == {"a", "c"}
    assert cache.get_many("m2", ["a"], 8) == {}
    assert np.allclose(cache.get_many("m1", ["b"], 8)["b"], rows[1], atol=1e-3)
    assert cache.retain("m1", {"a"}) == 2 and cache.count("m1") == 1
    cache.close()
    (tmp_path / "vectors.sqlite").write_bytes(b"not a database" * 100)
    reopened = VectorCache(tmp_path / "vectors.sqlite")
    assert reopened.get_many("m1", ["a"], 8) == {} and reopened.warnings


FILES = {
    "app/retry.py": "def retry_request(url):\n    \"\"\"Retry a request with backoff.\"\"\"\n    return url\n\n\n"
                    "def parse_yaml(text):\n    return text\n",
    "app/cache.py": "class LruCache:\n    def get(self, key):\n        return key\n",
}


def test_an_edit_embeds_only_the_chunks_whose_text_changed(tmp_path, monkeypatch):
    root = write_tree(tmp_path / "ws", FILES)
    embedder = CountingEmbedder()
    config = install(monkeypatch, embedder)
    index = Index(root, cache_root=tmp_path / "cache")
    index.refresh()
    vectors = VectorIndex.for_index(index, config)
    assert vectors.sync() == len(index.chunks)
    first = len(embedder.texts)
    changed = FILES["app/retry.py"].replace("return text", "return text.strip()")
    index.set_file("app/retry.py", changed)
    assert vectors.sync() == 1
    assert "text.strip()" in embedder.texts[first]
    assert vectors.status().embedded == len(index.chunks) and vectors.status().ready
    index.remove_file("app/cache.py")
    vectors.sync()
    assert len(vectors.store or []) == len(index.chunks)
    vectors.stop()
    index.close()


def test_vectors_are_read_back_from_the_cache_after_a_restart(tmp_path, monkeypatch):
    root = write_tree(tmp_path / "ws", FILES)
    embedder = CountingEmbedder()
    config = install(monkeypatch, embedder)
    chunks = []
    for _ in range(2):
        index = Index(root, cache_root=tmp_path / "cache")
        index.refresh()
        vectors = VectorIndex.for_index(index, config)
        vectors.sync()
        chunks.append(len(index.chunks))
        assert vectors.status().embedded == len(index.chunks)
        vectors.stop()
        index.close()
    # Every chunk once, by the first run; the second run read them all from the cache.
    assert len(embedder.texts) == chunks[0] == chunks[1]


def test_the_embedded_text_describes_the_chunk():
    index = Index(".", use_cache=False)
    index.set_file("app/retry.py", FILES["app/retry.py"])
    chunk = next(c for c in index.chunks.values() if c.symbol == "retry_request")
    text = chunk_text(chunk, describe=True)
    assert text.startswith("python function retry_request (retry request) in app/retry.py (app retry)\n")
    assert "def retry_request(url): \"\"\"Retry a request with backoff.\"\"\" return url" in text
    assert chunk_text(chunk, describe=False).startswith("def retry_request")
