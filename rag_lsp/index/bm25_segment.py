"""A frozen BM25 segment: postings in compressed-sparse-row arrays that load in bulk and can be memory-mapped.

The mutable structure (``bm25_mutable.py``) keeps a Python object and three
arrays per term and a tuple per document: right for edits, but a warm start
that rebuilt it for Django's 150,000 terms and 57,000 chunks spent seconds and
some 150 MB. A segment is the same postings as a handful of flat arrays:

* ``terms`` (in sorted order, so a term is found by bisection: a dictionary
  of Django's 154,000 terms cost every warm start 0.06 s to build; a loaded
  segment's terms stay bytes in the snapshot, ``store/term_table.py``) and
  ``term_ptr``: term ``t``'s postings are
  ``post_doc[term_ptr[t]:term_ptr[t + 1]]`` (a document's row) with their
  frequencies ``post_tf``;
* per row, in ascending document id: ``doc_ids``, ``doc_len``, and the row's
  terms ``doc_terms[doc_ptr[r]:doc_ptr[r + 1]]`` (the forward index, read only
  when a document is removed, to lower its terms' document frequencies).

A segment is immutable except for removals, which clear a row's ``alive`` flag
and lower ``live_df``; ``merge`` builds a new segment from the live rows of
one and the documents of a mutable structure, dropping the dead rows.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence

import numpy as np

from rag_lsp.index.bm25_mutable import MutableBM25
from rag_lsp.index.store.term_table import StoredTerms

# The arrays a segment is stored as (``arrays``/``from_arrays``), besides its terms.
ARRAY_NAMES = ("term_ptr", "post_doc", "post_tf", "doc_ids", "doc_len", "doc_ptr", "doc_terms")


class FrozenSegment:
    """Postings of documents that were indexed together, in flat arrays."""

    def __init__(self, terms: Sequence[str], arrays: dict[str, np.ndarray]) -> None:
        self.terms = terms
        self.term_ptr = arrays["term_ptr"]
        self.post_doc = arrays["post_doc"]
        self.post_tf = arrays["post_tf"]
        self.doc_ids = arrays["doc_ids"]
        self.doc_len = arrays["doc_len"]
        self.doc_ptr = arrays["doc_ptr"]
        self.doc_terms = arrays["doc_terms"]
        rows = len(self.doc_ids)
        self.alive = np.ones(rows, dtype=bool)
        self.live_df = np.diff(self.term_ptr).astype(np.int64)
        self.live = rows
        self.live_length = int(self.doc_len.sum(dtype=np.int64))

    @classmethod
    def empty(cls) -> FrozenSegment:
        return cls([], _empty_arrays())

    @classmethod
    def from_arrays(cls, terms: Sequence[str], arrays: dict[str, np.ndarray]) -> FrozenSegment:
        """A segment over stored arrays (views of a mapped file are fine); ``ValueError`` if they disagree."""
        _check(terms, arrays)
        return cls(terms, arrays)

    def arrays(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name) for name in ARRAY_NAMES}

    def number(self, term: str) -> int:
        """A term's number (its position in ``terms``), or -1."""
        terms = self.terms
        if isinstance(terms, StoredTerms):
            return terms.number(term)
        position = bisect_left(terms, term)
        return position if position < len(terms) and terms[position] == term else -1

    def row_of(self, doc_id: int) -> int:
        """The live row of a document, or -1."""
        row = int(np.searchsorted(self.doc_ids, doc_id))
        if row < len(self.doc_ids) and self.doc_ids[row] == doc_id and self.alive[row]:
            return row
        return -1

    def df(self, term: str) -> int:
        number = self.number(term)
        return int(self.live_df[number]) if number >= 0 else 0

    def postings(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        """The live rows holding ``term`` and the term's frequency in each (float64)."""
        number = self.number(term)
        if number < 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        start, stop = int(self.term_ptr[number]), int(self.term_ptr[number + 1])
        rows = self.post_doc[start:stop].astype(np.int64)
        tfs = self.post_tf[start:stop].astype(np.float64)
        if self.live < len(self.alive):
            keep = self.alive[rows]
            rows, tfs = rows[keep], tfs[keep]
        return rows, tfs

    def remove(self, row: int) -> None:
        """Forget the document of a live row."""
        self.alive[row] = False
        self.live_df[self.doc_terms[self.doc_ptr[row] : self.doc_ptr[row + 1]]] -= 1
        self.live -= 1
        self.live_length -= int(self.doc_len[row])

    def terms_of(self, row: int) -> np.ndarray:
        """The numbers of a row's distinct terms (the forward index)."""
        return self.doc_terms[self.doc_ptr[row] : self.doc_ptr[row + 1]]

    def live_rows(self) -> np.ndarray:
        return np.flatnonzero(self.alive)

    @classmethod
    def merge(cls, segment: FrozenSegment, mutable: MutableBM25) -> FrozenSegment:
        """One segment holding the live documents of ``segment`` and every document of ``mutable``."""
        # The segment's live postings, as (term, document id, frequency).
        term_of_posting = np.repeat(np.arange(len(segment.terms), dtype=np.int64), np.diff(segment.term_ptr))
        keep = segment.alive[segment.post_doc]
        old_terms = term_of_posting[keep]
        old_docs = segment.doc_ids[segment.post_doc[keep]]
        old_tfs = segment.post_tf[keep].astype(np.float64)
        new_terms, new_numbers, new_docs, new_tfs = mutable.export()
        terms = list(segment.terms)
        vocabulary = dict(zip(terms, range(len(terms))))
        for term in new_terms:
            if term not in vocabulary:
                vocabulary[term] = len(terms)
                terms.append(term)
        mapping = np.fromiter((vocabulary[t] for t in new_terms), dtype=np.int64, count=len(new_terms))
        all_terms = np.concatenate([old_terms, mapping[new_numbers]])
        all_docs = np.concatenate([old_docs, new_docs])
        all_tfs = np.concatenate([old_tfs, new_tfs])
        # Documents: live rows of the segment and the mutable's, in ascending id.
        ids_old = segment.doc_ids[segment.alive]
        lengths_old = segment.doc_len[segment.alive]
        ids_new, lengths_new = mutable.lengths()
        doc_ids = np.concatenate([ids_old, ids_new]).astype(np.int64)
        doc_len = np.concatenate([lengths_old, lengths_new]).astype(np.int64)
        order = np.argsort(doc_ids, kind="stable")
        doc_ids, doc_len = doc_ids[order], doc_len[order]
        rows = np.searchsorted(doc_ids, all_docs)
        return cls(*_build(terms, all_terms, rows, all_tfs, doc_ids, doc_len))


def _build(terms: list[str], term_of: np.ndarray, row_of: np.ndarray, tfs: np.ndarray, doc_ids: np.ndarray,
           doc_len: np.ndarray) -> tuple[list[str], dict[str, np.ndarray]]:
    """Arrays from postings given as (term number, row, frequency); terms no posting uses are dropped, the
    others numbered in sorted order."""
    used = np.flatnonzero(np.bincount(term_of, minlength=len(terms)))
    kept_terms = [terms[number] for number in used.tolist()]
    order = sorted(range(len(kept_terms)), key=kept_terms.__getitem__)
    renumber = np.zeros(len(terms), dtype=np.int64)
    renumber[used[order]] = np.arange(len(order), dtype=np.int64)
    kept_terms = [kept_terms[position] for position in order]
    term_of = renumber[term_of]
    rows = len(doc_ids)
    # One sort key per posting (term-major or row-major); a plain argsort of int64 beats lexsort.
    by_term = np.argsort(term_of * max(rows, 1) + row_of, kind="stable")
    term_ptr = np.zeros(len(kept_terms) + 1, dtype=np.int64)
    np.cumsum(np.bincount(term_of, minlength=len(kept_terms)), out=term_ptr[1:])
    by_row = np.argsort(row_of * max(len(kept_terms), 1) + term_of, kind="stable")
    doc_ptr = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(row_of, minlength=rows), out=doc_ptr[1:])
    arrays = {
        "term_ptr": term_ptr,
        "post_doc": row_of[by_term].astype(np.int32),
        "post_tf": tfs[by_term].astype(np.float32),
        "doc_ids": doc_ids.astype(np.int64),
        "doc_len": doc_len.astype(np.int32),
        "doc_ptr": doc_ptr,
        "doc_terms": term_of[by_row].astype(np.int32),
    }
    return kept_terms, arrays


def _empty_arrays() -> dict[str, np.ndarray]:
    return {"term_ptr": np.zeros(1, dtype=np.int64), "post_doc": np.zeros(0, dtype=np.int32),
            "post_tf": np.zeros(0, dtype=np.float32), "doc_ids": np.zeros(0, dtype=np.int64),
            "doc_len": np.zeros(0, dtype=np.int32), "doc_ptr": np.zeros(1, dtype=np.int64),
            "doc_terms": np.zeros(0, dtype=np.int32)}


def _check(terms: Sequence[str], arrays: dict[str, np.ndarray]) -> None:
    """Raise ``ValueError`` unless the arrays describe a well-formed segment (cheap checks, no full scan of
    the text): terms are sorted, sizes agree, pointers rise from 0 to the postings' count, numbers are within
    range."""
    # Stored terms checked their order when they were read; sorting a sorted list is one pass of comparisons.
    if not isinstance(terms, StoredTerms) and list(terms) != sorted(terms):
        raise ValueError("segment terms are not in sorted order")
    dtypes = {"term_ptr": np.int64, "post_doc": np.int32, "post_tf": np.float32, "doc_ids": np.int64,
              "doc_len": np.int32, "doc_ptr": np.int64, "doc_terms": np.int32}
    for name, dtype in dtypes.items():
        if name not in arrays or arrays[name].dtype != dtype or arrays[name].ndim != 1:
            raise ValueError(f"segment array {name} is missing or of the wrong type")
    postings, rows = len(arrays["post_doc"]), len(arrays["doc_ids"])
    sizes_agree = (len(arrays["term_ptr"]) == len(terms) + 1 and len(arrays["post_tf"]) == postings
                   and len(arrays["doc_len"]) == rows and len(arrays["doc_ptr"]) == rows + 1
                   and len(arrays["doc_terms"]) == postings)
    if not sizes_agree:
        raise ValueError("segment arrays of inconsistent sizes")
    for pointer in ("term_ptr", "doc_ptr"):
        values = arrays[pointer]
        if values[0] != 0 or values[-1] != postings or (len(values) > 1 and np.any(np.diff(values) < 0)):
            raise ValueError(f"segment pointers {pointer} are not a partition of the postings")
    if postings and (int(arrays["post_doc"].min()) < 0 or int(arrays["post_doc"].max()) >= rows
                     or int(arrays["doc_terms"].min()) < 0 or int(arrays["doc_terms"].max()) >= len(terms)):
        raise ValueError("segment postings point outside the segment")
    if rows > 1 and np.any(np.diff(arrays["doc_ids"]) <= 0):
        raise ValueError("segment documents are not in ascending id order")
