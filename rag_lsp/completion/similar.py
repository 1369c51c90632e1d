"""Similar code by Jaccard similarity over sliding windows of lines.

The technique popular completion tools use for "neighbouring tabs": cut the
files the user has open into overlapping windows of lines, and rank windows
by the Jaccard similarity of their identifier sets with the lines just above
the cursor. It needs no index at all, which is also why it is the baseline the
completion benchmark compares against.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

WINDOW_LINES = 20
WINDOW_STEP = 10

_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")


@dataclass(frozen=True, slots=True)
class Window:
    """Lines ``start_line..end_line`` (1-based, inclusive) of one file, with their identifiers."""

    path: str
    start_line: int
    end_line: int
    terms: frozenset[str]


def terms(text: str) -> frozenset[str]:
    """The distinct identifiers of a piece of code (case kept: ``Request`` is not ``request``)."""
    return frozenset(_IDENTIFIER.findall(text))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared)


def windows(path: str, lines: list[str], size: int = WINDOW_LINES, step: int = WINDOW_STEP) -> list[Window]:
    """Overlapping windows of ``size`` lines every ``step`` lines (the last one reaching the end)."""
    if not lines:
        return []
    starts = list(range(0, max(len(lines) - size, 0) + 1, step))
    if starts[-1] + size < len(lines):
        starts.append(len(lines) - size)
    found = []
    for start in starts:
        end = min(start + size, len(lines))
        window_terms = terms("\n".join(lines[start:end]))
        if window_terms:
            found.append(Window(path, start + 1, end, window_terms))
    return found


def query_terms(lines: list[str], cursor_line: int, size: int = WINDOW_LINES) -> frozenset[str]:
    """Identifiers of the ``size`` lines before a 0-based cursor line (the usual completion query)."""
    return terms("\n".join(lines[max(cursor_line - size, 0) : cursor_line]))


def rank(query: frozenset[str], candidates: list[Window], limit: int) -> list[tuple[float, Window]]:
    """The best windows by Jaccard similarity, ties broken by path and line; zero scores dropped."""
    scored = [(jaccard(query, window.terms), window) for window in candidates]
    scored = [item for item in scored if item[0] > 0]
    scored.sort(key=lambda item: (-item[0], item[1].path, item[1].start_line))
    return scored[:limit]
