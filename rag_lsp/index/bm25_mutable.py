"""The mutable part of the BM25 index: documents added and removed one at a time, or in bulk.

``bm25_index.BM25Index`` scores over a frozen segment loaded in bulk plus
this structure, which holds every document added since the segment was built
(an editor's edits, a refresh's new files) until ``BM25Index.compact`` folds
it into a new segment. It keeps postings and lengths; the statistics and the
scoring, which must span both parts, are ``BM25Index``'s.

Layout, chosen so that a query costs numpy work over its terms' postings and an
edit costs Python work over the edited document's terms only:

* documents live in dense integer *slots* (freed slots are reused), so their
  lengths and ids are flat arrays that numpy can gather from;
* each term has append-only postings stored in an ``array.array``, which is
  cheap to append to and which numpy reads without a copy. Removing a document
  turns its postings into tombstones, found directly because each document
  remembers where its postings are; a tombstone points at a reserved slot
  that no document uses, so queries need no filtering, and a term's postings
  are compacted once tombstones outnumber live entries, which keeps both the
  wasted scan and the compaction cost amortised per removal.

Building the structure with ``add`` costs Python work per posting. ``add_many``
builds the same state in bulk: one dictionary lookup per token numbers the
terms, then numpy sorts a batch's tokens by (term, document, offset), which
gives each posting's term frequency and first occurrence at once, and each
term's postings are extended once per batch.

The structure is not thread-safe: callers serialise edits and queries.
"""

from __future__ import annotations

import gc
import io
from array import array
from collections import Counter, defaultdict, deque
from collections.abc import Iterable, Sequence
from itertools import chain, count, repeat
from operator import attrgetter

import numpy as np

# Typecodes of the arrays that numpy reads in place, and the matching dtypes.
# Slots are 64-bit and frequencies are floats although smaller types would
# do: numpy indexes with 64-bit integers and computes in float64, and
# converting on every query costs more than the memory saved.
_INT32 = "i"
_INT64 = "q"
_FLOAT64 = "d"
_INT64_DTYPE = np.longlong

# The slot that tombstones point at. No document ever occupies it, so whatever
# a query adds there is discarded.
_GRAVEYARD = 0

# add_many does its numpy work on batches of whole documents holding about
# this many tokens, which bounds its working memory (some 20 bytes per token
# of a batch) whatever the size of the call. Each batch also costs a few
# C-level calls per distinct term it contains, so much smaller batches are
# slower.
_BATCH_TOKENS = 1 << 22

# add_many sorts a batch's tokens by keys packing term, document and offset
# in a non-negative int64; a batch whose numbers need more bits is split.
_KEY_BITS = 63

# Helpers for add_many's loops over terms and documents, which it runs as
# chains of map so that the loops run in C.
_SLOTS = attrgetter("slots")
_TFS = attrgetter("tfs")
_BACKS = attrgetter("backs")
_drain = deque(maxlen=0).extend


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


class _BulkTerms:
    """The terms one ``add_many`` call numbered, and their postings, by number."""

    __slots__ = ("postings_len", "postings_of", "term_bits", "term_objects")

    def __init__(self, vocabulary: dict[str, _Postings], terms: list) -> None:
        """Look the terms up, adding the missing ones to ``vocabulary`` in order, as ``add`` would."""
        postings_of = list(map(vocabulary.get, terms))
        # Current postings lengths, tombstones included.
        postings_len = np.zeros(len(terms), dtype=np.int64)
        for term_id, postings in enumerate(postings_of):
            if postings is None:
                postings_of[term_id] = vocabulary[terms[term_id]] = _Postings()
            else:
                postings_len[term_id] = len(postings.slots)
        self.postings_of = postings_of
        self.term_objects = np.fromiter(terms, dtype=object, count=len(terms))
        self.term_bits = max(0, len(terms) - 1).bit_length()
        self.postings_len = postings_len


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
        # The vocabulary: only terms that some indexed document contains.
        self._postings: dict[str, _Postings] = {}

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
        """Index many new documents, exactly as calling ``add`` on each in order would.

        The structure ends up in the state those calls would leave, down to
        slots and postings order, so every later
        operation behaves the same. The cost is one dictionary lookup per
        token plus numpy work, instead of Python work per posting.

        Everything that can be refused is checked before anything changes,
        and then nothing changes: an id that is already indexed, or that
        appears twice in ``docs``, raises ``ValueError`` naming the first such
        id; an id or a token that ``add`` would refuse raises what ``add``
        raises (``TypeError``, ``OverflowError``). A loop of ``add`` calls
        would instead keep the documents before the offending one.

        ``docs`` is consumed before indexing starts (token sequences are kept
        by reference, not copied). On top of what the index grows by, the call
        holds 4 bytes per token of ``docs`` and some 20 bytes per token of
        one batch of about ``_BATCH_TOKENS`` tokens. The cyclic garbage
        collector is off during the call.
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
        # The one pass over tokens in Python: number the terms in order of
        # first appearance, a batch at a time.
        numbering: defaultdict = defaultdict(count().__next__)
        number = numbering.__getitem__
        batches = []
        for start, stop in _batch_bounds(lengths_np, _BATCH_TOKENS):
            numbers = list(map(number, chain.from_iterable(token_lists[start:stop])))
            if len(numbers) != int(lengths_np[start:stop].sum()):
                raise ValueError("a document yields a different number of tokens than its len()")
            batches.append((start, stop, np.fromiter(numbers, dtype=np.intc, count=len(numbers))))
        del token_lists, numbers
        terms = list(numbering)
        del numbering, number

        # Nothing below can fail on the caller's input.
        bulk = _BulkTerms(self._postings, terms)
        slots = np.array(self._take_slots(doc_ids, id_column, lengths), dtype=np.int64)
        batches.reverse()
        while batches:
            # Popped, so that each batch's numbers are freed once indexed.
            start, stop, term_ids = batches.pop()
            self._add_batch(bulk, term_ids, lengths_np[start:stop], slots[start:stop])
        del term_ids

    def remove(self, doc_id: int) -> None:
        """Forget a document; raise ``KeyError`` if ``doc_id`` is not indexed."""
        slot = self._slot_of.pop(doc_id)
        terms, positions = self._doc_terms[slot], self._doc_positions[slot]
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
        postings = self._postings.get(term)
        if postings is None:
            empty = np.zeros(0, dtype=_INT64_DTYPE)
            return empty, np.zeros(0), empty
        slots = np.frombuffer(postings.slots, dtype=_INT64_DTYPE)
        live = slots != _GRAVEYARD
        slots = slots[live]
        tfs = np.frombuffer(postings.tfs, dtype=np.float64)[live]
        doc_ids = np.frombuffer(self._doc_id_at, dtype=_INT64_DTYPE)[slots]
        lengths = np.frombuffer(self._doc_len, dtype=_INT64_DTYPE)[slots]
        return doc_ids, tfs, lengths

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

    def terms_of(self, doc_id: int) -> tuple[str, ...]:
        """A document's distinct terms; ``KeyError`` for an id not indexed."""
        return self._doc_terms[self._slot_of[doc_id]] or ()

    def slot(self, doc_id: int) -> int:
        """The slot of an indexed document; ``KeyError`` otherwise."""
        return self._slot_of[doc_id]

    def df(self, term: str) -> int:
        """How many documents contain ``term``."""
        postings = self._postings.get(term)
        return postings.df() if postings is not None else 0

    def frequencies(self) -> tuple[list[str], np.ndarray]:
        """Every term some document contains, and how many documents contain each."""
        terms = list(self._postings)
        return terms, np.fromiter((p.df() for p in self._postings.values()), dtype=np.int64, count=len(terms))

    def raw(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        """A term's postings as slots and frequencies, tombstones (slot 0) included; None if no document has it.

        Views, not copies: valid until the next edit.
        """
        postings = self._postings.get(term)
        if postings is None:
            return None
        return np.frombuffer(postings.slots, dtype=_INT64_DTYPE), np.frombuffer(postings.tfs, dtype=np.float64)

    def slot_columns(self) -> tuple[np.ndarray, np.ndarray]:
        """Each slot's document id and length (views; slot 0 and freed slots hold stale values)."""
        return (np.frombuffer(self._doc_id_at, dtype=_INT64_DTYPE),
                np.frombuffer(self._doc_len, dtype=_INT64_DTYPE))

    def export(self) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
        """Every posting grouped by term, tombstones (slot 0) included: the terms, how many postings each has,
        and each posting's slot and frequency (read-only views).

        Each term's arrays are joined as bytes in one C-level pass: a Python
        loop making numpy arrays per term cost more than the merge itself.
        """
        terms = list(self._postings)
        postings = list(self._postings.values())
        counts = np.fromiter(map(len, map(_SLOTS, postings)), dtype=np.int64, count=len(postings))
        slots = np.frombuffer(b"".join(map(_SLOTS, postings)), dtype=_INT64_DTYPE)
        tfs = np.frombuffer(b"".join(map(_TFS, postings)), dtype=np.float64)
        return terms, counts, slots, tfs

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

    def _add_batch(self, bulk: _BulkTerms, term_ids: np.ndarray, lengths: np.ndarray, slots: np.ndarray) -> None:
        """Index consecutive documents of ``add_many``, whose slots are taken.

        ``term_ids`` are the documents' tokens, concatenated, as numbered in
        ``bulk``.
        """
        n_tokens = len(term_ids)
        n_docs = len(slots)
        if n_tokens == 0:
            for slot in slots.tolist():
                self._doc_terms[slot] = ()
                self._doc_positions[slot] = array(_INT32)
            return
        # Sort the tokens by (term, document, offset in the document), packed
        # into int64 keys (term << term_shift | doc << offset_bits | offset)
        # so that one plain sort does it.
        offset_bits = (int(lengths.max()) - 1).bit_length()
        term_shift = offset_bits + (n_docs - 1).bit_length()
        if term_shift + bulk.term_bits > _KEY_BITS and n_docs > 1:
            middle = n_docs // 2
            split = int(lengths[:middle].sum())
            self._add_batch(bulk, term_ids[:split], lengths[:middle], slots[:middle])
            self._add_batch(bulk, term_ids[split:], lengths[middle:], slots[middle:])
            return
        doc_first = np.cumsum(lengths) - lengths
        keys = term_ids.astype(np.int64)
        keys <<= term_shift
        keys += np.repeat((np.arange(n_docs, dtype=np.int64) << offset_bits) - doc_first, lengths)
        keys += np.arange(n_tokens, dtype=np.int64)
        keys.sort()

        # Each run of one term in one document is a posting: its length is
        # the term frequency, its first token the term's first occurrence.
        run = np.empty(n_tokens, dtype=bool)
        run[0] = True
        np.greater_equal(keys[1:] ^ keys[:-1], 1 << offset_bits, out=run[1:])
        starts = np.flatnonzero(run)
        del run
        n_pairs = len(starts)
        tfs = np.empty(n_pairs, dtype=np.int32)
        np.subtract(starts[1:], starts[:-1], out=tfs[:-1])
        tfs[-1] = n_tokens - starts[-1]
        keys = keys[starts]
        del starts
        pair_term = keys >> term_shift
        pair_doc = (keys >> offset_bits) & ((1 << (term_shift - offset_bits)) - 1)
        keys &= (1 << offset_bits) - 1
        keys += doc_first[pair_doc]
        pair_first = keys
        del keys

        # A term's new postings follow its earlier ones.
        run_start = np.flatnonzero(pair_term[1:] != pair_term[:-1])
        run_start += 1
        run_start = np.concatenate(([0], run_start))
        run_length = np.diff(run_start, append=n_pairs)
        run_term = pair_term[run_start]
        del pair_term
        positions = np.repeat(bulk.postings_len[run_term] - run_start, run_length)
        positions += np.arange(n_pairs, dtype=np.int64)
        bulk.postings_len[run_term] += run_length

        # Documents list their terms by first occurrence: mark first
        # occurrences in token order, and a posting's place in the batch's
        # concatenated lists is the number of marks up to its own.
        is_first = np.zeros(n_tokens, dtype=bool)
        is_first[pair_first] = True
        doc_major = np.cumsum(is_first, dtype=np.int32)[pair_first]
        doc_major -= 1
        doc_counts = np.bincount(pair_doc, minlength=n_docs)
        doc_end = np.cumsum(doc_counts)
        doc_start = doc_end - doc_counts
        backs = doc_major - doc_start[pair_doc].astype(np.int32)
        del doc_major
        in_token_order = np.empty(n_tokens, dtype=np.int32)
        in_token_order[pair_first] = positions
        del positions, pair_first
        doc_positions = in_token_order[is_first].tobytes()
        del in_token_order
        doc_terms = tuple(bulk.term_objects[term_ids[is_first]].tolist())
        del is_first
        slot_list = slots.tolist()
        spans = map(slice, doc_start.tolist(), doc_end.tolist())
        _drain(map(self._doc_terms.__setitem__, slot_list, map(doc_terms.__getitem__, spans)))
        del doc_terms
        positions_of = list(map(array, repeat(_INT32, n_docs)))
        _extend_runs(positions_of, doc_positions, doc_counts.tolist())
        _drain(map(self._doc_positions.__setitem__, slot_list, positions_of))
        del doc_positions, positions_of

        # Extend each term's postings, once per batch.
        run_postings = list(map(bulk.postings_of.__getitem__, run_term.tolist()))
        run_length = run_length.tolist()
        _extend_runs(map(_SLOTS, run_postings), slots[pair_doc].tobytes(), run_length)
        del pair_doc
        _extend_runs(map(_TFS, run_postings), tfs.astype(np.float64).tobytes(), run_length)
        del tfs
        _extend_runs(map(_BACKS, run_postings), backs.tobytes(), run_length)
        del backs

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


def _extend_runs(arrays: Iterable[array], values: bytes, run_lengths: list[int]) -> None:
    """Append consecutive runs of ``values``, of the given item counts, to the arrays in turn.

    ``array.fromfile`` appends the next n items of a stream, so reading the
    runs from one stream needs no slicing, and map keeps the loop in C.
    """
    _drain(map(array.fromfile, arrays, repeat(io.BytesIO(values)), run_lengths))
