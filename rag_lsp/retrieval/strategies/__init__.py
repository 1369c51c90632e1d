"""Evidence strategies: each reads the message for one kind of anchor and reports findings in the index.

The registry below is the order in which they run. The order is fixed so
that findings, and therefore ties, come out the same way every time, and
``discovery`` comes last because it is the fallback that reads what the
others found. Every strategy is a module with ``NAME`` and
``run(ctx) -> list[Finding]``; it raises ``Skipped`` to say why it did not run.
"""

from __future__ import annotations

from collections.abc import Callable

from rag_lsp.retrieval.strategies import (
    bm25,
    build_error,
    contracts,
    discovery,
    docs_config,
    graph,
    history,
    implementations,
    lexical,
    modules,
    paths,
    stack_trace,
    symbols,
    test_to_impl,
)
from rag_lsp.retrieval.strategies.base import Budget, Finding, Skipped, StrategyContext

Strategy = Callable[[StrategyContext], list[Finding]]

REGISTRY: dict[str, Strategy] = {
    module.NAME: module.run
    for module in (stack_trace, build_error, test_to_impl, paths, modules, lexical, symbols, graph, implementations,
                   contracts, docs_config, history, bm25, discovery)
}

__all__ = ["REGISTRY", "Budget", "Finding", "Skipped", "Strategy", "StrategyContext"]
