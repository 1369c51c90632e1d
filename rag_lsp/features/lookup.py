"""Direct questions to the symbol provider: definitions, references, implementations, hover text, outlines.

``ragLsp/lookup`` and ``rag-lsp lookup`` ask these of the same provider the
strategies use (language servers composed with the patterns), so a user or
an assistant can see exactly what each source answers, item by item.
"""

from __future__ import annotations

from rag_lsp.index.symbol_provider import PATTERNS, NeedsServer, SymbolProvider
from rag_lsp.model import Definition

# What ``lookup`` answers, and how many definitions of a name it follows for references and implementations.
LOOKUPS = ("definitions", "references", "implementations", "hover", "documentSymbols")
LOOKUP_DEFINITIONS = 3


def lookup_items(provider: SymbolProvider, what: str, symbol: str, rel: str | None) -> list[dict]:
    """The items of one root's lookup answer.

    Implementations are asked of each definition's server; raises NeedsServer (with the first reason) when
    no server could answer for any of them.
    """
    if what == "documentSymbols":
        return [_definition_item(provider, d) for d in provider.document_symbols(rel)] if rel else []
    definitions = provider.definitions(symbol)
    if what == "definitions":
        return [_definition_item(provider, d) for d in definitions]
    items: dict[tuple[str, int], dict] = {}
    refused: list[str] = []
    for definition in definitions[:LOOKUP_DEFINITIONS]:
        if what == "references":
            found = provider.references(definition)
            source = provider.reference_source(definition)
            for reference in (r for uses in found.values() for r in uses):
                key = (reference.path, reference.line)
                # A server's answer for a place wins over the patterns' for the same place.
                if key not in items or items[key]["source"] == PATTERNS:
                    items[key] = {"path": reference.path, "start_line": reference.line, "end_line": reference.line,
                                  "name": definition.name, "qualname": definition.qualname, "kind": "reference",
                                  "source": source}
        elif what == "implementations":
            try:
                found_implementations = provider.implementations(definition)
            except NeedsServer as exc:
                refused.append(str(exc))
                continue
            for implementation in found_implementations:
                if implementation != definition:
                    item = _definition_item(provider, implementation)
                    items.setdefault((item["path"], item["start_line"]), item)
        else:
            item = _definition_item(provider, definition)
            hover = provider.hover(definition)
            if hover is not None:
                item.update(hover=hover[0], source=hover[1])
            items.setdefault((item["path"], item["start_line"]), item)
    if refused and not items:
        raise NeedsServer(refused[0])
    return [items[key] for key in sorted(items)]


def _definition_item(provider: SymbolProvider, definition: Definition) -> dict:
    return {"path": definition.path, "start_line": definition.start_line, "end_line": definition.end_line,
            "name": definition.name, "qualname": definition.qualname, "kind": definition.kind,
            "source": provider.source_of(definition)}
