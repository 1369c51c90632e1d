"""What a question derives from one indexed file, kept across questions while the file is unchanged.

A question reads the same few dozen files again and again (a popular definition's callers, the files whose
places a bundle summarises, the files whose lines it looks up), and deriving from a file costs a pass over its
chunks or definitions. Each
``PerFile`` keeps, per index, the last ``size`` files' derived values, each with the file entry it was derived
from: the index replaces a file's entry whenever the file changes, so a different entry means derive again.
Callers hold the index's lock, which serialises access.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from rag_lsp.index.root_index import Index

T = TypeVar("T")


class PerFile(Generic[T]):
    """Values derived from one file of an index, the ``size`` most recently used per index."""

    def __init__(self, derive: Callable[[Index, str], T], size: int) -> None:
        self._derive = derive
        self._size = size
        self._kept: weakref.WeakKeyDictionary[Index, OrderedDict[str, tuple[object, T]]] = weakref.WeakKeyDictionary()

    def holds(self, index: Index, path: str) -> bool:
        """Whether a value derived from the file as it is now is kept (``get`` would not derive it)."""
        kept = self._kept.get(index)
        known = kept.get(path) if kept is not None else None
        return known is not None and known[0] is index.files.get(path)

    def get(self, index: Index, path: str) -> T:
        kept = self._kept.get(index)
        if kept is None:
            kept = self._kept[index] = OrderedDict()
        entry = index.files.get(path)
        known = kept.get(path)
        if known is not None and known[0] is entry:
            kept.move_to_end(path)
            return known[1]
        value = self._derive(index, path)
        kept[path] = (entry, value)
        if len(kept) > self._size:
            kept.popitem(last=False)
        return value
