"""A context question and its answer as typed values.

Every stage below the edges passes these frozen records; the JSON documented
in ``docs/protocol.md`` is made from them by ``server/wire.py`` only, so the
wire format changes in one place and the stages never build dictionaries.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rag_lsp.index.symbol_provider import ServerNote
from rag_lsp.retrieval.enhance.enhance_report import RetrievalReport

DEFAULT_TOP_K = 10
DEFAULT_BUDGET_TOKENS = 4000


@dataclass(frozen=True, slots=True)
class ContextRequest:
    """What a caller asks for; the defaults are the documented ones."""

    query: str
    top_k: int = DEFAULT_TOP_K
    budget_tokens: int = DEFAULT_BUDGET_TOKENS
    # Untrusted text pasted along with the question: terminal output, a failing test's log.
    evidence: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ContextItem:
    """One place of the answer: where it is, what it is, why it was chosen, and its (possibly cut) text."""

    root: str
    path: str
    start_line: int
    end_line: int
    symbol: str | None
    qualname: str | None
    kind: str
    language: str
    score: float
    why: tuple[str, ...]
    # The evidence strategies behind the place, and what answered them (a server's name, ``tree-sitter``).
    strategies: tuple[str, ...]
    sources: tuple[str, ...]
    content: str
    tokens: int
    # ``ranked``, or ``dependency``: a definition a top place uses, shown after the ranked places.
    source: str = "ranked"
    # Context-window optimisation: the places merged into this one, the near-duplicates dropped for it, and
    # whether its file had more places than an answer keeps.
    merged_from: tuple[tuple[int, int], ...] = ()
    deduped_from: tuple[tuple[int, int], ...] = ()
    file_capped: bool = False


@dataclass(frozen=True, slots=True)
class IndexSummary:
    """The index one root's answer came from; the walk's figures when the caller indexed just before asking."""

    root: str
    files: int
    chunks: int
    skipped: Mapping[str, int] | None = None
    parse_errors: int | None = None
    indexing_ms: float | None = None


@dataclass(frozen=True, slots=True)
class Progress:
    """How far an indexing run has got, in files."""

    done: int
    total: int


@dataclass(frozen=True, slots=True)
class ContextAnswer:
    """The ranked, packed places for a question over one or more roots, and how they were found."""

    items: tuple[ContextItem, ...]
    elapsed_ms: float
    truncated: bool
    # One summary per root asked, in the order they were asked.
    index: tuple[IndexSummary, ...]
    terms: tuple[str, ...]
    names: tuple[str, ...]
    budget_tokens: int
    strategies_run: tuple[str, ...] = ()
    strategies_skipped: tuple[tuple[str, str], ...] = ()
    language_servers: tuple[ServerNote, ...] = ()
    warnings: tuple[str, ...] = ()
    # Set while the workspace is still being indexed: the answer covers what is indexed so far.
    indexing: Progress | None = None
    token_count: str = "estimate"
    # Dense retrieval and the enhancement knobs (issue 13): the mode, each root's vectors, each knob's cost.
    retrieval: RetrievalReport | None = None

    @property
    def tokens(self) -> int:
        return sum(item.tokens for item in self.items)
