"""BM25 over whole files, computed from the chunks' postings.

A bug report names words spread over a file (a class's name in one method,
the failing field in another), so at file level BM25 over whole files beats
BM25 over chunks: the benchmarks measured it (BM25 over whole source files,
multi-language issues, hit@5 0.64 against 0.47 for chunks). Keeping a second
index of files would double the postings; a file's statistics are the sums of
its chunks', so they are gathered from the chunk index at query time instead:
a term's frequency in a file is the sum over its chunks, a file's length the
sum of its chunks' lengths, and a term's document frequency the number of
files among its postings. The idf is Lucene's, ``log(1 + (N - df + 0.5) / (df
+ 0.5))``, which never goes negative on small workspaces.
"""

from __future__ import annotations

import math
import weakref
from bisect import bisect_left
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import chain

import numpy as np

from rag_lsp.index.index_records import FileEntry
from rag_lsp.index.postings.bm25_segment import FrozenSegment
from rag_lsp.index.root_index import Index

K1 = 1.2
B = 0.75


@dataclass(slots=True)
class _Files:
    """Which file each chunk belongs to, and each file's length, for one version of an index; and what
    questions on that version have worked out from them."""

    version: tuple[int, int]
    paths: tuple[str, ...]
    # File number of each chunk id; -1 for ids no chunk holds any more.
    chunk_file: np.ndarray
    lengths: np.ndarray
    # The index's entries these were made from, to tell the files an edit changed.
    entries: dict[str, FileEntry]
    # The segment the row-to-file column below was made for, and the column (``_row_file``).
    rows: tuple[FrozenSegment, np.ndarray] | None = None
    # Terms' files and frequencies in them (``_term_files``), and how many files those hold in all.
    memo: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    remembered: int = 0


# More changed files than this are counted again from scratch, which costs about as much as moving them.
MAX_MOVED_FILES = 64
# Files remembered for terms (``_term_files``) until the memo starts again: 8 bytes each, 8 MB in all.
MEMO_FILES = 1_000_000


_CACHE: weakref.WeakKeyDictionary[Index, _Files] = weakref.WeakKeyDictionary()


def file_scores(index: Index, terms: Sequence[str]) -> dict[str, float]:
    """BM25 of every file that contains a query term; call under ``index.lock``."""
    files, totals = _totals(index, terms)
    hit = np.flatnonzero(totals > 0)
    return {files.paths[i]: float(totals[i]) for i in hit.tolist()}


def top_files(index: Index, terms: Sequence[str], limit: int) -> list[tuple[str, float]]:
    """The ``limit`` best files by BM25, ties broken by path; call under ``index.lock``. Selected on the score
    array: most of a large workspace's files share a word with a long question, and sorting them all as pairs
    cost more than scoring them."""
    files, totals = _totals(index, terms)
    hit = np.flatnonzero(totals > 0)
    scores = totals[hit]
    if 0 < limit < len(hit):
        # Only the files scoring at least the limit-th best can be among the best; the stable sort of those
        # alone keeps their order (a long question's words are in most files: 90,000 to sort at 100,000 files).
        kept = scores >= np.partition(scores, len(scores) - limit)[len(scores) - limit]
        hit, scores = hit[kept], scores[kept]
    # File numbers follow the paths' sorted order, so a stable sort of the scores breaks ties by path.
    best = hit[np.argsort(-scores, kind="stable")[:limit]]
    return [(files.paths[i], float(totals[i])) for i in best.tolist()]


def prepare(index: Index) -> None:
    """Make the chunk-to-file table of the index's current version, which the first question would make (0.1 s
    at 100,000 files); call under ``index.lock``."""
    _files(index)


def _totals(index: Index, terms: Sequence[str]) -> tuple[_Files, np.ndarray]:
    """The chunk-to-file table and every file's BM25 for ``terms``, by file number (0 for files without a
    query term).

    Each term's shares are added to the files holding it, in term order, so every file's sum is the same to
    the bit as one ``bincount`` over all (term, file) pairs: that pass, over an array of terms × files, cost a
    question of forty terms 60 ms at 100,000 files, and each term's files are now remembered
    (``_term_files``)."""
    files = _files(index)
    count = len(files.paths)
    totals = np.zeros(count)
    if not count or not terms:
        return files, totals
    average = float(files.lengths.sum()) / count or 1.0
    norms = K1 * (1 - B + B * files.lengths / average)
    for term, times in Counter(terms).items():
        present, frequencies = _term_files(index, files, term)
        if not len(present):
            continue
        found = frequencies.astype(np.float64)
        weight = times * math.log(1 + (count - len(present) + 0.5) / (len(present) + 0.5))
        np.add.at(totals, present, weight * found * (K1 + 1) / (found + norms[present]))
    return files, totals


def _term_files(index: Index, files: _Files, term: str) -> tuple[np.ndarray, np.ndarray]:
    """The numbers of the files holding ``term`` and its frequency in each (the sum over their chunks),
    remembered until the index changes: a question scores its terms again with more terms after them, and the
    next question shares many. The segment's postings go to files through ``row_file`` in one gather."""
    known = files.memo.get(term)
    if known is not None:
        return known
    count = len(files.paths)
    segment = index.bm25.segment
    row_file = _row_file(segment, files)
    number = segment.number(term)
    if number >= 0:
        start, stop = int(segment.term_ptr[number]), int(segment.term_ptr[number + 1])
        frequencies = np.bincount(row_file[segment.post_doc[start:stop]], weights=segment.post_tf[start:stop],
                                  minlength=count + 1)
    else:
        frequencies = np.zeros(count + 1)
    doc_ids, tfs, _ = index.bm25.mutable.postings(term)
    if len(doc_ids):
        frequencies += np.bincount(_owners(files, doc_ids), weights=tfs, minlength=count + 1)
    present = np.flatnonzero(frequencies[:count])
    # Frequencies are whole numbers far below 2**24, so 32-bit floats hold them exactly, in half the memory.
    found = (present.astype(np.int32), frequencies[present].astype(np.float32))
    if files.remembered + len(present) > MEMO_FILES:
        files.memo.clear()
        files.remembered = 0
    files.memo[term] = found
    files.remembered += len(present)
    return found


def _row_file(segment: FrozenSegment, files: _Files) -> np.ndarray:
    """The file number of each of ``segment``'s rows (``len(files.paths)`` for one whose chunk no file holds),
    made once per segment and table. A removed row needs no check of its own: chunk ids are never reused
    (``Index._install``), so a removed chunk is in no file's list and the table maps it to -1."""
    if files.rows is None or files.rows[0] is not segment:
        files.rows = (segment, _owners(files, segment.doc_ids))
    return files.rows[1]


def _owners(files: _Files, chunk_ids: np.ndarray) -> np.ndarray:
    """The file number of each chunk id, ``len(files.paths)`` (a bin past the files) for one no file holds."""
    count = len(files.paths)
    owners = np.full(len(chunk_ids), count, dtype=np.int32)
    inside = chunk_ids < len(files.chunk_file)
    owners[inside] = files.chunk_file[chunk_ids[inside]]
    owners[owners < 0] = count
    return owners


def _files(index: Index) -> _Files:
    """The chunk-to-file table of the index's current version: after an edit, the last one with the edited
    files' chunks moved (on Django a rebuild cost the question after every keystroke 5 ms, and it grows with
    the chunks); after files were added or removed, or many changed, built again, since files are numbered in
    path order."""
    known = _CACHE.get(index)
    if known is not None and known.version == index.version:
        return known
    built = (_moved(index, known) if known is not None else None) or _built(index)
    _CACHE[index] = built
    return built


def _moved(index: Index, known: _Files) -> _Files | None:
    """``known`` with the chunks of the files whose entries changed moved to them, or None when the paths are
    not the same or too many files changed."""
    files = index.files
    if len(files) != len(known.paths):
        return None
    # The files the index's journal names since the table was made, else every file compared.
    journal = index.changed_since(known.version)
    candidates = files if journal is None else dict.fromkeys(journal)
    changed = [path for path in candidates if known.entries.get(path) is not files.get(path)]
    if len(changed) > MAX_MOVED_FILES or any(path not in known.entries or path not in files for path in changed):
        return None
    chunk_file, lengths = known.chunk_file, known.lengths
    top = max((max(files[path].chunk_ids, default=-1) for path in changed), default=-1)
    if top >= len(chunk_file):
        chunk_file = np.concatenate([chunk_file, np.full(top + 1 - len(chunk_file), -1, dtype=np.int64)])
    for path in changed:
        old = np.array(known.entries[path].chunk_ids, dtype=np.int64)
        chunk_file[old[old < len(chunk_file)]] = -1
    for path in changed:
        number = bisect_left(known.paths, path)
        ids = files[path].chunk_ids
        chunk_file[np.array(ids, dtype=np.int64)] = number
        lengths[number] = float(index.bm25.lengths_of(ids).sum())
    return _Files(index.version, known.paths, chunk_file, lengths, dict(files))


def _built(index: Index) -> _Files:
    """The chunk-to-file table made from every file."""
    paths = tuple(sorted(index.files))
    doc_ids, doc_lengths = index.bm25.lengths()
    # Every file's chunk ids in one array, with its file's number beside each: one assignment, not one a file.
    chunk_ids = [index.files[path].chunk_ids for path in paths]
    counts = [len(ids) for ids in chunk_ids]
    chunk_ids_all = np.fromiter(chain.from_iterable(chunk_ids), dtype=np.int64, count=sum(counts))
    size = 1 + max(int(doc_ids.max()) if len(doc_ids) else -1, int(chunk_ids_all.max()) if len(chunk_ids_all) else -1)
    chunk_file = np.full(size, -1, dtype=np.int64)
    chunk_file[chunk_ids_all] = np.repeat(np.arange(len(paths), dtype=np.int64), counts)
    owners = chunk_file[doc_ids]
    kept = owners >= 0
    lengths = np.bincount(owners[kept], weights=doc_lengths[kept].astype(float), minlength=len(paths))
    return _Files(index.version, paths, chunk_file, lengths, dict(index.files))
