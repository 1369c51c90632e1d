"""The whole index of one root as one snapshot file: saved after a refresh, loaded in bulk by a warm start.

What a warm start used to rebuild file by file from the SQLite cache (chunk,
definition and reference objects, BM25 postings re-added token by token) is
stored here in the form it is used in, so that loading is reading arrays:

- files: paths, blob ids, sizes, mtimes (freshness: size and mtime, then the
  blob id), languages, parse errors and their chunk ids;
- chunks: columns and their text (read from the mapped file when a chunk is
  asked for, never all at once);
- the BM25 segment (``postings/bm25_segment.py``) with its vocabulary;
- definitions and references as columns (each reference with the definition
  enclosing it, ``enclosing.py``), and each file's imports as a record
  of its own (definitions built into objects at load: the symbol table reads
  them all; references and imports stay in the snapshot, made into objects a
  file at a time when asked for, ``reference_table.py``, ``import_table.py``);
  the module map's hints (Java package lines) apart;
- each file's links to the files it leans on (``code_links.py``, the code
  graph's edges), when they were computed for the index as saved;
- the walked files that were rejected for their content (binary, not UTF-8,
  minified) with their size and mtime, so a warm start need not read them.

A refresh also writes *spills* midway (``spill``): the files, chunks,
references and imports alone (with the BM25 segment once many documents
wait), to an anonymous file the index then serves them from, never loaded.
Both copy what is still stored from the previous file in bulk; the BM25
segment is merged as it is written. Strings that repeat (names, kinds,
languages) are stored once in a string table. ``load`` checks what it reads
(sizes, ranges, ascending ids) and raises ``SnapshotError`` rather than
handing back an index that could fail later.
"""

from __future__ import annotations

import marshal
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain, pairwise, repeat
from typing import TYPE_CHECKING, BinaryIO

import numpy as np

from rag_lsp.index import enclosing
from rag_lsp.index.postings.bm25_segment import ARRAY_NAMES, FrozenSegment
from rag_lsp.index.store import import_table
from rag_lsp.index.store.chunk_table import StoredChunks
from rag_lsp.index.store.import_table import StoredImports
from rag_lsp.index.store.reference_table import ReferenceColumns, StoredReferences
from rag_lsp.index.store.snapshot_file import SnapshotError, SnapshotFile, SnapshotWriter
from rag_lsp.index.store.term_table import StoredTerms
from rag_lsp.model import Chunk, Definition, Import

if TYPE_CHECKING:
    from rag_lsp.index.root_index import Index

FORMAT = 6
# The reference columns, each an int32 array of its own (``reference_table.ReferenceColumns``).
REFERENCE_COLUMNS = ReferenceColumns._fields


@dataclass(slots=True)
class StoredFile:
    """One file's record in a snapshot."""

    path: str
    blob_id: str
    language: str
    size: int
    mtime_ns: int
    chunk_ids: list[int]
    error: str | None


@dataclass(slots=True)
class Loaded:
    """Everything a snapshot holds, ready to install."""

    meta: dict
    files: list[StoredFile]
    chunks: StoredChunks
    segment: FrozenSegment
    definitions: dict[str, list[Definition]]
    references: StoredReferences
    imports: StoredImports
    hints: dict[str, str]
    rejected: dict[str, tuple[int, int, str]]
    links: dict[str, frozenset[str]] | None


class _Strings:
    """A string table being written: each distinct string gets a number."""

    def __init__(self) -> None:
        self.numbers: dict[str, int] = {}

    def __call__(self, text: str | None) -> int:
        if text is None:
            return -1
        number = self.numbers.get(text)
        if number is None:
            number = self.numbers[text] = len(self.numbers)
        return number

    def encoded(self) -> bytes:
        return "\0".join(self.numbers).encode("utf-8", "surrogatepass")


def save(index: Index, writer: SnapshotWriter, meta: dict) -> BinaryIO:
    """Write ``index`` (its BM25 documents as one segment) and commit; call under the index's lock."""
    strings = _Strings()
    paths = _save_files(index, strings, writer)
    _save_chunks(index, paths, strings, writer)
    _save_uses(index, paths, strings, writer)
    _save_definitions(index, paths, strings, writer)
    links = index.links if index.links is not None and index.links.version == index.version else None
    if links is not None:
        number = {path: position for position, path in enumerate(paths)}
        targets = [sorted(number[target] for target in links.out.get(path, ())) for path in paths]
        writer.array("link_ptr", np.cumsum([0, *map(len, targets)], dtype=np.int64))
        writer.array("link_targets", np.fromiter((t for found in targets for t in found), dtype=np.int32))
    rejected = sorted(index.rejected)
    writer.blob("rejected_paths", "\0".join(rejected).encode("utf-8", "surrogatepass"))
    writer.array("rejected_stamps", np.array([index.rejected[path][:2] for path in rejected], dtype=np.int64).ravel())
    writer.array("rejected_reason", np.array([strings(index.rejected[path][2]) for path in rejected], dtype=np.int32))
    _save_segment(index, writer)
    writer.blob("strings", strings.encoded())
    return writer.commit({**meta, "format": FORMAT, "files": len(paths), "links": links is not None})


def spill(index: Index, writer: SnapshotWriter, postings: bool) -> BinaryIO:
    """Write only what the index serves from the file afterwards (the files, their chunks, references and
    imports: ``reopen``; with ``postings``, the BM25 documents as one segment: ``load_segment``) and commit;
    call under the index's lock.

    For a refresh that moves what it holds in memory into a file midway: such
    a file is never loaded by a warm start, so the rest of a snapshot (the
    definitions, which the symbol table keeps anyway, the links) would be
    written for nothing.
    """
    strings = _Strings()
    paths = _save_files(index, strings, writer)
    _save_chunks(index, paths, strings, writer)
    _save_uses(index, paths, strings, writer)
    if postings:
        _save_segment(index, writer)
    writer.blob("strings", strings.encoded())
    return writer.commit({"format": FORMAT, "files": len(paths), "spill": True})


def _save_files(index: Index, strings: _Strings, writer: SnapshotWriter) -> list[str]:
    """The file columns, in path order; returns the paths."""
    paths = sorted(index.files)
    entries = [index.files[path] for path in paths]
    writer.blob("paths", "\0".join(paths).encode("utf-8", "surrogatepass"))
    writer.blob("blob_ids", bytes.fromhex("".join(entry.blob_id for entry in entries)))
    writer.array("file_size", np.array([e.size for e in entries], dtype=np.int64))
    writer.array("file_mtime", np.array([e.mtime_ns for e in entries], dtype=np.int64))
    writer.array("file_language", np.array([strings(e.language) for e in entries], dtype=np.int32))
    writer.array("file_error", np.array([strings(e.error) for e in entries], dtype=np.int32))
    writer.array("file_chunk_ptr", np.cumsum([0, *(len(e.chunk_ids) for e in entries)], dtype=np.int64))
    writer.array("file_chunks", np.fromiter((i for e in entries for i in e.chunk_ids), dtype=np.int64))
    return paths


def _save_chunks(index: Index, paths: list[str], strings: _Strings, writer: SnapshotWriter) -> None:
    """Chunk columns in ascending id, and their texts streamed in the same order (never all in memory).

    The chunks still in the last snapshot (or spill) are copied from its columns in bulk, their texts in runs
    of consecutive rows; only the chunks held as objects are read one by one. A save after an edit, and each
    spill of a refresh, would otherwise rewrite every stored chunk row by row (Django: 57,000).
    """
    table = index.chunks
    stored = table.stored
    # Every chunk id with its file's number, in ascending id; then each column of its own (at 100,000 files a
    # list of (id, file) pairs and one int64 matrix of every column lifted the final save's memory by 209 MB,
    # these columns by 94).
    chunk_ids = [index.files[path].chunk_ids for path in paths]
    counts = np.fromiter(map(len, chunk_ids), dtype=np.int64, count=len(paths))
    ids = np.fromiter(chain.from_iterable(chunk_ids), dtype=np.int64, count=int(counts.sum()))
    order = np.argsort(ids, kind="stable")
    ids, files = ids[order], np.repeat(np.arange(len(paths), dtype=np.int32), counts)[order]
    del chunk_ids, order
    size = len(ids)
    lines, spans = np.zeros((size, 2), dtype=np.int32), np.zeros((size, 2), dtype=np.int64)
    symbol, qualname, kind = (np.full(size, -1, dtype=np.int32) for _ in range(3))
    lengths = np.zeros(size, dtype=np.int64)
    rows = stored.row_array(ids) if stored is not None else np.full(size, -1, dtype=np.int64)
    if table.live and size:
        # The chunks held as objects are written from them (ids are unique, so each is found where it sorts).
        live = np.fromiter(table.live, dtype=np.int64, count=len(table.live))
        at = np.minimum(np.searchsorted(ids, live), max(size - 1, 0))
        rows[at[ids[at] == live]] = -1
    copied = np.flatnonzero(rows >= 0)
    if stored is not None and len(copied):
        at = rows[copied]
        lines[copied] = stored.lines[at]
        spans[copied] = stored.spans[at]
        for column, values in ((symbol, stored.symbol), (qualname, stored.qualname), (kind, stored.kind)):
            column[copied] = _renumbered(strings, stored.strings, values[at])
        lengths[copied] = stored.text_ptr[at + 1] - stored.text_ptr[at]
    # Where a run of positions copied from consecutive stored rows ends.
    run_ends = np.flatnonzero((np.diff(rows) != 1) | (rows[:-1] < 0)).tolist() + [len(rows) - 1] if len(rows) else []

    def texts():
        start = 0
        for end in run_ends:
            if rows[start] >= 0 and stored is not None:
                yield stored.text[int(stored.text_ptr[rows[start]]) : int(stored.text_ptr[rows[end] + 1])]
            else:
                for position in range(start, end + 1):
                    yield _live_chunk(table[int(ids[position])], position)
            start = end + 1

    def _live_chunk(chunk: Chunk, position: int) -> bytes:
        lines[position] = chunk.start_line, chunk.end_line
        spans[position] = chunk.start_byte, chunk.end_byte
        symbol[position], qualname[position], kind[position] = (strings(chunk.symbol), strings(chunk.qualname),
                                                                 strings(chunk.kind))
        text = chunk.content.encode("utf-8", "surrogatepass")
        lengths[position] = len(text)
        return text

    writer.blob("chunk_text", texts())
    writer.array("chunk_ids", ids)
    writer.array("chunk_file", files)
    writer.array("chunk_lines", lines.ravel())
    writer.array("chunk_spans", spans.ravel())
    writer.array("chunk_symbol", symbol)
    writer.array("chunk_qualname", qualname)
    writer.array("chunk_kind", kind)
    writer.array("chunk_text_ptr", np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64))


def _renumbered(strings: _Strings, table: Sequence[str], numbers: np.ndarray) -> np.ndarray:
    """``numbers`` into a stored string ``table`` (-1 for none) as numbers into ``strings``."""
    return _string_map(strings, table, [numbers])[numbers]


def _string_map(strings: _Strings, table: Sequence[str], parts: Iterable[np.ndarray]) -> np.ndarray:
    """What each number into a stored string ``table`` is as a number into ``strings``, for the numbers
    ``parts`` hold: an int32 array indexed by the stored number, whose last slot maps -1 (none) to -1. Each
    distinct number is looked up once, in ascending order, so the strings are numbered as they always were."""
    used = np.zeros(len(table) + 1, dtype=bool)
    for part in parts:
        used[part] = True
    mapping = np.full(len(table) + 1, -1, dtype=np.int32)
    found = np.flatnonzero(used[:-1])
    mapping[found] = [strings(table[number]) for number in found.tolist()]
    return mapping


def _save_uses(index: Index, paths: list[str], strings: _Strings, writer: SnapshotWriter) -> None:
    """References as columns, and each file's imports as a record of its own (empty for a file without),
    found through their lengths.

    A file's rows are either still the last snapshot's (copied from its columns in bulk, not made into objects
    and back) or its own objects'; both come in path order, so each column is the runs of one or the other,
    joined. Column by column, in int32: at 100,000 files the whole rows at once (int64, concatenated, sorted)
    lifted the final save's memory by 440 MB."""
    references = index.references
    stored = references.stored
    own = {name: array("i") for name in REFERENCE_COLUMNS[1:]}
    counts = np.zeros(len(paths), dtype=np.int32)
    # (from the stored columns, first row, end row) in the order the rows are written.
    runs: list[list] = []
    for number, path in enumerate(paths):
        if stored is not None and references.is_stored(path):
            start, end = stored.file_rows(path)
            from_stored = True
        else:
            found = references.get(path, ())
            if not found:
                continue
            start = len(own["owners"])
            end = start + len(found)
            from_stored = False
            names, lines, kinds = own["names"], own["lines"], own["kinds"]
            # A name's number and then its kind's, reference by reference: the strings are numbered as they were.
            for r in found:
                names.append(strings(r.name))
                lines.append(r.line)
                kinds.append(strings(r.kind))
            own["owners"].extend(enclosing.owners(index.symbols.in_file(path), index.imports.lines_of(path),
                                                  [r.line for r in found]))
        counts[number] = end - start
        if runs and runs[-1][0] == from_stored and runs[-1][2] == start:
            runs[-1][2] = end
        elif end > start:
            runs.append([from_stored, start, end])
    writer.array("reference_files", np.repeat(np.arange(len(paths), dtype=np.int32), counts))
    held, table = stored.columns() if stored is not None else (None, ())
    for column, name in enumerate(REFERENCE_COLUMNS[1:], start=1):
        mine = np.frombuffer(own[name], dtype=np.int32) if len(own[name]) else np.zeros(0, dtype=np.int32)
        theirs = held[column] if held is not None else mine
        # Names and kinds are numbers into the old file's strings: made numbers into this file's.
        mapping = _string_map(strings, table, (theirs[start:end] for from_stored, start, end in runs if from_stored)) \
            if held is not None and name in ("names", "kinds") else None
        pieces = [(theirs[start:end] if mapping is None else mapping[theirs[start:end]]) if from_stored
                  else mine[start:end] for from_stored, start, end in runs]
        writer.array(f"reference_{name}", np.concatenate(pieces).astype(np.int32, copy=False) if pieces
                     else np.zeros(0, dtype=np.int32))
    stored_imports = index.imports.stored
    imports = [stored_imports.record(path) if stored_imports is not None and index.imports.is_stored(path)
               else _encoded_imports(index.imports.get(path)) for path in paths]
    writer.blob("imports", imports)
    writer.array("import_ptr", np.cumsum([0, *map(len, imports)], dtype=np.int64))


def _encoded_imports(found: list[Import] | None) -> bytes:
    """A file's imports record (empty for a file without)."""
    return import_table.encode(found) if found else b""


def _save_definitions(index: Index, paths: list[str], strings: _Strings, writer: SnapshotWriter) -> None:
    """Definitions as rows of nine int64 numbers, and the module map's hints. The numbers go straight into one
    growing array (at 100,000 files a list of tuples of them lifted the final save's memory by 85 MB)."""
    definitions = array("q")
    hints: dict[int, str] = {}
    for number, path in enumerate(paths):
        for d in index.symbols.in_file(path):
            definitions.extend((number, strings(d.name), strings(d.qualname), strings(d.kind), strings(d.container),
                                d.start_line, d.end_line, d.start_byte, d.end_byte))
        hint = index.symbols.modules.hint(path)
        if hint:
            hints[number] = hint
    writer.array("definitions", np.frombuffer(definitions, dtype=np.int64) if definitions
                 else np.zeros(0, dtype=np.int64))
    writer.blob("hints", marshal.dumps(hints))


def load(source: SnapshotFile, expected: dict) -> Loaded:
    """What a snapshot holds; ``SnapshotError`` when it is damaged or was not made for ``expected``."""
    meta = source.meta
    if meta.get("format") != FORMAT or any(meta.get(key) != value for key, value in expected.items()):
        raise SnapshotError("snapshot made by another version or for another cache")
    try:
        return _load(source, meta)
    except (IndexError, KeyError, TypeError, ValueError, UnicodeDecodeError, EOFError) as exc:
        raise SnapshotError(f"snapshot is damaged: {exc}") from exc


def _save_segment(index: Index, writer: SnapshotWriter) -> None:
    """BM25's live documents as one segment, merged as it is written (never whole in memory)."""
    terms, arrays = index.bm25.merged()
    writer.blob("bm25_terms", "\0".join(terms).encode("utf-8", "surrogatepass"))
    for name in ARRAY_NAMES:
        writer.array(f"bm25_{name}", arrays[name])


def _split(blob: memoryview) -> list[str]:
    return str(blob, "utf-8", "surrogatepass").split("\0") if len(blob) else []


def reopen(source: SnapshotFile) -> tuple[StoredChunks, StoredReferences, StoredImports]:
    """The chunk columns, references and imports of a snapshot or a spill just written: what the index then
    serves from it (with its BM25 segment: ``load_segment``)."""
    strings = _split(source.blob("strings"))
    files = _load_files(source, strings)
    paths = [f.path for f in files]
    return _load_chunks(source, strings, files), _load_references(source, strings, paths), _load_imports(source, paths)


def load_segment(source: SnapshotFile) -> FrozenSegment:
    """The BM25 segment a snapshot or spill holds, checked (its pages dropped as the check reads them)."""
    terms = StoredTerms(source.blob("bm25_terms"))
    return FrozenSegment.from_arrays(terms, {name: source.array(f"bm25_{name}") for name in ARRAY_NAMES},
                                     source.release)


def _load(source: SnapshotFile, meta: dict) -> Loaded:
    strings = _split(source.blob("strings"))
    files = _load_files(source, strings)
    paths = [f.path for f in files]
    chunks = _load_chunks(source, strings, files)
    _require(np.array_equal(np.sort(source.array("file_chunks")), chunks.ids), "chunk ids of files")
    segment = load_segment(source)
    _require(np.array_equal(segment.doc_ids, chunks.ids), "BM25 documents")
    definitions = _load_definitions(source, strings, paths)
    references = _load_references(source, strings, paths)
    imports = _load_imports(source, paths)
    hints = {paths[number]: hint for number, hint in marshal.loads(source.blob("hints")).items()}
    links = _load_links(source, paths) if meta.get("links") else None
    return Loaded(meta, files, chunks, segment, definitions, references, imports, hints,
                  _load_rejected(source, strings), links)


def _load_imports(source: SnapshotFile, paths: list[str]) -> StoredImports:
    records, pointer = source.blob("imports"), source.array("import_ptr")
    _require(len(pointer) == len(paths) + 1 and _rising(pointer, len(records)), "import records")
    return StoredImports(records, pointer, paths)


def _load_links(source: SnapshotFile, paths: list[str]) -> dict[str, frozenset[str]]:
    pointer, targets = source.array("link_ptr"), source.array("link_targets")
    _require(len(pointer) == len(paths) + 1 and _rising(pointer, len(targets)) and _within(targets, len(paths)),
             "file links")
    bounds, numbers = pointer.tolist(), targets.tolist()
    return {path: frozenset([paths[t] for t in numbers[bounds[i] : bounds[i + 1]]]) for i, path in enumerate(paths)}


def _load_rejected(source: SnapshotFile, strings: list[str]) -> dict[str, tuple[int, int, str]]:
    paths = _split(source.blob("rejected_paths"))
    stamps, reasons = source.array("rejected_stamps"), source.array("rejected_reason")
    _require(len(stamps) == 2 * len(paths) and len(reasons) == len(paths) and _within(reasons, len(strings)),
             "rejected files")
    return {path: (size, mtime, strings[reason])
            for path, size, mtime, reason in zip(paths, stamps[0::2].tolist(), stamps[1::2].tolist(), reasons.tolist())}


def _load_files(source: SnapshotFile, strings: list[str]) -> list[StoredFile]:
    paths = _split(source.blob("paths"))
    count = len(paths)
    if source.meta.get("files") != count:
        raise SnapshotError("snapshot file table is incomplete")
    blob_ids = bytes(source.blob("blob_ids")).hex()
    size, mtime = source.array("file_size"), source.array("file_mtime")
    language, error = source.array("file_language"), source.array("file_error")
    pointer, file_chunks = source.array("file_chunk_ptr"), source.array("file_chunks")
    _require(len(blob_ids) == 40 * count and len(size) == len(mtime) == len(language) == len(error) == count
             and len(pointer) == count + 1 and _rising(pointer, len(file_chunks)), "file columns")
    _require(_within(language, len(strings)) and _within(error, len(strings), -1), "file strings")
    chunk_ids_of = np.split(file_chunks, pointer[1:-1]) if count else []
    languages, errors = language.tolist(), error.tolist()
    return [StoredFile(path, blob_ids[40 * i : 40 * i + 40], strings[languages[i]], int(size[i]), int(mtime[i]),
                       chunk_ids_of[i].tolist(), strings[errors[i]] if errors[i] >= 0 else None)
            for i, path in enumerate(paths)]


def _load_chunks(source: SnapshotFile, strings: list[str], files: list[StoredFile]) -> StoredChunks:
    ids = source.array("chunk_ids")
    rows = len(ids)
    text = source.blob("chunk_text")
    chunks = StoredChunks(
        ids=ids, file=source.array("chunk_file"), lines=source.array("chunk_lines").reshape(-1, 2),
        spans=source.array("chunk_spans").reshape(-1, 2), symbol=source.array("chunk_symbol"),
        qualname=source.array("chunk_qualname"), kind=source.array("chunk_kind"),
        text_ptr=source.array("chunk_text_ptr"), text=text, strings=strings,
        files=[(f.path, f.language, f.blob_id) for f in files])
    _require(len(chunks.file) == len(chunks.lines) == len(chunks.spans) == len(chunks.symbol) == rows
             and len(chunks.qualname) == len(chunks.kind) == rows and len(chunks.text_ptr) == rows + 1
             and _rising(chunks.text_ptr, len(text)) and (rows < 2 or bool(np.all(np.diff(ids) > 0))),
             "chunk columns")
    _require(_within(chunks.file, len(files)) and _within(chunks.kind, len(strings))
             and _within(chunks.symbol, len(strings), -1) and _within(chunks.qualname, len(strings), -1),
             "chunk references")
    return chunks


def _load_definitions(source: SnapshotFile, strings: list[str], paths: list[str]) -> dict[str, list[Definition]]:
    """Definitions by file, built from whole columns: a warm start of Django builds 42,000 here, so strings
    are looked up by numpy and objects made in C."""
    rows = source.array("definitions")
    _require(len(rows) % 9 == 0, "definition columns")
    rows = rows.reshape(-1, 9)
    _require(_within(rows[:, 0], len(paths)) and _within(rows[:, 1:4], len(strings))
             and _within(rows[:, 4], len(strings), -1), "definitions")
    table = np.array([*strings, None], dtype=object)  # -1 (no container) picks the None at the end
    path_table = np.array(paths, dtype=object)
    made = _definitions_of({
        "name": table[rows[:, 1]], "qualname": table[rows[:, 2]], "kind": table[rows[:, 3]],
        "path": path_table[rows[:, 0]], "start_line": rows[:, 5], "end_line": rows[:, 6],
        "start_byte": rows[:, 7], "end_byte": rows[:, 8], "container": table[rows[:, 4]]})
    definitions: dict[str, list[Definition]] = {}
    for start, end in _runs(rows[:, 0]):
        definitions.setdefault(paths[int(rows[start, 0])], []).extend(made[start:end])
    return definitions


def _load_references(source: SnapshotFile, strings: list[str], paths: list[str]) -> StoredReferences:
    """The references as columns, made into objects a file at a time when asked for (``reference_table.py``)."""
    columns = ReferenceColumns(*(source.array(f"reference_{name}") for name in REFERENCE_COLUMNS))
    files = columns.files
    _require(len({len(column) for column in columns}) == 1 and _within(files, len(paths))
             and _within(columns.names, len(strings)) and _within(columns.kinds, len(strings))
             and (len(files) < 2 or bool(np.all(np.diff(files) >= 0)))
             and _within(columns.owners, np.iinfo(np.int32).max, enclosing.ON_IMPORT), "references")
    return StoredReferences(columns, strings, paths)


def _runs(numbers: np.ndarray) -> Iterator[tuple[int, int]]:
    """The (start, end) of each run of equal values (a file's rows)."""
    if len(numbers):
        yield from pairwise([0, *(np.flatnonzero(np.diff(numbers)) + 1).tolist(), len(numbers)])


def _definitions_of(columns: dict[str, np.ndarray]) -> list[Definition]:
    """Definitions, one per row of ``columns`` (one per field), made in C: the rows are zipped from the columns'
    lists and each made into a ``Definition`` by ``tuple.__new__``, without a Python call per object."""
    rows = zip(*(columns[name].tolist() for name in Definition._fields))
    return list(map(tuple.__new__, repeat(Definition), rows))


def _require(condition: bool, what: str) -> None:
    if not condition:
        raise SnapshotError(f"snapshot {what} are inconsistent")


def _rising(pointer: np.ndarray, end: int) -> bool:
    return len(pointer) > 0 and pointer[0] == 0 and pointer[-1] == end and bool(np.all(np.diff(pointer) >= 0))


def _within(values: np.ndarray, bound: int, low: int = 0) -> bool:
    return not values.size or (int(values.min()) >= low and int(values.max()) < bound)

