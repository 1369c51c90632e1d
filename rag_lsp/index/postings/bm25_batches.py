"""Documents added in bulk to the BM25 index's mutable part, kept as sorted columns, one set per batch.

A refresh adds documents by the thousand (Django's cold index: 57,000 chunks,
2.4 million postings, in batches of 128 files), and the mutable part's layout
for edits (a Python object and three growable arrays per term, a tuple and an
array per document) cost those documents 150 MB, and the adding most of its
time in per-term work repeated for every batch. ``MutableBM25.add_many`` keeps
them here instead, until ``BM25Index.compact`` folds them into the frozen
segment (a refresh's next save):

* one vocabulary for every batch, terms numbered in order of first
  appearance, with each number's document frequency;
* per batch, its postings in three 32-bit columns sorted by term number,
  then by the document's place in the batch: the term's number, the
  document's slot, the term's frequency in it (12 bytes a posting).

A term's postings are found by binary search in each batch's term column. A
removed document's postings become tombstones pointing at the graveyard slot
(0), found by scanning its batch; removals are rare between a refresh's adds
and its save, so nothing here is compacted.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from itertools import count, islice

import numpy as np

# The slot that tombstones point at (``bm25_mutable._GRAVEYARD``): no document occupies it.
GRAVEYARD = 0


class _Batch:
    """The postings of documents added together, term-major."""

    __slots__ = ("slot", "term", "tf")

    def __init__(self, term: np.ndarray, slot: np.ndarray, tf: np.ndarray) -> None:
        self.term = term
        self.slot = slot
        self.tf = tf

    def bounds(self, number: int) -> tuple[int, int]:
        """Where term ``number``'s postings lie in the columns."""
        # The keys are 32-bit like the column: with a Python int numpy would convert the whole column first.
        start, stop = self.term.searchsorted(np.array([number, number + 1], dtype=np.int32)).tolist()
        return start, stop


class Batches:
    """Postings of documents added in bulk, by slot, over one vocabulary."""

    def __init__(self) -> None:
        # Term → number; new terms are numbered by a counter set at each ``number`` call.
        self._number: defaultdict[str, int] = defaultdict(int)
        self._terms: list[str] = []
        self._df = np.zeros(0, dtype=np.int64)
        self._batches: list[_Batch] = []
        # Which batch each document's postings are in.
        self._batch_of: dict[int, int] = {}

    def __bool__(self) -> bool:
        return bool(self._batch_of)

    def __contains__(self, slot: int) -> bool:
        return slot in self._batch_of

    def number(self, tokens: Iterator[str]) -> np.ndarray:
        """The numbers of ``tokens``, numbering new terms; if a token is refused (unhashable) no term is added."""
        known = len(self._number)
        self._number.default_factory = count(known).__next__
        try:
            numbers = np.fromiter(map(self._number.__getitem__, tokens), dtype=np.int32)
        except BaseException:
            for term in list(islice(self._number, known, None)):
                del self._number[term]
            raise
        self._terms.extend(islice(self._number, len(self._terms), None))
        return numbers

    def add(self, slots: np.ndarray, numbers: np.ndarray, lengths: np.ndarray) -> None:
        """Index documents in ``slots`` whose tokens, numbered by ``number`` and concatenated, are ``numbers``
        (``lengths`` of them each)."""
        documents = len(slots)
        if not len(numbers):
            return
        # One key per token, term-major: sorting it groups each (term, document) pair's tokens together.
        keys = numbers.astype(np.int64)
        keys *= documents
        keys += np.repeat(np.arange(documents, dtype=np.int64), lengths)
        keys.sort()
        starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
        tfs = np.diff(starts, append=len(keys)).astype(np.float32)
        keys = keys[starts]
        terms = (keys // documents).astype(np.int32)
        batch_slots = slots[keys % documents].astype(np.int32)
        if len(self._df) < len(self._terms):
            self._df = np.concatenate([self._df, np.zeros(len(self._terms) - len(self._df), dtype=np.int64)])
        self._df += np.bincount(terms, minlength=len(self._df))
        position = len(self._batches)
        self._batches.append(_Batch(terms, batch_slots, tfs))
        self._batch_of.update(dict.fromkeys(slots[lengths > 0].tolist(), position))

    def remove(self, slot: int) -> None:
        """Turn the postings of the document in ``slot`` into tombstones; nothing if it has none here."""
        position = self._batch_of.pop(slot, None)
        if position is None:
            return
        batch = self._batches[position]
        found = np.flatnonzero(batch.slot == slot)
        self._df[batch.term[found]] -= 1
        batch.slot[found] = GRAVEYARD

    def terms_of(self, slot: int) -> tuple[str, ...]:
        """The distinct terms of the document in ``slot`` (none if it has no postings here)."""
        position = self._batch_of.get(slot)
        if position is None:
            return ()
        batch = self._batches[position]
        return tuple(self._terms[number] for number in batch.term[batch.slot == slot].tolist())

    def df(self, term: str) -> int:
        number = self._number.get(term)
        return int(self._df[number]) if number is not None and number < len(self._df) else 0

    def raw(self, term: str) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """A term's postings in each batch: slots (tombstones included) and frequencies, as views."""
        number = self._number.get(term)
        slots: list[np.ndarray] = []
        tfs: list[np.ndarray] = []
        if number is None:
            return slots, tfs
        for batch in self._batches:
            start, stop = batch.bounds(number)
            if start < stop:
                slots.append(batch.slot[start:stop])
                tfs.append(batch.tf[start:stop])
        return slots, tfs

    def frequencies(self) -> dict[str, int]:
        """Every term some document here holds, with how many hold it."""
        held = np.flatnonzero(self._df)
        return dict(zip([self._terms[number] for number in held.tolist()], self._df[held].tolist()))

    def export(self) -> tuple[list[str], dict[str, int], np.ndarray, np.ndarray, np.ndarray]:
        """Every posting as columns: the vocabulary (a term's number is its position) and its numbering, then
        each posting's term number, slot (tombstones at the graveyard) and frequency."""
        term, slot, tf = (np.concatenate([getattr(batch, name) for batch in self._batches] or [np.zeros(0, dtype)])
                          for name, dtype in (("term", np.int32), ("slot", np.int32), ("tf", np.float32)))
        return self._terms, self._number, term, slot, tf
