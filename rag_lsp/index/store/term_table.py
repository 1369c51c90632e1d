"""A BM25 segment's vocabulary as the snapshot stores it: sorted terms in one blob, read where they lie.

Django's 154,000 terms as Python strings held 12 MB of a warm start for the few dozen a question looks up.
So the terms stay bytes in the mapped snapshot, and a lookup narrows the candidates by each term's first
sixteen bytes (a sorted fixed-width column of 2.5 MB, compared by numpy) before it compares whole terms (on
Django 9,500 terms share their first sixteen bytes with the next one). UTF-8 keeps code point order, so the
bytes sort as the strings do.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import overload

import numpy as np

_KEY_BYTES = 16
_ENCODING = ("utf-8", "surrogatepass")
# Terms whose numbers are remembered, at most: a question looks up a few hundred (its words, the feedback
# candidates' document frequencies), each a binary search of about 13 microseconds.
_REMEMBERED = 16_384


class StoredTerms(Sequence[str]):
    """Sorted terms separated by NUL bytes in ``blob``; ``ValueError`` when they are not sorted."""

    def __init__(self, blob: memoryview | bytes) -> None:
        self._blob = blob
        self._remembered: dict[str, int] = {}
        # The split is the fastest way to each term's first bytes; it lives only while the keys are made.
        parts = bytes(blob).split(b"\0") if len(blob) else []
        # A term's first bytes, NUL-padded: numpy compares such bytes as if the padding were not there.
        self._keys = np.array(parts, dtype=f"S{_KEY_BYTES}")
        separators = np.flatnonzero(np.frombuffer(blob, dtype=np.uint8) == 0)
        self._starts = np.concatenate([[0], separators + 1]).astype(np.int64) if parts else separators
        self._ends = np.concatenate([separators, [len(blob)]]).astype(np.int64) if parts else separators
        if np.any(self._keys[1:] < self._keys[:-1]):
            raise ValueError("segment terms are not in sorted order")
        # Neighbours that share their first bytes are compared whole (long terms with a common start).
        if not all(parts[i] < parts[i + 1] for i in np.flatnonzero(self._keys[1:] == self._keys[:-1]).tolist()):
            raise ValueError("segment terms are not in sorted order")

    def __len__(self) -> int:
        return len(self._starts)

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if not -len(self) <= index < len(self):
            raise IndexError("term number out of range")
        return self._bytes(index % len(self)).decode(*_ENCODING)

    def __iter__(self) -> Iterator[str]:
        return iter(bytes(self._blob).decode(*_ENCODING).split("\0") if len(self) else [])

    def number(self, term: str) -> int:
        """A term's position, or -1 (remembered: the terms never change)."""
        found = self._remembered.get(term)
        if found is None:
            if len(self._remembered) >= _REMEMBERED:
                self._remembered.clear()
            found = self._remembered[term] = self._search(term)
        return found

    def _search(self, term: str) -> int:
        encoded = term.encode(*_ENCODING)
        key = encoded[:_KEY_BYTES]
        keys = self._keys
        low = int(np.searchsorted(keys, key, "left"))
        if len(encoded) < _KEY_BYTES:
            # A shorter term is its key: an equal key is the term itself.
            return low if low < len(keys) and keys[low] == key else -1
        # Long terms that share this start: bisect them by their whole bytes.
        high = int(np.searchsorted(keys, key, "right"))
        while low < high:
            middle = (low + high) // 2
            found = self._bytes(middle)
            if found == encoded:
                return middle
            if found < encoded:
                low = middle + 1
            else:
                high = middle
        return -1

    def _bytes(self, position: int) -> bytes:
        return bytes(self._blob[int(self._starts[position]) : int(self._ends[position])])
