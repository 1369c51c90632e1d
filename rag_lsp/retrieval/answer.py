"""A context question and its answer as typed values.

Every stage below the edges passes these frozen records; the JSON documented
in ``docs/protocol.md`` is made from them by ``server/wire.py`` only, so the
wire format changes in one place and the stages never build dictionaries.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rag_lsp.index.symbol_provider import ServerNote
from rag_lsp.retrieval.bundle.classify import Classification
from rag_lsp.retrieval.bundle.provenance import Checkout
from rag_lsp.retrieval.bundle.relations import Relation
from rag_lsp.retrieval.bundle.tokenizers import DEFAULT_TOKENIZER
from rag_lsp.retrieval.enhance.enhance_report import RetrievalReport

DEFAULT_TOP_K = 10
DEFAULT_BUDGET_TOKENS = 4000
# ``task``: the bundle the task type's template describes; ``ranked``: the ranked places alone, packed by score.
MODES = ("task", "ranked")
# What an answer holds, from least to most: ``VERBOSITIES[i]`` adds to ``VERBOSITIES[i - 1]`` (see
# ``server/wire.py``). ``full`` is ``diagnostic`` under the name clients used before the ladder, and stays the
# default so that no client loses a field; ``locations`` is ``full`` without the places' text.
LADDER = ("minimal", "standard", "verbose", "diagnostic")
VERBOSITIES = (*LADDER, "full", "locations")
DEFAULT_VERBOSITY = "full"
# The classification of an answer made without one (a question that matched no pattern).
UNCLASSIFIED = Classification("general", 0.0)


def verbosity_level(verbosity: str) -> int:
    """A verbosity's rung on the ladder (``full`` and ``locations`` are the top one)."""
    return LADDER.index(verbosity) if verbosity in LADDER else len(LADDER) - 1


@dataclass(frozen=True, slots=True)
class ContextRequest:
    """What a caller asks for; the defaults are the documented ones."""

    query: str
    top_k: int = DEFAULT_TOP_K
    budget_tokens: int = DEFAULT_BUDGET_TOKENS
    # Untrusted text pasted along with the question: terminal output, a failing test's log.
    evidence: tuple[str, ...] = ()
    # The task type when the caller knows it (one of ``templates.TASK_TYPES``); None classifies the question.
    task_type: str | None = None
    mode: str = "task"
    verbosity: str = DEFAULT_VERBOSITY
    tokenizer: str = DEFAULT_TOKENIZER
    # Files the caller already holds: path (relative to its root, or absolute) → git blob id of its text.
    known: tuple[tuple[str, str], ...] = ()


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
    # The tokens of ``content`` and of the item's relationship lists (``callers``, ``callees``).
    tokens: int
    # ``ranked``, or ``dependency``: a definition a top place uses, shown after the ranked places.
    source: str = "ranked"
    # Context-window optimisation: the places merged into this one, the near-duplicates dropped for it, and
    # whether its file had more places than an answer keeps.
    merged_from: tuple[tuple[int, int], ...] = ()
    deduped_from: tuple[tuple[int, int], ...] = ()
    file_capped: bool = False
    # The first line of the place the ranking chose: where an editor jumps. It is ``start_line`` unless
    # context-window optimisation merged nearby places into this one (a class header above a method).
    focus_line: int = 0
    # The template section the place is shown in (None in ``ranked`` mode), and how: ``source`` (its code),
    # ``summary`` (signature and docstring) or ``unchanged`` (the caller holds this text: a one-line entry).
    section: str | None = None
    shown: str = "source"
    # Provenance: the git blob id of the file's indexed text and the commit checked out in its root (None
    # outside a git checkout). ``known`` is ``unchanged`` or ``changed`` for a file the caller said it holds.
    blob_id: str = ""
    commit: str | None = None
    known: str | None = None
    # Relationship lists of a definition (``callers``, ``callees`` sections), capped, with the totals found.
    callers: tuple[Relation, ...] = ()
    callees: tuple[Relation, ...] = ()
    callers_total: int = 0
    callees_total: int = 0


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
class SectionReport:
    """What one template section got: its tokens, the cap it was packed under, its entries (places or
    relationship lists) and those left out for the budget."""

    name: str
    tokens: int
    cap: int
    entries: int
    omitted: int


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
    # The tokenizer that counted (``cl100k``, ``o200k``, or ``estimate``).
    token_count: str = "estimate"
    task: Classification = UNCLASSIFIED
    mode: str = "task"
    verbosity: str = DEFAULT_VERBOSITY
    # Sections in the template's priority order (empty in ``ranked`` mode), and how complete the bundle is for
    # the task (``bundle/sufficiency.py``), in [0, 1].
    sections: tuple[SectionReport, ...] = ()
    sufficiency: float = 0.0
    # The checkout of each root asked (``commit`` None outside git), and when the answer was made (ISO 8601, UTC).
    checkouts: tuple[Checkout, ...] = ()
    answered_at: str = ""
    # Dense retrieval and the enhancement knobs (issue 13): the mode, each root's vectors, each knob's cost.
    retrieval: RetrievalReport | None = None

    @property
    def tokens(self) -> int:
        return sum(item.tokens for item in self.items)
