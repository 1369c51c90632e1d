"""Documents added in bulk to the BM25 index's mutable part, kept as sorted columns, one set per batch.

A refresh adds documents by the thousand (Django's cold index: 57,000 chunks,
2.4 million postings, in batches of 128 files), and the mutable part's layout
for edits (a Python object and three growable arrays per term, a tuple and an
array per document) cost those documents 150 MB, and the adding most of its
time in per-term work repeated for every batch. ``MutableBM25.add_many`` keeps
them here instead, until a spill or save writes them into a frozen segment
(``BM25Index.merged``), which then serves them:

* one vocabulary for every batch, terms numbered in order of first
  appearance, with each number's document frequency;
* per batch, its postings in three 32-bit columns sorted by term number,
  then by the document's place in the batch: the term's number, the
  document's slot, the term's frequency in it (12 bytes a posting).

A term's postings are found by binary search in each batch's term column;
every ``JOIN`` batches of one size are joined into one (up to
``JOIN_POSTINGS`` postings), so that a lookup visits few batches (a refresh of
100,000 files adds some 800) and each posting is sorted again once per
eightfold growth. A removed document's postings become tombstones pointing at
the graveyard slot (0), found by scanning its batch; removals are rare between
a refresh's adds and its save, so nothing here is compacted.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from itertools import count, islice

import numpy as np

# The slot that tombstones point at (``bm25_mutable._GRAVEYARD``): no document occupies it.
GRAVEYARD = 0
# How many batches of one level are joined into one of the next, and the most postings a joined batch has
# (so that scanning one for a removed document stays cheap: some 1.5 ms).
JOIN = 8
JOIN_POSTINGS = 1 << 22


class _Batch:
    """The postings of documents added together, term-major; ``serials`` are the added batches it holds."""

    __slots__ = ("level", "serials", "slot", "term", "tf")

    def __init__(self, term: np.ndarray, slot: np.ndarray, tf: np.ndarray, serials: list[int], level: int) -> None:
        self.term = term
        self.slot = slot
        self.tf = tf
        self.serials = serials
        self.level = level

    @classmethod
    def joined(cls, batches: list[_Batch]) -> _Batch:
        """One batch holding the postings of ``batches``, term-major (a stable sort of sorted runs)."""
        term = np.concatenate([batch.term for batch in batches])
        order = np.argsort(term, kind="stable")
        return cls(term[order], np.concatenate([batch.slot for batch in batches])[order],
                   np.concatenate([batch.tf for batch in batches])[order],
                   [serial for batch in batches for serial in batch.serials], batches[0].level + 1)

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
        # The batch each slot's document was added in (its serial; -1 for none), how many documents have one,
        # and the batch each serial's postings are in now. An array by slot, not a dictionary: 100,000 files'
        # chunks took 80 MB as a dictionary.
        self._batch_of = np.full(0, -1, dtype=np.int32)
        self._held = 0
        self._home: list[_Batch] = []

    def __bool__(self) -> bool:
        return self._held > 0

    def __contains__(self, slot: int) -> bool:
        return self._serial(slot) >= 0

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
        serial = len(self._home)
        self._home.append(_Batch(terms, batch_slots, tfs, [serial], 0))
        self._batches.append(self._home[serial])
        held = slots[lengths > 0]
        if len(held) and int(held.max()) >= len(self._batch_of):
            grown = np.full(max(int(held.max()) + 1, 2 * len(self._batch_of)), -1, dtype=np.int32)
            grown[: len(self._batch_of)] = self._batch_of
            self._batch_of = grown
        self._batch_of[held] = serial
        self._held += len(held)
        self._join()

    def _join(self) -> None:
        """Join the last ``JOIN`` batches while they are of one level and their postings few enough."""
        while len(self._batches) >= JOIN:
            last = self._batches[-JOIN:]
            if {batch.level for batch in last} != {last[0].level} or sum(len(b.term) for b in last) > JOIN_POSTINGS:
                return
            joined = _Batch.joined(last)
            del self._batches[-JOIN:]
            self._batches.append(joined)
            for serial in joined.serials:
                self._home[serial] = joined

    def _serial(self, slot: int) -> int:
        """The serial of the batch the document in ``slot`` was added in, or -1."""
        return int(self._batch_of[slot]) if self._held and slot < len(self._batch_of) else -1

    def remove(self, slot: int) -> None:
        """Turn the postings of the document in ``slot`` into tombstones; nothing if it has none here."""
        serial = self._serial(slot)
        if serial < 0:
            return
        self._batch_of[slot] = -1
        self._held -= 1
        batch = self._home[serial]
        found = np.flatnonzero(batch.slot == slot)
        self._df[batch.term[found]] -= 1
        batch.slot[found] = GRAVEYARD

    def shared_terms(self, slot: int, terms: Iterable[str]) -> set[str]:
        """Which of ``terms`` the document in ``slot`` holds (none if it has no postings here)."""
        serial = self._serial(slot)
        if serial < 0:
            return set()
        batch = self._home[serial]
        held = set()
        for term in terms:
            number = self._number.get(term)
            if number is not None:
                start, stop = batch.bounds(number)
                if start < stop and bool((batch.slot[start:stop] == slot).any()):
                    held.add(term)
        return held

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

    def document_frequencies(self) -> np.ndarray:
        """How many documents hold each term some document here holds (the terms unnamed)."""
        return self._df[self._df > 0]

    def blocks(self) -> tuple[list[str], dict[str, int], list[tuple[np.ndarray, np.ndarray, np.ndarray]]]:
        """Every posting: the vocabulary (a term's number is its position) and its numbering, then each batch's
        columns, in the order the batches were added (views): its postings' term numbers, slots (tombstones at
        the graveyard) and frequencies.

        For ``BM25Index``'s merge, which reads them into a segment written to a file; the index keeps them
        until that file serves it, so that a failed writing loses nothing.
        """
        return self._terms, self._number, [(batch.term, batch.slot, batch.tf) for batch in self._batches]
