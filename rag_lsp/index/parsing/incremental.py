"""Per-keystroke parsing: the queries run only over the top-level nodes an edit changed.

A one-line edit in a 5,000-line file re-parses incrementally in a few
milliseconds, but running the tags and imports queries over the whole tree
again cost several times that. What the queries find in a top-level node
depends only on that node and on the comments attached above it, so a
``NodeCache`` (one per open buffer) remembers, per top-level node, what was
found there, relative to the node's start. On the next parse a node whose
text is unchanged — the bytes from the start of the line where its attached
comments begin, to its end, and its type — reuses that, shifted to where the
node now is; the others are queried with ``QueryCursor.set_byte_range`` over
their byte ranges, and what those queries find outside them (a match that
overlaps the range) is dropped, since it belongs to a node that was reused.

While a statement is being typed the buffer is often not valid code. A
top-level node holding a syntax error is what error recovery made of it in
this parse, which may depend on the text around it, so it is queried on every
parse and never kept; the nodes without an error are reused as in a valid
tree. (Until 2026-12-03 any error sent the whole tree to the queries: typing
a statement into a 5,000-line file cost a full extraction on every other
keystroke.) Each dirty stretch is a query run of its own; past
``MAX_RANGES`` stretches one run over the whole tree is cheaper, and its finds
are filed the same way.

The cache keeps the last parse's top-level nodes in order (``Top``: type,
extent, error), each with its key and finds. When only a window around the
edit was parsed (``window_parse.py``), the nodes before it are kept as they
are, those after it are moved by the edit without their keys being made again,
and only the window's nodes are matched by key.

What a node yielded is handed on per node (``NodeFound``), so that nesting,
qualified names and chunks can be kept per node too (``per_node.py``); the
result equals a full parse's (``tests/unit/test_incremental.py`` checks it
over random edits of real files in several languages).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field
from operator import attrgetter
from typing import TYPE_CHECKING, NamedTuple

from tree_sitter import Node, Tree

from rag_lsp import languages
from rag_lsp.index.parsing.narrowing import MAX_RUN_SHARE, Reparsed, changed_span, merge, run_around
from rag_lsp.index.parsing.nesting import FoundDefinition

if TYPE_CHECKING:
    from rag_lsp.index.parsing.per_node import Built
    from rag_lsp.index.parsing.window_parse import Window

# Found in one node or tree: (name, line, kind, byte) references; (statement byte, module) → (line, names, aliases).
References = set[tuple[str, int, str, int]]
Imports = dict[tuple[int, str], tuple[int, set[str], set[tuple[str, str]]]]


@dataclass(slots=True)
class Found:
    """What the tags and imports queries found, in absolute positions."""

    definitions: list[FoundDefinition] = field(default_factory=list)
    references: References = field(default_factory=set)
    imports: Imports = field(default_factory=dict)

    def sorted_references(self) -> list[tuple[str, int, str]]:
        """(name, line, kind), each once, by line, name and kind."""
        return sorted({(name, line, kind) for name, line, kind, _ in self.references},
                      key=lambda ref: (ref[1], ref[0], ref[2]))

    def sorted_imports(self) -> list[tuple[int, str, int, tuple[str, ...], tuple[tuple[str, str], ...]]]:
        return [(start, module, line, tuple(sorted(names)), tuple(sorted(aliases)))
                for (start, module), (line, names, aliases) in sorted(self.imports.items())]


@dataclass(slots=True)
class NodeFound:
    """What one top-level node yielded, with bytes relative to its start byte and lines to its start row.

    ``built`` is what ``per_node.py`` made of it (relative too), kept with it for as long as the node's text
    is unchanged.
    """

    definitions: list[FoundDefinition]
    references: list[tuple[str, int, str, int]]
    imports: list[tuple[int, str, int, set[str], set[tuple[str, str]]]]
    built: Built | None = None


# What a top-level node's finds depend on (``_key``): its type, its text with the comments above it, where the
# node begins in that text, and the next node's type.
Key = tuple[str, bytes, int, str]

_START = attrgetter("start_byte")

# Byte ranges queried apart at most; more dirty stretches than this are queried in one run over the tree.
MAX_RANGES = 8

Extract = Callable[[Node, list[tuple[int, int]] | None], Found]


def point_after(prefix: bytes) -> tuple[int, int]:
    """The (row, byte column) tree-sitter point at the end of ``prefix``."""
    row = prefix.count(b"\n")
    last_break = prefix.rfind(b"\n")
    return row, len(prefix) - (last_break + 1)


class Top(NamedTuple):
    """A top-level node as the next parse needs it, without the tree it came from: a window's parse keeps
    the nodes outside the window from the parse before (``window_parse.py``), moved by the edit."""

    type: str
    start_byte: int
    end_byte: int
    start_row: int
    end_row: int
    end_column: int
    has_error: bool

    @classmethod
    def of(cls, node: Node) -> Top:
        end = node.end_point
        return cls(node.type, node.start_byte, node.end_byte, node.start_point[0], end[0], end[1], node.has_error)

    def moved(self, bytes_by: int, rows_by: int) -> Top:
        """The node after an edit above it: the same columns (it begins on a later line than the edit's end)."""
        return Top(self.type, self.start_byte + bytes_by, self.end_byte + bytes_by, self.start_row + rows_by,
                   self.end_row + rows_by, self.end_column, self.has_error)


@dataclass(frozen=True, slots=True)
class Changed:
    """Where a burst of edits changed a buffer since its last parse: bytes before ``start`` are as they were,
    the old text's ``[start, old_end]`` became ``[start, new_end]``, and what follows moved by ``byte_delta``
    bytes and ``row_delta`` lines. Bytes and rows are tree-sitter's (UTF-8 bytes, lines broken at ``\\n``).

    ``quiet`` says that no edit of the burst touched a line holding a character that may delimit a token running
    over several lines (the language's ``delimiters``, ``languages.toml``), before or after the edit. Such a
    burst changes no comment's or string's extent (a delimiter typed a letter at a time, ``#ifndef`` or a
    heredoc's ``<<~END``, is on the line), so a syntax error it makes is the same in a window as in the whole
    buffer."""

    start: int
    old_end: int
    old_end_row: int
    byte_delta: int
    row_delta: int
    quiet: bool = False

    @property
    def new_end(self) -> int:
        return self.old_end + self.byte_delta

    @classmethod
    def of(cls, start: int, old_end: int, new_end: int, old_end_row: int, new_end_row: int,
           quiet: bool = False) -> Changed:
        return cls(start, old_end, old_end_row, new_end - old_end, new_end_row - old_end_row, quiet)

    @staticmethod
    def is_quiet(delimiters: re.Pattern[bytes], before: bytes, removed: bytes, inserted: bytes, after: bytes) -> bool:
        """Whether an edit replacing ``removed`` by ``inserted`` touches no delimiter (``quiet``): ``before`` is
        its first line up to the edit, ``after`` its last line from the edit's end."""
        return not (delimiters.search(before + removed + after) or delimiters.search(before + inserted + after))

    def then(self, start: int, old_end: int, new_end: int, old_end_row: int, new_end_row: int,
             quiet: bool = False) -> Changed:
        """This change followed by an edit given in the positions of the text after this change: one span
        covering both, in the old text's positions (a position inside the changed span maps to its bounds)."""
        if old_end < self.start:
            end, end_row = old_end, old_end_row
        elif old_end <= self.new_end:
            end, end_row = self.old_end, self.old_end_row
        else:
            end, end_row = old_end - self.byte_delta, old_end_row - self.row_delta
        if end < self.old_end:
            end, end_row = self.old_end, self.old_end_row
        return Changed(min(self.start, start), end, end_row, self.byte_delta + new_end - old_end,
                       self.row_delta + new_end_row - old_end_row, self.quiet and quiet)


class NodeCache:
    """What each top-level node of a buffer's last parse yielded, in that parse's order, with each node's key
    (its text) and extent: a full parse reuses a node's finds by its key, a window's parse by its place."""

    def __init__(self) -> None:
        # The buffer's path and language: what is kept per node (qualified names, chunks) holds them.
        self.path = self.language = ""
        # The root's type: predicates look at a top-level node's parent, so a new root type (a file that
        # no longer parses as a program) invalidates every find.
        self.root_type = ""
        self._tops: list[Top] = []
        self._keys: list[Key] = []
        self._results: list[NodeFound] = []
        # The positions of the last parse's top-level nodes holding a syntax error, as a span (first, stop), or
        # None: a window must cover them all (``window_parse.py``).
        self.broken: tuple[int, int] | None = None
        # Whether the last parse's text held no secret (``parse.py``): a window with none keeps it so.
        self.clean = False
        # Counts the parses extracted: a window planned on one parse's nodes fits no other.
        self.generation = 0
        # How many top-level nodes the last parse reused and queried (of those, queried only around the edit), and
        # whether it parsed a window: for tests and benchmarks.
        self.reused = self.queried = self.narrowed = 0
        self.windowed = False
        # The byte ranges the last parse queried (its changed nodes, or their runs): outside them the text is
        # that of an earlier parse (``parse.py`` looks there for secrets).
        self.queried_ranges: list[tuple[int, int]] = []
        # The last whole tree parsed, and for each node whether its finds came from that tree rather than from a
        # window's since: such a node, changed in a tree re-parsed from that one, can be queried only around its
        # edits (``narrowing.py``).
        self._tree: Tree | None = None
        self._of_tree: list[bool] = []
        # The positions of the nodes the last parse made (a window's, or all): only their lines can have changed.
        self.parsed = range(0)

    @property
    def has_error(self) -> bool:
        """Whether the last parse held a syntax error."""
        return self.broken is not None

    def clear(self) -> None:
        self._tops, self._keys, self._results = [], [], []
        self._tree, self._of_tree = None, []
        self.clean = False
        self.generation += 1

    @property
    def tops(self) -> list[Top]:
        return self._tops

    def extract(self, path: str, language: str, root: Node, source: bytes, extract: Extract,
                window: Window | None = None, tree: Tree | Reparsed | None = None) -> list[tuple[Top, NodeFound]]:
        """What a full query run over the file would find, per top-level node, querying only the nodes not seen
        before (and those holding a syntax error). ``root`` is the tree's root, or the root of ``window``'s
        parse, which replaces the nodes it was planned over (``window_parse.py``) and keeps the others in place.
        ``tree`` is the whole tree ``root`` belongs to; when it was re-parsed from the tree of this cache's last
        parse (``Reparsed``), a changed node that was there before is queried only around the edit
        (``narrowing.py``)."""
        if (path, language, root.type) != (self.path, self.language, self.root_type):
            self.path, self.language, self.root_type = path, language, root.type
            self.clear()
        comments = languages.spec(language).comments
        inner = [Top.of(node) for node in root.children]
        if window is not None:
            assert window.generation == self.generation, "a window fits only the parse it was planned on"
            first, last = window.first, window.last
            changed = window.changed
            moved = [top.moved(changed.byte_delta, changed.row_delta) for top in self._tops[last:]]
            tops = [*self._tops[:first], *inner, *moved]
            stop = first + len(inner)
            keys = [*self._keys[:first], *(_key(tops, position, source, comments) for position in range(first, stop)),
                    *self._keys[last:]]
            old = _by_key(self._keys[first:last], self._results[first:last], self._tops[first:last])
            results: list[NodeFound | None] = [*self._results[:first], *(None for _ in inner), *self._results[last:]]
            of_tree = [*self._of_tree[:first], *(False for _ in inner), *self._of_tree[last:]]
        else:
            first, stop = 0, len(inner)
            tops = inner
            keys = [_key(tops, position, source, comments) for position in range(len(tops))]
            # Under a root that is itself an error (a file that no longer parses as a program) a node's finds
            # depend on how recovery nested it (predicates look at parents): nothing is reused.
            old = {} if root.is_error else _by_key(self._keys, self._results, self._tops)
            results = [None] * len(tops)
            of_tree = [True] * len(tops)
        # A node holding a syntax error is what error recovery made of it in this parse, which may depend on the
        # text around it: it is queried every time, and never reused. (Asked of the nodes only when the tree has
        # one; a window is parsed only where the nodes outside it hold none.)
        broken = {position for position in range(first, stop) if tops[position].has_error} if root.has_error else set()
        dirty: list[int] = []
        for position in range(first, stop):
            bucket = old.get(keys[position]) if position not in broken else None
            results[position] = bucket.pop() if bucket else None
            if results[position] is None:
                dirty.append(position)
        reparsed = tree if isinstance(tree, Reparsed) else None
        runs = (self._runs(root, tops, keys, dirty, reparsed, comments, languages.spec(language).wrappers)
                if reparsed is not None and reparsed.previous is self._tree and not root.is_error else {})
        self.queried_ranges = self._query(root, extract, tops, first, stop, dirty, runs, results)
        self._tops, self._keys, self._results, self._of_tree = tops, keys, results, of_tree  # type: ignore[assignment]
        if window is None:
            self._tree = tree.tree if isinstance(tree, Reparsed) else tree
        self.narrowed = len(runs)
        # An error outside every top-level node (a missing token at the root) counts for all the parsed nodes.
        self.broken = (min(broken), max(broken) + 1) if broken else (first, stop) if root.has_error else None
        self.generation += 1
        self.reused, self.queried, self.windowed = len(tops) - len(dirty), len(dirty), window is not None
        self.parsed = range(first, stop)
        return list(zip(tops, results))  # type: ignore[arg-type]

    def _runs(self, root: Node, tops: list[Top], keys: list[Key], dirty: list[int],
              reparsed: Reparsed, comments: frozenset[str], wrappers: frozenset[str]) -> dict[int, _Run]:
        """The changed nodes worth querying only around the edit (``narrowing.py``): each was at the same place
        in the last parse, with the same type, the same comments above it and the same next node's type, and its
        finds there came from the tree this one was re-parsed from."""
        runs: dict[int, _Run] = {}
        for position in dirty:
            top, key = tops[position], keys[position]
            earlier = bisect_left(self._tops, top.start_byte, key=_START)
            if earlier == len(self._tops) or self._tops[earlier].start_byte != top.start_byte:
                continue
            before, old_key = self._tops[earlier], self._keys[earlier]
            if not self._of_tree[earlier]:
                continue
            # The same type, line, comments above (the node's offset in its key) and next node's type.
            if (before.start_row, old_key[0], *old_key[2:]) != (top.start_row, key[0], *key[2:]):
                continue
            start, _, new_end = changed_span(old_key[1], key[1])
            if start < key[2]:
                continue
            begin = top.start_byte - key[2]
            low, high = begin + start, begin + new_end
            for change_start, change_end in reparsed.changes:
                if change_start < top.end_byte and change_end > top.start_byte:
                    low, high = min(low, change_start), max(high, change_end)
            if low < top.start_byte or high > top.end_byte:
                continue
            run_start, run_end = run_around(root.child(position), low, high, comments, wrappers)
            bytes_by = (top.end_byte - top.start_byte) - (before.end_byte - before.start_byte)
            if (run_end - run_start > MAX_RUN_SHARE * (top.end_byte - top.start_byte)
                    or run_end - bytes_by < run_start):
                continue
            runs[position] = _Run(self._results[earlier], run_start, run_end, bytes_by, top.end_row - before.end_row)
        return runs

    @staticmethod
    def _query(root: Node, extract: Extract, tops: list[Top], first: int, stop: int, dirty: list[int],
               runs: dict[int, _Run], results: list[NodeFound | None]) -> list[tuple[int, int]]:
        """Run the queries over the dirty nodes, each of ``runs`` only over its run, and file what they find; a
        node whose run does not serve (``narrowing.merge``) is queried whole after all, and leaves ``runs``.
        Returns the byte ranges queried in the end."""
        if not dirty:
            return []
        ranges = _queried(tops, dirty, runs)
        _file(extract(root, ranges if len(ranges) <= MAX_RANGES else None), tops, first, stop, results, dirty)
        again = []
        for position, run in runs.items():
            node, new = tops[position], results[position]
            assert new is not None
            merged = merge((run.old.definitions, run.old.references, run.old.imports),
                           (new.definitions, new.references, new.imports), run.start - node.start_byte,
                           run.end - run.bytes_by - node.start_byte, run.end - node.start_byte, run.rows_by)
            if merged is None:
                again.append(position)
            else:
                results[position] = NodeFound(*merged)
        if again:
            ranges = _ranges(tops, again)
            _file(extract(root, ranges if len(ranges) <= MAX_RANGES else None), tops, first, stop, results, again)
            for position in again:
                del runs[position]
        return _queried(tops, dirty, runs)


@dataclass(frozen=True, slots=True)
class _Run:
    """A changed node's finds in the last parse (``old``) and the run it is queried over now (``start``, ``end``,
    absolute bytes), and how far the edit moved what follows the run."""

    old: NodeFound
    start: int
    end: int
    bytes_by: int
    rows_by: int


def _by_key(keys: list[Key], results: list[NodeFound], tops: list[Top]
            ) -> dict[Key, list[NodeFound]]:
    """Earlier finds by their node's key, leaving out the nodes that held a syntax error."""
    found: dict[Key, list[NodeFound]] = {}
    for key, result, top in zip(keys, results, tops):
        if not top.has_error:
            found.setdefault(key, []).append(result)
    return found


def _key(nodes: list[Top], position: int, source: bytes, comments: frozenset[str]) -> Key:
    """A node's type; its text from the start of the line where the comments attached above it begin, and
    where the node begins in that text (what comes before it on its line may be another node's); and the type
    of the node after it (a pattern may ask for it: C's ``struct ... ;``, where a syntax error may come between
    the two). The node before it is not part of it: an edit there leaves this node's finds as they were."""
    node = nodes[position]
    first = position
    while first > 0 and nodes[first - 1].type in comments:
        first -= 1
    begin = source.rfind(b"\n", 0, nodes[first].start_byte) + 1
    after = nodes[position + 1].type if position + 1 < len(nodes) else ""
    return node.type, source[begin : node.end_byte], node.start_byte - begin, after


def _ranges(nodes: list[Top], dirty: list[int]) -> list[tuple[int, int]]:
    """Byte ranges covering runs of consecutive dirty nodes."""
    ranges: list[tuple[int, int]] = []
    previous = -2
    for position in dirty:
        node = nodes[position]
        if position == previous + 1:
            ranges[-1] = (ranges[-1][0], node.end_byte)
        else:
            ranges.append((node.start_byte, node.end_byte))
        previous = position
    return ranges


def _queried(nodes: list[Top], dirty: list[int], runs: dict[int, _Run]) -> list[tuple[int, int]]:
    """The byte ranges of the dirty nodes, each of ``runs`` only its run, in order."""
    return sorted([*_ranges(nodes, [p for p in dirty if p not in runs]), *((r.start, r.end) for r in runs.values())])


def _file(found: Found, nodes: list[Top], first: int, stop: int, results: list[NodeFound | None],
          dirty: list[int]) -> None:
    """What the queries found, filed afresh under the dirty nodes."""
    for position in dirty:
        results[position] = NodeFound([], [], [])
    _distribute(found, nodes, first, stop, results, set(dirty))


def _distribute(found: Found, nodes: list[Top], first: int, stop: int, results: list[NodeFound | None],
                dirty: set[int]) -> None:
    """File what the range queries found under the dirty node holding each find, relative to that node (the
    queried nodes lie in ``nodes[first:stop]``)."""
    starts = [node.start_byte for node in nodes[first:stop]]

    def owner(byte: int) -> int:
        position = first + bisect_right(starts, byte) - 1
        return position if position in dirty and byte < nodes[position].end_byte else -1

    for definition in found.definitions:
        position = owner(definition.extent[0])
        if position >= 0:
            node = nodes[position]
            results[position].definitions.append(definition.moved(-node.start_byte, -node.start_row))  # type: ignore[union-attr]
    for name, line, kind, byte in found.references:
        position = owner(byte)
        if position >= 0:
            node = nodes[position]
            results[position].references.append((name, line - node.start_row, kind, byte - node.start_byte))  # type: ignore[union-attr]
    for (start, module), (line, names, aliases) in found.imports.items():
        position = owner(start)
        if position >= 0:
            node = nodes[position]
            results[position].imports.append(  # type: ignore[union-attr]
                (start - node.start_byte, module, line - node.start_row, names, aliases))
