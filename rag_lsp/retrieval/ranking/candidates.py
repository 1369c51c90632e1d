"""The ranked candidate lists that reciprocal-rank fusion combines, besides the evidence strategies' own.

Each list is one way of finding code for a question, and each is strong where
the others are weak: BM25 over chunks finds the function whose body uses the
words; BM25 over whole files finds the file whose parts, together, use them
(its place in the file is its best-matching chunk); definitions find the code
a name written in the question defines, including names the prose spells as
words (``session manager`` for ``SessionManager``). A list is an ordered
sequence of chunk ids with the reason each is there.
"""

from __future__ import annotations

import heapq
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rag_lsp.index.file_bm25 import top_files
from rag_lsp.index.root_index import Index
from rag_lsp.index.tables import WorkspaceTables
from rag_lsp.model import Definition
from rag_lsp.retrieval.query import Query

# How deep each list goes: deeper than any answer, shallow enough to stay cheap.
CHUNK_DEPTH = 200
FILE_DEPTH = 100
# A plain word naming more definitions than this is too common to be a name the question means.
MAX_WORD_DEFINITIONS = 5
# Definitions kept per name, so one common name does not fill the list.
PER_NAME = 8
# Path words match a question's word sharing at least this many first characters; a word naming more than
# this share of the files (``src``, ``lib``) says nothing about which.
MIN_PREFIX = 4
MAX_PATH_SHARE = 0.05
MIN_PATH_FILES = 3
# A file whose whole name is the word counts this much more than one whose name merely contains it.
EXACT_NAME = 2.0
_ENDINGS = ("ations", "ation", "ings", "ing", "ies", "ied", "ers", "er", "ed", "es", "s", "y")
STOPWORDS = frozenset("about does from have into that their them then there these this what when where which "
                      "with would should could will were they your".split())
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")


@dataclass(frozen=True, slots=True)
class Listed:
    """A chunk a list proposes, and why."""

    chunk_id: int
    reason: str


def bm25_chunks(index: Index, terms: Sequence[str]) -> list[Listed]:
    hits = index.bm25.top_k(list(terms), CHUNK_DEPTH) if terms else []
    return [Listed(chunk_id, f"bm25 over chunks {score:.2f}") for chunk_id, score in hits if score > 0]


def bm25_files(index: Index, terms: Sequence[str]) -> list[Listed]:
    """Files by BM25 over their whole text, each placed at its chunk that best matches the question."""
    files = top_files(index, terms, FILE_DEPTH) if terms else []
    best = best_chunks(index, terms, [path for path, _ in files])
    return [Listed(best[path], f"bm25 over whole files {score:.2f}") for path, score in files if path in best]


def best_chunks(index: Index, terms: Sequence[str], paths: Sequence[str]) -> dict[str, int]:
    """Each file's chunk that BM25 scores highest for ``terms`` (the first in the file's order among equals, so
    the first chunk when nothing matches); files without chunks are left out. One scoring pass scores the
    chunks of all the files, since a long question costs a full query."""
    groups = [entry.chunk_ids if (entry := index.files.get(path)) else () for path in paths]
    flat = [chunk_id for group in groups for chunk_id in group]
    if not flat:
        return {}
    scores = index.bm25.score_array(list(terms), flat) if terms else np.zeros(len(flat))
    # Each group's first position holding its greatest score (``argmax``), for all the groups at once.
    sizes = np.array([len(group) for group in groups if group])
    starts = np.cumsum(sizes) - sizes
    group_of = np.repeat(np.arange(len(sizes)), sizes)
    at_max = np.flatnonzero(scores == np.maximum.reduceat(scores, starts)[group_of])
    # Groups in ``at_max`` ascend, so each group's first position is where the group number changes (not
    # ``np.unique``, whose first call imports ``numpy.ma``: 20 ms of a warm start).
    firsts = at_max[np.flatnonzero(np.diff(group_of[at_max], prepend=-1))]
    return dict(zip((path for path, group in zip(paths, groups) if group), (flat[i] for i in firsts.tolist())))


def definitions(index: Index, query: Query, forms: Sequence[str] = ()) -> list[Listed]:
    """Chunks that define a name the question writes as code, or spells as words (joined, any case), or a rare
    plain word that names a definition, or a type or function named by one of ``forms`` (the question's prose
    words and their other forms: "parses" → ``Parser``); qualified and code-like names first."""
    listed: dict[int, Listed] = {}
    for name in query.names:
        for definition in index.symbols.lookup(name)[:PER_NAME]:
            _add(index, listed, definition, f"defines `{name}`")
    for name in spelled_names(query.text):
        for definition in index.symbols.by_name(name)[:PER_NAME]:
            _add(index, listed, definition, f"defines {definition.name}, spelled in the question")
    for word in query.words:
        if 0 < index.symbols.count(word) <= MAX_WORD_DEFINITIONS:
            for definition in index.symbols.by_name(word):
                _add(index, listed, definition, f"defines '{word}'")
    for form in forms:
        for name in (form.capitalize(), form):
            if 0 < index.symbols.count(name) <= MAX_WORD_DEFINITIONS:
                for definition in index.symbols.by_name(name):
                    _add(index, listed, definition, f"defines {definition.name}, named by '{form}'")
    return list(listed.values())


def path_words(index: Index, tables: WorkspaceTables, query: Query) -> list[Listed]:
    """Files whose name or folder is what the question talks about (``routing.py``, ``middleware/``), by how many
    of its words they match and how rare those words are among paths, placed at their best BM25 chunk.

    Projects name files after what they do, so this finds the file named for a concept that a question in
    prose describes, whose body may share fewer words with it than a longer file does. A word matches a
    path word that it starts, or that starts it, from ``MIN_PREFIX`` characters on (``dependency`` and
    ``dependencies``, ``serialize`` and ``serializer``).
    """
    words = [w for w in dict.fromkeys(query.terms) if len(w) >= MIN_PREFIX and w not in STOPWORDS]
    if not words:
        return []
    # Each word's files, kept until a path changes: the words of one question recur in the next ("model",
    # "form", "error" in a Django question), and a common one matches thousands of paths.
    named = tables.memo("files a path word names", dict[str, tuple[float, frozenset[str], frozenset[str]]],
                        paths_only=True)
    score: dict[str, float] = {}
    matched: dict[str, list[str]] = {}
    for word in words:
        known = named.get(word)
        if known is None:
            known = named[word] = _files_named_by_word(index, tables, word)
        rarity, found, exact = known
        for path in found:
            score[path] = score.get(path, 0.0) + rarity * (EXACT_NAME if path in exact else 1.0)
            matched.setdefault(path, []).append(word)
    ranked = heapq.nsmallest(FILE_DEPTH, score, key=lambda path: (-score[path], path))
    best = best_chunks(index, query.terms, ranked)
    return [Listed(best[path], f"its name says {', '.join(matched[path])}") for path in ranked if path in best]


def _files_named_by_word(index: Index, tables: WorkspaceTables, word: str) -> tuple[float, frozenset[str],
                                                                                   frozenset[str]]:
    """The rarity among paths of a question's word, the files whose name or folder it names (``path_words``),
    and those named exactly for it."""
    total = max(len(index.files), 1)
    buckets = path_stems(tables)
    # File names, stemmed, as they are asked for (a common word matches hundreds of files, and many share a name:
    # ``__init__.py``, ``index.js``, a vendored copy's every file), until a path changes.
    name_stems = tables.memo("file name stems", dict[str, str], paths_only=True)
    found: set[str] = set()
    root = stem(word)
    for part, part_root in buckets.get(root[:MIN_PREFIX], ()):
        shorter, longer = (root, part_root) if len(root) <= len(part_root) else (part_root, root)
        if len(shorter) >= MIN_PREFIX and longer.startswith(shorter):
            found.update(tables.files_named_by(part))
    # A file named exactly for the word (``Parser.scala`` for "parsers") counts however common the word is in
    # other paths; otherwise a word in many paths says nothing about which.
    exact = set()
    for path in found:
        name = path.rsplit("/", 1)[-1]
        name_stem = name_stems.get(name)
        if name_stem is None:
            name_stem = name_stems[name] = stem(_file_stem(name))
        if name_stem == root:
            exact.add(path)
    if len(found) > max(MIN_PATH_FILES, MAX_PATH_SHARE * total):
        found = exact
    rarity = math.log(1 + total / len(found)) if found else 0.0
    return rarity, frozenset(found), frozenset(exact)


def path_stems(tables: WorkspaceTables) -> dict[str, list[tuple[str, str]]]:
    """Path words by the first characters of their stem: a match shares them (both stems are that long); kept
    until a path comes or goes."""
    return tables.memo("path stems", lambda: _path_stems(tables), paths_only=True)


def _path_stems(tables: WorkspaceTables) -> dict[str, list[tuple[str, str]]]:
    buckets: dict[str, list[tuple[str, str]]] = {}
    for part in tables.path_vocabulary():
        part_root = stem(part)
        buckets.setdefault(part_root[:MIN_PREFIX], []).append((part, part_root))
    return buckets


def _file_stem(name: str) -> str:
    """A file name without its extensions, underscores and dashes, in lower case."""
    return name.split(".", 1)[0].replace("_", "").replace("-", "").lower()


def stem(word: str) -> str:
    """``word`` without a common English ending, when at least ``MIN_PREFIX`` characters remain: ``routes``,
    ``routing`` and ``router`` all give ``rout``; ``dependencies`` and ``dependency`` give ``dependenc``."""
    for ending in _ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= MIN_PREFIX:
            return word[: -len(ending)]
    return word


def spelled_names(text: str) -> list[str]:
    """Identifiers the prose spells as separate words: ``session manager`` → ``SessionManager``,
    ``session_manager``, ``sessionManager`` (pairs and triples of adjacent words)."""
    words = _WORD.findall(text)
    names = []
    for size in (2, 3):
        for start in range(len(words) - size + 1):
            parts = [w.lower() for w in words[start:start + size]]
            if any(len(part) < 3 for part in parts):
                continue
            names += ["".join(p.title() for p in parts), "_".join(parts), parts[0] + "".join(p.title() for p in parts[1:])]
    return list(dict.fromkeys(names))


def _add(index: Index, listed: dict[int, Listed], definition: Definition, reason: str) -> None:
    chunk_id = index.definition_chunk(definition)
    if chunk_id is not None and chunk_id not in listed:
        listed[chunk_id] = Listed(chunk_id, reason)
