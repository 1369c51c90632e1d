"""``workspace/symbol``: definitions whose names match what the user typed, fuzzily, best first."""

from __future__ import annotations

from pathlib import Path

from rag_lsp.model import Definition
from rag_lsp.workspace.session import Session

MAX_WORKSPACE_SYMBOLS = 100


def workspace_symbols(session: Session, query: str) -> list[tuple[Path, Definition]]:
    """Definitions whose names match ``query`` (exact, prefix, substring, then subsequence), at most 100,
    each with its root; ties break by qualified name, root, path and line."""
    scored = []
    needle = query.lower()
    for path, root in session.root_list():
        with root.index.lock:
            for name in list(root.index.symbols.names()):
                score = _fuzzy_score(needle, name)
                if score is None:
                    continue
                for definition in root.index.symbols.by_name(name):
                    scored.append((score, definition.qualname, str(path), definition.path,
                                   definition.start_line, path, definition))
    scored.sort(key=lambda item: item[:5])
    return [(path, definition) for *_, path, definition in scored[:MAX_WORKSPACE_SYMBOLS]]


def _fuzzy_score(needle: str, name: str) -> tuple[int, int] | None:
    """Rank of a name for a workspace-symbol query: exact, prefix, substring, then subsequence; None if no match."""
    lowered = name.lower()
    if not needle:
        return (3, len(name))
    if lowered == needle:
        return (0, len(name))
    if lowered.startswith(needle):
        return (1, len(name))
    if needle in lowered:
        return (2, len(name))
    position = 0
    for char in lowered:
        if position < len(needle) and char == needle[position]:
            position += 1
    return (4, len(name)) if position == len(needle) else None
