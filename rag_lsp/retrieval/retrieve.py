"""Answer a question with a ranked, token-budgeted bundle of places.

The command line, the language server and the benchmarks share this path:
the question is classified into a task type (``task_of``), each root's index
is ranked (``rank_root``, under the index's lock, so the chunks it returns are
a consistent snapshot) and what the task's template needs around the places
is gathered (``gather_root``: callers, callees, tests, documents, the
checkout), the rankings of every root are merged by score, and the merged
list is packed into the budget once (``assemble``), in the template's order
(``mode`` ``task``) or by score alone (``ranked``). ``retrieve`` does it all
for a single index.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from rag_lsp.index.root_index import Index
from rag_lsp.index.symbol_provider import IndexSymbolProvider, SymbolProvider
from rag_lsp.index.tables import workspace_tables
from rag_lsp.retrieval.answer import ContextAnswer, ContextRequest, IndexSummary, Progress
from rag_lsp.retrieval.bundle.classify import Classification, classify, requested
from rag_lsp.retrieval.bundle.provenance import WATCH, moved_warnings
from rag_lsp.retrieval.bundle.relations import Gathered, gather
from rag_lsp.retrieval.bundle.sections import compose, compose_ranked
from rag_lsp.retrieval.bundle.sufficiency import sufficiency
from rag_lsp.retrieval.bundle.templates import template
from rag_lsp.retrieval.bundle.tokenizers import tokenizer
from rag_lsp.retrieval.enhance.knobs import KnobValue
from rag_lsp.retrieval.enhance.plan import NO_EMBEDDER, Enhancements, QuestionPlan, RootDense, plan_question
from rag_lsp.retrieval.enhance.retrieval_config import FusionConfig, RetrievalSettings
from rag_lsp.retrieval.fusion import FusionRanker
from rag_lsp.retrieval.query import Query, parse_query
from rag_lsp.retrieval.rank import Ranker, Ranking
from rag_lsp.retrieval.ranking.config import DEFAULT_RANKING, RankingConfig
from rag_lsp.retrieval.window import Placed, optimise
from rag_lsp.retrieval.window import placed as window_place

# Candidates ranked beyond top-k, so budget skips can be back-filled.
CANDIDATE_SLACK = 3
# Said of a root with no chunks; a caller that knows the root is still being indexed says that instead.
EMPTY_INDEX = "the index is empty: no indexable files under the root"


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


def task_of(request: ContextRequest) -> Classification:
    """The question's task type: the request's, else classified from the question and its evidence."""
    if request.task_type is not None:
        return requested(request.task_type)
    return classify("\n".join((request.query, *request.evidence)))


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
            warnings.append(EMPTY_INDEX)
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


def gather_root(index: Index, ranked: RootRanking, request: ContextRequest, task: Classification,
                provider: SymbolProvider | None = None) -> Gathered:
    """What the task's template needs around one root's ranked places (summaries alone in ``ranked`` mode),
    and its checkout; ``provider`` answers callers and callees (the tree-sitter index when None)."""
    checkout = WATCH.observe(index)
    with index.lock:
        symbols = provider or IndexSymbolProvider(index, workspace_tables(index))
        chosen = template(task.task_type) if request.mode == "task" else None
        return gather(index, ranked.placed, symbols, chosen, request.top_k, checkout)


def assemble(query: Query, request: ContextRequest, roots: Sequence[RootRanking], gathered: Sequence[Gathered],
             task: Classification, started: float, indexing: Progress | None = None,
             warnings: Sequence[str] = (), plan: QuestionPlan | None = None) -> ContextAnswer:
    """One answer from the rankings of the roots asked (in that order) and what was gathered around them:
    places by score, ties by root order, path and line, packed into the budget once; with a ``plan``, the
    model's rerank first (no lock is held here) and the enhancements' report in the answer."""
    if plan is not None:
        reordered = plan.rerank([root.placed for root in roots])
        roots = [replace(root, placed=tuple(placed)) for root, placed in zip(roots, reordered)]
    order = {id(root): position for position, root in enumerate(roots)}
    merged = sorted(((placed, order[id(root)]) for root in roots for placed in root.placed
                     if placed.candidate.role == "ranked"),
                    key=lambda pair: (-pair[0].candidate.score, pair[1], pair[0].chunk.path, pair[0].start_line))
    ranked = [placed for placed, _ in merged]
    dependencies = [placed for root in roots for placed in root.placed if placed.candidate.role == "dependency"]
    counter = tokenizer(request.tokenizer)
    by_root = {found.root: found for found in gathered}
    chosen = template(task.task_type)
    if request.mode == "task":
        composition = compose(ranked, dependencies, by_root, chosen, request, counter)
    else:
        composition = compose_ranked(ranked, dependencies, by_root, request, counter)
    present = {section if section in chosen.sections else "source" for section in composition.present}
    reports = [root.ranking.report for root in roots]
    # A strategy ran if it ran for any root; it was skipped only if it ran for none.
    ran = tuple(dict.fromkeys(name for report in reports for name in report.strategies_run))
    skipped: dict[str, str] = {}
    for report in reports:
        for name, reason in report.strategies_skipped:
            if name not in ran:
                skipped.setdefault(name, reason)
    checkouts = tuple(found.checkout for found in gathered if found.checkout is not None)
    found = [w for root in roots for w in root.warnings] + list(warnings) + moved_warnings(checkouts)
    if counter.fallback:
        found.append(f"token counts are estimates: {counter.fallback}")
    return ContextAnswer(
        items=composition.items,
        elapsed_ms=round((time.perf_counter() - started) * 1000, 2),
        truncated=composition.truncated or any(report.truncated for report in reports),
        index=tuple(root.summary for root in roots),
        terms=query.terms,
        names=query.names,
        budget_tokens=request.budget_tokens,
        strategies_run=ran,
        strategies_skipped=tuple(skipped.items()),
        language_servers=tuple(note for report in reports for note in report.language_servers),
        warnings=tuple(found) if len(roots) <= 1 else tuple(sorted(set(found))),
        indexing=indexing,
        token_count=counter.name,
        task=task,
        mode=request.mode,
        verbosity=request.verbosity,
        sections=composition.sections,
        sufficiency=sufficiency(chosen, present, composition.has_source, composition.longest_docstring,
                                composition.bundle_chars),
        checkouts=checkouts,
        answered_at=datetime.now(UTC).isoformat(timespec="seconds"),
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
    task = task_of(request)
    ranked = rank_root(index, query, request, ranker=ranker, cancel=cancel, provider=provider, config=config,
                       plan=plan)
    gathered = gather_root(index, ranked, request, task, provider)
    return assemble(query, request, [ranked], [gathered], task, started, plan=plan)
