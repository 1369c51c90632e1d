"""The mutable part of the BM25 index: documents added and removed one at a time, or in bulk.

``bm25_index.BM25Index`` scores over a frozen segment loaded in bulk plus
this structure, which holds every document added since the segment was built
(an editor's edits, a refresh's new files) until a save writes both as one
new segment (``BM25Index.merged``). It keeps postings and lengths; the statistics and the
scoring, which must span both parts, are ``BM25Index``'s.

Layout, chosen so that a query costs numpy work over its terms' postings and an
edit costs Python work over the edited document's terms only:

* documents live in dense integer *slots* (freed slots are reused), so their
  lengths and ids are flat arrays that numpy can gather from;
* a document added by ``add`` has its terms' postings in per-term append-only
  ``array.array``s, cheap to append to and read by numpy without a copy.
  Removing the document turns its postings into tombstones, found directly
  because each document remembers where its postings are; a tombstone points
  at a reserved slot that no document uses, so queries need no filtering, and
  a term's postings are compacted once tombstones outnumber live entries,
  which keeps both the wasted scan and the compaction cost amortised per
  removal;
* documents added by ``add_many`` (a refresh's batches) have their postings
  in sorted columns per batch (``bm25_batches.py``): one dictionary lookup per
  token numbers the terms, numpy sorts the rest, and no Python object is made
  per term or per document.

The structure is not thread-safe: callers serialise edits and queries.
"""

from __future__ import annotations

import gc
from array import array
from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import chain, repeat
from operator import attrgetter

import numpy as np

# The slot that tombstones point at: no document ever occupies it, so whatever a query adds there is discarded.
from rag_lsp.index.postings.bm25_batches import GRAVEYARD as _GRAVEYARD
from rag_lsp.index.postings.bm25_batches import Batches

# Typecodes of the arrays that numpy reads in place, and the matching dtypes.
# Slots are 64-bit and frequencies are floats although smaller types would
# do: numpy indexes with 64-bit integers and computes in float64, and
# converting on every query costs more than the memory saved.
_INT32 = "i"
_INT64 = "q"
_FLOAT64 = "d"
_INT64_DTYPE = np.longlong

# add_many numbers and sorts the tokens of batches of whole documents holding
# about this many tokens, which bounds its working memory (some 12 bytes per
# token of a batch) whatever the size of the call.
_BATCH_TOKENS = 1 << 22

# ``all_postings`` joins each term's arrays with these.
_SLOTS = attrgetter("slots")
_TFS = attrgetter("tfs")


class _Postings:
    """The postings of one term, in the order documents were added.

    Posting ``j`` is the document in slot ``slots[j]``, which contains the
    term ``tfs[j]`` times; ``backs[j]`` is the index of the term in that
    document's own term list, which is what lets compaction tell each
    surviving document where its posting moved to.
    """

    __slots__ = ("backs", "dead", "slots", "tfs")

    def __init__(self) -> None:
        self.slots = array(_INT64)
        self.tfs = array(_FLOAT64)
        self.backs = array(_INT32)
        self.dead = 0

    def df(self) -> int:
        """Return the number of documents that contain the term."""
        return len(self.slots) - self.dead


class MutableBM25:
    """Postings and lengths of documents over integer ids, added and removed one at a time or in bulk."""

    def __init__(self) -> None:
        # Documents, addressed by slot; a document keeps its distinct terms
        # and the position of its own entry in each term's postings. Slot 0 is
        # the graveyard.
        self._slot_of: dict[int, int] = {}
        self._doc_id_at = array(_INT64, [0])
        self._doc_len = array(_INT64, [0])
        self._doc_terms: list[tuple[str, ...] | None] = [None]
        self._doc_positions: list[array | None] = [None]
        self._free_slots: list[int] = []
        self._total_len = 0
        # The vocabulary of the documents added by ``add``: only terms that one of them contains.
        self._postings: dict[str, _Postings] = {}
        # The postings of the documents added by ``add_many`` (each of those has no terms nor positions above).
        self._batches = Batches()

    def __len__(self) -> int:
        return len(self._slot_of)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._slot_of

    def add(self, doc_id: int, tokens: Sequence[str]) -> None:
        """Index a new document; raise ``ValueError`` if ``doc_id`` is already indexed.

        Refusing rather than overwriting catches callers whose bookkeeping of
        ids has gone wrong; ``replace`` is the explicit way to overwrite.
        """
        if doc_id in self._slot_of:
            raise ValueError(f"document {doc_id!r} is already indexed")
        counts = Counter(tokens)
        slot = self._take_slot(doc_id, len(tokens))
        vocabulary = self._postings
        positions = array(_INT32)
        # This loop runs once per distinct term of every indexed document, so
        # it avoids method calls and repeated attribute lookups.
        for back, (term, tf) in enumerate(counts.items()):
            postings = vocabulary.get(term)
            if postings is None:
                postings = vocabulary[term] = _Postings()
            slots = postings.slots
            position = len(slots)
            positions.append(position)
            slots.append(slot)
            postings.tfs.append(tf)
            postings.backs.append(back)
        self._doc_terms[slot] = tuple(counts)
        self._doc_positions[slot] = positions

    def add_many(self, docs: Iterable[tuple[int, Sequence[str]]]) -> None:
        """Index many new documents, as calling ``add`` on each in order would.

        Every query and edit afterwards behaves as after those calls: the
        documents take the same slots, and each term has the same postings,
        document frequency and totals (its postings may come in another
        order). The cost is one dictionary lookup per token plus numpy work,
        instead of Python work per posting.

        Everything that can be refused is checked before anything changes,
        and then nothing changes: an id that is already indexed, or that
        appears twice in ``docs``, raises ``ValueError`` naming the first such
        id; an id or a token that ``add`` would refuse raises what ``add``
        raises (``TypeError``, ``OverflowError``). A loop of ``add`` calls
        would instead keep the documents before the offending one.

        ``docs`` is consumed before indexing starts (token sequences are kept
        by reference, not copied). On top of what the index grows by (12
        bytes a posting), the call holds 4 bytes per token of ``docs`` and
        some 12 bytes per token of one batch of about ``_BATCH_TOKENS``
        tokens. The cyclic garbage collector is off during the call.
        """
        collecting = gc.isenabled()
        # The call makes hundreds of thousands of containers but no reference
        # cycles, and with the collector on they trigger collections that
        # rescan the whole heap, the caller's corpus included: about a
        # quarter of the time at 100,000 documents.
        gc.disable()
        try:
            self._add_many(docs)
        finally:
            if collecting:
                gc.enable()

    def _add_many(self, docs: Iterable[tuple[int, Sequence[str]]]) -> None:
        """Do what ``add_many`` says, with the cyclic garbage collector off."""
        pairs = list(docs)
        if not pairs:
            return
        doc_ids = [doc_id for doc_id, _ in pairs]
        token_lists = [tokens for _, tokens in pairs]
        del pairs
        self._check_new_ids(doc_ids)
        id_column = array(_INT64, doc_ids)
        lengths = array(_INT64, map(len, token_lists))
        lengths_np = np.frombuffer(lengths, dtype=_INT64_DTYPE)
        # The one pass over tokens in Python: number the terms, a batch at a time.
        batches = []
        for start, stop in _batch_bounds(lengths_np, _BATCH_TOKENS):
            numbers = self._batches.number(chain.from_iterable(token_lists[start:stop]))
            if len(numbers) != int(lengths_np[start:stop].sum()):
                raise ValueError("a document yields a different number of tokens than its len()")
            batches.append((start, stop, numbers))
        del token_lists

        # Nothing below can fail on the caller's input.
        slots = np.array(self._take_slots(doc_ids, id_column, lengths), dtype=np.int64)
        for slot in slots[lengths_np == 0].tolist():
            self._doc_terms[slot] = ()
            self._doc_positions[slot] = array(_INT32)
        batches.reverse()
        while batches:
            # Popped, so that each batch's numbers are freed once indexed.
            start, stop, numbers = batches.pop()
            self._batches.add(slots[start:stop], numbers, lengths_np[start:stop])

    def remove(self, doc_id: int) -> None:
        """Forget a document; raise ``KeyError`` if ``doc_id`` is not indexed."""
        slot = self._slot_of.pop(doc_id)
        terms, positions = self._doc_terms[slot], self._doc_positions[slot]
        if slot in self._batches:
            self._batches.remove(slot)
            terms, positions = (), array(_INT32)
        if terms is None or positions is None:
            raise KeyError(doc_id)
        for term, position in zip(terms, positions):
            postings = self._postings[term]
            postings.slots[position] = _GRAVEYARD
            postings.dead += 1
            df = postings.df()
            if df == 0:
                # A corpus rebuilt without this document would not know the term.
                del self._postings[term]
            elif postings.dead > df:
                self._compact(postings)
        self._total_len -= self._doc_len[slot]
        self._doc_terms[slot] = None
        self._doc_positions[slot] = None
        self._free_slots.append(slot)

    def replace(self, doc_id: int, tokens: Sequence[str]) -> None:
        """Index ``tokens`` under ``doc_id``, whether or not it was indexed before."""
        if doc_id in self._slot_of:
            self.remove(doc_id)
        self.add(doc_id, tokens)

    def postings(self, term: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The documents that contain ``term``: their ids, the term's frequency in each, and their lengths.

        For scores over groups of documents (a file's chunks), which need the
        raw statistics rather than each document's own BM25 score.
        """
        slots, tfs = self.raw(term) or (np.zeros(0, dtype=_INT64_DTYPE), np.zeros(0))
        live = slots != _GRAVEYARD
        slots = slots[live]
        doc_ids = np.frombuffer(self._doc_id_at, dtype=_INT64_DTYPE)[slots]
        lengths = np.frombuffer(self._doc_len, dtype=_INT64_DTYPE)[slots]
        return doc_ids, tfs[live], lengths

    def lengths(self) -> tuple[np.ndarray, np.ndarray]:
        """Every indexed document's id and length in tokens."""
        return self.documents()[1:]

    def documents(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every indexed document's slot, id and length in tokens."""
        slots = np.fromiter(self._slot_of.values(), dtype=_INT64_DTYPE, count=len(self._slot_of))
        return (slots, np.frombuffer(self._doc_id_at, dtype=_INT64_DTYPE)[slots],
                np.frombuffer(self._doc_len, dtype=_INT64_DTYPE)[slots])

    @property
    def slot_count(self) -> int:
        """How many slots there are, the graveyard and freed ones included: every slot is below it."""
        return len(self._doc_len)

    @property
    def total_length(self) -> int:
        """The number of tokens of every document."""
        return self._total_len

    def shared_terms(self, doc_id: int, terms: Iterable[str]) -> set[str]:
        """Which of ``terms`` a document holds; ``KeyError`` for an id not indexed."""
        slot = self._slot_of[doc_id]
        if slot in self._batches:
            return self._batches.shared_terms(slot, terms)
        held = set(self._doc_terms[slot] or ())
        return {term for term in terms if term in held}

    def slot(self, doc_id: int) -> int:
        """The slot of an indexed document; ``KeyError`` otherwise."""
        return self._slot_of[doc_id]

    def slots_of(self, doc_ids: list[int]) -> np.ndarray:
        """The slots of many documents, -1 for one not indexed."""
        return np.fromiter(map(self._slot_of.get, doc_ids, repeat(-1)), dtype=_INT64_DTYPE, count=len(doc_ids))

    def df(self, term: str) -> int:
        """How many documents contain ``term``."""
        postings = self._postings.get(term)
        return (postings.df() if postings is not None else 0) + (self._batches.df(term) if self._batches else 0)

    def frequencies(self) -> tuple[list[str], np.ndarray]:
        """Every term some document contains, and how many documents contain each."""
        counts = self._batches.frequencies() if self._batches else {}
        for term, postings in self._postings.items():
            counts[term] = counts.get(term, 0) + postings.df()
        return list(counts), np.fromiter(counts.values(), dtype=np.int64, count=len(counts))

    def document_frequencies(self) -> np.ndarray:
        """``frequencies`` without the terms: for the vocabulary's average idf, asked by every question midway
        through a refresh, when naming each of its 150,000 terms cost tens of milliseconds."""
        return self._batches.document_frequencies() if not self._postings else self.frequencies()[1]

    def raw(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        """A term's postings as slots and frequencies, tombstones (slot 0) included; None if no document has it.

        Views, not copies, when only documents added by ``add`` hold the term: valid until the next edit.
        """
        postings = self._postings.get(term)
        slots, tfs = self._batches.raw(term) if self._batches else ([], [])
        if postings is not None:
            slots.append(np.frombuffer(postings.slots, dtype=_INT64_DTYPE))
            tfs.append(np.frombuffer(postings.tfs, dtype=np.float64))
        if not slots:
            return None
        if len(slots) == 1 and postings is not None:
            return slots[0], tfs[0]
        return np.concatenate(slots, dtype=_INT64_DTYPE), np.concatenate(tfs, dtype=np.float64)

    def slot_columns(self) -> tuple[np.ndarray, np.ndarray]:
        """Each slot's document id and length (views; slot 0 and freed slots hold stale values)."""
        return (np.frombuffer(self._doc_id_at, dtype=_INT64_DTYPE),
                np.frombuffer(self._doc_len, dtype=_INT64_DTYPE))

    def all_postings(self) -> tuple[list[str], list[tuple[np.ndarray, np.ndarray, np.ndarray]]]:
        """Every posting, tombstones (slot 0) included: the terms, and blocks of 32-bit columns of each
        posting's term (its position in the terms), slot and frequency: each bulk batch's (views), then those of
        the documents added one by one. Terms no live document holds may be listed.

        For ``BM25Index``'s merge; nothing here changes. Each term's arrays of the documents added one by
        one are joined as bytes in one C-level pass: a Python loop making numpy arrays per term cost more
        than the merge itself.
        """
        terms, numbering, blocks = self._batches.blocks()
        if not self._postings:
            return terms, blocks
        terms = list(terms)
        postings = list(self._postings.values())
        numbers = []
        for term in self._postings:
            number = numbering.get(term)
            if number is None:
                number = len(terms)
                terms.append(term)
            numbers.append(number)
        counts = np.fromiter(map(len, map(_SLOTS, postings)), dtype=np.int64, count=len(postings))
        alone = (np.repeat(np.array(numbers, dtype=np.int32), counts),
                 np.frombuffer(b"".join(map(_SLOTS, postings)), dtype=_INT64_DTYPE).astype(np.int32),
                 np.frombuffer(b"".join(map(_TFS, postings)), dtype=np.float64).astype(np.float32))
        return terms, [*blocks, alone]

    def _take_slot(self, doc_id: int, length: int) -> int:
        """Give a new document a slot, reusing a freed one when there is one."""
        if self._free_slots:
            slot = self._free_slots[-1]
            # Storing the id first means an id that does not fit in 64 bits
            # fails before the slot leaves the free list.
            self._doc_id_at[slot] = doc_id
            self._doc_len[slot] = length
            self._free_slots.pop()
        else:
            slot = len(self._doc_len)
            self._doc_id_at.append(doc_id)
            self._doc_len.append(length)
            self._doc_terms.append(None)
            self._doc_positions.append(None)
        self._slot_of[doc_id] = slot
        self._total_len += length
        return slot

    def _check_new_ids(self, doc_ids: list) -> None:
        """Raise ``ValueError`` for the first id that is indexed or repeated."""
        if len(set(doc_ids)) == len(doc_ids) and self._slot_of.keys().isdisjoint(doc_ids):
            return
        seen: set = set()
        for doc_id in doc_ids:
            if doc_id in self._slot_of or doc_id in seen:
                raise ValueError(f"document {doc_id!r} is already indexed")
            seen.add(doc_id)

    def _take_slots(self, doc_ids: list, id_column: array, lengths: array) -> list[int]:
        """Give new documents the slots that one ``_take_slot`` call each would."""
        free = self._free_slots
        reused = min(len(doc_ids), len(free))
        slots = free[len(free) - reused :][::-1]
        del free[len(free) - reused :]
        for slot, doc_id, length in zip(slots, id_column, lengths):
            self._doc_id_at[slot] = doc_id
            self._doc_len[slot] = length
        fresh = len(doc_ids) - reused
        slots.extend(range(len(self._doc_len), len(self._doc_len) + fresh))
        self._doc_id_at.extend(id_column[reused:])
        self._doc_len.extend(lengths[reused:])
        self._doc_terms.extend([None] * fresh)
        self._doc_positions.extend([None] * fresh)
        self._slot_of.update(zip(doc_ids, slots))
        self._total_len += int(np.frombuffer(lengths, dtype=_INT64_DTYPE).sum())
        return slots

    def _compact(self, postings: _Postings) -> None:
        """Squeeze the tombstones out of a term's postings and repoint its documents."""
        survivors = [entry for entry in zip(postings.slots, postings.tfs, postings.backs) if entry[0] != _GRAVEYARD]
        postings.slots = array(_INT64, [slot for slot, _, _ in survivors])
        postings.tfs = array(_FLOAT64, [tf for _, tf, _ in survivors])
        postings.backs = array(_INT32, [back for _, _, back in survivors])
        postings.dead = 0
        for position, (slot, _, back) in enumerate(survivors):
            positions = self._doc_positions[slot]
            if positions is not None:
                positions[back] = position


def _batch_bounds(lengths: np.ndarray, tokens: int) -> list[tuple[int, int]]:
    """Split documents into runs of about ``tokens`` tokens, at least one document each."""
    ends = np.cumsum(lengths)
    bounds = []
    start = 0
    while start < len(lengths):
        before = int(ends[start - 1]) if start else 0
        stop = max(start + 1, int(np.searchsorted(ends, before + tokens, side="right")))
        bounds.append((start, stop))
        start = stop
    return bounds
