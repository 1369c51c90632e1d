"""Shared by the benchmark scripts: the one call into ranking, and the systems and answers around it.

``rank_places`` is the only place where a benchmark asks rag_lsp for an
answer, the way ``rag-lsp context`` does (``retrieve`` with the default
ranker). When the retrieval API changes, this module is the one to
adapt; the scripts see only ``Place`` and ``Answer``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from rag_lsp.index.root_index import Index
from rag_lsp.index.vectors.embedders import DenseConfig
from rag_lsp.index.vectors.embedding import VectorIndex
from rag_lsp.retrieval.answer import DEFAULT_BUDGET_TOKENS, ContextRequest
from rag_lsp.retrieval.enhance.knobs import KnobValue
from rag_lsp.retrieval.enhance.plan import Enhancements, RootDense
from rag_lsp.retrieval.enhance.retrieval_config import FusionConfig, RetrievalSettings
from rag_lsp.retrieval.fusion import FusionRanker
from rag_lsp.retrieval.rank import LexicalRanker, Ranker
from rag_lsp.retrieval.ranking.config import DEFAULT_RANKING, RankingConfig
from rag_lsp.retrieval.retrieve import retrieve
from rag_lsp.retrieval.strategies import REGISTRY

# Places asked for when files are scored: enough for more than 20 distinct files (the MRR depth).
FILE_PLACES = 100
# A token budget no answer reaches: file rankings measure the order, not what a 4,000-token answer holds.
UNLIMITED_TOKENS = 1 << 40
RANKERS = ("fusion", "lexical")
STRATEGIES = tuple(REGISTRY)

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Place:
    """A place of an answer: a file and its lines (1-based, inclusive), relative to the indexed root."""

    path: str
    start_line: int
    end_line: int


@dataclass(frozen=True, slots=True)
class Answer:
    """What rag_lsp answered: its places in rank order, and why it may be short."""

    places: tuple[Place, ...]
    # The token budget cut a place short or left one out, or a strategy stopped at one of its limits.
    truncated: bool
    # Strategies that did not run, with the reason each gave.
    skipped: tuple[tuple[str, str], ...]

    @property
    def out_of_time(self) -> bool:
        """A strategy was skipped because the ranking's time budget was spent (a slow or loaded machine)."""
        return any("time budget" in reason for _, reason in self.skipped)


@dataclass(frozen=True, slots=True)
class Enhanced:
    """A rag_lsp system with enhancements: an embedder (``dense``, its vectors synced before the first question
    of each index), a fusion mode and knob values, over the default ranker."""

    dense: DenseConfig = field(default_factory=DenseConfig)
    fusion: FusionConfig = field(default_factory=FusionConfig)
    knobs: tuple[tuple[str, KnobValue], ...] = ()


@dataclass
class EmbeddingTally:
    """The embedding a run did: chunks embedded (not served by the vector cache) and the seconds it took."""

    chunks: int = 0
    seconds: float = 0.0


EMBEDDING = EmbeddingTally()
# The vectors of the index being measured, per embedder (dropped when the next index comes).
_VECTORS: dict[DenseConfig, VectorIndex] = {}


def vectors_for(index: Index, dense: DenseConfig) -> VectorIndex | None:
    """The index's vectors for ``dense``, embedded (or read from the cache) now, before any question."""
    if not dense.enabled:
        return None
    current = _VECTORS.get(dense)
    if current is not None and current.index is index:
        return current
    for stale in [config for config, vectors in _VECTORS.items() if vectors.index is not index]:
        _VECTORS.pop(stale).stop()
    vectors = _VECTORS[dense] = VectorIndex.for_index(index, dense)
    started = time.perf_counter()
    EMBEDDING.chunks += vectors.sync()
    EMBEDDING.seconds += time.perf_counter() - started
    return vectors


def enhancements_for(index: Index, system: Enhanced) -> Enhancements:
    vectors = vectors_for(index, system.dense)
    dense = RootDense(vectors, system.fusion, None if vectors else "no embedder configured")
    return Enhancements(RetrievalSettings(dense=system.dense, fusion=system.fusion), dict(system.knobs),
                        lambda _: dense)


def make_ranker(name: str = "fusion", disabled: frozenset[str] = frozenset(),
                config: RankingConfig = DEFAULT_RANKING) -> Ranker | None:
    """The ranker a benchmark asks: None is the default one, exactly what a user gets."""
    if name == "lexical":
        return LexicalRanker()
    return FusionRanker(disabled=disabled, config=config) if disabled or config != DEFAULT_RANKING else None


def rank_places(index: Index, question: str, top_k: int, ranker: Ranker | Enhanced | None = None,
                budget_tokens: int = DEFAULT_BUDGET_TOKENS) -> Answer:
    """Ask ``question`` of ``index`` as ``rag-lsp context --top-k top_k`` does."""
    config = ranker.config if isinstance(ranker, FusionRanker) else DEFAULT_RANKING
    # The ranking alone, as before task bundles: what a template adds around it is measured by bundle_bench.py.
    request = ContextRequest(question, top_k, budget_tokens, mode="ranked")
    if isinstance(ranker, Enhanced):
        answer = retrieve(index, request, enhancements=enhancements_for(index, ranker))
    else:
        answer = retrieve(index, request, ranker=ranker, config=config)
    places = tuple(Place(item.path, item.start_line, item.end_line) for item in answer.items)
    return Answer(places, answer.truncated, answer.strategies_skipped)


def rank_files(index: Index, question: str, ranker: Ranker | Enhanced | None = None) -> Answer:
    """Ask for ``FILE_PLACES`` places without a token budget, so the answer's distinct files can be scored."""
    return rank_places(index, question, FILE_PLACES, ranker, UNLIMITED_TOKENS)


def timed_warm(call: Callable[[], T]) -> tuple[T, float]:
    """Run ``call`` once to warm per-index tables, then again timed; return the second result and its ms."""
    call()
    started = time.perf_counter()
    result = call()
    return result, (time.perf_counter() - started) * 1000
