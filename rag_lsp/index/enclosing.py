"""Which definition of a file encloses a line: a use's caller is the innermost definition around it.

One rule serves two places. A question's callers of a name (``retrieval/bundle/relations.py``) look up the
lines of the files that use it; and the snapshot stores, beside each reference, its owner: the definition
enclosing its line (``owners``), so that a popular name's callers in thousands of stored files are read from
columns instead of each file's lines being looked up during a question.

The innermost definition around a line is, of those covering it, the last in (first line, -last line,
qualified name) order, and of equals the last in the file's list: what painting the file's lines with each
definition, in that order, would leave on the line.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from itertools import accumulate

from rag_lsp.model import Definition

# A reference's owner when no definition encloses its line (the file's top level), and when its line is an import
# statement's (not a use).
TOP_LEVEL = -1
ON_IMPORT = -2


@dataclass(frozen=True, slots=True)
class Outline:
    """A file's definitions in (first line, -last line, qualified name) order, each one's position in the file's
    list, their first lines, and for each position the last line any definition up to it reaches."""

    definitions: list[Definition]
    order: list[int]
    starts: list[int]
    reach: list[int]

    def innermost(self, line: int) -> int:
        """The position in this outline of the innermost definition around ``line`` (-1 for none). Only the
        definitions beginning at or before the line are looked at, from the last, and none once no earlier one
        reaches it."""
        position = bisect_right(self.starts, line) - 1
        definitions, reach = self.definitions, self.reach
        while position >= 0 and reach[position] >= line:
            if definitions[position].end_line >= line:
                return position
            position -= 1
        return -1


def outline(definitions: Sequence[Definition]) -> Outline:
    """A file's ``Outline`` (the sort is stable: of equal definitions, the later in the list stays later)."""
    order = sorted(range(len(definitions)),
                   key=lambda n: (definitions[n].start_line, -definitions[n].end_line, definitions[n].qualname))
    ordered = [definitions[n] for n in order]
    return Outline(ordered, order, [d.start_line for d in ordered], list(accumulate((d.end_line for d in ordered), max)))


def innermost_by_scan(definitions: Sequence[Definition], line: int) -> int:
    """The position in ``definitions`` of the innermost one around ``line`` (-1 for none), by one scan of them: for
    a file with a use or two, cheaper than sorting it into an ``Outline``."""
    best, key = -1, None
    for position, definition in enumerate(definitions):
        if definition.start_line <= line <= definition.end_line:
            candidate = (definition.start_line, -definition.end_line, definition.qualname)
            if key is None or candidate >= key:
                best, key = position, candidate
    return best


def owners(definitions: Sequence[Definition], import_lines: Collection[int], lines: Sequence[int]) -> list[int]:
    """For each of ``lines`` (a file's references), the position in ``definitions`` (the file's, in its order) of
    the innermost definition around it, ``TOP_LEVEL`` for none and ``ON_IMPORT`` on an import line."""
    found: dict[int, int] = {}
    shape: Outline | None = None
    result = []
    for line in lines:
        owner = found.get(line)
        if owner is None:
            if line in import_lines:
                owner = ON_IMPORT
            else:
                if shape is None:
                    shape = outline(definitions)
                position = shape.innermost(line)
                owner = shape.order[position] if position >= 0 else TOP_LEVEL
            found[line] = owner
        result.append(owner)
    return result
