"""Per-keystroke: a big top-level node an edit changed is queried again only around the edit.

``incremental.py`` reuses what the queries found in every unchanged top-level
node, and queried a changed one whole. In a file that is mostly one class (a
Java file; Django's ``query.py``, whose ``QuerySet`` is 1,733 of its 2,732
lines) that was every keystroke's cost: an edit inside ``QuerySet`` took 11 ms
(median), of which the tags and imports queries over the class were about 3 ms
and filing their finds and masking secrets most of the rest.

When the whole buffer was re-parsed from its last tree (``Reparsed``), a
changed node that was at the same place in the last parse is queried only over
a *run*: a run of whole members of a body inside the node that
holds every changed byte. Why its finds then equal a query of the whole node:

- The bytes that changed are found by comparing the node's text before and
  after (their common beginning and end), and where the syntax changed by
  tree-sitter (``Tree.changed_ranges`` between the edited old tree and the new
  one parsed from it). The run holds both, so outside it the text and the
  syntax tree are as they were, moved by the edit. This holds with a syntax
  error too: whatever error recovery built differently is a changed range.
  (A node holding an error is otherwise never reused by its text, which may
  parse differently elsewhere; here the two trees are compared directly.)
- The run is made of whole members of a body: going down from the node
  through ``body`` fields (a class's, a method's, a block's), and through the
  language's wrappers (a decorated definition, an ``export``), while one member
  holds all of the change, it is the members of the innermost such body that
  touch the change, with one member more before them and, after them, any
  comments and the member that follows them (a definition's chunk begins at
  the comments above it, and a pattern may look at a neighbour). Patterns are
  rooted at a definition or a statement and test their header's text (a name,
  a decorator, ``module.exports``), so a match around the run does not depend
  on the run; a change outside every body (a class's name, an assignment's
  target) queries the whole node. A definition node is then inside the run,
  outside it, or encloses it (the class around an edited method).
- Outside the run the last finds are kept, moved after it; inside it, the new
  query's. A definition enclosing the run (whose end moved) must be found
  again by the new query, since tree-sitter returns every match overlapping
  the queried range; an import statement found around the run must be what it
  was. Otherwise, or when a find crosses an edge of the run, the node is
  queried whole, as before.

``tests/unit/test_incremental.py`` holds the result to a full parse over random
edits of real files in ten languages, and in "an edit inside one big node"
(fixtures of seven languages wrapped in one class, module, namespace or
function) also checks that every edit keeping the file valid was narrowed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tree_sitter import Node, Tree

from rag_lsp.index.parsing.nesting import FoundDefinition

# A node is queried around an edit only when the run is at most this share of it: otherwise the saving is small.
MAX_RUN_SHARE = 0.5

# Found in one node, relative to its start: (name, line, kind, byte) references and
# (statement byte, module, line, names, aliases) imports, as ``incremental.NodeFound`` holds them.
NodeReferences = list[tuple[str, int, str, int]]
NodeImports = list[tuple[int, str, int, set[str], set[tuple[str, str]]]]


@dataclass(frozen=True, slots=True)
class Reparsed:
    """A whole buffer re-parsed from its last tree after edits: the new ``tree``, the edited old tree it was
    parsed from (``previous``), and the byte ranges of the new text where their syntax differs."""

    tree: Tree
    previous: Tree
    changes: tuple[tuple[int, int], ...]

    @classmethod
    def of(cls, previous: Tree, tree: Tree) -> Reparsed:
        return cls(tree, previous, tuple((r.start_byte, r.end_byte) for r in previous.changed_ranges(tree)))


def changed_span(old: bytes, new: bytes) -> tuple[int, int, int]:
    """``(start, old_end, new_end)``: ``old[start:old_end]`` became ``new[start:new_end]``, the rest being the
    texts' common beginning and end (found by halving, each step one comparison of two slices)."""
    limit = min(len(old), len(new))
    low, high = 0, limit
    while low < high:
        middle = (low + high + 1) // 2
        if old[:middle] == new[:middle]:
            low = middle
        else:
            high = middle - 1
    start = low
    low, high = 0, limit - start
    while low < high:
        middle = (low + high + 1) // 2
        if old[len(old) - middle:] == new[len(new) - middle:]:
            low = middle
        else:
            high = middle - 1
    return start, len(old) - low, len(new) - low


def run_around(node: Node, start: int, end: int, comments: frozenset[str], wrappers: frozenset[str]
               ) -> tuple[int, int]:
    """The byte range of the run of whole members of a body inside ``node`` that holds ``[start, end]`` (see the
    module doc), or the node's own range when the change is not inside its body. A wrapper (a decorated
    definition, an ``export``) is gone through to the definition it wraps."""
    found: tuple[list[Node], list[int]] | None = None
    parent: Node | None = node
    while parent is not None:
        if parent.type in wrappers:
            parent = next((child for child in parent.named_children
                           if child.start_byte <= start and end <= child.end_byte), None)
            continue
        body = parent.child_by_field_name("body")
        if body is None or body.start_byte > start or end > body.end_byte:
            break
        members = body.children
        touching = [i for i, member in enumerate(members) if member.start_byte <= end and member.end_byte >= start]
        found = members, touching
        if len(touching) != 1:
            break
        parent = members[touching[0]]
        if parent.start_byte > start or parent.end_byte < end or parent.type in comments:
            break
    if found is None or not found[0]:
        return node.start_byte, node.end_byte
    members, touching = found
    if touching:
        first, last = touching[0], touching[-1]
    else:
        # The change lies between two members (blank lines): the run is the two.
        last = next((i for i, member in enumerate(members) if member.start_byte >= end), len(members) - 1)
        first = max(last - 1, 0)
    first = max(first - 1, 0)
    last += 1
    while last < len(members) - 1 and members[last].type in comments:
        last += 1
    last = min(last, len(members) - 1)
    return min(start, members[first].start_byte), max(end, members[last].end_byte)


def merge(old: tuple[list[FoundDefinition], NodeReferences, NodeImports],
          new: tuple[list[FoundDefinition], NodeReferences, NodeImports],
          start: int, old_end: int, new_end: int, rows_by: int
          ) -> tuple[list[FoundDefinition], NodeReferences, NodeImports] | None:
    """One node's finds after an edit, relative to its start: the last finds before the run ``[start, old_end)``
    (``[start, new_end)`` now), moved by the edit after it, and the new query's inside it; None when the node
    must be queried whole (see the module doc)."""
    bytes_by = new_end - old_end
    old_definitions, old_references, old_imports = old
    new_definitions, new_references, new_imports = new
    definitions: list[FoundDefinition] = []
    for found in old_definitions:
        first, last = found.extent
        if last <= start:
            definitions.append(found)
        elif first >= old_end:
            definitions.append(found.moved(bytes_by, rows_by))
        elif start <= first and last <= old_end:
            continue
        elif first <= start and last >= old_end:
            if not _found_again(found, new_definitions, bytes_by):
                return None
        else:
            return None
    for found in new_definitions:
        first, last = found.extent
        if first < new_end and last > start:
            if not (start <= first and last <= new_end or first <= start and last >= new_end):
                return None
            definitions.append(found)
    references = [r for r in old_references if r[3] < start]
    references.extend((name, line + rows_by, kind, byte + bytes_by)
                      for name, line, kind, byte in old_references if byte >= old_end)
    references.extend(r for r in new_references if start <= r[3] < new_end)
    before = [i for i in old_imports if i[0] < start]
    if any(i[0] < start and i not in before for i in new_imports):
        return None
    imports = [*before, *(i for i in new_imports if start <= i[0] < new_end)]
    imports.extend((byte + bytes_by, module, line + rows_by, names, aliases)
                   for byte, module, line, names, aliases in old_imports if byte >= old_end)
    return definitions, references, imports


def _found_again(found: FoundDefinition, new: Sequence[FoundDefinition], bytes_by: int) -> bool:
    """Whether the new query found a definition enclosing the run again: the same name and kind, its end moved
    by the edit."""
    extent = (found.extent[0], found.extent[1] + bytes_by)
    return any(other.extent == extent and other.name == found.name and other.kind == found.kind for other in new)
