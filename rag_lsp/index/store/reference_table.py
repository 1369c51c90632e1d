"""The index's references by file: a snapshot's columns, with the files installed since laid over them.

A warm start of Django used to build all 178,000 references as objects (19 MB, a twentieth of a second) and the
lookup tables then walked all of them to learn which files use which name. Most are never read: a question
reads the uses of a few dozen names and the references of a few files. So the references a snapshot holds
stay columns (file, name, line, kind as numbers into the snapshot's string table), and a file's references
are made when asked for; a name's uses are read from the columns in one pass.

Files installed after the snapshot (edits, files found by a refresh) are kept as lists, as before, and hide
the snapshot's rows of the same file; a removed file hides them too.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from functools import partial
from itertools import pairwise, repeat

import numpy as np

from rag_lsp.model import Reference

_make = partial(tuple.__new__, Reference)


class StoredReferences:
    """A snapshot's references as columns, one row per reference, the rows of a file together."""

    def __init__(self, rows: np.ndarray, strings: Sequence[str], paths: Sequence[str]) -> None:
        """``rows`` is (file number, name, line, kind) per reference, with names and kinds numbers into
        ``strings`` and files into ``paths``; the caller checked the ranges and that files do not decrease."""
        self._files = rows[:, 0]
        self._names = rows[:, 1]
        self._lines = rows[:, 2]
        self._kinds = rows[:, 3]
        self._strings = strings
        self.paths = tuple(paths)
        bounds = np.searchsorted(self._files, np.arange(len(paths) + 1)).tolist()
        self._bounds = {path: (bounds[i], bounds[i + 1]) for i, path in enumerate(paths) if bounds[i] < bounds[i + 1]}
        self._name_ids: dict[str, int] | None = None

    def __len__(self) -> int:
        return len(self._names)

    def holds(self, path: str) -> bool:
        """Whether the snapshot has references of ``path``."""
        return path in self._bounds

    def files(self) -> Iterator[str]:
        """The paths that have references, in the snapshot's order."""
        return iter(self._bounds)

    def of(self, path: str) -> list[Reference]:
        """A file's references, in the order the file listed them (made anew on each call)."""
        start, end = self._bounds.get(path, (0, 0))
        strings, rows = self._strings, slice(start, end)
        names = [strings[n] for n in _numbers(self._names[rows])]
        kinds = [strings[k] for k in _numbers(self._kinds[rows])]
        return list(map(_make, zip(names, repeat(path, end - start), _numbers(self._lines[rows]), kinds)))

    def uses_of(self, name: str) -> dict[str, list[Reference]]:
        """Each file's references to ``name``, files in the snapshot's order and references in each file's:
        one comparison over the whole name column, where walking the files that use a popular name cost more
        than the rest of a first question."""
        number = self._ids().get(name)
        if number is None:
            return {}
        rows = np.flatnonzero(self._names == number)
        files = self._files[rows]
        bounds = [0, *(np.flatnonzero(np.diff(files)) + 1).tolist(), len(rows)]
        paths, lines, kinds = self.paths, _numbers(self._lines[rows]), _numbers(self._kinds[rows])
        strings = self._strings
        found: dict[str, list[Reference]] = {}
        for start, end in pairwise(bounds):
            path = paths[int(files[start])]
            found[path] = [_make((name, path, lines[i], strings[kinds[i]])) for i in range(start, end)]
        return found

    def _ids(self) -> dict[str, int]:
        if self._name_ids is None:
            strings = self._strings
            self._name_ids = {strings[n]: n for n in _numbers(np.unique(self._names))}
        return self._name_ids


def _numbers(column: np.ndarray) -> list[int]:
    return column.tolist()


class ReferenceMap(Mapping[str, Sequence[Reference]]):
    """Path → its references: the files installed since the snapshot, else the snapshot's rows."""

    def __init__(self, stored: StoredReferences | None = None) -> None:
        self.stored = stored
        self._own: dict[str, Sequence[Reference]] = {}
        # Files of the snapshot removed or installed again since: their rows are not theirs any more.
        self._hidden: set[str] = set()

    def is_stored(self, path: str) -> bool:
        """Whether a file's references are still the snapshot's rows."""
        return self.stored is not None and path not in self._hidden and self.stored.holds(path)

    def __getitem__(self, path: str) -> Sequence[Reference]:
        own = self._own.get(path)
        if own is not None:
            return own
        if self.is_stored(path):
            assert self.stored is not None
            return self.stored.of(path)
        raise KeyError(path)

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and (path in self._own or self.is_stored(path))

    def __iter__(self) -> Iterator[str]:
        yield from self._own
        if self.stored is not None:
            yield from (path for path in self.stored.files() if path not in self._hidden and path not in self._own)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __setitem__(self, path: str, references: Sequence[Reference]) -> None:
        self._own[path] = references
        self._hide(path)

    def pop(self, path: str, default: Sequence[Reference] | None = None) -> Sequence[Reference] | None:
        found = self.get(path, default)
        self._own.pop(path, None)
        self._hide(path)
        return found

    def _hide(self, path: str) -> None:
        if self.stored is not None and self.stored.holds(path):
            self._hidden.add(path)
