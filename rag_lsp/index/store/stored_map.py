"""Path → what a file holds (its references, its imports): a snapshot's rows, with the files installed since
laid over them.

A warm start reads most of a snapshot's per-file records never or for a few files, so they stay in the
snapshot and are made into objects a file at a time when asked for (``reference_table.py``,
``import_table.py``). Files installed after the snapshot (edits, files found by a refresh) are kept as
objects, as before, and hide the snapshot's rows of the same file; a removed file hides them too.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Generic, Protocol, TypeVar

V = TypeVar("V")
V_co = TypeVar("V_co", covariant=True)


class Rows(Protocol[V_co]):
    """A snapshot's records by file: whether it has a file's, the file's (made anew), the files it has."""

    def holds(self, path: str) -> bool: ...

    def of(self, path: str) -> V_co: ...

    def files(self) -> Iterator[str]: ...


S = TypeVar("S", bound=Rows)


class StoredMap(Mapping[str, V], Generic[S, V]):
    """Path → its value: the files installed since the snapshot, else the snapshot's rows."""

    def __init__(self, stored: S | None = None) -> None:
        self.stored = stored
        self._own: dict[str, V] = {}
        # Files of the snapshot removed or installed again since: their rows are not theirs any more.
        self._hidden: set[str] = set()

    def is_stored(self, path: str) -> bool:
        """Whether a file's value is still the snapshot's rows."""
        return self.stored is not None and path not in self._hidden and self.stored.holds(path)

    def __getitem__(self, path: str) -> V:
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

    def __setitem__(self, path: str, value: V) -> None:
        self._own[path] = value
        self._hide(path)

    def pop(self, path: str, default: V | None = None) -> V | None:
        found = self.get(path, default)
        self._own.pop(path, None)
        self._hide(path)
        return found

    def _hide(self, path: str) -> None:
        if self.stored is not None and self.stored.holds(path):
            self._hidden.add(path)
