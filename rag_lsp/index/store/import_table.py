"""The index's imports by file: a snapshot's per-file records, with the files installed since laid over them.

A warm start of Django decoded and built all 11,000 imports at load (a twentieth of a second) although only
an edit (the file links of the changed files) and the answer's callers (the import lines of a few hundred
files) read them. So each file's imports stay in the snapshot as a marshal record of their own, decoded when
the file's imports are asked for; installed and removed files lie over them (``stored_map.py``).
"""

from __future__ import annotations

import marshal
from collections.abc import Iterable, Iterator, Sequence

import numpy as np

from rag_lsp.index.store.stored_map import StoredMap
from rag_lsp.model import Import


def encode(imports: Iterable[Import]) -> bytes:
    """One file's imports as the snapshot stores them: tuples of strings and numbers, which marshal gives back
    as tuples, so ``of`` passes them on as they come."""
    return marshal.dumps([(i.module, i.line, i.names, i.aliases) for i in imports])


class StoredImports:
    """A snapshot's imports: one record per file that has any, found through a pointer per file."""

    def __init__(self, records: memoryview | bytes, pointer: np.ndarray, paths: Sequence[str]) -> None:
        """``pointer`` holds each file's start in ``records`` and the end (one more than the paths); the caller
        checked that it rises from 0 to the records' length."""
        bounds = pointer.tolist()
        self._records = records
        self._bounds = {path: (bounds[i], bounds[i + 1]) for i, path in enumerate(paths) if bounds[i] < bounds[i + 1]}

    def holds(self, path: str) -> bool:
        """Whether the snapshot has imports of ``path``."""
        return path in self._bounds

    def files(self) -> Iterator[str]:
        """The paths that have imports, in the snapshot's order."""
        return iter(self._bounds)

    def record(self, path: str) -> memoryview | bytes:
        """A file's record as stored (empty for a file without imports): what the next snapshot copies."""
        start, end = self._bounds.get(path, (0, 0))
        return self._records[start:end]

    def of(self, path: str) -> list[Import]:
        """A file's imports, in file order (made anew on each call); none for a damaged record (``_decoded``)."""
        return [Import(module, path, line, names, aliases) for module, line, names, aliases in self._decoded(path)]

    def lines_of(self, path: str) -> frozenset[int]:
        """The lines of a file's imports, without making them (a popular name's callers read those of thousands
        of files)."""
        return frozenset(line for _, line, _, _ in self._decoded(path))

    def _decoded(self, path: str) -> list[tuple]:
        """A file's record as (module, line, names, aliases) tuples; none for a record the snapshot's checks
        could not see was damaged (a question must not fail on it)."""
        start, end = self._bounds.get(path, (0, 0))
        if start == end:
            return []
        try:
            found = marshal.loads(self._records[start:end])
            return [(module, line, names, aliases) for module, line, names, aliases in found]
        except (EOFError, ValueError, TypeError):
            return []


class ImportMap(StoredMap[StoredImports, list[Import]]):
    """Path → its imports: the files installed since the snapshot, else the snapshot's records."""

    def lines_of(self, path: str) -> frozenset[int]:
        """The lines of a file's imports (none for a file the map does not hold)."""
        if self.is_stored(path):
            assert self.stored is not None
            return self.stored.lines_of(path)
        return frozenset(found.line for found in self.get(path, ()))
