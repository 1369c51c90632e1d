"""What completion answers: snippets of the definitions a cursor needs, and the prompt made of them."""

from __future__ import annotations

from dataclasses import dataclass

# Tokens of context a completion asks for by default: a few definitions' signatures and docstrings.
DEFAULT_BUDGET_TOKENS = 512


@dataclass(frozen=True, slots=True)
class Snippet:
    """One definition (or window of similar code) shown to the model, and why it was chosen."""

    path: str
    start_line: int
    end_line: int
    symbol: str | None
    qualname: str | None
    kind: str
    language: str
    # What found it: ``import``, ``local``, ``symbol``, ``enclosing``, ``server`` or ``similar``.
    source: str
    score: float
    why: tuple[str, ...]
    content: str
    tokens: int


@dataclass(frozen=True, slots=True)
class CompletionAnswer:
    """The snippets in rank order and the prompt block they make, with what did not fit."""

    root: str | None
    snippets: tuple[Snippet, ...]
    prompt: str
    tokens: int
    budget_tokens: int
    # Ranked candidates left out for the budget or the snippet limit.
    omitted: int
    truncated: bool
    elapsed_ms: float = 0.0
    # Whether the answer was served from the cache of an earlier identical request.
    cached: bool = False
    warnings: tuple[str, ...] = ()
    token_count: str = "estimate"
