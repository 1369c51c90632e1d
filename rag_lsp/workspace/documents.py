"""Open editor buffers: their text, version and incrementally maintained syntax tree.

Editors describe edits in line/character positions whose characters are
UTF-16 code units by default (LSP's ``positionEncoding`` may also pick UTF-8
or UTF-32); tree-sitter wants UTF-8 byte offsets and (row, byte column)
points. ``OpenDocument.apply`` converts one into the other, edits the old
tree with ``Tree.edit`` and keeps the text, so re-parsing after a burst of
changes reuses everything the edits did not touch.
"""

from __future__ import annotations

import re
import threading
from bisect import bisect_right
from dataclasses import dataclass, field

from tree_sitter import Tree

from rag_lsp import languages
from rag_lsp.index.parsing.incremental import Changed, NodeCache, point_after
from rag_lsp.index.parsing.narrowing import Reparsed
from rag_lsp.index.parsing.parse import parse_tree
from rag_lsp.index.parsing.window_parse import Window, parse_window

ENCODINGS = ("utf-16", "utf-8", "utf-32")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


class EditError(ValueError):
    """An edit that does not fit the document (a position past the end, start after end)."""


@dataclass(frozen=True, slots=True)
class TextEdit:
    """Replace the text between two positions (0-based line, character in the document's encoding)."""

    start_line: int
    start_character: int
    end_line: int
    end_character: int
    text: str


def _unit_offset(line: str, character: int, encoding: str) -> int:
    """The index into ``line`` (a Python string) of a character position counted in ``encoding`` units."""
    if encoding == "utf-32":
        return min(character, len(line))
    counted = 0
    for index, char in enumerate(line):
        if counted >= character:
            return index
        code = ord(char)
        if encoding == "utf-16":
            counted += 2 if code > 0xFFFF else 1
        else:
            counted += len(char.encode("utf-8"))
    return len(line)


@dataclass(slots=True)
class OpenDocument:
    """One editor buffer. ``text`` is authoritative while the document is open."""

    path: str
    text: str
    version: int
    language: str = ""
    encoding: str = "utf-16"
    tree: Tree | None = None
    # Index into ``text`` where each line starts; None when an edit made it stale.
    _starts: list[int] | None = field(default=None, repr=False)

    # False for a buffer that is not indexed (too large, binary, secret): no tree is kept for it.
    parsed: bool = True
    # True when the text changed since it was last indexed.
    dirty: bool = True
    # Held while the text or tree changes, so edits and re-parses from two threads never interleave.
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    # What the last indexing found per top-level node, so the next one queries only the changed nodes.
    nodes: NodeCache = field(default_factory=NodeCache, repr=False, compare=False)
    # Where the edits since the last re-parse changed the text (None: nothing, or no tree to re-parse from).
    changed: Changed | None = field(default=None, repr=False, compare=False)
    # Whether every edit since the last parse without a syntax error was quiet (``Changed.quiet``), as of the last
    # re-parse: a window may then hold a syntax error (``index/parsing/window_parse.py``).
    quiet: bool = field(default=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.encoding not in ENCODINGS:
            raise ValueError(f"unknown position encoding {self.encoding!r}")
        self.language = self.language or languages.language_for_path(self.path)
        if self.parsed:
            self.tree = parse_tree(self.language, self.text.encode("utf-8"))

    def line_starts(self) -> list[int]:
        """Where each line of ``text`` starts; LSP counts \\n, \\r\\n and \\r as line breaks."""
        if self._starts is None:
            self._starts = [0, *(match.end() for match in _LINE_BREAK.finditer(self.text))]
        return self._starts

    def offset(self, line: int, character: int) -> int:
        """A position in the document's encoding as an index into ``text``; EditError past the end."""
        starts = self.line_starts()
        if line < 0 or character < 0:
            raise EditError(f"negative position {line}:{character}")
        if line >= len(starts):
            raise EditError(f"position {line}:{character} is past the end of {self.path} ({len(starts)} lines)")
        end = starts[line + 1] if line + 1 < len(starts) else len(self.text)
        content = self.text[starts[line] : end].rstrip("\r\n")
        if character > _units(content, self.encoding):
            raise EditError(f"position {line}:{character} is past the end of line {line} in {self.path}")
        return starts[line] + _unit_offset(content, character, self.encoding)

    def apply(self, edit: TextEdit) -> None:
        """Apply one edit to the text and to the syntax tree (re-parsed later, once per burst)."""
        start = self.offset(edit.start_line, edit.start_character)
        end = self.offset(edit.end_line, edit.end_character)
        if end < start:
            raise EditError(f"edit ends before it starts at {edit.start_line}:{edit.start_character}")
        before = self.text[:start].encode("utf-8")
        removed = self.text[start:end].encode("utf-8")
        inserted = edit.text.encode("utf-8")
        if self.tree is not None:
            start_point = point_after(before)
            old_end_point, new_end_point = _advance(start_point, removed), _advance(start_point, inserted)
            old_end, new_end = len(before) + len(removed), len(before) + len(inserted)
            self.tree.edit(start_byte=len(before), old_end_byte=old_end, new_end_byte=new_end,
                           start_point=start_point, old_end_point=old_end_point, new_end_point=new_end_point)
            line_end = self.text.find("\n", end)
            after = self.text[end : line_end if line_end >= 0 else len(self.text)].encode("utf-8")
            quiet = Changed.is_quiet(languages.spec(self.language).delimiters, before[before.rfind(b"\n") + 1 :],
                                     removed, inserted, after)
            span = (len(before), old_end, new_end, old_end_point[0], new_end_point[0], quiet)
            self.changed = Changed.of(*span) if self.changed is None else self.changed.then(*span)
        self.text = self.text[:start] + edit.text + self.text[end:]
        self._patch_starts(start, end, len(edit.text))

    def _patch_starts(self, start: int, end: int, inserted: int) -> None:
        """Keep the line starts after replacing ``text[start:end]`` by ``inserted`` characters.

        Only the lines around the edit are searched again (one more on each
        side, so a ``\r\n`` joined or split by the edit is seen); the starts
        after them move by the change in length. A keystroke in a 5,000-line
        buffer then costs a shift of a list, not a search of the whole text.
        """
        starts = self._starts
        if starts is None:
            return
        delta = inserted - (end - start)
        first = max(bisect_right(starts, start) - 2, 0)
        after = bisect_right(starts, end) + 1
        window_end = starts[after] + delta if after < len(starts) else len(self.text)
        inside = [match.end() for match in _LINE_BREAK.finditer(self.text, starts[first], window_end)]
        self._starts = [*starts[: first + 1], *inside, *(s + delta for s in starts[after + 1 :])]

    def replace_all(self, text: str) -> None:
        """A full-text change: the old tree is of no use any more."""
        self.text = text
        self._starts = None
        self.drop_tree()

    def drop_tree(self) -> None:
        """Forget the syntax tree (a buffer no longer indexed, or replaced whole): the next parse is a full one."""
        self.tree, self.changed = None, None

    def reparse(self) -> Tree | Window | Reparsed | None:
        """Re-parse after edits: only a window around them when the last parse's nodes allow it
        (``index/parsing/window_parse.py``), else the whole text, reusing the edited old tree (from scratch when
        there is none), with where the two trees differ (``index/parsing/narrowing.py``). After a window
        ``tree`` is the old tree with the edits applied, re-parsed when a window no longer serves."""
        self.parsed = True
        changed, self.changed = self.changed, None
        source = self.text.encode("utf-8")
        # The edits since the last valid parse: this burst's, and those before it when the last parse held an
        # error (however it was parsed).
        self.quiet = changed is not None and changed.quiet and (not self.nodes.has_error or self.quiet)
        if changed is not None:
            window = parse_window(self.path, self.language, source, self.nodes, changed, self.quiet)
            if window is not None:
                return window
        previous = self.tree
        self.tree = parse_tree(self.language, source, previous)
        if previous is not None and changed is not None and self.tree is not None:
            return Reparsed.of(previous, self.tree)
        return self.tree


def _units(line: str, encoding: str) -> int:
    """The length of a line in the encoding's units."""
    if encoding == "utf-32":
        return len(line)
    if encoding == "utf-8":
        return len(line.encode("utf-8"))
    return len(line.encode("utf-16-le")) // 2



def _advance(start: tuple[int, int], inserted: bytes) -> tuple[int, int]:
    """The point reached from ``start`` after ``inserted`` bytes."""
    breaks = inserted.count(b"\n")
    if not breaks:
        return start[0], start[1] + len(inserted)
    return start[0] + breaks, len(inserted) - (inserted.rfind(b"\n") + 1)
