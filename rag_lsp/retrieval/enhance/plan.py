"""One question's enhancements: the knobs resolved, the model calls made outside the index locks, the lists
the ranking stack fuses, the model's rerank, and the report of what all of it cost.

The order follows the locks. ``plan_question`` runs before any root is ranked
and makes every call that needs only the question: the language model's query
variants and hypothetical documents, and each root's question vectors (an
endpoint may take seconds, and a root's lock would stop its indexing and edits
meanwhile). ``QuestionPlan.ranker`` gives each root a ``FusionRanker`` whose
configuration carries the knobs and the fusion weights and whose list hook adds
the dense, variant and hypothetical-document lists under the root's lock.
``QuestionPlan.rerank`` asks the model to reorder the top places of all roots
after the locks are released, from the text the answer already copied.

Without a language model ``expand`` is rounds of pseudo-relevance feedback,
``hyde`` is 0 and ``rerank`` is the deterministic signal rerank; a model's
failure or timeout degrades to exactly that, and the knob's report says so.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from rag_lsp.index.root_index import Index
from rag_lsp.index.symbol_provider import SymbolProvider
from rag_lsp.index.tables import WorkspaceTables, workspace_tables
from rag_lsp.index.terms import tokenize
from rag_lsp.index.vectors.embedders import EmbeddingError
from rag_lsp.index.vectors.embedding import VectorIndex
from rag_lsp.index.vectors.http_json import ProviderError
from rag_lsp.retrieval.enhance import chat as model
from rag_lsp.retrieval.enhance.chat import ChatClient
from rag_lsp.retrieval.enhance.dense_lists import (
    DENSE,
    HYBRID,
    depth,
    fused_config,
    merge_best_rank,
    nearest,
    weighted_list,
)
from rag_lsp.retrieval.enhance.enhance_report import DenseRoot, KnobReport, RetrievalReport
from rag_lsp.retrieval.enhance.knobs import KnobValue, Resolved, resolve
from rag_lsp.retrieval.enhance.retrieval_config import FusionConfig, RetrievalSettings
from rag_lsp.retrieval.fusion import FusionRanker
from rag_lsp.retrieval.query import Query
from rag_lsp.retrieval.rank import Cancelled
from rag_lsp.retrieval.ranking.candidates import CHUNK_DEPTH, Listed, bm25_chunks
from rag_lsp.retrieval.ranking.config import RankingConfig
from rag_lsp.retrieval.strategies.base import is_report
from rag_lsp.retrieval.window import Placed

log = logging.getLogger(__name__)

# The whole question in quotes asks for that text: exact match, no vectors and no variants.
_QUOTED = re.compile(r"""^\s*(["'])(?=\S)(.+?)\1\s*$""", re.DOTALL)
# Characters of the question embedded (a pasted trace can be long; its start says the most).
MAX_EMBEDDED_QUESTION = 4000
# The model reranks this many places per place asked for.
RERANK_PER_PLACE = 5
VARIANTS = "variants"
HYDE = "hyde"
# Weights of the lists a language model's output adds (one lexical list's weight each).
MODEL_LIST_WEIGHT = 1.0
NO_MODEL = "no language model is configured (retrieval.llm)"
NO_EMBEDDER = "no embedder is configured (retrieval.dense.backend)"
# Ranking runs no feedback round for a report (``pipeline.rank_staged``).
REPORT_NO_FEEDBACK = "a report brings the code's own words: no feedback round"


@dataclass(frozen=True, slots=True)
class RootDense:
    """What a root offers the dense side: its vectors (None when it has none, and ``reason`` says why) and how
    its lists are fused."""

    vectors: VectorIndex | None
    fusion: FusionConfig
    reason: str | None = None


@dataclass(slots=True)
class Enhancements:
    """What a workspace offers a question's enhancements: the settings in force (the language model and the
    operator's bounds), the client's knob values, and each root's dense side."""

    settings: RetrievalSettings
    client: Mapping[str, KnobValue]
    dense_of: Callable[[Index], RootDense]
    chat: ChatClient | None = None

    def __post_init__(self) -> None:
        if self.chat is None and self.settings.llm is not None:
            self.chat = ChatClient(self.settings.llm)


@dataclass(slots=True)
class _Cost:
    variants: int = 0
    passes: int = 0
    model_calls: int = 0
    ms: float = 0.0
    degraded: str | None = None
    method: str = "off"


@dataclass(slots=True)
class _Root:
    dense: RootDense
    queries: np.ndarray | None = None
    reason: str | None = None
    used: bool = False
    reruns: int = 0
    last_hook: float = 0.0


@dataclass(slots=True)
class QuestionPlan:
    knobs: dict[str, Resolved]
    question: str
    exact: bool
    chat: ChatClient | None
    variants: list[str] = field(default_factory=list)
    documents: list[str] = field(default_factory=list)
    roots: dict[int, _Root] = field(default_factory=dict)
    costs: dict[str, _Cost] = field(default_factory=dict)
    dense_ms: float = 0.0
    top_k: int = 10

    # Ranking, per root, under its lock.

    def limit(self, limit: int) -> int:
        """Places a root's ranking returns: enough for the model to rerank ``top_k × 5`` when it will."""
        return max(limit, self.top_k * RERANK_PER_PLACE) if self._model_rerank else limit

    @property
    def _model_rerank(self) -> bool:
        return bool(self.knobs["rerank"].value) and self.chat is not None and not self.exact

    def ranker(self, index: Index, config: RankingConfig, provider: SymbolProvider | None,
               cancelled: Callable[[], bool] | None, limit: int) -> FusionRanker:
        """The root's ranker: the knobs in its configuration, the dense and model lists in its hook."""
        root = self.roots[id(index)]
        expand = int(self.knobs["expand"].value)
        rounds = 0 if self.exact else (1 if self.variants and expand else expand)
        # A stage the caller's configuration switched off (an ablation) stays off whatever the knobs say.
        config = replace(config, expansion=rounds if config.expansion else 0,
                         rerank=bool(self.knobs["rerank"].value) and config.rerank)
        extra = [(name, MODEL_LIST_WEIGHT) for name, present in ((VARIANTS, self.variants), (HYDE, self.documents))
                 if present]
        if root.queries is not None:
            config = fused_config(config, root.dense.fusion, extra)
        else:
            config = replace(config, list_weights=config.list_weights + tuple(extra))
        return FusionRanker(cancelled=cancelled, provider=provider, config=config,
                            lists=lambda terms, rerun: self._lists(index, root, terms, rerun, limit))

    def _lists(self, index: Index, root: _Root, terms: Sequence[str], rerun: bool, limit: int
               ) -> dict[str, list[Listed]]:
        now = time.perf_counter()
        if rerun:
            root.reruns += 1
            cost = self.costs["expand"]
            cost.passes += 1
            cost.ms += (now - root.last_hook) * 1000
        found: dict[str, list[Listed]] = {}
        tables = workspace_tables(index)
        count = depth(limit)
        if root.queries is not None and root.dense.vectors is not None:
            vectors, question = root.dense.vectors, root.queries[0]
            started = time.perf_counter()
            try:
                if root.dense.fusion.mode == "weighted":
                    found[HYBRID] = weighted_list(index, tables, vectors, question, terms, count, root.dense.fusion)
                elif not rerun:
                    found[DENSE] = nearest(index, tables, vectors, question, count, "dense")
                root.used = True
            except Exception as exc:
                # A failing dense side costs only its own list: the lexical lists answer, and the report says so.
                log.warning("vector search failed for %s", index.root, exc_info=True)
                root.reason = f"the vector search failed: {exc!r}"
                root.used = False
            self.dense_ms += (time.perf_counter() - started) * 1000
        if not rerun:
            self._model_lists(index, root, tables, count, found)
        root.last_hook = time.perf_counter()
        return found

    def _model_lists(self, index: Index, root: _Root, tables: WorkspaceTables, count: int,
                     found: dict[str, list[Listed]]) -> None:
        """The lists of the model's variants (BM25, and vectors when there are) and hypothetical documents
        (vectors, else BM25 over their words)."""
        vectors = root.dense.vectors if root.queries is not None else None
        queries = root.queries if root.queries is not None else np.zeros((0, 0), dtype=np.float32)
        if self.variants:
            started = time.perf_counter()
            per_variant = [bm25_chunks(index, tokenize(variant)) for variant in self.variants]
            if vectors is not None:
                per_variant += [nearest(index, tables, vectors, queries[1 + n], count, "variant")
                                for n in range(len(self.variants))]
            found[VARIANTS] = [Listed(item.chunk_id, f"query variant: {item.reason}")
                               for item in merge_best_rank(per_variant, CHUNK_DEPTH)]
            cost = self.costs["expand"]
            cost.passes += len(per_variant)
            cost.ms += (time.perf_counter() - started) * 1000
        if self.documents:
            started = time.perf_counter()
            offset = 1 + len(self.variants)
            if vectors is not None:
                per_document = [nearest(index, tables, vectors, queries[offset + n], count, "hypothetical document")
                                for n in range(len(self.documents))]
            else:
                per_document = [bm25_chunks(index, tokenize(document)) for document in self.documents]
            found[HYDE] = [Listed(item.chunk_id, f"hypothetical document: {item.reason}")
                           for item in merge_best_rank(per_document, count)]
            cost = self.costs["hyde"]
            cost.passes += len(per_document)
            cost.ms += (time.perf_counter() - started) * 1000

    # After the locks: the model's rerank.

    def rerank(self, placed: Sequence[Sequence[Placed]]) -> list[list[Placed]]:
        """Every root's places, the top ``top_k × 5`` of them (by score, as the answer merges them) reordered by
        the model; their scores are the same set of numbers, handed out in the model's order."""
        result = [list(root) for root in placed]
        if not self._model_rerank or self.chat is None:
            return result
        ranked = sorted(((root, position) for root, items in enumerate(result)
                         for position, item in enumerate(items) if item.candidate.role == "ranked"),
                        key=lambda rp: -result[rp[0]][rp[1]].candidate.score)[: self.top_k * RERANK_PER_PLACE]
        if len(ranked) < 2:
            return result
        cost = self.costs["rerank"]
        started = time.perf_counter()
        shown = [result[r][p] for r, p in ranked]
        cost.model_calls += 1
        try:
            order = model.rerank_order(self.chat, self.question,
                                       [(f"{item.chunk.path}:{item.start_line}-{item.end_line}", item.content)
                                        for item in shown])
        except ProviderError as exc:
            cost.degraded = f"the language model failed, the signal rerank stands: {exc}"
            cost.ms += (time.perf_counter() - started) * 1000
            return result
        scores = [item.candidate.score for item in shown]
        for new_rank, old_rank in enumerate(order):
            root, position = ranked[old_rank]
            item = result[root][position]
            why = [*item.candidate.why, f"llm rerank: #{old_rank + 1} → #{new_rank + 1}"]
            result[root][position] = replace(item, candidate=replace(item.candidate, score=scores[new_rank], why=why))
        cost.passes += 1
        cost.method = "signals+llm"
        cost.ms += (time.perf_counter() - started) * 1000
        return result

    # The report.

    def report(self) -> RetrievalReport:
        dense_roots = []
        used, reasons = [], []
        modes = set()
        for root in self.roots.values():
            vectors = root.dense.vectors
            status = vectors.status() if vectors is not None else None
            root_path = str(vectors.index.root) if vectors is not None else ""
            reason = None if root.used else (root.reason or root.dense.reason)
            dense_roots.append(DenseRoot(root_path, root.used, reason, status))
            if root.used:
                used.append(root)
                modes.add(root.dense.fusion.mode)
            elif reason:
                reasons.append(reason)
        if self.exact:
            mode, reason = "exact", "the question is quoted: exact match, without vectors or query variants"
        elif used:
            mode = "hybrid-" + "+".join(sorted(modes))
            reason = "; ".join(reasons) or None
        else:
            mode, reason = "lexical", "; ".join(dict.fromkeys(reasons)) or None
        prf = max((root.reruns for root in self.roots.values()), default=0)
        expand = self.costs["expand"]
        if expand.method == "prf" or (expand.method == "off" and prf):
            expand.method, expand.variants = "prf", prf
            if not prf and is_report(self.question):
                expand.degraded = "; ".join(filter(None, (expand.degraded, REPORT_NO_FEEDBACK)))
        knobs = tuple(self._knob(name) for name in ("expand", "hyde", "rerank"))
        return RetrievalReport(mode, reason, tuple(dense_roots), knobs, round(self.dense_ms, 2))

    def _knob(self, name: str) -> KnobReport:
        resolved, cost = self.knobs[name], self.costs[name]
        value = resolved.value
        if name == "hyde" and not self.documents:
            value = 0
        ms = None if cost.method == "signals" and name == "rerank" and not cost.model_calls else round(cost.ms, 2)
        return KnobReport(name, value, resolved.requested, resolved.source, resolved.max, cost.method,
                          cost.variants, cost.passes, cost.model_calls, ms, cost.degraded)


def plan_question(setup: Enhancements, query: Query, indexes: Sequence[Index], requested: Mapping[str, KnobValue],
                  top_k: int, cancel: threading.Event | None = None) -> QuestionPlan:
    """Resolve the knobs and make the calls that need only the question (raises Cancelled when ``cancel`` is set
    between them)."""
    knobs = resolve(setup.settings.limits, setup.client, requested)
    exact = bool(_QUOTED.match(query.text))
    plan = QuestionPlan(knobs, query.text, exact, setup.chat, top_k=top_k,
                        costs={name: _Cost() for name in ("expand", "hyde", "rerank")})
    _model_calls(plan, cancel)
    for index in indexes:
        plan.roots[id(index)] = _prepare_root(plan, setup.dense_of(index))
    return plan


def _check(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise Cancelled("the context request was cancelled")


def _model_calls(plan: QuestionPlan, cancel: threading.Event | None) -> None:
    expand, hyde, rerank = (plan.costs[name] for name in ("expand", "hyde", "rerank"))
    count = int(plan.knobs["expand"].value)
    # ``signals+llm`` once the model's rerank has run (``QuestionPlan.rerank``).
    rerank.method = "signals" if plan.knobs["rerank"].value else "off"
    if plan.exact:
        for cost in (expand, hyde):
            cost.degraded = "the question is quoted: exact match" if count or plan.knobs["hyde"].value else None
        return
    expand.method = "prf" if count else "off"
    if int(plan.knobs["hyde"].value) and plan.chat is None:
        hyde.degraded = NO_MODEL
    if plan.chat is None:
        return
    chat = plan.chat
    if count:
        plan.variants = _ask(cancel, expand, lambda: model.variants(chat, plan.question, count),
                             "pseudo-relevance feedback instead")
    documents = int(plan.knobs["hyde"].value)
    if documents:
        plan.documents = _ask(cancel, hyde, lambda: model.hypothetical(chat, plan.question, documents),
                              "no hypothetical documents")


def _ask(cancel: threading.Event | None, cost: _Cost, call: Callable[[], list[str]], instead: str) -> list[str]:
    """One model call for a knob, counted in its cost; a provider error leaves nothing and says what happens
    instead."""
    _check(cancel)
    started = time.perf_counter()
    cost.model_calls += 1
    try:
        found = call()
        cost.method, cost.variants = "llm", len(found)
        return found
    except ProviderError as exc:
        cost.degraded = f"the language model failed, {instead}: {exc}"
        return []
    finally:
        cost.ms += (time.perf_counter() - started) * 1000


def _prepare_root(plan: QuestionPlan, dense: RootDense) -> _Root:
    """The root's question vectors (the question, then each variant and document), when its vectors are ready."""
    root = _Root(dense)
    vectors = dense.vectors
    if plan.exact or vectors is None:
        return root
    status = vectors.status()
    if status.error is not None and not status.ready:
        root.reason = f"the embedder failed: {status.error}"
        return root
    if not status.ready:
        root.reason = (f"vectors not ready: {status.embedded} of {status.chunks} chunks embedded "
                       f"({status.state}); answered lexically")
        return root
    started = time.perf_counter()
    try:
        texts = [plan.question[:MAX_EMBEDDED_QUESTION], *plan.variants, *plan.documents]
        root.queries = vectors.embed_queries(texts)
        vectors.search(root.queries[0], 1)
    except (EmbeddingError, ValueError) as exc:
        root.queries, root.reason = None, f"embedding the question failed: {exc}"
    plan.dense_ms += (time.perf_counter() - started) * 1000
    return root
