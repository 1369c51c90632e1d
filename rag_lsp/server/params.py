"""Decode and validate the params of rag_lsp's custom requests and commands.

Custom-request params reach pygls handlers as attribute objects (or plain
dicts from some clients), not typed lsprotocol classes, so every field is
checked (with the bounds and messages of ``arguments.py``, which the MCP tools
share) and a bad one becomes a JSON-RPC InvalidParams error that names it,
rather than an exception deep in the core.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field as field_default
from functools import wraps
from pathlib import Path
from typing import ParamSpec, TypeVar

from pygls.exceptions import JsonRpcInvalidParams

from rag_lsp.completion.engine import DEFAULT_TIME_BUDGET_MS, MAX_SNIPPETS, CompletionRequest
from rag_lsp.completion.snippets import DEFAULT_BUDGET_TOKENS as COMPLETION_BUDGET_TOKENS
from rag_lsp.retrieval.answer import DEFAULT_VERBOSITY, MODES, VERBOSITIES, ContextRequest
from rag_lsp.retrieval.bundle.templates import TASK_TYPES
from rag_lsp.retrieval.bundle.tokenizers import DEFAULT_TOKENIZER, TOKENIZERS
from rag_lsp.retrieval.enhance.knobs import KnobValue
from rag_lsp.server import ext
from rag_lsp.server.arguments import (
    MAX_BUDGET_TOKENS,
    MAX_TIME_BUDGET_MS,
    MAX_TOP_K,
    ArgumentError,
    enhancements,
    field,
    integer,
    known_files,
    natural,
    one_of,
    optional_one_of,
    question,
    symbol_name,
)
from rag_lsp.server.convert import uri_to_path
from rag_lsp.workspace.settings import Settings

# ``json``: the answer's JSON; ``prompt``: the same with its prompt block (``prompt``) added.
CONTEXT_FORMATS = ("json", "prompt")

P = ParamSpec("P")
R = TypeVar("R")


def _invalid_params(decode: Callable[P, R]) -> Callable[P, R]:
    """A decoder whose ``ArgumentError`` reaches the client as InvalidParams with the same message."""
    @wraps(decode)
    def decoded(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return decode(*args, **kwargs)
        except ArgumentError as exc:
            raise JsonRpcInvalidParams(str(exc)) from None
    return decoded


@dataclass(frozen=True, slots=True)
class Position:
    path: Path
    line: int
    character: int


@dataclass(frozen=True, slots=True)
class ContextParams:
    request: ContextRequest
    focus: Position | None
    format: str = "json"
    # The request's enhancement knobs (``enhancements``), before the operator's ceiling clamps them.
    knobs: dict[str, KnobValue] = field_default(default_factory=dict)

    @property
    def verbosity(self) -> str:
        return self.request.verbosity


@_invalid_params
def text_document_position(params: object) -> Position | None:
    """``textDocument`` + ``position`` when both are given (a focus for the question)."""
    document, position = field(params, "textDocument"), field(params, "position")
    if document is None and position is None:
        return None
    if document is None:
        raise ArgumentError("'position' needs 'textDocument'")
    path = uri_to_path(field(document, "uri"))
    if position is None:
        return Position(path, 0, 0)
    line, character = field(position, "line"), field(position, "character")
    if not (natural(line) and natural(character)):
        raise ArgumentError(f"'position' needs non-negative integers 'line' and 'character', got {position!r}")
    return Position(path, line, character)


@_invalid_params
def context_params(params: object, settings: Settings) -> ContextParams:
    """Validated ``ragLsp/context`` params, with defaults from the settings."""
    if params is None:
        raise ArgumentError("ragLsp/context needs params with a 'query'")
    query, evidence = question(params, "query")
    focus = text_document_position(params)
    if not query.strip() and not evidence and focus is None:
        raise ArgumentError("give a 'query', 'evidence', or a 'textDocument' and 'position'")
    request = ContextRequest(
        query=query,
        top_k=integer(params, "topK", settings.top_k, MAX_TOP_K),
        budget_tokens=integer(params, "budgetTokens", settings.budget_tokens, MAX_BUDGET_TOKENS),
        evidence=evidence,
        task_type=optional_one_of(params, "taskType", TASK_TYPES),
        mode=one_of(params, "mode", MODES, "task"),
        verbosity=one_of(params, "verbosity", VERBOSITIES, DEFAULT_VERBOSITY),
        tokenizer=one_of(params, "tokenizer", TOKENIZERS, DEFAULT_TOKENIZER),
        known=tuple(sorted((str(uri_to_path(path)) if path.startswith("file:") else path, blob)
                           for path, blob in known_files(params))),
    )
    return ContextParams(request, focus, one_of(params, "format", CONTEXT_FORMATS, "json"), enhancements(params))


@dataclass(frozen=True, slots=True)
class LookupParams:
    symbol: str
    what: str
    path: Path | None


@_invalid_params
def lookup_params(params: object, kinds: tuple[str, ...]) -> LookupParams:
    """Validated ``ragLsp/lookup`` params: a symbol (or a document for its outline) and what to look up."""
    what = one_of(params, "what", kinds, "definitions")
    document = field(params, "textDocument")
    path = uri_to_path(field(document, "uri")) if document is not None else None
    if what == "documentSymbols":
        if path is None:
            raise ArgumentError("'documentSymbols' needs 'textDocument'")
        symbol = field(params, "symbol", "")
        return LookupParams(symbol.strip() if isinstance(symbol, str) else "", what, path)
    return LookupParams(symbol_name(params), what, path)


@_invalid_params
def completion_params(params: object, encoding: str) -> CompletionRequest:
    """Validated ``ragLsp/completionContext`` params (InvalidParams naming the bad field)."""
    both = field(params, "textDocument") is not None and field(params, "position") is not None
    focus = text_document_position(params) if both else None
    if focus is None:
        raise ArgumentError(f"{ext.COMPLETION_CONTEXT} needs 'textDocument' and 'position'")
    max_snippets = integer(params, "maxSnippets", 0, MAX_SNIPPETS)
    return CompletionRequest(
        path=focus.path,
        line=focus.line,
        character=focus.character,
        budget_tokens=integer(params, "budgetTokens", COMPLETION_BUDGET_TOKENS, MAX_BUDGET_TOKENS),
        max_snippets=max_snippets or None,
        time_budget_ms=integer(params, "timeBudgetMs", int(DEFAULT_TIME_BUDGET_MS), MAX_TIME_BUDGET_MS),
        encoding=encoding,
    )
