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
from dataclasses import dataclass
from itertools import chain

import numpy as np

from rag_lsp.index.root_index import FileEntry, Index

K1 = 1.2
B = 0.75


@dataclass(frozen=True, slots=True)
class _Files:
    """Which file each chunk belongs to, and each file's length, for one version of an index."""

    version: tuple[int, int]
    paths: tuple[str, ...]
    # File number of each chunk id; -1 for ids no chunk holds any more.
    chunk_file: np.ndarray
    lengths: np.ndarray
    # The index's entries these were made from, to tell the files an edit changed.
    entries: dict[str, FileEntry]


# More changed files than this are counted again from scratch, which costs about as much as moving them.
MAX_MOVED_FILES = 64


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
    # File numbers follow the paths' sorted order, so a stable sort of the scores breaks ties by path.
    best = hit[np.argsort(-totals[hit], kind="stable")[:limit]]
    return [(files.paths[i], float(totals[i])) for i in best.tolist()]


def _totals(index: Index, terms: Sequence[str]) -> tuple[_Files, np.ndarray]:
    """The chunk-to-file table and every file's BM25 for ``terms``, by file number (0 for files without a
    query term).

    Every term's frequencies per file are counted in one ``bincount`` over (term, file) pairs, and the terms'
    shares summed per file in one more, in term order: a loop of array operations per term over every file
    cost a question of twenty terms on Django 3.5 ms, most of it in the calls themselves. The sums are the
    loop's, to the bit (``bincount`` adds each file's shares in the order given)."""
    files = _files(index)
    count = len(files.paths)
    totals = np.zeros(count)
    if not count or not terms:
        return files, totals
    average = float(files.lengths.sum()) / count or 1.0
    norms = K1 * (1 - B + B * files.lengths / average)
    repeats = Counter(terms)
    owners_of, tfs_of = [], []
    for number, term in enumerate(repeats):
        doc_ids, tfs, _ = index.bm25.postings(term)
        inside = doc_ids < len(files.chunk_file)
        owners, tfs = files.chunk_file[doc_ids[inside]], tfs[inside]
        kept = owners >= 0
        owners_of.append(owners[kept] + number * count)
        tfs_of.append(tfs[kept])
    # Each term's frequency in each file, as one row per term.
    tf = np.bincount(np.concatenate(owners_of), weights=np.concatenate(tfs_of), minlength=len(repeats) * count)
    present = np.flatnonzero(tf > 0)
    term_of, file_of = np.divmod(present, count)
    df = np.bincount(term_of, minlength=len(repeats))
    weight = np.array([times * math.log(1 + (count - found + 0.5) / (found + 0.5))
                       for times, found in zip(repeats.values(), df.tolist())])
    found = tf[present]
    shares = weight[term_of] * found * (K1 + 1) / (found + norms[file_of])
    return files, np.bincount(file_of, weights=shares, minlength=count)


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
