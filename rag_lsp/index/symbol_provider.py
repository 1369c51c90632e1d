"""Where definitions and uses of a name come from: a provider interface, answered by the tree-sitter index.

Strategies ask "where is ``Ledger.post`` defined", "which files use
``post``" or "what implements ``Store``" through ``SymbolProvider`` and never
look at the symbol index directly, so a real language server (precise,
type-aware) can answer instead when one is running
(``rag_lsp.langservers.composite``), and the tree-sitter index stays the
fallback that always works.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from rag_lsp import languages
from rag_lsp.index.root_index import Index
from rag_lsp.index.store.per_file import PerFile
from rag_lsp.model import Definition, Reference

if TYPE_CHECKING:
    from rag_lsp.index.tables import WorkspaceTables

_QUALIFIER = re.compile(r"::|\.|#")
# The source name of everything the tree-sitter patterns answer.
PATTERNS = "tree-sitter"


@dataclass(frozen=True, slots=True)
class ServerNote:
    """What one language server did for one question: calls made and answered, answers reused from earlier
    questions, its state, and the last reason it was skipped."""

    server: str
    languages: tuple[str, ...]
    state: str = "idle"
    calls: int = 0
    answered: int = 0
    remembered: int = 0
    skipped: str | None = None


class NeedsServer(Exception):
    """The question needs a language server (implementations) and none can answer; the message says why."""


class SymbolProvider(Protocol):
    """Definitions and uses of names, as a language server would answer them."""

    def definitions(self, name: str) -> list[Definition]:
        """Definitions a name as written (``post``, ``Ledger.post``, ``pkg.mod.f``) refers to, best first."""
        ...

    def definitions_in(self, path: str) -> list[Definition]:
        """Every definition of one file."""
        ...

    def uses(self, name: str) -> dict[str, list[Reference]]:
        """Uses of a bare name, by file."""
        ...

    def references(self, definition: Definition) -> dict[str, list[Reference]]:
        """Uses of one definition, by file (a type-aware server tells them apart from namesakes); import
        statements are not uses."""
        ...

    def import_lines(self, path: str) -> frozenset[int]:
        """The lines of a file where an import statement starts."""
        ...

    def implementations(self, definition: Definition) -> list[Definition]:
        """What implements an interface, class or method; raises NeedsServer when no server can tell."""
        ...

    def document_symbols(self, path: str) -> list[Definition]:
        """A file's outline as the best source sees it (``definitions_in`` is the patterns' cheap one)."""
        ...

    def hover(self, definition: Definition) -> tuple[str, str] | None:
        """Signature, type and documentation text for a definition and the source that gave it, when a source
        knows more than the definition's code."""
        ...

    def source_of(self, definition: Definition) -> str:
        """Which source answered a definition: a server's name, or ``tree-sitter``."""
        ...

    def reference_source(self, definition: Definition) -> str:
        """Which source answered the references of a definition."""
        ...

    def notes(self) -> list[ServerNote]:
        """The language servers this provider asked or skipped, and why (empty for the patterns alone)."""
        ...


class IndexSymbolProvider:
    """The default provider: the tree-sitter definitions and references of the index."""

    def __init__(self, index: Index, tables: WorkspaceTables) -> None:
        self._index = index
        self._tables = tables

    def definitions(self, name: str) -> list[Definition]:
        # A bare name means every definition of that name, a qualified one the definitions it qualifies.
        if _QUALIFIER.search(name):
            return self._index.symbols.lookup(name)
        return self._index.symbols.by_name(name)

    def definitions_in(self, path: str) -> list[Definition]:
        return self._index.symbols.in_file(path)

    def uses(self, name: str) -> dict[str, list[Reference]]:
        return self._tables.uses(name)

    def references(self, definition: Definition) -> dict[str, list[Reference]]:
        # Every use of the name in code that can see the definition: a Python method is not called from Go. Kept
        # per name and family until a file changes: the same dict for every definition of a name (a question's
        # four ``clean`` methods, a vendored copy's), which ``relations.py`` remembers its callers by.
        kept = self._tables.memo("uses by name and family", dict[tuple[str, str], dict[str, list[Reference]]])
        family = languages.family_for_path(definition.path)
        found = kept.get((definition.name, family))
        if found is None:
            found = kept[(definition.name, family)] = {
                path: uses for path, uses in self._tables.uses(definition.name).items()
                if languages.family_for_path(path) == family}
        return found

    def import_lines(self, path: str) -> frozenset[int]:
        return _IMPORT_LINES.get(self._index, path)

    def bases_in(self, path: str) -> frozenset[tuple[int, str]]:
        """(line, name) of each base class a file's class headers name, in languages whose patterns capture
        them (``@reference.base``)."""
        return frozenset((found.line, found.name) for found in self._index.references.get(path, ())
                         if found.kind == "base")

    def implementations(self, definition: Definition) -> list[Definition]:
        # Patterns see names, not types: "implements" by name alone would be a guess.
        raise NeedsServer("implementations need a language server and none is in use")

    def document_symbols(self, path: str) -> list[Definition]:
        return self._index.symbols.in_file(path)

    def hover(self, definition: Definition) -> tuple[str, str] | None:
        # The definition's own text is what the patterns know, and the caller already has it.
        return None

    def source_of(self, definition: Definition) -> str:
        return PATTERNS

    def reference_source(self, definition: Definition) -> str:
        return PATTERNS

    def notes(self) -> list[ServerNote]:
        return []


def _import_lines(index: Index, path: str) -> frozenset[int]:
    return index.imports.lines_of(path)


# A bundle reads the import lines of every file that uses a popular name (a snapshot's record decoded each
# time); kept per file version, as the bundle's other per-file values.
IMPORT_LINES_KEPT = 1024
_IMPORT_LINES = PerFile(_import_lines, IMPORT_LINES_KEPT)
