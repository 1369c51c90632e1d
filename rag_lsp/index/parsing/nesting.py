"""Definitions a parser found in one file → their owners by nesting → ``Definition`` records and chunk spans.

Two parsers find definitions: the tree-sitter queries (``parse.py``) and the
per-line declaration patterns of languages without a grammar
(``declarations.py``). Both hand their finds here, so a method is a method and
a qualified name is built the same way whichever parser found it.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from rag_lsp.index.parsing.chunk import CHUNK_KINDS, Span
from rag_lsp.languages import LanguageSpec
from rag_lsp.model import Definition

# Definitions whose bodies hold locals rather than members.
_LOCAL_SCOPES = frozenset({"function", "method", "constructor"})


@dataclass(slots=True)
class FoundDefinition:
    """One definition as its parser found it, before its owner is known.

    ``extent`` is what nesting compares, half-open: the definition node's bytes
    for tree-sitter, the declaration's block of lines for the patterns. The
    lines and bytes are the definition's whole reach, attached comments
    included. ``container`` is an owner written in the code (a Go receiver,
    C++ ``Foo::bar``, Lua ``M.f``). A ``member_only`` definition (a Scala
    ``val``, a Zig ``const``) counts only outside functions: inside one it is
    a local.
    """

    name: str
    kind: str
    container: str | None
    extent: tuple[int, int]
    start_line: int
    end_line: int
    start_byte: int
    end_byte: int
    signature: str
    member_only: bool = False

    def moved(self, bytes_by: int, lines_by: int) -> FoundDefinition:
        """The same definition ``bytes_by`` bytes and ``lines_by`` lines further on (itself when not moved)."""
        if not bytes_by and not lines_by:
            return self
        return FoundDefinition(self.name, self.kind, self.container, (self.extent[0] + bytes_by, self.extent[1] + bytes_by),
                               self.start_line + lines_by, self.end_line + lines_by, self.start_byte + bytes_by,
                               self.end_byte + bytes_by, self.signature, self.member_only)


def resolve(path: str, spec: LanguageSpec, found: list[FoundDefinition]) -> tuple[list[Definition], list[Span]]:
    """Definitions with containers and qualified names, and the spans the chunker needs, in source order.

    The owner of a definition is the innermost other definition whose extent
    contains it (finds with the very same extent are siblings); a function
    whose owner is one of the language's ``method_owners`` is a method. An
    explicit ``container`` is a type, qualified by whatever encloses the
    definition.
    """
    definitions: list[Definition] = []
    spans: list[Span] = []
    stack: list[tuple[FoundDefinition, Definition]] = []
    for item in sorted(found, key=lambda f: (f.extent[0], -f.extent[1])):
        while stack and stack[-1][0].extent[1] <= item.extent[0]:
            stack.pop()
        owners = [d for f, d in stack if f.extent != item.extent]
        parent = owners[-1] if owners else None
        if item.member_only and parent is not None and parent.kind in _LOCAL_SCOPES:
            continue
        if item.container:
            container = sys.intern(f"{parent.qualname}.{item.container}") if parent else item.container
            container_kind = "class"
        else:
            container = parent.qualname if parent else None
            container_kind = parent.kind if parent else None
        kind = item.kind
        if kind == "function" and container_kind in spec.method_owners:
            kind = "method"
        # Interned as the names are (``parse._Extractor.name``): the same qualified names recur across files.
        qualname = sys.intern(f"{container}.{item.name}") if container else item.name
        definition = Definition(
            name=item.name, qualname=qualname, kind=kind, path=path,
            start_line=item.start_line, end_line=item.end_line,
            start_byte=item.start_byte, end_byte=item.end_byte, container=container,
        )
        definitions.append(definition)
        if kind in CHUNK_KINDS:
            spans.append(Span(item.start_line, item.end_line, item.name, qualname, kind, item.signature))
        stack.append((item, definition))
    return definitions, spans
