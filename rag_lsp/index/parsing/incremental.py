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

What a node yielded is handed on per node (``NodeFound``), so that nesting,
qualified names and chunks can be kept per node too (``per_node.py``); the
result equals a full parse's (``tests/unit/test_incremental.py`` checks it
over random edits of real files in several languages).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tree_sitter import Node

from rag_lsp import languages
from rag_lsp.index.parsing.nesting import FoundDefinition

if TYPE_CHECKING:
    from rag_lsp.index.parsing.per_node import Built

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


# Byte ranges queried apart at most; more dirty stretches than this are queried in one run over the tree.
MAX_RANGES = 8

Extract = Callable[[Node, list[tuple[int, int]] | None], Found]


class NodeCache:
    """What each top-level node of a buffer's last parse yielded, by the node's text."""

    def __init__(self) -> None:
        # The buffer's path and language: what is kept per node (qualified names, chunks) holds them.
        self.path = self.language = ""
        # The root's type: predicates look at a top-level node's parent, so a new root type (a file that
        # no longer parses as a program) invalidates every find.
        self.root_type = ""
        self._by_key: dict[tuple[str, bytes], list[NodeFound]] = {}
        # How many top-level nodes the last parse reused and queried: for tests and benchmarks.
        self.reused = self.queried = 0

    def clear(self) -> None:
        self._by_key = {}

    def extract(self, path: str, language: str, root: Node, source: bytes,
                extract: Extract) -> list[tuple[Node, NodeFound]]:
        """What a full query run over ``root`` would find, per top-level node, querying only the nodes not seen
        before (and those holding a syntax error)."""
        if (path, language, root.type) != (self.path, self.language, self.root_type):
            self.path, self.language, self.root_type, self._by_key = path, language, root.type, {}
        comments = languages.spec(language).comments
        nodes = root.children
        starts = [node.start_byte for node in nodes]
        keys = [_key(nodes, position, source, comments) for position in range(len(nodes))]
        old, fresh = self._by_key, {}
        # A node holding a syntax error is what error recovery made of it in this parse, which may depend on the
        # text around it: it is queried every time, and not kept. (Asked of the nodes only when the tree has one.)
        broken = {position for position, node in enumerate(nodes) if node.has_error} if root.has_error else set()
        results: list[NodeFound | None] = []
        dirty: list[int] = []
        for position, key in enumerate(keys):
            bucket = old.get(key) if position not in broken else None
            results.append(bucket.pop() if bucket else None)
            if results[-1] is None:
                dirty.append(position)
        if dirty:
            ranges = _ranges(nodes, dirty)
            # Each range is a query run of its own: past a few, one run over the whole tree costs less.
            found = extract(root, ranges if len(ranges) <= MAX_RANGES else None)
            for position in dirty:
                results[position] = NodeFound([], [], [])
            _distribute(found, nodes, starts, results, set(dirty))
        per_node: list[tuple[Node, NodeFound]] = []
        for position, (node, key, result) in enumerate(zip(nodes, keys, results)):
            assert result is not None
            if position not in broken:
                fresh.setdefault(key, []).append(result)
            per_node.append((node, result))
        self._by_key = fresh
        self.reused, self.queried = len(nodes) - len(dirty), len(dirty)
        return per_node


def _key(nodes: list[Node], position: int, source: bytes, comments: frozenset[str]) -> tuple[str, bytes]:
    """A node's type and text, from the start of the line where the comments attached above it begin."""
    node = nodes[position]
    first = position
    while first > 0 and nodes[first - 1].type in comments:
        first -= 1
    begin = nodes[first - 1].start_byte if first > 0 else nodes[first].start_byte
    begin = source.rfind(b"\n", 0, begin) + 1
    return node.type, source[begin : node.end_byte]


def _ranges(nodes: list[Node], dirty: list[int]) -> list[tuple[int, int]]:
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


def _distribute(found: Found, nodes: list[Node], starts: list[int], results: list[NodeFound | None],
                dirty: set[int]) -> None:
    """File what the range queries found under the dirty node holding each find, relative to that node."""

    def owner(byte: int) -> int:
        position = bisect_right(starts, byte) - 1
        return position if position in dirty and byte < nodes[position].end_byte else -1

    for definition in found.definitions:
        position = owner(definition.extent[0])
        if position >= 0:
            node = nodes[position]
            results[position].definitions.append(_moved(definition, -node.start_byte, -node.start_point[0]))  # type: ignore[union-attr]
    for name, line, kind, byte in found.references:
        position = owner(byte)
        if position >= 0:
            node = nodes[position]
            results[position].references.append((name, line - node.start_point[0], kind, byte - node.start_byte))  # type: ignore[union-attr]
    for (start, module), (line, names, aliases) in found.imports.items():
        position = owner(start)
        if position >= 0:
            node = nodes[position]
            results[position].imports.append(  # type: ignore[union-attr]
                (start - node.start_byte, module, line - node.start_point[0], names, aliases))


def _moved(definition: FoundDefinition, bytes_by: int, lines_by: int) -> FoundDefinition:
    if not bytes_by and not lines_by:
        return definition
    return FoundDefinition(definition.name, definition.kind, definition.container,
                           (definition.extent[0] + bytes_by, definition.extent[1] + bytes_by),
                           definition.start_line + lines_by, definition.end_line + lines_by,
                           definition.start_byte + bytes_by, definition.end_byte + bytes_by,
                           definition.signature, definition.member_only)

