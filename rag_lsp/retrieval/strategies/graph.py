"""A rename or refactor of a named symbol → every place that uses it.

"Rename ``Ledger.post`` to ``record``" or "change the signature of
``convert``" is answered by the call sites, not by the definition alone:
each one must change. Only asked-for refactors follow references, because
for any other question most uses of a name are noise. Every use must
change, so a widely used name does not make each use count less.

The references come from the symbol provider per definition: a language
server tells the uses of ``Ledger.post`` apart from those of an unrelated
``post``; the patterns return every use of the name.
"""

from __future__ import annotations

import re

from rag_lsp.index.symbol_provider import PATTERNS
from rag_lsp.retrieval.strategies.base import RELIABILITY, Finding, Skipped, StrategyContext

NAME = "graph"
# The definitions of one name whose references are followed (each may cost a language server call).
MAX_DEFINITIONS = 3
_REFACTOR = re.compile(
    r"\b(renam\w*|refactor\w*|mov(e|ing) `?[\w.:#]+`? (to|into)|replace all|change the signature|call ?sites?"
    r"|callers?|usages?|references to|who calls|all uses)\b",
    re.IGNORECASE)


def run(ctx: StrategyContext) -> list[Finding]:
    if not _REFACTOR.search(ctx.message.prose):
        raise Skipped("the message asks for no rename or refactor")
    names = ctx.message.prose_query.names
    if not names:
        raise Skipped("the refactor names no symbol")
    findings = []
    for name in names:
        seen: set[tuple[str, int]] = set()
        for definition in ctx.symbols.definitions(name)[:MAX_DEFINITIONS]:
            found = ctx.symbols.references(definition)
            source = ctx.symbols.reference_source(definition)
            suffix = "" if source == PATTERNS else f" ({source})"
            references = sorted((r for uses in found.values() for r in uses if (r.path, r.line) not in seen),
                                key=lambda r: (r.path, r.line))
            for r in ctx.capped(references):
                seen.add((r.path, r.line))
                findings.append(Finding(path=r.path, strategy=NAME, anchor=name, weight=RELIABILITY["reference"],
                                        in_prose=True, reason=f"refers to `{name}` (line {r.line}){suffix}",
                                        line=r.line, chunk_id=ctx.chunk_at(r.path, r.line), source=source))
    return findings
