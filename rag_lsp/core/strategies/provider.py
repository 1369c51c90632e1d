"""Where definitions and uses of a name come from: a provider interface, answered by the tree-sitter index.

Strategies ask "where is ``Ledger.post`` defined" and "which files use
``post``" through ``SymbolProvider`` and never look at the symbol index
directly, so a real language server (precise, type-aware) can answer instead
when one is running, and the tree-sitter index stays the fallback that always
works.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Protocol

from rag_lsp.core.index import Index
from rag_lsp.core.model import Definition, Reference

if TYPE_CHECKING:
    from rag_lsp.core.strategies.workspace import WorkspaceTables

_QUALIFIER = re.compile(r"::|\.|#")


class SymbolProvider(Protocol):
    """Definitions and uses of names, as a language server would answer them."""

    def definitions(self, name: str) -> list[Definition]:
        """Definitions a name as written (``post``, ``Ledger.post``, ``pkg.mod.f``) refers to, best first."""

    def definitions_in(self, path: str) -> list[Definition]:
        """Every definition of one file."""

    def uses(self, name: str) -> dict[str, list[Reference]]:
        """Uses of a bare name, by file."""


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
