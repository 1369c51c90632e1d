"""Turn a file's definitions (or, without a grammar, its lines) into retrievable chunks.

The chunker works on line spans only, so it knows nothing about tree-sitter:
the parser hands it definition spans and it decides what each chunk covers.
Every line of a file lands in at most one chunk, except for the signature that
is repeated at the head of each piece of a split definition: a class chunk
holds the class header, docstring and attributes, while each method is a
chunk of its own. Lines left over at the top level become ``code`` chunks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import accumulate

from rag_lsp.model import Chunk

# A chunk holds at most this many characters before it is split. About 600
# tokens: big enough for a typical function, small enough to rank precisely.
MAX_CHUNK_CHARS = 2400
# Windows for files chunked by lines (no grammar, or a failed parse).
WINDOW_LINES = 40
# Members shorter than this many lines are chunked with their container.
MIN_MEMBER_LINES = 3

_TRIVIAL_LINE = re.compile(r"^[\s{}()\[\];,]*(end)?[\s{}()\[\];,]*$")
_MD_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_MD_FENCE = re.compile(r"^\s*(```|~~~)")
_RST_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+])\1{2,}\s*$")

CHUNK_KINDS = frozenset(
    {
        "function", "method", "class", "struct", "interface", "trait", "enum", "module",
        "impl", "namespace", "union", "macro", "type", "constructor",
    }
)


@dataclass(slots=True)
class Span:
    """A chunkable definition as line numbers (1-based, inclusive) plus naming facts."""

    start_line: int
    end_line: int
    symbol: str
    qualname: str
    kind: str
    signature: str
    children: list[Span] = field(default_factory=list)


class FileLines:
    """A file's text split into lines, with the UTF-8 byte offset where each line starts."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines(keepends=True)
        # In ASCII text a line's bytes are its characters, and the sums run in C.
        lengths = map(len, self.lines) if text.isascii() else (len(line.encode("utf-8")) for line in self.lines)
        self.starts = [0, *accumulate(lengths)]

    def __len__(self) -> int:
        return len(self.lines)

    def slice(self, start_line: int, end_line: int) -> str:
        return "".join(self.lines[start_line - 1 : end_line])

    def byte_range(self, start_line: int, end_line: int) -> tuple[int, int]:
        return self.starts[start_line - 1], self.starts[end_line]


@dataclass(frozen=True, slots=True)
class ChunkContext:
    """What every chunk of one file shares."""

    path: str
    language: str
    blob_id: str
    comment: str
    lines: FileLines

    def make(self, start: int, end: int, symbol: str | None, qualname: str | None, kind: str,
             prefix: str = "") -> Chunk:
        start_byte, end_byte = self.lines.byte_range(start, end)
        content = prefix + self.lines.slice(start, end).rstrip("\n").rstrip("\r")
        return Chunk(self.path, start, end, start_byte, end_byte, symbol, qualname, kind,
                     self.language, self.blob_id, content)


def nest(spans: list[Span]) -> list[Span]:
    """Arrange flat spans into a forest by line containment (outer spans first)."""
    roots: list[Span] = []
    stack: list[Span] = []
    for span in sorted(spans, key=lambda s: (s.start_line, -s.end_line)):
        while stack and stack[-1].end_line < span.start_line:
            stack.pop()
        if stack and span.end_line <= stack[-1].end_line:
            stack[-1].children.append(span)
        elif stack:
            # Overlapping but not nested (rare, e.g. a comment attached across a
            # sibling): clip the span so every line still has one owner.
            span.start_line = stack[-1].end_line + 1
            if span.start_line > span.end_line:
                continue
            stack.clear()
            roots.append(span)
        else:
            roots.append(span)
        stack.append(span)
    return roots


def chunk_definitions(ctx: ChunkContext, spans: list[Span]) -> list[Chunk]:
    """Chunks for a parsed file: one per definition part, plus leftover top-level code."""
    roots = nest(spans)
    chunks = code_chunks(ctx, [(span.start_line, span.end_line) for span in roots])
    for span in roots:
        _emit(ctx, span, chunks)
    return sort_chunks(chunks)


def code_chunks(ctx: ChunkContext, covered: list[tuple[int, int]]) -> list[Chunk]:
    """``code`` chunks for the lines outside ``covered``: the line ranges of the root spans, in order."""
    chunks: list[Chunk] = []
    for start, end in _gaps(1, len(ctx.lines), covered):
        chunks.extend(_windows(ctx, start, end, None, None, "code"))
    return chunks


def root_chunks(ctx: ChunkContext, roots: list[Span]) -> list[Chunk]:
    """The chunks of some root spans (``nest``'s), in the order ``chunk_definitions`` gives them."""
    chunks: list[Chunk] = []
    for span in roots:
        _emit(ctx, span, chunks)
    return sort_chunks(chunks)


def sort_chunks(chunks: list[Chunk]) -> list[Chunk]:
    """Chunks by their lines; the sort is stable, so chunks of the same lines keep the order they were made in."""
    chunks.sort(key=lambda c: (c.start_line, c.end_line))
    return chunks


def _emit(ctx: ChunkContext, span: Span, out: list[Chunk]) -> None:
    # Tiny members (interface method signatures, one-line getters) stay in
    # their container's chunk: alone they would be fragments without context.
    span.children = [c for c in span.children if c.end_line - c.start_line + 1 >= MIN_MEMBER_LINES]
    gaps = _gaps(span.start_line, span.end_line, [(child.start_line, child.end_line) for child in span.children])
    for index, (start, end) in enumerate(gaps):
        if index > 0 and _is_trivial(ctx.lines.slice(start, end)):
            continue
        start, end = _trim_blank(ctx.lines, start, end)
        out.extend(_split(ctx, span, start, end, continued=index > 0))
    for child in span.children:
        _emit(ctx, child, out)


def _gaps(start: int, end: int, covered: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Line ranges of ``start..end`` not covered by any of the ``covered`` ranges (in order)."""
    gaps: list[tuple[int, int]] = []
    cursor = start
    for child_start, child_end in covered:
        if child_start > cursor:
            gaps.append((cursor, child_start - 1))
        cursor = max(cursor, child_end + 1)
    if cursor <= end:
        gaps.append((cursor, end))
    return gaps


def _is_trivial(text: str) -> bool:
    return all(_TRIVIAL_LINE.match(line) for line in text.splitlines())


def _split(ctx: ChunkContext, span: Span, start: int, end: int, continued: bool) -> list[Chunk]:
    """One definition part, split into pieces at the size limit with the signature repeated."""
    pieces = _pack_lines(ctx.lines, start, end)
    chunks = []
    for index, (piece_start, piece_end) in enumerate(pieces):
        repeat = continued or index > 0
        prefix = f"{span.signature}\n{ctx.comment} ...\n" if repeat and span.signature else ""
        chunks.append(ctx.make(piece_start, piece_end, span.symbol, span.qualname, span.kind, prefix))
    return chunks


def _windows(ctx: ChunkContext, start: int, end: int, symbol: str | None, qualname: str | None,
             kind: str) -> list[Chunk]:
    """Size-limited windows over a line range, without blank edges or blank windows."""
    if not ctx.lines.slice(start, end).strip():
        # Most gaps between definitions are a blank line or two.
        return []
    windows = []
    for s, e in _pack_lines(ctx.lines, start, end, max_lines=WINDOW_LINES):
        if ctx.lines.slice(s, e).strip():
            windows.append(ctx.make(*_trim_blank(ctx.lines, s, e), symbol, qualname, kind))
    return windows


def _trim_blank(lines: FileLines, start: int, end: int) -> tuple[int, int]:
    """Shrink a line range past its leading and trailing blank lines (keeps one line at least)."""
    while start < end and not lines.lines[start - 1].strip():
        start += 1
    while end > start and not lines.lines[end - 1].strip():
        end -= 1
    return start, end


def _pack_lines(lines: FileLines, start: int, end: int, max_lines: int | None = None) -> list[tuple[int, int]]:
    """Split ``start..end`` into consecutive ranges under the size limits.

    A range is cut at the last blank line of its second half when there is
    one, so pieces tend to end between statements rather than inside them.
    """
    ranges: list[tuple[int, int]] = []
    piece_start = start
    size = 0
    line = start
    while line <= end:
        length = len(lines.lines[line - 1])
        count = line - piece_start + 1
        too_big = size + length > MAX_CHUNK_CHARS or (max_lines is not None and count > max_lines)
        if too_big and line > piece_start:
            cut = _blank_cut(lines, piece_start, line - 1)
            ranges.append((piece_start, cut))
            piece_start = cut + 1
            size = sum(len(lines.lines[i - 1]) for i in range(piece_start, line))
            continue
        size += length
        line += 1
    if piece_start <= end:
        ranges.append((piece_start, end))
    return ranges


def _blank_cut(lines: FileLines, start: int, end: int) -> int:
    middle = start + (end - start) // 2
    for line in range(end, middle, -1):
        if not lines.lines[line - 1].strip():
            return line
    return end


def chunk_lines(ctx: ChunkContext) -> list[Chunk]:
    """Line windows over a whole file: for languages without a grammar and failed parses."""
    if not len(ctx.lines):
        return []
    return _windows(ctx, 1, len(ctx.lines), None, None, "text")


def chunk_headings(ctx: ChunkContext) -> list[Chunk]:
    """Sections of a prose file (Markdown ``#`` or reStructuredText underlines), each split to size."""
    headings = _headings(ctx.lines.lines)
    if not headings:
        return chunk_lines(ctx)
    chunks: list[Chunk] = []
    bounds = [(line, title) for line, title in headings]
    if bounds[0][0] > 1:
        chunks.extend(_windows(ctx, 1, bounds[0][0] - 1, None, None, "text"))
    for index, (line, title) in enumerate(bounds):
        end = bounds[index + 1][0] - 1 if index + 1 < len(bounds) else len(ctx.lines)
        chunks.extend(_windows(ctx, line, end, title, title, "section"))
    return chunks


def _headings(lines: list[str]) -> list[tuple[int, str]]:
    """(1-based line, title) of each heading outside fenced code blocks."""
    found: list[tuple[int, str]] = []
    fenced = False
    for index, line in enumerate(lines):
        if _MD_FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        match = _MD_HEADING.match(line)
        if match:
            found.append((index + 1, match.group(2)))
            continue
        previous = lines[index - 1].strip() if index else ""
        if (
            index
            and previous
            and _RST_UNDERLINE.match(line)
            and len(line.strip()) >= len(previous)
            and not _RST_UNDERLINE.match(previous)
        ):
            if found and found[-1][0] == index:
                continue
            found.append((index, previous))
    return found
