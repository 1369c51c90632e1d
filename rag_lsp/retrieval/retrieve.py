"""Answer a question with a ranked, token-budgeted list of places.

This is the one entry point the command line and the language server share:
``build_context`` takes an index and a question and returns the JSON-ready
result documented in ``docs/protocol.md``. Fields may be added to that result;
none may be renamed or removed.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from rag_lsp.index.root_index import Index
from rag_lsp.index.symbol_provider import SymbolProvider
from rag_lsp.retrieval.fusion import FusionRanker
from rag_lsp.retrieval.query import parse_query
from rag_lsp.retrieval.rank import Candidate, Ranker
from rag_lsp.retrieval.token_count import estimate_tokens, truncate_to_tokens

DEFAULT_TOP_K = 10
DEFAULT_BUDGET_TOKENS = 4000
# Candidates ranked beyond top-k, so budget skips can be back-filled.
CANDIDATE_SLACK = 3
# A first item is cut down rather than dropped if at least this much fits.
MIN_USEFUL_TOKENS = 32


@dataclass(frozen=True, slots=True)
class ContextRequest:
    """What a caller asks for; the defaults are the documented ones."""

    query: str
    top_k: int = DEFAULT_TOP_K
    budget_tokens: int = DEFAULT_BUDGET_TOKENS
    # Untrusted text pasted along with the question: terminal output, a failing test's log.
    evidence: tuple[str, ...] = ()


def build_context(index: Index, request: ContextRequest, ranker: Ranker | None = None,
                  cancel: threading.Event | None = None, provider: SymbolProvider | None = None) -> dict:
    """Rank the index's chunks for the request and pack the best into the token budget.

    Raises ``Cancelled`` when ``cancel`` is set while the default ranker works.
    ``provider`` answers symbol questions for the default ranker (the
    tree-sitter index when None; language servers composed with it in the
    server, see ``core/langservers/composite.py``).
    """
    started = time.perf_counter()
    query = parse_query("\n".join((request.query, *request.evidence)))
    warnings: list[str] = []
    if query.empty:
        warnings.append("the query has no searchable words or names")
    if not index.chunks:
        warnings.append("the index is empty: no indexable files under the root")
    ranker = ranker or FusionRanker(cancelled=cancel.is_set if cancel is not None else None, provider=provider)
    candidates = ranker.rank(index, query, request.top_k * CANDIDATE_SLACK) if not query.empty else []
    items, truncated = _pack(index, candidates, request)
    # Rankers that run evidence strategies report them (FusionRanker.last_report); others report none.
    report = getattr(ranker, "last_report", None) if not query.empty else None
    result = {
        "items": items,
        "elapsed_ms": round((time.perf_counter() - started) * 1000, 2),
        "truncated": truncated or bool(report and report.truncated),
        "index": {
            "root": str(index.root),
            "files": len(index.files),
            "chunks": len(index.chunks),
        },
        "query": {"terms": list(query.terms), "names": list(query.names)},
        "tokens": sum(item["tokens"] for item in items),
        "budget_tokens": request.budget_tokens,
        "token_count": "estimate",
        "strategies_run": list(report.strategies_run) if report else [],
        "strategies_skipped": [{"strategy": name, "reason": reason}
                               for name, reason in (report.strategies_skipped.items() if report else ())],
        "language_servers": list(report.language_servers) if report else [],
    }
    if warnings:
        result["warnings"] = warnings
    return result


def _pack(index: Index, candidates: list[Candidate], request: ContextRequest) -> tuple[list[dict], bool]:
    """Greedy packing: take candidates in rank order while they fit the budget.

    ``truncated`` is true when a ranked candidate was left out or cut short
    for lack of budget, so a caller knows a larger budget would show more.
    """
    items: list[dict] = []
    remaining = request.budget_tokens
    truncated = False
    for candidate in candidates:
        if len(items) >= request.top_k:
            break
        chunk = index.chunks[candidate.chunk_id]
        content = chunk.content
        tokens = estimate_tokens(content)
        if tokens > remaining:
            truncated = True
            if items or remaining < MIN_USEFUL_TOKENS:
                continue
            content = truncate_to_tokens(content, remaining)
            tokens = estimate_tokens(content)
            if not content:
                continue
        remaining -= tokens
        items.append({
            "path": chunk.path,
            "start_line": chunk.start_line,
            "end_line": min(chunk.end_line, chunk.start_line + content.count("\n")),
            "symbol": chunk.symbol,
            "qualname": chunk.qualname,
            "kind": chunk.kind,
            "language": chunk.language,
            "score": round(candidate.score, 6),
            "why": list(candidate.why),
            "strategies": list(candidate.strategies),
            "sources": list(candidate.sources),
            "content": content,
            "tokens": tokens,
        })
    return items, truncated
