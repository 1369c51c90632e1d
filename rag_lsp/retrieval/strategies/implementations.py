"""A question about implementations → the classes and methods that implement the named interface or method.

"Which classes implement ``Limiter``" or "where is ``Store.save``
overridden" is answered by types, not names: a class implements a Go
interface or a TypeScript one without saying so, and a Python subclass may
sit three bases away. So only a language server answers it; without one
the strategy says so (in ``strategies_skipped``) rather than guessing from
names, and the other strategies still place the named definition itself.
"""

from __future__ import annotations

import re

from rag_lsp.index.symbol_provider import NeedsServer
from rag_lsp.retrieval.strategies.base import RELIABILITY, Finding, Skipped, StrategyContext

NAME = "implementations"
# The definitions of one name asked about (each costs a language server call).
MAX_DEFINITIONS = 2
_ASKS = re.compile(
    r"\b(implement(s|ed|ers?|ations?|ing)?|subclass(es|ed|ing)?|overrid(e|es|den|ing)|derived (classes|types)"
    r"|concrete (classes|types))\b",
    re.IGNORECASE)


def run(ctx: StrategyContext) -> list[Finding]:
    if not _ASKS.search(ctx.message.prose):
        raise Skipped("the message asks about no implementations")
    names = ctx.message.prose_query.names
    if not names:
        raise Skipped("the question names no interface, class or method")
    findings: list[Finding] = []
    refused: list[str] = []
    for name in names:
        for definition in ctx.symbols.definitions(name)[:MAX_DEFINITIONS]:
            try:
                found = ctx.symbols.implementations(definition)
            except NeedsServer as exc:
                refused.append(str(exc))
                continue
            for implementation in ctx.capped([d for d in found if d != definition]):
                source = ctx.symbols.source_of(implementation)
                findings.append(Finding(path=implementation.path, strategy=NAME, anchor=name,
                                        weight=RELIABILITY["implementation"], in_prose=True,
                                        reason=f"implements `{name}` ({source})", line=implementation.start_line,
                                        chunk_id=ctx.definition_chunk(implementation), source=source))
    if not findings and refused:
        raise Skipped(f"implementations need a language server: {refused[0]}")
    return findings
