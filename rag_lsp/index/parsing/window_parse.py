"""Per-keystroke parsing: re-parse only the top-level nodes around an edit (a "window").

tree-sitter re-parses a 5,000-line file incrementally in about 3 ms, but not
always: an edit between two Python functions (a comment typed at column 0, a
blank line) makes it re-parse everything after the edit, as long as a parse
from scratch (12 ms on the generated 5,000-line module of
``bench/server_bench.py``; 58 of its 200 one-line edits). A window instead
parses, with ``Parser.included_ranges``, only the bytes from a top-level node
before the edit to the second one after it, in the buffer's own positions
(about 40 µs), and the nodes outside it are kept from the last parse, moved by
the edit (``incremental.NodeCache``).

Why the window's nodes are those a parse of the whole buffer would make:

- It begins where the last parse had a top-level node start its line, with no
  comment just before it (a node's chunk takes the comments above it, which the
  window would cut off), and nothing before that node changed. A parser reads
  the window's first token in the state it reads any top-level node's.
- It ends two nodes past the edit: ``B``, the first node that is not a comment
  and begins on a line after the edit's end, and the one after it, both
  unchanged; the window's parse must end with exactly these two nodes (the
  same types and extents, moved). ``B``'s successor is there because a query
  pattern may look at a node's next sibling (C's ``struct ... ;``).
- The file had no secret and the window has none (masking a new secret would
  change text outside it).
- A syntax error in the window's parse is taken only when it lies inside the
  window's nodes (not in the two unchanged ones it ends with, nor outside every
  node), and every edit since the last parse without an error was quiet
  (``incremental.Changed.quiet``): none touched a line holding a delimiter of
  a token that can run over several lines (a comment's, a string's, a
  preprocessor conditional's, a JSX element's: the language's ``delimiters``
  in ``languages.toml``). The tokens of the window are then those of the whole
  buffer there, and the buffer holds the error too (deleting the ``*/`` of a
  comment instead makes the ``/*`` before it run on past the window, valid in
  the buffer and an error in the window: not quiet). Such a window's nodes are
  what error recovery made of the window; the nodes of the last parse outside
  it held no error.

Anything else (several edits far apart in one burst, a window larger than half
the file, a failed check) parses the whole buffer incrementally, as before.
``tests/unit/test_incremental.py`` holds windows to full parses over edits
of real files in ten languages: random ones, ones keeping the file valid, and
statements typed and deleted a character at a time (whose syntax errors the
whole buffer must have too, and which must leave no trace once deleted).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from operator import attrgetter

from tree_sitter import Node, Parser, Point, Range, Tree

from rag_lsp import languages
from rag_lsp.index.parsing.incremental import Changed, NodeCache, Top, point_after
from rag_lsp.redaction import find_secrets

_START = attrgetter("start_byte")
_END = attrgetter("end_byte")


@dataclass(frozen=True, slots=True)
class Window:
    """The parse of one stretch of a buffer, replacing the last parse's top-level nodes ``first`` to
    ``last`` (excluded); ``generation`` is the parse it was planned on (``NodeCache.generation``)."""

    tree: Tree
    first: int
    last: int
    changed: Changed
    generation: int


@dataclass(frozen=True, slots=True)
class _Plan:
    first: int
    last: int
    start_byte: int
    end_byte: int
    start_point: tuple[int, int]
    end_point: tuple[int, int]


def parse_window(path: str, language: str, source: bytes, cache: NodeCache, changed: Changed,
                 quiet: bool) -> Window | None:
    """The window around ``changed`` parsed alone, or None when the whole buffer must be parsed. ``quiet``
    says whether every edit since the last parse without a syntax error was quiet (``Changed.quiet``)."""
    if not cache.clean or cache.language != language:
        return None
    ts_language = languages.ts_language(language)
    plan = _plan(cache.tops, changed, source, languages.spec(language).comments)
    if ts_language is None or plan is None:
        return None
    if cache.broken is not None and not (quiet and plan.first <= cache.broken[0] and cache.broken[1] <= plan.last):
        return None
    if find_secrets(source[plan.start_byte : plan.end_byte].decode("utf-8", "replace"), path):
        return None
    window = Range(Point(*plan.start_point), Point(*plan.end_point), plan.start_byte, plan.end_byte)
    tree = Parser(ts_language, included_ranges=[window]).parse(source)
    root = tree.root_node
    children = root.children
    if root.is_error or root.type != cache.root_type or not _ends_as_planned(children, cache.tops, plan, changed):
        return None
    if root.has_error and not (quiet and _error_inside(children, plan.last < len(cache.tops))):
        return None
    return Window(tree, plan.first, plan.last, changed, cache.generation)


def _plan(tops: list[Top], changed: Changed, source: bytes, comments: frozenset[str]) -> _Plan | None:
    """Which of the last parse's top-level nodes a window around ``changed`` replaces, and its byte range."""
    if not tops:
        return None
    # The nodes the edit touched: those ending at or after its start and beginning at or before its end.
    touched_first = bisect_left(tops, changed.start, key=_END)
    touched_stop = bisect_right(tops, changed.old_end, key=_START)
    first = touched_first - 1
    while first >= 0 and not _opens_window(tops, first, source, comments):
        first -= 1
    if first < 0:
        first, start_byte, start_point = 0, 0, (0, 0)
    else:
        start_byte, start_point = tops[first].start_byte, (tops[first].start_row, 0)
    after = touched_stop
    while after < len(tops) and (tops[after].type in comments or tops[after].start_row <= changed.old_end_row):
        after += 1
    last = after + 2
    if last >= len(tops):
        last, end_byte, end_point = len(tops), len(source), point_after(source)
    else:
        end = tops[last - 1]
        end_byte, end_point = end.end_byte + changed.byte_delta, (end.end_row + changed.row_delta, end.end_column)
        # The line break after the last node too, when only blanks come before it: some grammars end a top-level
        # node with it (Go's declarations), and a window cut before it would lack it.
        line_end = source.find(b"\n", end_byte)
        if line_end >= 0 and not source[end_byte:line_end].strip():
            end_byte, end_point = line_end + 1, (end_point[0] + 1, 0)
    if 2 * (end_byte - start_byte) > len(source):
        return None
    return _Plan(first, last, start_byte, end_byte, start_point, end_point)


def _opens_window(tops: list[Top], position: int, source: bytes, comments: frozenset[str]) -> bool:
    """Whether a window may begin at this node: it starts its line, is no comment and follows none."""
    top = tops[position]
    if top.type in comments or (position > 0 and tops[position - 1].type in comments):
        return False
    return top.start_byte == 0 or source[top.start_byte - 1 : top.start_byte] == b"\n"


def _error_inside(children: list[Node], bounded: bool) -> bool:
    """Whether a window's syntax error lies inside its nodes and not in the unchanged two it ends with (an
    error there, or one outside every node, may be the window's cut: C++'s ``union U {...}`` without the
    ``;`` that follows it outside the window)."""
    if not any(child.has_error for child in children):
        return False
    return not bounded or not any(child.has_error for child in children[-2:])


def _ends_as_planned(children: list[Node], tops: list[Top], plan: _Plan, changed: Changed) -> bool:
    """Whether the window's parse ends with the two unchanged nodes it was planned to end with."""
    if plan.last == len(tops):
        return True
    if len(children) < 2:
        return False
    for child, top in zip(children[-2:], tops[plan.last - 2 : plan.last]):
        moved = top.moved(changed.byte_delta, changed.row_delta)
        if (child.type, child.start_byte, child.end_byte) != (moved.type, moved.start_byte, moved.end_byte):
            return False
    return True
