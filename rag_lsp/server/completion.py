"""The ``ragLsp/completionContext`` request: cross-file context for LLM code completion.

The handler decodes and checks the params, waits for the edits received
before it, and asks the session's ``CompletionEngine`` (which keeps its caches
for the life of the server) on the thread pool.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from pygls.exceptions import JsonRpcInvalidParams

from rag_lsp.completion.engine import (
    DEFAULT_BUDGET_TOKENS,
    DEFAULT_TIME_BUDGET_MS,
    MAX_SNIPPETS,
    CompletionEngine,
    CompletionError,
    CompletionRequest,
    PositionError,
)
from rag_lsp.server import ext
from rag_lsp.server.convert import path_to_uri
from rag_lsp.server.params import field, text_document_position

MAX_BUDGET_TOKENS = 200_000
MAX_TIME_BUDGET_MS = 10_000


def completion_params(params: object, encoding: str) -> CompletionRequest:
    """Validated ``ragLsp/completionContext`` params (InvalidParams naming the bad field)."""
    if params is None or field(params, "textDocument") is None or field(params, "position") is None:
        raise JsonRpcInvalidParams(f"{ext.COMPLETION_CONTEXT} needs 'textDocument' and 'position'")
    focus = text_document_position(params)
    return CompletionRequest(
        path=focus.path,
        line=focus.line,
        character=focus.character,
        budget_tokens=_integer(params, "budgetTokens", DEFAULT_BUDGET_TOKENS, MAX_BUDGET_TOKENS),
        max_snippets=_integer(params, "maxSnippets", None, MAX_SNIPPETS),
        time_budget_ms=_integer(params, "timeBudgetMs", DEFAULT_TIME_BUDGET_MS, MAX_TIME_BUDGET_MS),
        encoding=encoding,
    )


def _integer(params: object, name: str, default, upper: int):
    value = field(params, name, None)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= upper:
        raise JsonRpcInvalidParams(f"'{name}' must be an integer from 1 to {upper}, got {value!r}")
    return value


def register_completion(server) -> None:
    """Register the completion-context handler on ``server`` (a ``RagServer``)."""
    engine = CompletionEngine(server.session)

    @server.feature(ext.COMPLETION_CONTEXT)
    async def completion_context(ls, params: object) -> dict:
        request = completion_params(params, ls.encoding)
        await ls.after_writes()
        try:
            result = await asyncio.wrap_future(ls.thread_pool.submit(engine.context, request))
        except (PositionError, CompletionError) as exc:
            raise JsonRpcInvalidParams(f"'position': {exc}" if isinstance(exc, PositionError) else str(exc)) from None
        root = result.get("root")
        for snippet in result["snippets"]:
            snippet["uri"] = path_to_uri(Path(root) / snippet["path"]) if root else snippet.get("uri")
        return result
