"""Helpers for the strategy tests: a fixture repository indexed in memory, and a context over it."""

from __future__ import annotations

from pathlib import Path

from conftest import write_tree

from rag_lsp.index.root_index import Index
from rag_lsp.retrieval.query import parse_query
from rag_lsp.retrieval.strategies.base import Finding, StrategyContext


def context_for(root: Path, files: dict[str, str], text: str, **options) -> StrategyContext:
    """Write ``files`` under ``root``, index them and read ``text`` as the message."""
    index = Index(write_tree(root, files), use_cache=False)
    index.refresh()
    return StrategyContext(index, parse_query(text), **options)


def heaviest(findings: list[Finding]) -> dict[str, float]:
    """Each file's heaviest finding weight."""
    best: dict[str, float] = {}
    for finding in findings:
        best[finding.path] = max(best.get(finding.path, 0.0), finding.weight)
    return best


def chunk_name(ctx: StrategyContext, finding: Finding) -> str | None:
    """The qualified name (or symbol) of the chunk a finding points at."""
    if finding.chunk_id is None:
        return None
    chunk = ctx.index.chunks[finding.chunk_id]
    return chunk.qualname or chunk.symbol
