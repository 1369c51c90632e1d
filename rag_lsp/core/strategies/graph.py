"""A rename or refactor of a named symbol → every place that uses it.

"Rename ``Ledger.post`` to ``record``" or "change the signature of
``convert``" is answered by the call sites, not by the definition alone:
each one must change. Only asked-for refactors follow references, because
for any other question most uses of a name are noise. Every use must
change, so a widely used name does not make each use count less.
"""

from __future__ import annotations

import re

from rag_lsp.core.strategies.base import RELIABILITY, Finding, Skipped, StrategyContext, last_segment

NAME = "graph"
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
        uses = ctx.symbols.uses(last_segment(name))
        if not uses or not ctx.symbols.definitions(name):
            continue
        references = ctx.capped(sorted((r for found in uses.values() for r in found), key=lambda r: (r.path, r.line)))
        findings.extend(Finding(path=r.path, strategy=NAME, anchor=name, weight=RELIABILITY["reference"], in_prose=True,
                                reason=f"refers to `{name}` (line {r.line})", line=r.line,
                                chunk_id=ctx.chunk_at(r.path, r.line)) for r in references)
    return findings
