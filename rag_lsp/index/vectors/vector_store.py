"""The vectors of one root's chunks in memory, and the search over them.

Rows are kept in one contiguous float32 matrix (grown by doubling; a removed
row is filled by the last one), so an exact search is one matrix-vector
product. Above ``ann_threshold`` vectors an approximate index (``ann.py``) is
built once and kept in step. Ties in the exact search are broken by chunk id,
so the same vectors give the same order. The store has its own lock: the
background embedder writes while questions read.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence

import numpy as np

from rag_lsp.index.vectors.ann import Ann, make_ann

INITIAL_ROWS = 1024


class VectorStore:
    """Chunk id → unit vector, with exact (numpy) or approximate (usearch/hnswlib) top-k search."""

    def __init__(self, dim: int, ann_threshold: int) -> None:
        self.dim = dim
        self.ann_threshold = ann_threshold
        self._matrix = np.zeros((INITIAL_ROWS, dim), dtype=np.float32)
        self._ids = np.zeros(INITIAL_ROWS, dtype=np.int64)
        self._rows: dict[int, int] = {}
        self._ann: Ann | None = None
        # Whether an approximate index was wanted but no library was there.
        self.ann_missing = False
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, chunk_id: int) -> bool:
        return chunk_id in self._rows

    @property
    def search_kind(self) -> str:
        """``exact`` (numpy), or the approximate index's library."""
        return self._ann.name if self._ann is not None else "exact"

    def ids(self) -> set[int]:
        with self._lock:
            return set(self._rows)

    def add(self, chunk_ids: Sequence[int], vectors: np.ndarray) -> None:
        """Add or replace rows (unit vectors of this store's dimension)."""
        if vectors.shape != (len(chunk_ids), self.dim):
            raise ValueError(f"expected {len(chunk_ids)} vectors of {self.dim} dimensions, got {vectors.shape}")
        with self._lock:
            replaced = [chunk_id for chunk_id in chunk_ids if chunk_id in self._rows]
            self._remove(replaced)
            needed = len(self._rows) + len(chunk_ids)
            if needed > len(self._matrix):
                size = max(needed, 2 * len(self._matrix))
                self._matrix = np.resize(self._matrix, (size, self.dim))
                self._ids = np.resize(self._ids, size)
            start = len(self._rows)
            self._matrix[start:start + len(chunk_ids)] = vectors
            self._ids[start:start + len(chunk_ids)] = chunk_ids
            for offset, chunk_id in enumerate(chunk_ids):
                self._rows[chunk_id] = start + offset
            if self._ann is not None:
                self._ann.add(chunk_ids, vectors)
            elif len(self._rows) >= self.ann_threshold and not self.ann_missing:
                self._build_ann()

    def remove(self, chunk_ids: Iterable[int]) -> None:
        with self._lock:
            self._remove([chunk_id for chunk_id in chunk_ids if chunk_id in self._rows])

    def _remove(self, chunk_ids: list[int]) -> None:
        for chunk_id in chunk_ids:
            row = self._rows.pop(chunk_id)
            last = len(self._rows)
            if row != last:
                moved = int(self._ids[last])
                self._matrix[row] = self._matrix[last]
                self._ids[row] = moved
                self._rows[moved] = row
        if self._ann is not None:
            self._ann.remove(chunk_ids)

    def _build_ann(self) -> None:
        self._ann = make_ann(self.dim)
        if self._ann is None:
            self.ann_missing = True
            return
        count = len(self._rows)
        self._ann.add(self._ids[:count].tolist(), self._matrix[:count])

    def search(self, query: np.ndarray, count: int) -> list[tuple[int, float]]:
        """The ``count`` chunks most similar to a unit ``query`` vector: (chunk id, cosine), best first."""
        with self._lock:
            if self._ann is not None:
                return self._ann.search(query, count)
            size = len(self._rows)
            if size == 0 or count <= 0:
                return []
            scores = self._matrix[:size] @ query
            ids = self._ids[:size].copy()
        if count < size:
            top = np.argpartition(-scores, count - 1)[:count]
            # Rows tied with the last one kept are all considered, so the tie-break by id is exact.
            threshold = scores[top].min()
            top = np.flatnonzero(scores >= threshold)
        else:
            top = np.arange(size)
        order = np.lexsort((ids[top], -scores[top]))[:count]
        return [(int(ids[top[i]]), float(scores[top[i]])) for i in order]

    def similarity(self, chunk_ids: Iterable[int], query: np.ndarray) -> dict[int, float]:
        """The cosine of each given chunk that has a vector with a unit ``query`` vector."""
        with self._lock:
            rows = [(chunk_id, self._rows[chunk_id]) for chunk_id in chunk_ids if chunk_id in self._rows]
            if not rows:
                return {}
            scores = self._matrix[[row for _, row in rows]] @ query
        return {chunk_id: float(score) for (chunk_id, _), score in zip(rows, scores)}

    def memory_bytes(self) -> int:
        return self._matrix.nbytes + self._ids.nbytes
