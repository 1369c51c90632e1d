"""The context question over a whole workspace: every root ranked, the rankings merged, packed once.

This is what ``ragLsp/context``, ``rag-lsp context`` and a code lens's command
answer. The focused document's root is asked first, so its places win ties;
language servers share one call budget across the roots of a question.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from rag_lsp.retrieval.answer import ContextAnswer, ContextRequest, Progress
from rag_lsp.retrieval.bundle.relations import Gathered
from rag_lsp.retrieval.enhance.knobs import KnobValue
from rag_lsp.retrieval.enhance.plan import plan_question
from rag_lsp.retrieval.rank import Cancelled
from rag_lsp.retrieval.retrieve import (
    EMPTY_INDEX,
    RootRanking,
    assemble,
    gather_root,
    question_of,
    rank_root,
    task_of,
)
from rag_lsp.workspace.session import Session


def answer_context(session: Session, request: ContextRequest, focus: Path | None = None,
                   cancel: threading.Event | None = None, knobs: Mapping[str, KnobValue] | None = None
                   ) -> ContextAnswer:
    """Ranked context over every root (the focused document's root first), merged and packed into the budget,
    with the enhancements the settings and the request's ``knobs`` allow.

    Raises Cancelled soon after ``cancel`` is set (checked between roots, between model calls and between
    strategies).
    """
    started = time.perf_counter()
    roots = session.root_list()
    if focus is not None and (located := session.locate(focus)):
        roots.sort(key=lambda item: item[1] is not located[0])
    query = question_of(request)
    task = task_of(request)
    plan = plan_question(session.enhancements(focus), query, [root.index for _, root in roots], knobs or {},
                         request.top_k, cancel)
    ranked: list[RootRanking] = []
    gathered: list[Gathered] = []
    calls_left = session.settings_for().language_server_calls
    for _, root in roots:
        if cancel is not None and cancel.is_set():
            raise Cancelled("the context request was cancelled")
        provider = session.provider(root, calls_left)
        ranking = rank_root(root.index, query, request, cancel=cancel, provider=provider,
                             config=root.settings.ranking, plan=plan)
        if not root.indexed:
            # Empty because its indexing has not got far yet, which the indexing warning says.
            ranking = replace(ranking, warnings=tuple(w for w in ranking.warnings if w != EMPTY_INDEX))
        ranked.append(ranking)
        calls_left -= provider.calls if provider else 0
        # Callers and callees come from the same servers, in the calls the ranking left.
        symbols = session.symbols(root, calls_left)
        gathered.append(gather_root(root.index, ranked[-1], request, task, symbols))
        calls_left -= getattr(symbols, "calls", 0)
    indexing = session.indexing
    progress = Progress(indexing.done, indexing.total) if indexing.partial else None
    found = [indexing.warning(), *(root.index.truncation_warning() for _, root in roots)]
    warnings = tuple(w for w in found if w) if roots else ("no workspace folder is open",)
    return assemble(query, request, ranked, gathered, task, started, progress, warnings, plan)
