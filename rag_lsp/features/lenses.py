"""What a code lens above a definition shows: how often it is used, and by how many tests.

``3 references · 1 test · context`` is resolved lens by lens as the editor
scrolls, so each count is one cheap question: a ready language server counts
the references of this very definition (one call, within the usual timeout);
otherwise, or when it fails, the patterns count every use of the name.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rag_lsp.index.symbol_provider import PATTERNS
from rag_lsp.model import Definition
from rag_lsp.path_kinds import is_test_path
from rag_lsp.workspace.session import Session

# Definition kinds that get a lens: the ones a reader navigates by.
LENS_KINDS = frozenset(
    {"function", "method", "class", "struct", "interface", "trait", "enum", "impl", "type", "constructor", "macro"}
)


@dataclass(frozen=True, slots=True)
class UsageCounts:
    """References outside the definition itself, test files among them, and which source counted them."""

    references: int
    tests: int
    # False when the file no longer defines the name (the lens is stale).
    found: bool
    start_line: int | None
    source: str


def lens_definitions(session: Session, path: Path) -> list[Definition]:
    """The definitions of a file that get a lens, in file order."""
    located = session.locate(path)
    if located is None:
        return []
    root, rel = located
    with root.index.lock:
        return [d for d in root.index.symbols.in_file(rel) if d.kind in LENS_KINDS]


def usage_counts(session: Session, path: Path, name: str, qualname: str) -> UsageCounts:
    """How often the definition ``qualname`` of ``path`` is used, for its lens's title."""
    located = session.locate(path)
    if located is None:
        return UsageCounts(0, 0, False, None, PATTERNS)
    root, rel = located
    with root.index.lock:
        definition = next((d for d in root.index.symbols.in_file(rel) if d.qualname == qualname), None)
        if definition is None:
            return UsageCounts(0, 0, False, None, PATTERNS)
        symbols = session.symbols(root, max_calls=1)
        found = symbols.references(definition)
        source = symbols.reference_source(definition)
        references = 0
        test_files = set()
        for ref_path, refs in found.items():
            for ref in refs:
                if ref.name != name:
                    continue
                if ref_path == rel and definition.start_line <= ref.line <= definition.end_line:
                    continue
                references += 1
                if is_test_path(ref_path):
                    test_files.add(ref_path)
    return UsageCounts(references, len(test_files), True, definition.start_line, source)
