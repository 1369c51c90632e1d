"""One file of named arrays and byte blobs, written atomically and read back memory-mapped.

Layout: a magic number, the entries (each aligned to 8 bytes), a table of
contents in JSON (each entry's kind, dtype, offset and size, plus free-form
metadata), and a footer: the table's offset, length and CRC-32, and the magic
again. A reader checks both magic numbers, the table's checksum and that every
entry lies inside the file before it maps anything; arrays are then views of
the mapping, so nothing is copied and pages are read when first touched.

Writing goes to a temporary file in the same directory that is renamed over
the target only when complete: a reader (another process on the same cache)
sees the old file or the new one, never half of one, and keeps reading the
file it mapped even after it is replaced.
"""

from __future__ import annotations

import json
import mmap
import os
import struct
import tempfile
import zlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import BinaryIO

import numpy as np

from rag_lsp.heap import drop_mapped_pages

MAGIC = b"RAGSNAP1"
_FOOTER = struct.Struct("<QQI8s")
_ALIGN = 8
# Bytes a writer writes between two calls of its ``release``.
RELEASE_EVERY = 16 << 20
_DTYPES = frozenset({"int8", "int16", "int32", "int64", "uint8", "float32", "float64", "bool"})


class SnapshotError(ValueError):
    """A snapshot file that is damaged, truncated or not a snapshot."""


class SnapshotWriter:
    """Entries streamed to a temporary file; ``commit`` renames it into place, ``abort`` removes it."""

    def __init__(self, target: Path | None, release: Callable[[], None] | None = None) -> None:
        """``target`` None writes an anonymous temporary file (no cache): ``commit`` returns it still open.
        ``release`` is called after every ``RELEASE_EVERY`` bytes written: a save that copies from the file
        the index is served from drops its pages of that file as it goes (``SnapshotFile.release``)."""
        self.target = target
        self._release = release
        self._unreleased = 0
        if target is None:
            # Closed by ``abort``, or by the caller that ``commit`` hands it to.
            self._file: BinaryIO = tempfile.TemporaryFile()  # noqa: SIM115
            self._temp = None
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            handle, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
            self._file = os.fdopen(handle, "w+b")
            self._temp = Path(name)
        self._file.write(MAGIC)
        self._entries: dict[str, dict] = {}

    def _start(self) -> int:
        position = self._file.tell()
        padding = -position % _ALIGN
        if padding:
            self._file.write(b"\0" * padding)
        return position + padding

    def array(self, name: str, values: np.ndarray | Iterable[np.ndarray]) -> None:
        """An array, given whole or as consecutive pieces of one type (written as they come, never joined:
        a merged BM25 segment's postings are made a piece at a time)."""
        offset = self._start()
        dtype, count = None, 0
        for piece in [values] if isinstance(values, np.ndarray) else values:
            piece = np.ascontiguousarray(piece)
            if piece.dtype.name not in _DTYPES or piece.ndim != 1 or dtype not in (None, piece.dtype):
                raise TypeError(f"cannot store {name}: a piece of {piece.dtype} in {piece.ndim} dimensions"
                                + (f" after pieces of {dtype}" if dtype is not None else ""))
            dtype = piece.dtype
            # The buffer itself, not a copy of it.
            self._write(piece.data.cast("B"))
            count += len(piece)
        if dtype is None:
            raise TypeError(f"cannot store {name}: no pieces")
        self._entries[name] = {"kind": "array", "dtype": dtype.name, "offset": offset, "count": count,
                               "size": count * dtype.itemsize}

    def blob(self, name: str, parts: Iterable[bytes | memoryview] | bytes) -> None:
        """A blob, given whole or as consecutive parts (written without joining them in memory)."""
        offset = self._start()
        size = 0
        for part in [parts] if isinstance(parts, bytes) else parts:
            self._write(part)
            size += len(part)
        self._entries[name] = {"kind": "blob", "offset": offset, "size": size}

    def _write(self, data: bytes | memoryview) -> None:
        if self._release is None:
            self._file.write(data)
            return
        # A part may be a long run of the file being copied from (every stored chunk's text): written in
        # slices, so that its pages are dropped along the way.
        view = memoryview(data)
        for start in range(0, len(view), RELEASE_EVERY):
            piece = view[start:start + RELEASE_EVERY]
            self._file.write(piece)
            self._unreleased += len(piece)
            if self._unreleased >= RELEASE_EVERY:
                self._release()
                self._unreleased = 0

    def commit(self, meta: dict) -> BinaryIO:
        """Write the table of contents and footer, and put the file in place; returns the open file."""
        table = json.dumps({"meta": meta, "entries": self._entries}).encode()
        offset = self._start()
        self._file.write(table)
        self._file.write(_FOOTER.pack(offset, len(table), zlib.crc32(table), MAGIC))
        self._file.flush()
        if self._temp is not None and self.target is not None:
            os.replace(self._temp, self.target)
            self._temp = None
        return self._file

    def abort(self) -> None:
        """Close and remove the file. Never raises: closing flushes what is buffered, which fails again on a
        full disk (the file is closed all the same)."""
        try:
            self._file.close()
        except OSError:
            pass
        if self._temp is not None:
            self._temp.unlink(missing_ok=True)
            self._temp = None


class SnapshotFile:
    """A snapshot mapped read-only: ``meta``, ``array(name)`` and ``blob(name)``."""

    def __init__(self, source: Path | BinaryIO) -> None:
        """Map a snapshot; ``SnapshotError`` when it is not a whole, intact one (``OSError`` when unreadable)."""
        if isinstance(source, Path):
            with open(source, "rb") as handle:
                self._map = _map(handle)
        else:
            self._map = _map(source)
        size = len(self._map)
        if size < len(MAGIC) + _FOOTER.size or self._map[: len(MAGIC)] != MAGIC:
            raise SnapshotError("not a snapshot file")
        offset, length, checksum, magic = _FOOTER.unpack_from(self._map, size - _FOOTER.size)
        if magic != MAGIC or offset + length > size - _FOOTER.size:
            raise SnapshotError("snapshot footer is damaged (a truncated file?)")
        table = bytes(self._map[offset : offset + length])
        if zlib.crc32(table) != checksum:
            raise SnapshotError("snapshot table of contents fails its checksum")
        try:
            parsed = json.loads(table)
            self.meta: dict = parsed["meta"]
            self._entries: dict[str, dict] = parsed["entries"]
        except (ValueError, KeyError, TypeError) as exc:
            raise SnapshotError(f"snapshot table of contents is unreadable: {exc}") from exc
        for name, entry in self._entries.items():
            start, length = entry.get("offset"), entry.get("size")
            if not isinstance(start, int) or not isinstance(length, int) or start < 0 or start + length > offset:
                raise SnapshotError(f"snapshot entry {name} lies outside the file")
            if entry.get("kind") == "array" and (
                    entry.get("dtype") not in _DTYPES
                    or np.dtype(entry["dtype"]).itemsize * entry.get("count", -1) != length):
                raise SnapshotError(f"snapshot array {name} has a bad type or size")

    def names(self) -> set[str]:
        return set(self._entries)

    def release(self) -> None:
        """Drop this process's resident pages of the file: they stay in the page cache, and whatever is read
        next maps them again. A process's resident size counts the pages of a mapped file it has read, so a
        refresh that reads a spill through (merging its BM25 segment, copying its chunks into the next)
        would otherwise keep all of it counted until the spill is unmapped: 1.7 GB at 100,000 files."""
        drop_mapped_pages(self._map)

    def array(self, name: str) -> np.ndarray:
        entry = self._entry(name, "array")
        return np.frombuffer(self._map, dtype=entry["dtype"], count=entry["count"], offset=entry["offset"])

    def blob(self, name: str) -> memoryview:
        entry = self._entry(name, "blob")
        return memoryview(self._map)[entry["offset"] : entry["offset"] + entry["size"]]

    def _entry(self, name: str, kind: str) -> dict:
        entry = self._entries.get(name)
        if entry is None or entry.get("kind") != kind:
            raise SnapshotError(f"snapshot has no {kind} {name}")
        return entry


def _map(handle: BinaryIO) -> mmap.mmap:
    handle.seek(0, os.SEEK_END)
    if handle.tell() == 0:
        raise SnapshotError("empty snapshot file")
    return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
