"""Decode and validate the params of rag_lsp's custom requests and commands.

Custom-request params reach pygls handlers as attribute objects (or plain
dicts from some clients), not typed lsprotocol classes, so every field is
checked here and a bad one becomes a JSON-RPC InvalidParams error that names
it, rather than an exception deep in the core.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard

from pygls.exceptions import JsonRpcInvalidParams

from rag_lsp.completion.engine import DEFAULT_TIME_BUDGET_MS, MAX_SNIPPETS, CompletionRequest
from rag_lsp.completion.snippets import DEFAULT_BUDGET_TOKENS as COMPLETION_BUDGET_TOKENS
from rag_lsp.retrieval.answer import ContextRequest
from rag_lsp.server import ext
from rag_lsp.server.convert import uri_to_path
from rag_lsp.workspace.settings import Settings

VERBOSITIES = ("full", "locations")
MAX_QUERY_CHARS = 200_000
MAX_BUDGET_TOKENS = 200_000
MAX_TOP_K = 100
MAX_TIME_BUDGET_MS = 10_000


def field(params: object, name: str, default: object = None) -> object:
    """A field of a params object, whatever shape the transport gave it."""
    if params is None:
        return default
    if isinstance(params, dict):
        return params.get(name, default)
    return getattr(params, name, default)


def _integer(params: object, name: str, default: int, upper: int) -> int:
    """A positive integer field up to ``upper``; absent or null means ``default``."""
    value = field(params, name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= upper:
        raise JsonRpcInvalidParams(f"'{name}' must be an integer from 1 to {upper}, got {value!r}")
    return value


@dataclass(frozen=True, slots=True)
class Position:
    path: Path
    line: int
    character: int


@dataclass(frozen=True, slots=True)
class ContextParams:
    request: ContextRequest
    focus: Position | None
    verbosity: str


def text_document_position(params: object) -> Position | None:
    """``textDocument`` + ``position`` when both are given (a focus for the question)."""
    document, position = field(params, "textDocument"), field(params, "position")
    if document is None and position is None:
        return None
    if document is None:
        raise JsonRpcInvalidParams("'position' needs 'textDocument'")
    path = uri_to_path(field(document, "uri"))
    if position is None:
        return Position(path, 0, 0)
    line, character = field(position, "line"), field(position, "character")
    if not (_natural(line) and _natural(character)):
        raise JsonRpcInvalidParams(f"'position' needs non-negative integers 'line' and 'character', got {position!r}")
    return Position(path, line, character)


def _natural(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def context_params(params: object, settings: Settings) -> ContextParams:
    """Validated ``ragLsp/context`` params, with defaults from the settings."""
    if params is None:
        raise JsonRpcInvalidParams("ragLsp/context needs params with a 'query'")
    query = field(params, "query", "")
    if not isinstance(query, str):
        raise JsonRpcInvalidParams(f"'query' must be a string, got {type(query).__name__}")
    evidence = field(params, "evidence", None) or []
    if not isinstance(evidence, list) or not all(isinstance(e, str) for e in evidence):
        raise JsonRpcInvalidParams("'evidence' must be a list of strings")
    if len(query) + sum(map(len, evidence)) > MAX_QUERY_CHARS:
        raise JsonRpcInvalidParams(f"query and evidence exceed {MAX_QUERY_CHARS} characters")
    verbosity = field(params, "verbosity", "full")
    if verbosity not in VERBOSITIES:
        raise JsonRpcInvalidParams(f"'verbosity' must be one of {', '.join(VERBOSITIES)}, got {verbosity!r}")
    focus = text_document_position(params)
    if not query.strip() and not evidence and focus is None:
        raise JsonRpcInvalidParams("give a 'query', 'evidence', or a 'textDocument' and 'position'")
    request = ContextRequest(
        query=query,
        top_k=_integer(params, "topK", settings.top_k, MAX_TOP_K),
        budget_tokens=_integer(params, "budgetTokens", settings.budget_tokens, MAX_BUDGET_TOKENS),
        evidence=tuple(evidence),
    )
    return ContextParams(request, focus, verbosity)


@dataclass(frozen=True, slots=True)
class LookupParams:
    symbol: str
    what: str
    path: Path | None


def lookup_params(params: object, kinds: tuple[str, ...]) -> LookupParams:
    """Validated ``ragLsp/lookup`` params: a symbol (or a document for its outline) and what to look up."""
    what = field(params, "what", "definitions")
    if what not in kinds:
        raise JsonRpcInvalidParams(f"'what' must be one of {', '.join(kinds)}, got {what!r}")
    symbol = field(params, "symbol", "")
    document = field(params, "textDocument")
    path = uri_to_path(field(document, "uri")) if document is not None else None
    if what == "documentSymbols":
        if path is None:
            raise JsonRpcInvalidParams("'documentSymbols' needs 'textDocument'")
    elif not isinstance(symbol, str) or not symbol.strip() or len(symbol) > 500:
        raise JsonRpcInvalidParams(f"'symbol' must be a non-empty name of at most 500 characters, got {symbol!r}")
    return LookupParams(symbol.strip() if isinstance(symbol, str) else "", str(what), path)


def completion_params(params: object, encoding: str) -> CompletionRequest:
    """Validated ``ragLsp/completionContext`` params (InvalidParams naming the bad field)."""
    both = field(params, "textDocument") is not None and field(params, "position") is not None
    focus = text_document_position(params) if both else None
    if focus is None:
        raise JsonRpcInvalidParams(f"{ext.COMPLETION_CONTEXT} needs 'textDocument' and 'position'")
    max_snippets = _integer(params, "maxSnippets", 0, MAX_SNIPPETS)
    return CompletionRequest(
        path=focus.path,
        line=focus.line,
        character=focus.character,
        budget_tokens=_integer(params, "budgetTokens", COMPLETION_BUDGET_TOKENS, MAX_BUDGET_TOKENS),
        max_snippets=max_snippets or None,
        time_budget_ms=_integer(params, "timeBudgetMs", int(DEFAULT_TIME_BUDGET_MS), MAX_TIME_BUDGET_MS),
        encoding=encoding,
    )
