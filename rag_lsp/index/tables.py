"""Lookup tables over an index that strategies share: files by name, directories, path words, uses by name.

The index is organised for BM25 and for definitions; strategies also ask
"which files are called ``stock.py``", "which directories end in
``inventory``", "how rare is the word ``l031`` among paths" and "which files
use ``post``". Answering those by walking every file per query would cost
more than the rest of the ranking, so the tables are kept per index and
brought up to date before each ranking by comparing file entries: the index
replaces a file's entry whenever the file changes, so an unchanged entry
object means an unchanged file.

The uses of a name are kept as the files that use it; the references
themselves are picked out of those files' lists when the name is first asked
for, and remembered until a file changes. Grouping all of them up front (on
Django 178,000 references into 42,000 lists) cost the first question after a
warm start a tenth of a second, and a question asks for a few dozen names.
The files whose references are still a snapshot's (``reference_table.py``)
are not walked at all: a name's uses in them are read from the snapshot's
columns when the name is asked for.
"""

from __future__ import annotations

import threading
import weakref
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from operator import itemgetter
from typing import TypeVar, cast

from rag_lsp.gc_pause import paused_gc
from rag_lsp.index.admission import is_secret_path
from rag_lsp.index.module_map import name_and_suffix
from rag_lsp.index.root_index import Index
from rag_lsp.index.store.reference_table import StoredReferences
from rag_lsp.index.symbol_table import discard
from rag_lsp.index.terms import tokenize
from rag_lsp.model import Reference

T = TypeVar("T")
# A reference's name (``Reference.name``), read in C over a file's references.
_NAME = itemgetter(0)


class WorkspaceTables:
    """Derived lookups of one index; call ``sync`` (under the index's lock) before reading."""

    def __init__(self) -> None:
        self._entries: dict[str, object] = {}
        self._by_name: dict[str, set[str]] = defaultdict(set)
        # Directory → number of files under it, at any depth; directories by their last segment.
        self._dir_files: Counter[str] = Counter()
        self._dirs_by_name: dict[str, set[str]] = defaultdict(set)
        # Path word → files whose path (without extension) contains it.
        self._path_words: dict[str, set[str]] = defaultdict(set)
        self._words_of: dict[str, tuple[str, ...]] = {}
        # Word → files whose name or folder (the immediate parent) contains it: what a file is named for.
        self._name_words: dict[str, set[str]] = defaultdict(set)
        self._name_words_of: dict[str, tuple[str, ...]] = {}
        # Name → the files that use it, in the order they were added (a dict as an ordered set); each file's
        # references as the index held them when the file was added (files that use any name), and the names
        # they use.
        self._users: dict[str, dict[str, None]] = defaultdict(dict)
        self._references: dict[str, Sequence[Reference]] = {}
        self._used_in: dict[str, tuple[str, ...]] = {}
        # The snapshot's references, for the files added with them unchanged (those still in ``_from_stored``).
        self._stored: StoredReferences | None = None
        self._from_stored: set[str] = set()
        # Name → file → its uses there, for the names asked for since a file last changed.
        self._uses: dict[str, dict[str, list[Reference]]] = {}
        self._secret: set[str] = set()
        # Directory → what ``_directory`` derives from it.
        self._by_directory: dict[str, tuple[list[str], frozenset[str], frozenset[str]]] = {}
        self._sorted: list[str] | None = None
        self._version: tuple[int, int] | None = None
        self._memo: dict[str, object] = {}
        # What ``memo`` keeps for callers that read the paths alone, kept while the set of paths is the same.
        self._path_memo: dict[str, object] = {}

    def sync(self, index: Index) -> None:
        # The index's version changes with every file added, changed or removed: the same version needs no
        # comparison of entries (which cost a few milliseconds per question on 5,000 files), and after an edit
        # the index's journal names the files to compare.
        references = index.references
        if self._entries and references.stored is not None and references.stored is not self._stored:
            self._read_from(references.stored, references.is_stored)
        if index.version == self._version:
            return
        journal = index.changed_since(self._version) if self._entries else None
        self._version = index.version
        files = index.files
        # The paths to compare: those the journal names, in the order of the index's files (as a comparison of
        # every file adds them), else every path.
        named = list(files) if journal is None else _in_order_of(files, dict.fromkeys(journal))
        stale = [p for p, e in self._entries.items() if files.get(p) is not e] if journal is None else \
            [p for p in named if p in self._entries and files.get(p) is not self._entries[p]]
        if not stale and len(files) == len(self._entries):
            return
        self._memo.clear()
        # The same paths when every stale one is still there (changed, not removed) and none is new.
        if len(files) != len(self._entries) or any(path not in files for path in stale):
            self._path_memo.clear()
        # The uses of the names the changed files used, before and after, are found again (all of them when
        # every file was compared).
        forget = self._names_used(stale) if journal is not None else None
        if forget is None:
            self._uses.clear()
        if not self._entries and references.stored is not None:
            self._stored = references.stored
        with paused_gc(keep=not self._entries):
            for path in stale:
                self._remove(path)
            added = [path for path in named if path in files and path not in self._entries]
            for path in added:
                entry = files[path]
                if references.stored is self._stored and references.is_stored(path):
                    self._add(path, entry, None)
                else:
                    self._add(path, entry, references.get(path, ()))
        if forget is not None:
            for name in forget | self._names_used(added):
                self._uses.pop(name, None)
        self._sorted = None

    def _read_from(self, stored: StoredReferences, is_stored: Callable[[str], bool]) -> None:
        """The index now reads references from ``stored`` (a spill or snapshot written since the last sync):
        the files whose references it holds are read from it here too, and the references these tables held
        as objects for them are let go. Kept, a refresh asked questions while it ran held every file's
        references as objects to its end, although the index had moved them into its files (at 100,000
        files the server's peak was 3.2 GB against 1.9 without questions during indexing)."""
        for path in [path for path in self._used_in if is_stored(path)]:
            self._drop_uses(path)
            self._from_stored.add(path)
        self._stored = stored
        # The uses found so far hold the objects; they are read again from the columns when asked.
        self._uses.clear()

    def _names_used(self, paths: list[str]) -> set[str]:
        """The names the files of ``paths`` use, as these tables hold them (the snapshot's for a file added
        from it)."""
        names: set[str] = set()
        for path in paths:
            if path in self._from_stored and self._stored is not None:
                names.update(map(_NAME, self._stored.of(path)))
            else:
                names.update(self._used_in.get(path, ()))
        return names

    @property
    def paths(self) -> list[str]:
        """Every indexed path, sorted."""
        if self._sorted is None:
            self._sorted = sorted(self._entries)
        return self._sorted

    def memo(self, name: str, build: Callable[[], T], *, paths_only: bool = False) -> T:
        """What ``build`` derives from these tables, built once and kept until a file changes: for a caller's
        own lookup (path words by stem) that would otherwise be rebuilt for every question. ``paths_only``
        says that it reads the paths alone, so it is kept until a file is added or removed: an edit changes a
        file, and the question after it would build the lookup again."""
        kept = self._path_memo if paths_only else self._memo
        if name not in kept:
            kept[name] = build()
        return cast(T, kept[name])

    def is_secret(self, path: str) -> bool:
        """Whether an indexed file has a secret's name (an editor buffer can be indexed without the walk)."""
        return path in self._secret

    def files_named(self, name: str) -> list[str]:
        return sorted(self._by_name.get(name, ()))

    def directories_named(self, name: str) -> list[str]:
        return sorted(self._dirs_by_name.get(name, ()))

    def files_under(self, directory: str) -> int:
        return self._dir_files.get(directory, 0)

    def files_with_path_word(self, word: str) -> list[str]:
        return sorted(self._path_words.get(word, ()))

    def path_vocabulary(self) -> list[str]:
        """Every word of a file's name or folder, for prefix matching."""
        return list(self._name_words)

    def files_named_by(self, word: str) -> set[str]:
        """Files whose name or folder contains ``word``."""
        return self._name_words.get(word, set())

    def uses(self, name: str) -> dict[str, list[Reference]]:
        """File → the references to ``name`` there, in file order; files in the order they were added."""
        found = self._uses.get(name)
        if found is None:
            stored, kept = self._stored, self._from_stored
            found = {path: uses for path, uses in stored.uses_of(name).items()
                     if path in kept} if stored is not None else {}
            references = self._references
            for path in self._users.get(name, ()):
                found[path] = [r for r in references[path] if r.name == name]
            if not found:
                return {}
            self._uses[name] = found
        return found

    def use_files(self, name: str) -> int:
        """How many files ``uses`` has for ``name``, without making the references when they are not made yet:
        a strategy that wants a name's uses only when few files have them asks this first."""
        found = self._uses.get(name)
        if found is not None:
            return len(found)
        stored = self._stored
        kept = self._from_stored
        count = sum(1 for path in stored.files_of(name) if path in kept) if stored is not None else 0
        return count + len(self._users.get(name, ()))

    def _add(self, path: str, entry: object, references: Sequence[Reference] | None) -> None:
        """Add a file; ``references`` None means the snapshot's, whose uses of a name are read from its columns."""
        self._entries[path] = entry
        if is_secret_path(path):
            self._secret.add(path)
        name = path.rsplit("/", 1)[-1]
        self._by_name[name].add(path)
        directories, directory_words, folder_words = self._directory(path[: max(path.rfind("/"), 0)])
        # A directory that holds files already is named in ``_dirs_by_name``, and so are its parents.
        named = bool(directories) and directories[0] in self._dir_files
        for directory in directories:
            self._dir_files[directory] += 1
            if not named:
                self._dirs_by_name[directory.rsplit("/", 1)[-1]].add(directory)
        # A token never spans a ``/``: the path's words are its directory's and its name's.
        stem_words = _stem_words(name)
        words = tuple(sorted(directory_words | stem_words))
        self._words_of[path] = words
        for word in words:
            self._path_words[word].add(path)
        named = tuple(sorted(stem_words | folder_words))
        self._name_words_of[path] = named
        for word in named:
            self._name_words[word].add(path)
        if references is None:
            self._from_stored.add(path)
            return
        if references:
            self._references[path] = references
        used = tuple(dict.fromkeys(map(_NAME, references)))
        users = self._users
        for used_name in used:
            users[used_name][path] = None
        self._used_in[path] = used

    def _directory(self, directory: str) -> tuple[list[str], frozenset[str], frozenset[str]]:
        """A directory's own path and its parents (deepest first), the words of its path and those of its
        last segment (the folder a file is named for); remembered, since files share directories."""
        found = self._by_directory.get(directory)
        if found is None:
            chain = _directories(directory + "/") if directory else []
            folder = directory.rsplit("/", 1)[-1]
            found = self._by_directory[directory] = (chain, frozenset(tokenize(directory)), frozenset(tokenize(folder)))
        return found

    def _remove(self, path: str) -> None:
        del self._entries[path]
        self._secret.discard(path)
        discard(self._by_name, name_and_suffix(path)[0], path)
        for directory in _directories(path):
            self._dir_files[directory] -= 1
            if not self._dir_files[directory]:
                del self._dir_files[directory]
                discard(self._dirs_by_name, directory.rsplit("/", 1)[-1], directory)
        for word in self._words_of.pop(path, ()):
            discard(self._path_words, word, path)
        for word in self._name_words_of.pop(path, ()):
            discard(self._name_words, word, path)
        self._from_stored.discard(path)
        self._drop_uses(path)

    def _drop_uses(self, path: str) -> None:
        """Forget the references held as objects for a file, and which names it uses."""
        self._references.pop(path, None)
        for name in self._used_in.pop(path, ()):
            users = self._users[name]
            users.pop(path, None)
            if not users:
                del self._users[name]


def _in_order_of(files: Mapping[str, object], paths: dict[str, None]) -> list[str]:
    """``paths`` in the order of ``files`` (those not among them, removed, last)."""
    if len(paths) < 2:
        return list(paths)
    position = {path: number for number, path in enumerate(files)}
    return sorted(paths, key=lambda path: position.get(path, len(position)))


@lru_cache(maxsize=1 << 16)
def _stem_words(name: str) -> frozenset[str]:
    """The words of a file name without its suffix; remembered, since workspaces repeat names (``models.py``)."""
    suffix = name_and_suffix(name)[1]
    return frozenset(tokenize(name[: len(name) - len(suffix)]))


def _directories(path: str) -> list[str]:
    """The directories holding an indexed (relative, normalised) path, deepest first: ``a/b/c.py`` gives
    ``a/b`` and ``a``. String slicing, because building a ``PurePosixPath`` per file cost a warm start a
    tenth of a second on Django."""
    found = []
    end = path.rfind("/")
    while end > 0:
        found.append(path[:end])
        end = path.rfind("/", 0, end)
    return found


_TABLES: weakref.WeakKeyDictionary[Index, WorkspaceTables] = weakref.WeakKeyDictionary()
_TABLES_LOCK = threading.Lock()


def workspace_tables(index: Index) -> WorkspaceTables:
    """The tables of ``index``, synchronised with it (kept for as long as the index lives)."""
    with _TABLES_LOCK:
        tables = _TABLES.get(index)
        if tables is None:
            tables = _TABLES[index] = WorkspaceTables()
    tables.sync(index)
    return tables
