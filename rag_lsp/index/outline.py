"""The text of indexed definitions, read from the index instead of the disk.

Completion context must never wait for the disk, and the index's chunks hold
every line of a file that matters (each line is in at most one chunk; only
blank lines and trivial closers such as ``}`` are in none). ``FileText``
rebuilds a file's lines from its chunks (``ChunkedText`` as they are asked
for), and ``head``/``body`` cut a
definition down to what a completion model needs first: its signature and
docstring, then, budget allowing, its body (for a class: its fields and the
signatures of its methods).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rag_lsp.model import CLASS_LIKE_KINDS, Chunk, Definition

# A docstring or a field list longer than this is cut (with an elision line).
HEAD_DOC_LINES = 8
# A signature spans at most this many lines before it is cut.
MAX_SIGNATURE_LINES = 15
# Kinds whose whole text is their head when short: declarations without a body to elide.
DECLARATION_KINDS = frozenset({"constant", "type", "enum", "interface", "union", "struct", "trait"})
# A declaration longer than this shows its first lines only.
MAX_DECLARATION_LINES = 12
# A body (the expansion of a head) is cut after this many lines.
MAX_BODY_LINES = 60
CONSTRUCTOR_NAMES = ("__init__", "constructor", "new", "init", "initialize")
FUNCTION_KINDS = frozenset({"function", "method", "constructor", "macro"})

_STRING = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|`(?:\\.|[^`\\])*`')
_DOCSTRING_START = re.compile(r"""^\s*[rRbBuUfF]{0,2}("{3}|'{3}|"|')""")


class FileText:
    """One file's lines (1-based); lines held by no chunk read as blank."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines

    @classmethod
    def from_text(cls, text: str) -> FileText:
        return cls(re.split(r"\r\n|\r|\n", text))

    @classmethod
    def from_chunks(cls, chunks: list[Chunk]) -> FileText:
        return cls.from_pieces([(chunk.start_line, chunk.end_line, chunk.content) for chunk in chunks])

    @classmethod
    def from_pieces(cls, pieces: list[tuple[int, int, str]]) -> FileText:
        """The text of a file's chunks given as (first line, last line, text), in the file's chunk order."""
        last = max((end for _, end, _ in pieces), default=0)
        lines = [""] * last
        for start, end, content in pieces:
            # A piece of a split definition starts with a repeated signature: its own lines are the last ones.
            own = content.split("\n")[-(end - start + 1):]
            lines[start - 1 : start - 1 + len(own)] = own
        return cls(lines)

    def __len__(self) -> int:
        return len(self.lines)

    def line(self, number: int) -> str:
        return self.lines[number - 1] if 0 < number <= len(self.lines) else ""

    def slice(self, start: int, end: int) -> list[str]:
        return self.lines[max(start, 1) - 1 : max(end, 0)]


class ChunkedText(FileText):
    """A file's lines read from its chunks as they are asked for, each chunk's when one of its lines is: a
    bundle's summary reads a definition's first lines, and rebuilding a large file's every line from its chunks
    cost more than the rest of the summary. The chunks are given in line order and do not overlap (as the index
    makes them), by their first and last lines and a reader of a chunk's text by position; a line reads as
    ``from_pieces`` would make it."""

    def __init__(self, starts: list[int], ends: list[int], read: Callable[[int], str]) -> None:
        # ``lines`` stays empty: every line is read through ``line`` and ``slice``.
        super().__init__([])
        self._starts, self._ends, self._read = starts, ends, read
        self._own: dict[int, list[str]] = {}

    @staticmethod
    def fits(starts: list[int], ends: list[int]) -> bool:
        """Whether chunks with these first and last lines are in line order without overlapping."""
        return all(end < start for end, start in zip(ends, starts[1:]))

    def __len__(self) -> int:
        return self._ends[-1] if self._ends else 0

    def line(self, number: int) -> str:
        position = bisect_right(self._starts, number) - 1
        if position < 0 or number > self._ends[position]:
            return ""
        own = self._own.get(position)
        if own is None:
            # A piece of a split definition starts with a repeated signature: its own lines are the last ones.
            own = self._own[position] = self._read(position).split("\n")[
                -(self._ends[position] - self._starts[position] + 1):]
        offset = number - self._starts[position]
        return own[offset] if offset < len(own) else ""

    def slice(self, start: int, end: int) -> list[str]:
        return [self.line(number) for number in range(max(start, 1), min(end, len(self)) + 1)]


@dataclass(frozen=True, slots=True)
class Excerpt:
    """Some lines of a definition, as shown in a snippet."""

    content: str
    start_line: int
    end_line: int
    complete: bool  # the whole definition is shown


def signature_end(text: FileText, definition: Definition, language: str) -> int:
    """The last line of a definition's header (decorators and leading comments skipped).

    Python's header ends at the line ending in ``:`` outside brackets; a brace
    language's at the first ``{`` or ``;`` outside brackets.
    """
    start, end = definition.start_line, definition.end_line
    first = _first_code_line(text, start, end, language)
    last = min(end, first + MAX_SIGNATURE_LINES - 1)
    depth = 0
    python = language == "python"
    for number in range(first, last + 1):
        code = _strip_strings(text.line(number))
        if python:
            code = code.split("#", 1)[0]
            depth += code.count("(") + code.count("[") - code.count(")") - code.count("]")
            if depth <= 0 and code.rstrip().endswith(":"):
                return number
            continue
        if "{" not in code and ";" not in code:
            depth += code.count("(") + code.count("[") - code.count(")") - code.count("]")
            continue
        for char in code:
            if char in "([":
                depth += 1
            elif char in ")]":
                depth -= 1
            elif depth <= 0 and char in "{;":
                return number
    return last if depth > 0 else first


def _first_code_line(text: FileText, start: int, end: int, language: str) -> int:
    """Skip the comments, decorators and attributes attached above a definition."""
    in_block = False
    depth = 0
    for number in range(start, end + 1):
        stripped = text.line(number).strip()
        if in_block:
            in_block = "*/" not in stripped
            continue
        if depth > 0:  # inside a decorator's arguments
            depth += stripped.count("(") - stripped.count(")")
            continue
        if stripped.startswith("/*"):
            in_block = "*/" not in stripped[2:]
            continue
        if stripped.startswith("@"):
            depth = max(stripped.count("(") - stripped.count(")"), 0)
            continue
        if (not stripped or stripped.startswith(("//", "*"))
                or (stripped.startswith("#") and (language == "python" or stripped.startswith("#[")))):
            continue
        return number
    return start


def _strip_strings(line: str) -> str:
    """A line with string literals blanked, so brackets and colons inside them do not count."""
    if '"' not in line and "'" not in line and "`" not in line:
        return line
    return _STRING.sub('""', line)


def docstring_end(text: FileText, after: int, end: int) -> int | None:
    """The last line of a Python docstring right after line ``after``, or None without one."""
    number = after + 1
    while number <= end and not text.line(number).strip():
        number += 1
    if number > end:
        return None
    line = text.line(number)
    match = _DOCSTRING_START.match(line)
    if not match:
        return None
    quote = match.group(1)
    rest = line[match.end() :]
    if quote in rest:
        return number
    for later in range(number + 1, end + 1):
        if quote in text.line(later):
            return later
    return end


def _body_indent(text: FileText, after: int, end: int, header_line: str) -> str:
    for number in range(after + 1, end + 1):
        line = text.line(number)
        if line.strip():
            return line[: len(line) - len(line.lstrip())]
    return header_line[: len(header_line) - len(header_line.lstrip())] + "    "


def _cut(lines: list[str], limit: int, indent: str, comment: str) -> tuple[list[str], bool]:
    if len(lines) <= limit:
        return lines, False
    return lines[:limit] + [f"{indent}{comment} ..."], True


def head(text: FileText, definition: Definition, language: str, comment: str,
         members: Sequence[Definition] = ()) -> Excerpt:
    """Signature and docstring (for a class, also its constructor's signature); short declarations whole."""
    start, end = definition.start_line, min(definition.end_line, max(len(text), definition.start_line))
    if definition.kind in DECLARATION_KINDS or definition.kind not in CLASS_LIKE_KINDS | FUNCTION_KINDS:
        lines = text.slice(start, end)
        shown, cut = _cut(lines, MAX_DECLARATION_LINES, _indent_of(lines[-1] if lines else ""), comment)
        return Excerpt("\n".join(shown).rstrip(), start, min(end, start + len(shown) - 1), not cut)
    header_end = signature_end(text, definition, language)
    last = header_end
    if language == "python" and (doc_end := docstring_end(text, header_end, end)) is not None:
        last = doc_end
    lines = text.slice(start, last)
    indent = _body_indent(text, header_end, end, text.line(header_end))
    lines, cut = _cut(lines, (header_end - start + 1) + HEAD_DOC_LINES, indent, comment)
    shown_end = last
    if definition.kind in CLASS_LIKE_KINDS:
        constructor = next((m for m in members if m.name in CONSTRUCTOR_NAMES), None)
        if constructor is not None:
            constructor_end = signature_end(text, constructor, language)
            lines = lines + ([""] if language == "python" else []) + text.slice(constructor.start_line, constructor_end)
            shown_end = max(shown_end, constructor_end)
            indent = _body_indent(text, constructor_end, constructor.end_line, text.line(constructor_end))
    complete = not cut and shown_end >= end
    if not complete:
        lines = lines + [f"{indent}{comment} ..."]
    return Excerpt("\n".join(lines).rstrip(), start, shown_end, complete)


def body(text: FileText, definition: Definition, language: str, comment: str,
         members: Sequence[Definition] = ()) -> Excerpt:
    """More than the head: a function whole, a class with its fields and every method's signature."""
    start, end = definition.start_line, min(definition.end_line, max(len(text), definition.start_line))
    if definition.kind not in CLASS_LIKE_KINDS or not members:
        lines = text.slice(start, end)
        indent = _indent_of(lines[1] if len(lines) > 1 else "")
        shown, cut = _cut(lines, MAX_BODY_LINES, indent, comment)
        return Excerpt("\n".join(shown).rstrip(), start, min(end, start + len(shown) - 1), not cut)
    # A class: its own lines, each method reduced to its signature.
    lines: list[str] = []
    number = start
    elided = False
    for member in sorted(members, key=lambda m: m.start_line):
        if member.start_line < number:
            continue
        lines.extend(text.slice(number, member.start_line - 1))
        header_end = signature_end(text, member, language)
        lines.extend(text.slice(member.start_line, header_end))
        if member.end_line > header_end:
            lines.append(f"{_body_indent(text, header_end, member.end_line, text.line(header_end))}{comment} ...")
            elided = True
        number = member.end_line + 1
    lines.extend(text.slice(number, end))
    lines = _squeeze_blank(lines)
    shown, cut = _cut(lines, MAX_BODY_LINES, _indent_of(lines[1] if len(lines) > 1 else ""), comment)
    return Excerpt("\n".join(shown).rstrip(), start, end if not cut else start + MAX_BODY_LINES - 1,
                   not cut and not elided)


def _indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _squeeze_blank(lines: list[str]) -> list[str]:
    """Runs of blank lines become one."""
    out: list[str] = []
    for line in lines:
        if not line.strip() and out and not out[-1].strip():
            continue
        out.append(line)
    return out
