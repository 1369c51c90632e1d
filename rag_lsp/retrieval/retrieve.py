"""Answer a question with a ranked, token-budgeted list of places.

The command line, the language server and the benchmarks share this path:
each root's index is ranked (``rank_root``, under the index's lock, so the
chunks it returns are a consistent snapshot), the rankings of every root are
merged by score, and the merged list is packed into the budget once
(``assemble``). ``retrieve`` does both for a single index.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from rag_lsp.index.root_index import Index
from rag_lsp.index.symbol_provider import SymbolProvider
from rag_lsp.retrieval.answer import ContextAnswer, ContextItem, ContextRequest, IndexSummary, Progress
from rag_lsp.retrieval.enhance.knobs import KnobValue
from rag_lsp.retrieval.enhance.plan import NO_EMBEDDER, Enhancements, QuestionPlan, RootDense, plan_question
from rag_lsp.retrieval.enhance.retrieval_config import FusionConfig, RetrievalSettings
from rag_lsp.retrieval.fusion import FusionRanker
from rag_lsp.retrieval.packing import PackRules, pack
from rag_lsp.retrieval.query import Query, parse_query
from rag_lsp.retrieval.rank import Ranker, Ranking
from rag_lsp.retrieval.ranking.config import DEFAULT_RANKING, RankingConfig
from rag_lsp.retrieval.token_count import estimate_tokens
from rag_lsp.retrieval.window import Placed, optimise
from rag_lsp.retrieval.window import placed as window_place

# Candidates ranked beyond top-k, so budget skips can be back-filled.
CANDIDATE_SLACK = 3
# A first item is cut down rather than dropped if at least this much fits.
MIN_USEFUL_TOKENS = 32


@dataclass(frozen=True, slots=True)
class RootRanking:
    """One root's part of an answer: its index, its ranked places and the ranker's report."""

    summary: IndexSummary
    placed: tuple[Placed, ...]
    ranking: Ranking
    warnings: tuple[str, ...]


def question_of(request: ContextRequest) -> Query:
    """The question as the rankers read it: the query and the pasted evidence together."""
    return parse_query("\n".join((request.query, *request.evidence)))


def rank_root(index: Index, query: Query, request: ContextRequest, *, ranker: Ranker | None = None,
              cancel: threading.Event | None = None, provider: SymbolProvider | None = None,
              config: RankingConfig = DEFAULT_RANKING, plan: QuestionPlan | None = None) -> RootRanking:
    """Rank one root's chunks for the question.

    Raises ``Cancelled`` when ``cancel`` is set while the default ranker works.
    ``provider`` answers symbol questions for the default ranker (the
    tree-sitter index when None; language servers composed with it in the
    workspace, see ``langservers/composite.py``). ``plan`` (``enhance/plan.py``)
    adds the question's enhancements to the default ranker.
    """
    with index.lock:
        warnings = []
        if query.empty:
            warnings.append("the query has no searchable words or names")
        if not index.chunks:
            warnings.append("the index is empty: no indexable files under the root")
        cancelled = cancel.is_set if cancel is not None else None
        limit = request.top_k * CANDIDATE_SLACK
        if ranker is None and plan is not None:
            limit = plan.limit(limit)
            ranker = plan.ranker(index, config, provider, cancelled, limit)
        ranker = ranker or FusionRanker(cancelled=cancelled, provider=provider, config=config)
        ranking = ranker.rank(index, query, limit) if not query.empty else Ranking(())
        placed = tuple(optimise(index, [window_place(index, c) for c in ranking.candidates], config))
        summary = IndexSummary(str(index.root), len(index.files), len(index.chunks))
    return RootRanking(summary, placed, ranking, tuple(warnings))


def assemble(query: Query, request: ContextRequest, roots: Sequence[RootRanking], started: float,
             indexing: Progress | None = None, warnings: Sequence[str] = (),
             plan: QuestionPlan | None = None) -> ContextAnswer:
    """One answer from the rankings of the roots asked (in that order): places by score, ties by root order,
    path and line, packed into the budget once; with a ``plan``, the model's rerank first (no lock is held
    here) and the enhancements' report in the answer."""
    if plan is not None:
        reordered = plan.rerank([root.placed for root in roots])
        roots = [replace(root, placed=tuple(placed)) for root, placed in zip(roots, reordered)]
    order = {id(root): position for position, root in enumerate(roots)}
    merged = sorted(((placed, order[id(root)]) for root in roots for placed in root.placed
                     if placed.candidate.role == "ranked"),
                    key=lambda pair: (-pair[0].candidate.score, pair[1], pair[0].chunk.path, pair[0].start_line))
    packing = pack((placed for placed, _ in merged), request.budget_tokens, request.top_k, _CONTEXT_RULES)
    # What the top places use from other files comes after them, in the budget they left.
    shown = {(p.item.root, p.item.chunk.path) for p in packing.packed}
    extra = [placed for root in roots for placed in root.placed
             if placed.candidate.role != "ranked" and (placed.root, placed.chunk.path) not in shown]
    dependencies = pack(extra, request.budget_tokens - packing.used, len(extra), _CONTEXT_RULES)
    items = tuple(_item(packed.item, packed.shown, packed.cost) for packed in (*packing.packed, *dependencies.packed))
    reports = [root.ranking.report for root in roots]
    # A strategy ran if it ran for any root; it was skipped only if it ran for none.
    ran = tuple(dict.fromkeys(name for report in reports for name in report.strategies_run))
    skipped: dict[str, str] = {}
    for report in reports:
        for name, reason in report.strategies_skipped:
            if name not in ran:
                skipped.setdefault(name, reason)
    found = [w for root in roots for w in root.warnings] + list(warnings)
    return ContextAnswer(
        items=items,
        elapsed_ms=round((time.perf_counter() - started) * 1000, 2),
        truncated=bool(packing.over_budget or packing.cut) or any(report.truncated for report in reports),
        index=tuple(root.summary for root in roots),
        terms=query.terms,
        names=query.names,
        budget_tokens=request.budget_tokens,
        strategies_run=ran,
        strategies_skipped=tuple(skipped.items()),
        language_servers=tuple(note for report in reports for note in report.language_servers),
        warnings=tuple(found) if len(roots) <= 1 else tuple(sorted(set(found))),
        indexing=indexing,
        retrieval=plan.report() if plan is not None else None,
    )


def retrieve(index: Index, request: ContextRequest, *, ranker: Ranker | None = None,
             cancel: threading.Event | None = None, provider: SymbolProvider | None = None,
             config: RankingConfig = DEFAULT_RANKING, enhancements: Enhancements | None = None,
             knobs: Mapping[str, KnobValue] | None = None) -> ContextAnswer:
    """The answer from a single index (what tests and benchmarks ask; the workspace asks every root), with the
    ``enhancements`` offered (none: no vectors, no model, the shipped bounds) and the request's ``knobs``; a
    given ``ranker`` runs as it is, without them."""
    started = time.perf_counter()
    query = question_of(request)
    if enhancements is None:
        enhancements = Enhancements(RetrievalSettings(), {}, lambda _: RootDense(None, FusionConfig(), NO_EMBEDDER))
    plan = plan_question(enhancements, query, [index], knobs or {}, request.top_k, cancel) if ranker is None else None
    ranked = rank_root(index, query, request, ranker=ranker, cancel=cancel, provider=provider, config=config,
                       plan=plan)
    return assemble(query, request, [ranked], started, plan=plan)


def _item(placed: Placed, content: str, tokens: int) -> ContextItem:
    chunk, candidate = placed.chunk, placed.candidate
    return ContextItem(
        root=placed.root,
        path=chunk.path,
        start_line=placed.start_line,
        end_line=min(placed.end_line, placed.start_line + content.count("\n")),
        symbol=chunk.symbol,
        qualname=chunk.qualname,
        kind=chunk.kind,
        language=chunk.language,
        score=round(candidate.score, 6),
        why=tuple(candidate.why),
        strategies=tuple(candidate.strategies),
        sources=tuple(candidate.sources),
        content=content,
        tokens=tokens,
        source=candidate.role,
        merged_from=placed.merged_from,
        deduped_from=placed.deduped_from,
        file_capped=placed.file_capped,
    )


# A place is shown as its chunk's text; a cut keeps whole lines from its start.
_CONTEXT_RULES: PackRules[Placed, str] = PackRules(
    show=lambda placed: placed.content,
    text=lambda content: content,
    cut=lambda _, shorter: shorter,
    cost=lambda _, content: estimate_tokens(content),
    min_cut_tokens=MIN_USEFUL_TOKENS,
)
