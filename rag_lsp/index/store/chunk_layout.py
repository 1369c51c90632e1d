"""Where each chunk of a file lies and what it defines, kept per version of the file, for line lookups.

A question asks which chunk covers a line, or which chunk starts a definition, dozens of times (the symbol
strategy's uses, the definitions list, the dependencies, the bundle's mentions), often of the same large
file: on Django one question walked 5,943 chunks of 45 files this way, 1,548 of them the same test module's,
each through the chunk table. A layout is the file's chunk lines as arrays and its chunks by qualified name,
made once per version of the file (``LAYOUTS``, a ``PerFile``: kept with the file's ``FileEntry``, which the
index replaces whenever the file is indexed again), so a lookup is one array comparison or one dictionary read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from rag_lsp.index.store.chunk_table import Outline
from rag_lsp.index.store.per_file import PerFile

if TYPE_CHECKING:
    from rag_lsp.index.root_index import Index

# Files whose layouts are kept (per index); the least recently used is dropped first.
KEPT_LAYOUTS = 2048


@dataclass(frozen=True, slots=True)
class Layout:
    """A file's chunks in the entry's order: their ids, first and last lines, and the chunks that carry each
    qualified name (``(first line, id)`` in that order)."""

    ids: tuple[int, ...]
    starts: np.ndarray
    ends: np.ndarray
    by_qualname: dict[str, tuple[tuple[int, int], ...]]

    @classmethod
    def of(cls, chunk_ids: list[int], outline: Outline) -> Layout:
        """The layout of chunks given by id and by their first lines, last lines and qualified names
        (``ChunkTable.outline``)."""
        starts, ends, qualnames = outline
        named: dict[str, list[tuple[int, int]]] = {}
        for chunk_id, start, qualname in zip(chunk_ids, starts.tolist(), qualnames):
            if qualname is not None:
                named.setdefault(qualname, []).append((start, chunk_id))
        return cls(tuple(chunk_ids), starts, ends, {name: tuple(found) for name, found in named.items()})

    def innermost(self, line: int) -> int | None:
        """The id of the shortest chunk covering ``line``, the first of equally short ones, or None."""
        covering = np.flatnonzero((self.starts <= line) & (line <= self.ends))
        if not len(covering):
            return None
        spans = self.ends[covering] - self.starts[covering]
        return self.ids[int(covering[int(np.argmin(spans))])]

    def starting(self, qualname: str, line: int) -> int | None:
        """The id of the first chunk of ``qualname`` that begins at or after ``line``, or None."""
        for start, chunk_id in self.by_qualname.get(qualname, ()):
            if start >= line:
                return chunk_id
        return None


def file_layout(index: Index, path: str) -> Layout:
    """The layout of an indexed file, read from the chunk table's columns (no chunk is built)."""
    chunk_ids = index.files[path].chunk_ids
    return Layout.of(chunk_ids, index.chunks.outline(chunk_ids))


LAYOUTS = PerFile(file_layout, KEPT_LAYOUTS)
