"""Ranking: turn a query into scored chunks, each with the reasons it was chosen.

A ranker is a replaceable stage (``Ranker``): the context builder asks it for
candidates and does not care how they were found. It returns them with a
report of what it did (``Ranking``), so nothing travels beside the answer. ``LexicalRanker`` is BM25
over chunks plus a boost for chunks that define a name the query mentions.

Scores are on a common scale: the best BM25 hit scores 1.0 and the others
relative to it, and symbol evidence adds to that, so a definition that the
query names outranks a chunk that only shares words with it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from rag_lsp.index.root_index import Index
from rag_lsp.index.symbol_provider import ServerNote
from rag_lsp.index.terms import path_tokens, tokenize
from rag_lsp.model import Definition
from rag_lsp.retrieval.query import Query

# How much a definition named in the query adds, by how it was named.
NAMED_BOOST = 1.0
WORD_BOOST = 0.35
# A plain word naming more definitions than this is too common to count.
MAX_WORD_DEFINITIONS = 5
# BM25 candidates considered before boosting.
BM25_POOL = 200


class Cancelled(Exception):
    """The caller withdrew the question; raised by a ranker between its steps."""


@dataclass(slots=True)
class Candidate:
    """A chunk proposed for the answer, with its score and reasons."""

    chunk_id: int
    score: float = 0.0
    why: list[str] = field(default_factory=list)
    # The evidence strategies behind the candidate (empty for rankers that have none).
    strategies: list[str] = field(default_factory=list)
    # What answered that evidence: a language server's name, ``tree-sitter`` patterns, or ``index``.
    sources: list[str] = field(default_factory=list)
    # ``ranked``, or ``dependency`` for a definition a top place uses: shown after the ranked places.
    role: str = "ranked"


@dataclass(frozen=True, slots=True)
class RankReport:
    """What a ranker did: the strategies that ran, those skipped with the reason, whether a budget cut the
    work short, and what the language servers did (empty for rankers without strategies)."""

    strategies_run: tuple[str, ...] = ()
    strategies_skipped: tuple[tuple[str, str], ...] = ()
    truncated: bool = False
    language_servers: tuple[ServerNote, ...] = ()


@dataclass(frozen=True, slots=True)
class Ranking:
    """A ranker's answer: the candidates, best first, and its report."""

    candidates: tuple[Candidate, ...]
    report: RankReport = RankReport()


class Ranker(Protocol):
    """Anything that scores chunks of an index for a query."""

    def rank(self, index: Index, query: Query, limit: int) -> Ranking: ...


class LexicalRanker:
    """BM25 over chunks, plus a boost for definitions of names in the query."""

    def rank(self, index: Index, query: Query, limit: int) -> Ranking:
        candidates: dict[int, Candidate] = {}
        self._bm25(index, query, candidates)
        self._symbols(index, query, candidates)
        ranked = sorted(candidates.values(), key=lambda c: (-c.score, _order(index, c.chunk_id)))[:limit]
        for candidate in ranked:
            self._explain(index, query, candidate)
        return Ranking(tuple(ranked))

    def _bm25(self, index: Index, query: Query, candidates: dict[int, Candidate]) -> None:
        hits = index.bm25.top_k(list(query.terms), BM25_POOL) if query.terms else []
        if not hits or hits[0][1] <= 0:
            return
        top = hits[0][1]
        for chunk_id, score in hits:
            if score > 0:
                candidate = candidates.setdefault(chunk_id, Candidate(chunk_id))
                candidate.score += score / top
                candidate.why.append(f"bm25 {score:.2f}")

    @staticmethod
    def _explain(index: Index, query: Query, candidate: Candidate) -> None:
        """Name the query terms a BM25 hit shares with its chunk (done only for returned hits)."""
        for position, reason in enumerate(candidate.why):
            if reason.startswith("bm25 "):
                chunk = index.chunks[candidate.chunk_id]
                shared = set(tokenize(chunk.content)).union(path_tokens(chunk.path)).intersection(query.terms)
                candidate.why[position] = f"{reason}: matches {', '.join(sorted(shared)[:8])}"

    def _symbols(self, index: Index, query: Query, candidates: dict[int, Candidate]) -> None:
        for name in query.names:
            for definition in index.symbols.lookup(name):
                self._boost(index, definition, NAMED_BOOST, f"symbol: `{name}` is defined here", candidates)
        for word in query.words:
            if 0 < index.symbols.count(word) <= MAX_WORD_DEFINITIONS:
                definitions = index.symbols.by_name(word)
                for definition in definitions:
                    self._boost(index, definition, WORD_BOOST / len(definitions),
                                f"symbol: '{word}' names this {definition.kind}", candidates)

    @staticmethod
    def _boost(index: Index, definition: Definition, amount: float, reason: str,
               candidates: dict[int, Candidate]) -> None:
        """Boost the chunk that starts the definition (its signature and docstring).

        A small member has no chunk of its own; then the chunk holding its
        first line (its container's) is boosted.
        """
        found = next(
            ((chunk_id, chunk) for chunk_id, chunk in index.chunks_of(definition.path)
             if chunk.qualname == definition.qualname and chunk.start_line >= definition.start_line),
            None,
        ) or index.chunk_at(definition.path, definition.start_line)
        if found is None:
            return
        candidate = candidates.setdefault(found[0], Candidate(found[0]))
        if reason not in candidate.why:
            candidate.score += amount
            candidate.why.append(reason)


def _order(index: Index, chunk_id: int) -> tuple[str, int]:
    chunk = index.chunks[chunk_id]
    return chunk.path, chunk.start_line
