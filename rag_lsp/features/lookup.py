"""Direct questions to the symbol provider: definitions, references, implementations, hover text, outlines.

``ragLsp/lookup`` and ``rag-lsp lookup`` ask these of the same provider the
strategies use (language servers composed with the patterns), so a user or
an assistant can see exactly what each source answers, item by item.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from rag_lsp.index.symbol_provider import PATTERNS, NeedsServer, ServerNote, SymbolProvider
from rag_lsp.model import Definition
from rag_lsp.workspace.session import Session

# What ``lookup`` answers, and how many definitions of a name it follows for references and implementations.
LOOKUPS = ("definitions", "references", "implementations", "hover", "documentSymbols")
LOOKUP_DEFINITIONS = 3


@dataclass(frozen=True, slots=True)
class LookupItem:
    """A definition or a use, and which source answered it (a server's name, or ``tree-sitter``)."""

    path: str
    start_line: int
    end_line: int
    name: str
    qualname: str
    kind: str
    source: str
    root: str = ""
    # Signature, type and documentation text, for ``hover`` when a source knows more than the code.
    hover: str | None = None


@dataclass(frozen=True, slots=True)
class LookupAnswer:
    symbol: str
    what: str
    items: tuple[LookupItem, ...]
    language_servers: tuple[ServerNote, ...]
    # Why nothing could answer (implementations without a server, a file outside every root).
    unanswered: str | None = None


def lookup(session: Session, symbol: str, what: str, path: Path | None = None) -> LookupAnswer:
    """One provider question asked directly: definitions, references, implementations, hover or outline.

    ``symbol`` names a definition (``Ledger.post``); ``documentSymbols``
    takes ``path`` instead. Each item says which source answered it; an
    answer that needs a server it cannot have says so in ``unanswered``.
    """
    roots = session.root_list()
    located = session.locate(path) if path is not None else None
    if located is not None:
        roots = [(p, r) for p, r in roots if r is located[0]]
    elif what == "documentSymbols":
        return LookupAnswer(symbol, what, (), (), f"{path} is outside every workspace folder")
    items: list[LookupItem] = []
    notes: list[ServerNote] = []
    unanswered: list[str] = []
    for root_path, root in roots:
        # A lookup follows up to LOOKUP_DEFINITIONS definitions, each worth a question's call budget.
        provider = session.symbols(root, root.settings.language_server_calls * LOOKUP_DEFINITIONS, LOOKUP_DEFINITIONS)
        rel = located[1] if located is not None and what == "documentSymbols" else None
        with root.index.lock:
            try:
                found = lookup_items(provider, what, symbol, rel)
            except NeedsServer as exc:
                found = []
                unanswered.append(str(exc))
        items += [replace(item, root=str(root_path)) for item in found]
        notes += provider.notes()
    return LookupAnswer(symbol, what, tuple(items), tuple(notes), unanswered[0] if unanswered and not items else None)


def lookup_items(provider: SymbolProvider, what: str, symbol: str, rel: str | None) -> list[LookupItem]:
    """The items of one root's lookup answer.

    Implementations are asked of each definition's server; raises NeedsServer (with the first reason) when
    no server could answer for any of them.
    """
    if what == "documentSymbols":
        return [_definition_item(provider, d) for d in provider.document_symbols(rel)] if rel else []
    definitions = provider.definitions(symbol)
    if what == "definitions":
        return [_definition_item(provider, d) for d in definitions]
    items: dict[tuple[str, int], LookupItem] = {}
    refused: list[str] = []
    for definition in definitions[:LOOKUP_DEFINITIONS]:
        if what == "references":
            found = provider.references(definition)
            source = provider.reference_source(definition)
            for reference in (r for uses in found.values() for r in uses):
                key = (reference.path, reference.line)
                # A server's answer for a place wins over the patterns' for the same place.
                if key not in items or items[key].source == PATTERNS:
                    items[key] = LookupItem(reference.path, reference.line, reference.line, definition.name,
                                            definition.qualname, "reference", source)
        elif what == "implementations":
            try:
                found_implementations = provider.implementations(definition)
            except NeedsServer as exc:
                refused.append(str(exc))
                continue
            for implementation in found_implementations:
                if implementation != definition:
                    item = _definition_item(provider, implementation)
                    items.setdefault((item.path, item.start_line), item)
        else:
            item = _definition_item(provider, definition)
            hover = provider.hover(definition)
            if hover is not None:
                item = replace(item, hover=hover[0], source=hover[1])
            items.setdefault((item.path, item.start_line), item)
    if refused and not items:
        raise NeedsServer(refused[0])
    return [items[key] for key in sorted(items)]


def _definition_item(provider: SymbolProvider, definition: Definition) -> LookupItem:
    return LookupItem(definition.path, definition.start_line, definition.end_line, definition.name,
                      definition.qualname, definition.kind, provider.source_of(definition))
