"""The index's chunks by id: stored columns read from a snapshot, plus the chunks indexed since.

A warm start must not build 57,000 ``Chunk`` objects and hold their text a
second time: the stored chunks stay as columns and their text stays in the
mapped snapshot file, and a ``Chunk`` is built when one is asked for (the last
tens of thousands built are kept, since a ranking asks for the same ones again
and again). Chunks indexed after the snapshot (edits, changed files) are ordinary
objects until the next snapshot takes them in.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from itertools import pairwise
from typing import cast

import numpy as np

from rag_lsp.model import Chunk

# The first lines, last lines and qualified names (None for none) of some chunks, in their order.
Outline = tuple[np.ndarray, np.ndarray, list[str | None]]

# Chunks built from columns that are kept for the next time they are asked for. One question's ranking on
# Django (5,324 files) builds about 5,000; keeping 65,536 rather than 8,192 took eight questions from 218 to
# 155 ms each, for 16 MB more peak memory (2026-12-02, in-process, warm).
MEMO_SIZE = 65536


@dataclass(slots=True)
class StoredChunks:
    """Chunks as columns, row by row in ascending id, with their text in one blob (UTF-8)."""

    ids: np.ndarray
    file: np.ndarray
    lines: np.ndarray  # (rows × 2) start and end line
    spans: np.ndarray  # (rows × 2) start and end byte
    symbol: np.ndarray  # string number, or -1 for none
    qualname: np.ndarray
    kind: np.ndarray
    text_ptr: np.ndarray  # rows + 1 offsets into ``text``
    text: memoryview
    strings: list[str]
    files: list[tuple[str, str, str]]  # path, language, blob id
    # The ids again as a plain array: a binary search over it one id at a time is several times cheaper than
    # numpy's ``searchsorted`` on a scalar, and a ranking looks up thousands of ids.
    _search: array = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._search = array("q", self.ids.astype(np.int64).tobytes())

    def row_of(self, chunk_id: int) -> int:
        row = bisect_left(self._search, chunk_id)
        return row if row < len(self._search) and self._search[row] == chunk_id else -1

    def rows_of(self, chunk_ids: list[int]) -> list[int]:
        """``row_of`` for many ids, in one search."""
        return self.row_array(chunk_ids).tolist()

    def row_array(self, chunk_ids: list[int] | np.ndarray) -> np.ndarray:
        """``rows_of`` as an int64 array (-1 for an id the table does not hold): for many ids at once."""
        wanted = np.asarray(chunk_ids, dtype=np.int64)
        if not len(self.ids):
            return np.full(len(wanted), -1, dtype=np.int64)
        rows = np.searchsorted(self.ids, wanted)
        rows[self.ids[np.minimum(rows, len(self.ids) - 1)] != wanted] = -1
        return rows

    def build_many(self, rows: list[int]) -> list[Chunk]:
        """The chunks of some rows, each column read once for all of them: a file's chunks are asked for
        together, and reading numpy scalars one by one cost as much as building the chunks."""
        strings, files, text = self.strings, self.files, self.text
        at = self._at(rows)
        built = []
        for file, (first, last), (start_byte, end_byte), symbol, qualname, kind, (start, end) in zip(
                self.file[at].tolist(), self.lines[at].tolist(), self.spans[at].tolist(), self.symbol[at].tolist(),
                self.qualname[at].tolist(), self.kind[at].tolist(), self._text_spans(at)):
            path, language, blob = files[file]
            built.append(Chunk(path, first, last, start_byte, end_byte, strings[symbol] if symbol >= 0 else None,
                               strings[qualname] if qualname >= 0 else None, strings[kind], language, blob,
                               str(text[start:end], "utf-8", "replace")))
        return built

    def pieces(self, rows: list[int]) -> list[tuple[int, int, str]]:
        """The first line, last line and text of some rows' chunks, without building them."""
        text, at = self.text, self._at(rows)
        return [(first, last, str(text[start:end], "utf-8", "replace"))
                for (first, last), (start, end) in zip(self.lines[at].tolist(), self._text_spans(at))]

    def outline(self, rows: list[int]) -> Outline:
        """The first lines, last lines and qualified names of some rows' chunks, without building them."""
        at, strings = self._at(rows), self.strings
        lines = self.lines[at].astype(np.int64)
        return (lines[:, 0], lines[:, 1],
                [strings[qualname] if qualname >= 0 else None for qualname in self.qualname[at].tolist()])

    def _at(self, rows: list[int]) -> slice | np.ndarray:
        """What selects ``rows`` from a column: a slice when they are consecutive (a file's chunks are), which
        numpy reads faster than a list of rows."""
        if rows and rows == list(range(rows[0], rows[0] + len(rows))):
            return slice(rows[0], rows[0] + len(rows))
        return np.asarray(rows, dtype=np.int64)

    def _text_spans(self, at: slice | np.ndarray) -> list[tuple[int, int]]:
        """The byte range in ``text`` of each row ``at`` selects."""
        if isinstance(at, slice):
            bounds = self.text_ptr[at.start : at.stop + 1].tolist()
            return list(pairwise(bounds))
        return list(zip(self.text_ptr[at].tolist(), self.text_ptr[at + 1].tolist()))

    def content(self, row: int) -> str:
        return str(self.text[int(self.text_ptr[row]) : int(self.text_ptr[row + 1])], "utf-8", "replace")


class ChunkTable(Mapping[int, Chunk]):
    """Chunk id → ``Chunk``: stored rows (minus those removed or replaced since) and live objects."""

    def __init__(self) -> None:
        self.live: dict[int, Chunk] = {}
        self.stored: StoredChunks | None = None
        # Stored rows no longer in the table (removed, or replaced by a live object).
        self._gone: set[int] = set()
        self._memo: dict[int, Chunk] = {}

    def rebase(self, stored: StoredChunks | None) -> None:
        """Make ``stored`` the whole table (it holds every chunk the table holds now)."""
        self.stored, self.live, self._gone, self._memo = stored, {}, set(), {}

    def __getitem__(self, chunk_id: int) -> Chunk:
        found = self.live.get(chunk_id)
        if found is not None:
            return found
        found = self._memo.get(chunk_id)
        if found is not None:
            return found
        row = self._row(chunk_id)
        if row < 0 or self.stored is None:
            raise KeyError(chunk_id)
        chunk = self.stored.build_many([row])[0]
        if len(self._memo) >= MEMO_SIZE:
            del self._memo[next(iter(self._memo))]
        self._memo[chunk_id] = chunk
        return chunk

    def many(self, chunk_ids: list[int]) -> list[Chunk]:
        """The chunks of ``chunk_ids`` in their order (``KeyError`` for one not in the table); the stored ones not
        kept yet are built together, their rows found in one search."""
        found, missing, rows = self._split(chunk_ids)
        if missing:
            for position, chunk in zip(missing, cast(StoredChunks, self.stored).build_many(rows)):
                found[position] = chunk
                if len(self._memo) >= MEMO_SIZE:
                    del self._memo[next(iter(self._memo))]
                self._memo[chunk_ids[position]] = chunk
        return cast(list[Chunk], found)

    def pieces_of(self, chunk_ids: list[int]) -> list[tuple[int, int, str]]:
        """The first line, last line and text of each chunk of ``chunk_ids`` (``KeyError`` for one not in the
        table), without building the stored ones: what a file's text is rebuilt from."""
        found, missing, rows = self._split(chunk_ids)
        pieces = [(chunk.start_line, chunk.end_line, chunk.content) if chunk is not None else (0, 0, "")
                  for chunk in found]
        if missing:
            for position, piece in zip(missing, cast(StoredChunks, self.stored).pieces(rows)):
                pieces[position] = piece
        return pieces

    def outline(self, chunk_ids: list[int]) -> Outline:
        """The first lines, last lines and qualified names of the chunks of ``chunk_ids`` (``KeyError`` for one
        not in the table), without building the stored ones: what a file's layout is made of. A file that has not
        changed since the snapshot is read from the columns whole (its rows follow each other), not chunk by
        chunk."""
        stored = self.stored
        if stored is not None and self.live.keys().isdisjoint(chunk_ids) and self._gone.isdisjoint(chunk_ids):
            rows = stored.rows_of(chunk_ids)
            if -1 not in rows:
                return stored.outline(rows)
        found, missing, rows = self._split(chunk_ids)
        lines = [(chunk.start_line, chunk.end_line, chunk.qualname) if chunk is not None else (0, 0, None)
                 for chunk in found]
        if missing:
            starts, ends, qualnames = cast(StoredChunks, stored).outline(rows)
            for position, first, last, qualname in zip(missing, starts.tolist(), ends.tolist(), qualnames):
                lines[position] = (first, last, qualname)
        return (np.array([first for first, _, _ in lines], dtype=np.int64),
                np.array([last for _, last, _ in lines], dtype=np.int64), [qualname for _, _, qualname in lines])

    def _split(self, chunk_ids: list[int]) -> tuple[list[Chunk | None], list[int], list[int]]:
        """The chunks of ``chunk_ids`` held as objects (None for the others), and the positions and stored rows
        of the others; ``KeyError`` for an id not in the table."""
        found = [self.live.get(chunk_id) or self._memo.get(chunk_id) for chunk_id in chunk_ids]
        missing = [position for position, chunk in enumerate(found) if chunk is None]
        if not missing:
            return found, [], []
        wanted = [chunk_ids[position] for position in missing]
        rows = self.stored.rows_of(wanted) if self.stored is not None else [-1] * len(wanted)
        for chunk_id, row in zip(wanted, rows):
            if row < 0 or chunk_id in self._gone:
                raise KeyError(chunk_id)
        return found, missing, rows

    def content(self, chunk_id: int) -> str:
        """A chunk's text, without building the chunk when it is stored."""
        found = self.live.get(chunk_id)
        if found is not None:
            return found.content
        row = self._row(chunk_id)
        if row < 0 or self.stored is None:
            raise KeyError(chunk_id)
        return self.stored.content(row)

    def path_of(self, chunk_id: int) -> str:
        """A chunk's file, read from the columns when it is stored: rankings ask it of thousands of chunks."""
        found = self.live.get(chunk_id) or self._memo.get(chunk_id)
        if found is not None:
            return found.path
        row = self._row(chunk_id)
        if row < 0 or self.stored is None:
            raise KeyError(chunk_id)
        return self.stored.files[self.stored.file[row]][0]

    def paths_of(self, chunk_ids: list[int]) -> list[str | None]:
        """``path_of`` for many chunks, None for an id not in the table; the stored rows found in one search."""
        found: list[str | None] = []
        stored: list[int] = []
        for position, chunk_id in enumerate(chunk_ids):
            chunk = self.live.get(chunk_id) or self._memo.get(chunk_id)
            found.append(chunk.path if chunk is not None else None)
            if chunk is None and chunk_id not in self._gone:
                stored.append(position)
        if stored and self.stored is not None:
            files, file = self.stored.files, self.stored.file
            for position, row in zip(stored, self.stored.rows_of([chunk_ids[position] for position in stored])):
                if row >= 0:
                    found[position] = files[file[row]][0]
        return found

    def has_symbol(self, chunk_id: int) -> bool:
        """Whether a chunk is a definition's, read from the columns when it is stored."""
        found = self.live.get(chunk_id) or self._memo.get(chunk_id)
        if found is not None:
            return found.symbol is not None
        row = self._row(chunk_id)
        if row < 0 or self.stored is None:
            raise KeyError(chunk_id)
        return int(self.stored.symbol[row]) >= 0

    def __contains__(self, chunk_id: object) -> bool:
        return chunk_id in self.live or (isinstance(chunk_id, int) and self._row(chunk_id) >= 0)

    def __len__(self) -> int:
        stored = len(self.stored.ids) if self.stored is not None else 0
        return stored - len(self._gone) + len(self.live)

    def __iter__(self) -> Iterator[int]:
        if self.stored is not None:
            gone = self._gone
            yield from (chunk_id for chunk_id in self.stored.ids.tolist() if chunk_id not in gone)
        yield from list(self.live)

    def __setitem__(self, chunk_id: int, chunk: Chunk) -> None:
        if chunk_id not in self.live and self._row(chunk_id) >= 0:
            self._gone.add(chunk_id)
        self._memo.pop(chunk_id, None)
        self.live[chunk_id] = chunk

    def __delitem__(self, chunk_id: int) -> None:
        if self.live.pop(chunk_id, None) is None:
            if self._row(chunk_id) < 0:
                raise KeyError(chunk_id)
            self._gone.add(chunk_id)
        self._memo.pop(chunk_id, None)

    def stored_rows(self) -> np.ndarray:
        """The stored rows still in the table."""
        if self.stored is None:
            return np.zeros(0, dtype=np.int64)
        keep = np.ones(len(self.stored.ids), dtype=bool)
        if self._gone:
            gone = np.fromiter(self._gone, dtype=np.int64, count=len(self._gone))
            keep[np.searchsorted(self.stored.ids, gone)] = False
        return np.flatnonzero(keep)

    def _row(self, chunk_id: int) -> int:
        if self.stored is None or chunk_id in self._gone:
            return -1
        return self.stored.row_of(chunk_id)
