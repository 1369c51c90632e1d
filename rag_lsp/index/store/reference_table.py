"""The index's references by file: a snapshot's columns, with the files installed since laid over them.

A warm start of Django used to build all 178,000 references as objects (19 MB, a twentieth of a second) and the
lookup tables then walked all of them to learn which files use which name. Most are never read: a question
reads the uses of a few dozen names and the references of a few files. So the references a snapshot holds
stay columns (file, name, line, kind as numbers into the snapshot's string table, and the owner: the definition
enclosing the line, ``index/enclosing.py``), and a file's references are made when asked for; a name's uses, and
its first use by each definition of each file (its callers), are read from the columns in one pass.

Files installed after the snapshot (edits, files found by a refresh) are kept as lists, as before, and hide
the snapshot's rows of the same file; a removed file hides them too (``stored_map.py``).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from functools import partial
from itertools import pairwise, repeat
from typing import NamedTuple

import numpy as np

from rag_lsp.index.enclosing import ON_IMPORT
from rag_lsp.index.store.stored_map import StoredMap
from rag_lsp.model import Reference

_make = partial(tuple.__new__, Reference)


class ReferenceColumns(NamedTuple):
    """One row per reference: its file (a number into the paths), name and kind (numbers into the strings),
    line, and owner (``enclosing.owners``: a position among its file's definitions, ``TOP_LEVEL`` or
    ``ON_IMPORT``). Stored column by column: a question reads the name column whole (the rows of a name) and
    the others only at a name's rows, so the pages of those are never all read."""

    files: np.ndarray
    names: np.ndarray
    lines: np.ndarray
    kinds: np.ndarray
    owners: np.ndarray


class StoredReferences:
    """A snapshot's references as columns, the rows of a file together."""

    def __init__(self, columns: ReferenceColumns, strings: Sequence[str], paths: Sequence[str]) -> None:
        """The caller checked the columns' lengths and ranges, and that files do not decrease."""
        self._files, self._names, self._lines, self._kinds, self._owners = columns
        self._strings = strings
        self.paths = tuple(paths)
        bounds = np.searchsorted(self._files, np.arange(len(paths) + 1)).tolist()
        self._bounds = {path: (bounds[i], bounds[i + 1]) for i, path in enumerate(paths) if bounds[i] < bounds[i + 1]}
        self._name_ids: dict[str, int] | None = None
        # The rows in name order and where each name's rows begin, once the thread sorting them (``_sort``) is done.
        self._name_rows: tuple[np.ndarray, np.ndarray] | None = None
        self._sorting: threading.Thread | None = None
        # The last name's rows: its files are often counted (``files_of``) just before its uses are made.
        self._last: tuple[str, np.ndarray | None] | None = None

    def __len__(self) -> int:
        return len(self._names)

    def columns(self) -> tuple[ReferenceColumns, Sequence[str]]:
        """The columns and the strings their names and kinds are numbers into: what the next snapshot copies in
        bulk."""
        return ReferenceColumns(self._files, self._names, self._lines, self._kinds, self._owners), self._strings

    def holds(self, path: str) -> bool:
        """Whether the snapshot has references of ``path``."""
        return path in self._bounds

    def files(self) -> Iterator[str]:
        """The paths that have references, in the snapshot's order."""
        return iter(self._bounds)

    def file_rows(self, path: str) -> tuple[int, int]:
        """Where a file's rows start and end (an empty range for a file without references)."""
        return self._bounds.get(path, (0, 0))

    def of(self, path: str) -> list[Reference]:
        """A file's references, in the order the file listed them (made anew on each call)."""
        start, end = self.file_rows(path)
        strings, rows = self._strings, slice(start, end)
        names = [strings[n] for n in _numbers(self._names[rows])]
        kinds = [strings[k] for k in _numbers(self._kinds[rows])]
        return list(map(_make, zip(names, repeat(path, end - start), _numbers(self._lines[rows]), kinds)))

    def uses_of(self, name: str) -> dict[str, list[Reference]]:
        """Each file's references to ``name``, files in the snapshot's order and references in each file's.

        The rows are read from the rows in name order (``_sort``), which a thread makes once the first name is
        asked for (or the server's indexing ends, ``Session.prepare_answers``); until it is done, a name's rows
        are found by one comparison over the whole name column. The sort costs about as much as thirty such
        comparisons (0.2 s against 7 ms for 3.4 million references at 100,000 files, 20 against 1 ms on
        Django): made inside a question, after a count of scans, it was that question's spike."""
        rows = self._rows_of(name)
        if rows is None:
            return {}
        files = self._files[rows]
        bounds = [0, *(np.flatnonzero(np.diff(files)) + 1).tolist(), len(rows)]
        paths, lines, kinds = self.paths, _numbers(self._lines[rows]), _numbers(self._kinds[rows])
        strings = self._strings
        found: dict[str, list[Reference]] = {}
        for start, end in pairwise(bounds):
            path = paths[int(files[start])]
            found[path] = [_make((name, path, lines[i], strings[kinds[i]])) for i in range(start, end)]
        return found

    def first_uses(self, name: str) -> dict[str, list[tuple[int, int]]]:
        """Each file's first use of ``name`` by each of its owners (a definition, or the top level), as (line,
        owner) in line order, files in the snapshot's order; uses on import lines are not uses. What a
        question's callers of a popular name read from thousands of files, in a few array operations."""
        rows = self._rows_of(name)
        if rows is None or not len(rows):
            return {}
        owners = self._owners[rows]
        rows = rows[owners != ON_IMPORT]
        files, owners, lines = self._files[rows], self._owners[rows], self._lines[rows]
        # Each (file, owner)'s rows together, lowest line first; the first row of each is its first use.
        order = np.lexsort((lines, owners, files))
        files, owners, lines = files[order], owners[order], lines[order]
        first = np.ones(len(order), dtype=bool)
        first[1:] = (files[1:] != files[:-1]) | (owners[1:] != owners[:-1])
        files, owners, lines = files[first], owners[first], lines[first]
        # A line has one owner, so (file, line) orders the first uses of each file without ties.
        order = np.lexsort((lines, files))
        found: dict[str, list[tuple[int, int]]] = {}
        paths = self.paths
        for file, line, owner in zip(files[order].tolist(), lines[order].tolist(), owners[order].tolist()):
            uses = found.get(paths[file])
            if uses is None:
                uses = found[paths[file]] = []
            uses.append((line, owner))
        return found

    def files_of(self, name: str) -> list[str]:
        """The files with a reference to ``name``, in the snapshot's order, without making the references."""
        rows = self._rows_of(name)
        if rows is None or not len(rows):
            return []
        files = self._files[rows]
        starts = [0, *(np.flatnonzero(np.diff(files)) + 1).tolist()]
        return [self.paths[number] for number in files[starts].tolist()]

    def _rows_of(self, name: str) -> np.ndarray | None:
        """The rows of ``name``'s references in file order (None for a name no reference has)."""
        if self._last is not None and self._last[0] == name:
            return self._last[1]
        number = self._ids().get(name)
        ordered = self._name_rows
        if number is None:
            rows = None
        elif ordered is None:
            self.start_sorting()
            rows = np.flatnonzero(self._names == number)
        else:
            order, starts = ordered
            rows = order[int(starts[number]):int(starts[number + 1])]
        self._last = (name, rows)
        return rows

    def files_using(self, names: set[str]) -> list[str]:
        """The files with a reference to any of ``names``, in the snapshot's order: one pass over the name
        column."""
        ids = self._ids()
        numbers = [ids[name] for name in names if name in ids]
        if not numbers:
            return []
        # A table over the string numbers rather than ``np.isin`` or ``np.unique`` (which import ``numpy.ma``).
        wanted = np.zeros(len(self._strings), dtype=bool)
        wanted[numbers] = True
        files = self._files[wanted[self._names]]
        return [self.paths[number] for number in _numbers(np.flatnonzero(np.bincount(files)))] if len(files) else []

    def _ids(self) -> dict[str, int]:
        if self._name_ids is None:
            strings = self._strings
            # The numbers the column holds, ascending (``np.unique`` would import ``numpy.ma`` for it).
            self._name_ids = {strings[n]: n for n in _numbers(np.flatnonzero(np.bincount(self._names)))}
        return self._name_ids

    def start_sorting(self) -> None:
        """Start sorting the rows by name in a thread, unless that was done (``_sort``)."""
        if self._sorting is None:
            self._sorting = threading.Thread(target=self._sort, daemon=True, name="rag-lsp reference order")
            self._sorting.start()

    def _sort(self) -> None:
        """Every row in name order, a name's rows in file order (a stable sort), and where the rows of each
        name number begin: made once per snapshot in a thread (numpy's sort lets questions run meanwhile), 13
        MB for 3.4 million references. The columns never change, and the pair is published in one assignment."""
        order = np.argsort(self._names, kind="stable").astype(np.int32)
        starts = np.zeros(int(self._names.max(initial=-1)) + 2, dtype=np.int64)
        np.cumsum(np.bincount(self._names), out=starts[1:])
        self._name_rows = order, starts


def _numbers(column: np.ndarray) -> list[int]:
    return column.tolist()


class ReferenceMap(StoredMap[StoredReferences, Sequence[Reference]]):
    """Path → its references: the files installed since the snapshot, else the snapshot's rows."""
