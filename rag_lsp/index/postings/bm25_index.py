"""An incremental BM25 index that scores exactly like ``rank_bm25.BM25Okapi``, loaded in bulk.

``BM25Okapi`` is the reference the rest of the project was tuned against, but
it is built once from a whole corpus and scores a query by visiting every
document. A language server edits a handful of chunks at a time and answers
queries in between, and a warm start must not rebuild what it saved, so this
index has two parts:

* a frozen segment (``bm25_segment.py``): flat arrays, saved and loaded (or
  memory-mapped) in bulk by the snapshot, where a removal only clears a flag;
* a mutable part (``bm25_mutable.py``) holding every document added since,
  until a save writes both as one segment (``merged``, a few million postings
  at a time) and the index is served from it, or ``compact`` folds them into
  a new segment in memory.

The statistics span both: ``N`` and the total length are sums, a term's
document frequency is its live count in the segment plus its count in the
mutable part. The scores equal ``BM25Okapi(corpus, k1=k1, b=b,
epsilon=epsilon).get_scores(query)`` where ``corpus`` is the documents
currently in the index, in any order:

* ``idf(t) = log(N - df + 0.5) - log(df + 0.5)``;
* a negative idf is replaced by ``epsilon * average_idf``, the average being
  taken over the idf of every term in the vocabulary, negative ones included.
  That floor is itself negative when the average is (tiny corpora where most
  terms are in most documents), so scores can be negative; this index keeps
  that behaviour rather than inventing a different floor. Terms with the
  same document frequency have the same idf, so the average is a sum over a
  histogram of frequencies, computed only when a query term needs the floor;
* ``avgdl`` is the total number of tokens divided by the number of documents;
* a query term counts once per occurrence in the query, and a term that is in
  no document adds nothing.

Where ``BM25Okapi`` raises, on an empty corpus or a corpus of empty documents,
this index simply has nothing to score. It is not thread-safe: callers
serialise edits and queries.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

from rag_lsp.index.postings.bm25_mutable import MutableBM25
from rag_lsp.index.postings.bm25_segment import FrozenSegment, in_one_piece

# Queries whose accumulated scores are kept (each array holds a float per document: 0.5 MB on Django, 8.7 MB at a
# million chunks). A question scores the same terms several times (the chunk list, the file list, each file's best
# chunk); the eight questions of bench/latency.py have every such repeat within the last two queries, and four
# keep a margin. More served only the same question asked again at once, for 8.7 MB each at a million chunks.
MEMO_QUERIES = 4
# Postings whose contributions to scores are kept per term for later queries, until an edit: at most an
# eighth of the segment's postings and at most ``TERM_MEMO_POSTINGS`` (16 bytes each: 64 MB in all). A
# question's queries share most of their words, and common words recur across questions: at 100,000 files a
# question of common words read a million postings in each of four queries.
TERM_MEMO_SHARE = 8
TERM_MEMO_POSTINGS = 1 << 22
# Score arrays are made this much longer than the documents (at least ``MIN_SLACK`` slots), so that they serve
# again after edits have added documents.
SLACK_SHARE = 1 / 64
MIN_SLACK = 1024


class BM25Index:
    """A mutable BM25 index over integer document ids: a frozen segment plus the documents added since."""

    def __init__(self, k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25,
                 segment: FrozenSegment | None = None) -> None:
        self.k1 = k1
        self.b = b
        self.epsilon = epsilon
        self.segment = segment or FrozenSegment.empty()
        self.mutable = MutableBM25()
        # The vocabulary's average idf, or None when an edit made it stale.
        self._average_idf: float | None = None
        # The last few queries' accumulated scores (read-only arrays), dropped by any edit: one ranking scores
        # the same terms several times (the chunk list, the file list, each file's best chunk).
        self._memo: dict[tuple[str, ...], tuple[np.ndarray, np.ndarray]] = {}
        # Each slot's length norm ``k1 * (1 - b + b * length / avgdl)``, or None when an edit made it stale.
        self._norms: np.ndarray | None = None
        # Score arrays no longer remembered, whose memory the next queries fill again (``_zeros``), each with
        # the slots it holds a score in (every other slot is zero).
        self._spares: list[tuple[np.ndarray, np.ndarray]] = []
        # Each recently queried term's slots and contributions (idf times saturation) and whether its idf is
        # positive, in the order they were last used.
        self._terms: dict[str, tuple[np.ndarray, np.ndarray, bool]] = {}

    def __len__(self) -> int:
        return self.segment.live + len(self.mutable)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self.mutable or (isinstance(doc_id, int) and self.segment.row_of(doc_id) >= 0)

    def add(self, doc_id: int, tokens: Sequence[str]) -> None:
        """Index a new document; raise ``ValueError`` if ``doc_id`` is already indexed.

        Refusing rather than overwriting catches callers whose bookkeeping of
        ids has gone wrong; ``replace`` is the explicit way to overwrite.
        """
        if self.segment.row_of(doc_id) >= 0:
            raise ValueError(f"document {doc_id!r} is already indexed")
        self.mutable.add(doc_id, tokens)
        self._stale()

    def add_many(self, docs: Iterable[tuple[int, Sequence[str]]]) -> None:
        """Index many new documents at once, as ``add`` on each would; nothing changes if one is refused."""
        pairs = list(docs)
        # Ids that are not 64-bit integers are the mutable part's to refuse.
        ids = [doc_id for doc_id, _ in pairs if type(doc_id) is int and -(1 << 63) <= doc_id < 1 << 63]
        known = np.flatnonzero(self.segment.rows_of(np.array(ids, dtype=np.int64)) >= 0)
        if len(known):
            raise ValueError(f"document {ids[int(known[0])]!r} is already indexed")
        self.mutable.add_many(pairs)
        self._stale()

    def remove(self, doc_id: int) -> None:
        """Forget a document; raise ``KeyError`` if ``doc_id`` is not indexed."""
        if doc_id in self.mutable:
            self.mutable.remove(doc_id)
        else:
            row = self.segment.row_of(doc_id)
            if row < 0:
                raise KeyError(doc_id)
            self.segment.remove(row)
        self._stale()

    def replace(self, doc_id: int, tokens: Sequence[str]) -> None:
        """Index ``tokens`` under ``doc_id``, whether or not it was indexed before."""
        if doc_id in self:
            self.remove(doc_id)
        self.add(doc_id, tokens)

    def prepare(self) -> None:
        """Make the score arrays that the next ``MEMO_QUERIES`` queries fill, and touch their memory now.

        A query's scores are an array of a float per document (8.7 MB at a million chunks), and memory a
        process touches for the first time costs a page fault per 4 KB page: on this project's test machine
        (a virtual machine) 20–30 µs each, 40–60 ms for one array, which made the first questions after a
        start the slowest. The server calls this once its indexing is done (``Session.prepare_answers``);
        the arrays are the ones the remembered queries would hold anyway."""
        size = self._slot_count()
        self._spares = [spare for spare in self._spares if len(spare[0]) >= size]
        for _ in range(MEMO_QUERIES + 1 - len(self._memo) - len(self._spares)):
            spare = np.empty(size + max(MIN_SLACK, int(size * SLACK_SHARE)))
            spare.fill(0.0)
            self._spares.append((spare, np.zeros(0, dtype=np.int64)))

    def compact(self) -> bool:
        """Fold the mutable part and the segment's live rows into one new segment in memory (same scores; what
        a save does when its file cannot be written); returns whether there was anything to fold. With no
        document added or removed since the last fold the segment is already that one, and is kept."""
        if self._folded():
            return False
        self.segment = FrozenSegment.merge(self.segment, self.mutable)
        self.mutable = MutableBM25()
        self._stale()
        return True

    def merged(self) -> tuple[Sequence[str], dict[str, Iterable[np.ndarray]]]:
        """The terms and arrays of one segment holding every live document, the large arrays in pieces made
        as they are read (``FrozenSegment.merged``), for a save that writes them to a file and then serves
        the segment from it; the index does not change."""
        if self._folded():
            return self.segment.terms, in_one_piece(self.segment.arrays())
        return FrozenSegment.merged(self.segment, self.mutable)

    def _folded(self) -> bool:
        """Whether the segment holds exactly the live documents: none added or removed since it was made."""
        return not self.pending and self.segment.live == len(self.segment.alive)

    @property
    def pending(self) -> int:
        """Documents in the mutable part: what ``compact`` would fold in."""
        return len(self.mutable)

    def scores(self, query: Sequence[str], doc_ids: Iterable[int] | None = None) -> dict[int, float]:
        """Return BM25 scores keyed by document id.

        Without ``doc_ids``: every document that contains at least one query
        term, whatever its score. With ``doc_ids``: exactly those documents,
        0.0 for those sharing no term; an id that is not indexed raises
        ``KeyError``, because a caller asking about it is out of step with the
        index.
        """
        if doc_ids is not None:
            wanted = list(dict.fromkeys(doc_ids))
            return dict(zip(wanted, self.score_array(query, wanted).tolist()))
        accumulated, matched = self._accumulate(query)
        return dict(zip(self._ids_at(matched).tolist(), accumulated[matched].tolist()))

    def score_array(self, query: Sequence[str], doc_ids: Sequence[int]) -> np.ndarray:
        """The BM25 scores of ``doc_ids``, in their order (0.0 for a document sharing no term); ``KeyError``
        for an id that is not indexed. For rankings that score every chunk of a hundred files at once."""
        slots = self._slots(list(doc_ids))
        accumulated, _ = self._accumulate(query)
        return accumulated[slots]

    def top_k(self, query: Sequence[str], k: int) -> list[tuple[int, float]]:
        """Return up to ``k`` (doc id, score) pairs, best first.

        The candidates are the documents ``scores(query)`` returns: every
        document sharing a query term, even one whose score is zero or
        negative, so that a match is never hidden by how common its terms
        are. Equal scores are ordered by ascending doc id, which makes the
        result independent of insertion order and storage.
        """
        if k <= 0:
            return []
        accumulated, matched = self._accumulate(query)
        scores = accumulated[matched]
        if len(matched) > k:
            # Keep every candidate tied with the k-th best, so that the sort
            # below, not the partition, decides which of them make the cut.
            kth_best = np.partition(scores, len(scores) - k)[len(scores) - k]
            keep = scores >= kth_best
            matched = matched[keep]
            scores = scores[keep]
        doc_ids = self._ids_at(matched)
        order = np.lexsort((doc_ids, -scores))[:k]
        return list(zip(doc_ids[order].tolist(), scores[order].tolist()))

    def postings(self, term: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The documents that contain ``term``: their ids, the term's frequency in each, and their lengths
        (the raw statistics, for callers that need more than a document's BM25 score: which chunks hold a
        word, ``strategies/base.py``)."""
        rows, tfs = self.segment.postings(term)
        ids, more_tfs, lengths = self.mutable.postings(term)
        return (np.concatenate([self.segment.doc_ids[rows], ids]), np.concatenate([tfs, more_tfs]),
                np.concatenate([self.segment.doc_len[rows].astype(np.int64), lengths]))

    def lengths(self) -> tuple[np.ndarray, np.ndarray]:
        """Every indexed document's id and length in tokens."""
        rows = self.segment.live_rows()
        ids, lengths = self.mutable.lengths()
        return (np.concatenate([self.segment.doc_ids[rows], ids]),
                np.concatenate([self.segment.doc_len[rows].astype(np.int64), lengths]))

    def lengths_of(self, doc_ids: Sequence[int]) -> np.ndarray:
        """The lengths in tokens of ``doc_ids`` (one file's chunks, where ``lengths`` gives every document's);
        ``KeyError`` for an id that is not indexed, as ``score_array``."""
        return self._at(self._slots(list(doc_ids)), self.segment.doc_len, self.mutable.slot_columns()[1])

    def shared_terms(self, doc_id: int, terms: Iterable[str]) -> set[str]:
        """Which of ``terms`` a document holds, read from its forward index (a reason that spells out a place's
        matching words used to tokenize its text again); ``KeyError`` for an id not indexed."""
        if doc_id in self.mutable:
            return self.mutable.shared_terms(doc_id, terms)
        row = self.segment.row_of(doc_id)
        if row < 0:
            raise KeyError(doc_id)
        numbers = set(self.segment.terms_of(row).tolist())
        return {term for term in terms if self.segment.number(term) in numbers}

    def df(self, term: str) -> int:
        """How many documents contain ``term``."""
        return self.segment.df(term) + self.mutable.df(term)

    # Slots: the segment's rows first, then the mutable part's slots (its slot 0 is a graveyard).

    def _slots(self, doc_ids: list[int]) -> np.ndarray:
        """The slots of many documents at once (one binary search over the segment for all of them), for
        questions that score every chunk of a hundred files; ``KeyError`` for an id not indexed."""
        slots = self.segment.rows_of(np.array(doc_ids, dtype=np.int64))
        elsewhere = np.flatnonzero(slots < 0)
        if len(elsewhere):
            # The rest are the mutable part's (all of them midway through a first refresh).
            others = [doc_ids[position] for position in elsewhere.tolist()]
            found = self.mutable.slots_of(others)
            unknown = np.flatnonzero(found < 0)
            if len(unknown):
                raise KeyError(others[int(unknown[0])])
            slots[elsewhere] = found + len(self.segment.doc_ids)
        return slots

    def _ids_at(self, slots: np.ndarray) -> np.ndarray:
        """The document ids of slots."""
        return self._at(slots, self.segment.doc_ids, self.mutable.slot_columns()[0])

    def _at(self, slots: np.ndarray, segment_column: np.ndarray, mutable_column: np.ndarray) -> np.ndarray:
        """A column's values at slots, read from each part without first joining the segment's column (every
        row of it) to the mutable part's."""
        rows = len(self.segment.doc_ids)
        found = np.empty(len(slots), dtype=np.int64)
        inside = slots < rows
        found[inside] = segment_column[slots[inside]]
        found[~inside] = mutable_column[slots[~inside] - rows]
        return found

    def _stale(self) -> None:
        self._average_idf = None
        self._norms = None
        self._terms.clear()
        for remembered in self._memo.values():
            self._spare(remembered)
        self._memo.clear()

    def _slot_count(self) -> int:
        """Slots: the segment's rows, then the mutable part's."""
        return len(self.segment.doc_ids) + len(self.mutable.slot_columns()[0])

    def _zeros(self, size: int) -> np.ndarray:
        """``size`` zeros to accumulate scores in: the front of a spare array, its scored slots set back to zero
        (its memory touched already, and the rest of it zero), else a new array with room for documents added
        later. A spare too short for the documents now is dropped."""
        while self._spares:
            spare, scored = self._spares.pop()
            if len(spare) >= size:
                spare[scored] = 0.0
                return spare[:size]
        return np.zeros(size + max(MIN_SLACK, int(size * SLACK_SHARE)))[:size]

    def _spare(self, remembered: tuple[np.ndarray, np.ndarray]) -> None:
        """Keep the array under a forgotten query's scores (made by ``_zeros``; no caller holds it: every public
        method copies what it returns) with the slots it scored, for the next query; at most ``MEMO_QUERIES + 1``
        of them."""
        scores, scored = remembered
        if scores.base is not None and len(self._spares) <= MEMO_QUERIES:
            self._spares.append((scores.base, scored))

    def _slot_norms(self, average: float) -> np.ndarray:
        """Every slot's length norm, computed once per version of the index: a question scores three or four
        queries whose postings total a million at 100,000 files, and gathering each posting's length and
        normalising it again was a third of the time (the same operations on the same values, so the scores
        are the same to the bit)."""
        if self._norms is None:
            lengths = np.concatenate([self.segment.doc_len.astype(np.int64), self.mutable.slot_columns()[1]])
            # Only documents without a term make the average 0; every length is 0 then, and no posting reads a norm.
            self._norms = self.k1 * (1 - self.b + self.b * lengths / (average or 1.0))
        return self._norms

    def _accumulate(self, query: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Per-slot scores and the slots of the documents sharing a query term, remembered for the next
        ``MEMO_QUERIES`` distinct queries until the index changes (both arrays are read-only)."""
        key = tuple(query)
        found = self._memo.get(key)
        if found is None:
            found = self._accumulate_afresh(key, self._known_prefix(key))
            for array in found:
                array.flags.writeable = False
            if len(self._memo) >= MEMO_QUERIES:
                self._spare(self._memo.pop(next(iter(self._memo))))
            self._memo[key] = found
        return found

    def _known_prefix(self, key: tuple[str, ...]) -> tuple[str, ...]:
        """The longest remembered query that begins ``key`` (a question's terms, then the same with word forms
        and feedback terms after them), or ``()``."""
        best: tuple[str, ...] = ()
        for known in self._memo:
            if len(best) < len(known) < len(key) and key[:len(known)] == known:
                best = known
        return best

    def _accumulate_afresh(self, query: tuple[str, ...], prefix: tuple[str, ...] = ()) -> tuple[np.ndarray, np.ndarray]:
        """Return per-slot scores and the slots of the documents sharing a query term, continuing from the
        remembered scores of ``prefix`` (a beginning of ``query``) with the rest of its terms.

        Contributions are added term by term in query order, as ``BM25Okapi``
        does, so the floating-point sums agree with it to the last bit or so;
        continuing from a prefix adds the same amounts in the same order.
        """
        rows = len(self.segment.doc_ids)
        count = len(self)
        if not count:
            return np.zeros(self._slot_count()), np.zeros(0, dtype=np.int64)
        accumulated, prefix_hits = self._zeros(self._slot_count()), None
        if prefix:
            remembered, prefix_hits = self._memo[prefix]
            # Every other slot of the remembered scores is zero, as the new array's.
            accumulated[prefix_hits] = remembered[prefix_hits]
        contributions: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        all_positive = True
        for term in query[len(prefix):]:
            if term not in contributions:
                found = self._contribution(term, count)
                if found is None:
                    continue
                contributions[term] = found[:2]
                all_positive = all_positive and found[2]
            slots, contribution = contributions[term]
            # ``add.at`` adds in one pass where ``accumulated[slots] += ...`` gathers, adds and scatters (a
            # term's slots are distinct, so the sums are the same to the bit): 2.5× faster on 400,000 postings.
            np.add.at(accumulated, slots, contribution)
        # The mutable part's graveyard slot collects its tombstones' contributions.
        accumulated[rows] = 0.0
        if all_positive and prefix_hits is None:
            # A term with positive idf adds a positive amount to every document
            # containing it, so a positive sum is exactly "shares a term".
            return accumulated, np.flatnonzero(accumulated > 0)
        # Otherwise contributions can be zero or cancel out (or the prefix's may have), and membership
        # has to be recorded separately.
        hit = np.zeros(len(accumulated), dtype=bool)
        if prefix_hits is not None:
            hit[prefix_hits] = True
        for slots, _ in contributions.values():
            hit[slots] = True
        hit[rows:rows + 1] = False
        return accumulated, np.flatnonzero(hit)

    def _contribution(self, term: str, count: int) -> tuple[np.ndarray, np.ndarray, bool] | None:
        """The slots of the documents holding ``term``, what the term adds to each one's score, and whether
        its idf is positive; None for a term no document holds. Kept for the next queries until an edit,
        within the budget (``TERM_MEMO_SHARE``, ``TERM_MEMO_POSTINGS``), the least recently used dropped first."""
        found = self._terms.pop(term, None)
        if found is None:
            df = self.df(term)
            if df == 0:
                return None
            idf = self._idf(df, count)
            slots, tfs = self.segment.postings(term)
            raw = self.mutable.raw(term)
            if raw is not None:
                slots = np.concatenate([slots, raw[0] + len(self.segment.doc_ids)])
                tfs = np.concatenate([tfs, raw[1]])
            norms = self._slot_norms((self.segment.live_length + self.mutable.total_length) / count)
            # Same operations in the same order as BM25Okapi.get_scores.
            saturation = tfs * (self.k1 + 1) / (tfs + norms[slots])
            contribution = idf * saturation
            for array in (slots, contribution):
                array.flags.writeable = False
            found = (slots, contribution, idf > 0)
            held = len(slots) + sum(len(kept[0]) for kept in self._terms.values())
            budget = min(TERM_MEMO_POSTINGS, len(self.segment.post_doc) // TERM_MEMO_SHARE)
            while held > budget and self._terms:
                held -= len(self._terms.pop(next(iter(self._terms)))[0])
            if held > budget:
                # Larger than the budget alone: not kept.
                return found
        self._terms[term] = found
        return found

    def _idf(self, df: int, count: int) -> float:
        """Return a term's idf, floored like ``BM25Okapi`` when it is negative."""
        idf = math.log(count - df + 0.5) - math.log(df + 0.5)
        if idf < 0:
            return self.epsilon * self._vocabulary_average_idf(count)
        return idf

    def _vocabulary_average_idf(self, count: int) -> float:
        """The mean idf over the vocabulary, from a histogram "document frequency → number of terms"."""
        if self._average_idf is None:
            if self.segment.live:
                frequencies = self._merged_frequencies()
            else:
                # Midway through a first index everything is in the mutable part: no term to match in the segment.
                frequencies = self.mutable.document_frequencies()
            histogram = np.bincount(frequencies) if len(frequencies) else np.zeros(1, dtype=np.int64)
            dfs = np.flatnonzero(histogram[1:]) + 1
            idfs = np.log(count - dfs + 0.5) - np.log(dfs + 0.5)
            vocabulary = int(histogram[1:].sum())
            self._average_idf = float(np.dot(histogram[dfs], idfs)) / vocabulary if vocabulary else 0.0
        return self._average_idf

    def _merged_frequencies(self) -> np.ndarray:
        """Each term's document frequency over both parts (a term of both counted once, with their sum)."""
        frequencies = self.segment.live_df
        terms, more = self.mutable.frequencies()
        if terms:
            numbers = np.fromiter(map(self.segment.number, terms), dtype=np.int64, count=len(terms))
            shared = numbers >= 0
            before = np.zeros(len(terms), dtype=np.int64)
            before[shared] = frequencies[numbers[shared]]
            # Each term of the mutable part moves from its segment frequency to the sum of both.
            frequencies = np.concatenate([np.delete(frequencies, numbers[shared]), before + more])
        return frequencies
