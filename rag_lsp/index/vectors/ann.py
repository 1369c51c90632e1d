"""Approximate nearest-neighbour search for large stores: usearch, else hnswlib.

Below the configured size numpy's exact dot products are fast enough (about
10 ms at 100,000 × 256) and exact; above it a graph index answers in well under
a millisecond at the price of an approximate top list. Both libraries are
optional (the ``dense`` extra brings usearch); without either, search stays
exact and says so in the status. Keys are chunk ids; vectors are unit length,
so inner product is the cosine.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import import_module
from typing import Any, Protocol

import numpy as np

# Graph parameters: neighbours per node and the search breadth (recall over speed, for ranking a few hundred).
CONNECTIVITY = 16
EXPANSION_SEARCH = 128


class Ann(Protocol):
    name: str

    def add(self, keys: Sequence[int], vectors: np.ndarray) -> None: ...

    def remove(self, keys: Sequence[int]) -> None: ...

    def search(self, query: np.ndarray, count: int) -> list[tuple[int, float]]: ...


class UsearchAnn:
    name = "usearch"

    def __init__(self, dim: int) -> None:
        usearch = import_module("usearch.index")
        self._index: Any = usearch.Index(ndim=dim, metric="ip", dtype="f32", connectivity=CONNECTIVITY,
                                         expansion_search=EXPANSION_SEARCH)

    def add(self, keys: Sequence[int], vectors: np.ndarray) -> None:
        if len(keys):
            self._index.add(np.asarray(keys, dtype=np.uint64), vectors, threads=1)

    def remove(self, keys: Sequence[int]) -> None:
        if len(keys):
            self._index.remove(np.asarray(keys, dtype=np.uint64))

    def search(self, query: np.ndarray, count: int) -> list[tuple[int, float]]:
        if len(self._index) == 0:
            return []
        found = self._index.search(query, min(count, len(self._index)), threads=1)
        # usearch reports the inner-product distance 1 − cos.
        return [(int(key), 1.0 - float(distance)) for key, distance in zip(found.keys, found.distances)]


class HnswlibAnn:
    name = "hnswlib"

    def __init__(self, dim: int) -> None:
        hnswlib = import_module("hnswlib")
        self._index: Any = hnswlib.Index(space="ip", dim=dim)
        self._capacity = 1024
        self._index.init_index(max_elements=self._capacity, M=CONNECTIVITY, ef_construction=EXPANSION_SEARCH,
                               allow_replace_deleted=True)
        self._index.set_ef(EXPANSION_SEARCH)
        self._index.set_num_threads(1)
        self._live = 0

    def add(self, keys: Sequence[int], vectors: np.ndarray) -> None:
        if not len(keys):
            return
        while self._live + len(keys) > self._capacity:
            self._capacity *= 2
            self._index.resize_index(self._capacity)
        self._index.add_items(vectors, np.asarray(keys, dtype=np.int64), replace_deleted=True)
        self._live += len(keys)

    def remove(self, keys: Sequence[int]) -> None:
        for key in keys:
            self._index.mark_deleted(int(key))
            self._live -= 1

    def search(self, query: np.ndarray, count: int) -> list[tuple[int, float]]:
        count = min(count, self._live)
        if count <= 0:
            return []
        labels, distances = self._index.knn_query(query.reshape(1, -1), k=count)
        # hnswlib's inner-product distance is 1 − cos too.
        return [(int(key), 1.0 - float(distance)) for key, distance in zip(labels[0], distances[0])]


def make_ann(dim: int) -> Ann | None:
    """usearch when installed, else hnswlib, else None (exact search only)."""
    for kind in (UsearchAnn, HnswlibAnn):
        try:
            return kind(dim)
        except ImportError:
            continue
    return None
