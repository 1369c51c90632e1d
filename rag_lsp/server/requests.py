"""Requests that answer questions: ``ragLsp/context``, ``ragLsp/lookup``, ``ragLsp/status``,
``ragLsp/completionContext``, ``workspace/symbol`` and the context-for-a-symbol command.

Each handler decodes its params, asks one feature over the session on the
thread pool once the edits received before it are applied, and encodes the
typed answer with ``wire``.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import replace
from pathlib import Path

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from rag_lsp.completion.engine import CompletionEngine, CompletionError, PositionError
from rag_lsp.features.context import answer_context
from rag_lsp.features.focus import focus_query
from rag_lsp.features.lookup import LOOKUPS, lookup
from rag_lsp.features.status import status
from rag_lsp.features.workspace_symbols import workspace_symbols
from rag_lsp.retrieval.answer import ContextAnswer, ContextRequest
from rag_lsp.server import ext, wire
from rag_lsp.server.convert import path_to_uri, symbol_information, uri_to_path
from rag_lsp.server.language_server import RagServer
from rag_lsp.server.params import completion_params, context_params, field, lookup_params


def confine(ls: RagServer, path: Path) -> None:
    """A document a question reads must be open in the editor (its text is the client's) or inside a
    workspace folder: the server reads nothing outside its roots (InvalidParams naming the field)."""
    if path not in ls.session.documents and ls.session.locate(path) is None:
        raise JsonRpcInvalidParams(f"'textDocument': {path} is neither open nor inside a workspace folder")


def register(server: RagServer) -> None:
    # The engine keeps its caches for the life of the server.
    engine = CompletionEngine(server.session)

    @server.feature(ext.CONTEXT)
    async def context(ls: RagServer, params: object) -> dict:
        focus_uri = field(field(params, "textDocument"), "uri")
        settings = ls.session.settings_for(uri_to_path(focus_uri) if isinstance(focus_uri, str) and
                                           focus_uri.startswith("file:") else None)
        decoded = context_params(params, settings)
        focus = decoded.focus
        request = decoded.request
        if focus is not None:
            confine(ls, focus.path)
        cancel = threading.Event()

        def answer() -> ContextAnswer:
            # A cursor's question may ask a language server what the name under it means: off the event loop.
            asked = request
            if focus is not None and not request.query.strip():
                asked = replace(request, query=focus_query(ls.session, focus.path, focus.line, focus.character))
            return answer_context(ls.session, asked, focus.path if focus else None, cancel, decoded.knobs)

        try:
            await ls.first_index(settings.first_index_wait_ms / 1000)
            result = await ls.run(answer)
        except asyncio.CancelledError:
            # $/cancelRequest: stop the work the thread is doing, not only the wait for it.
            cancel.set()
            raise
        return wire.context_json(result, path_to_uri, prompt=decoded.format == "prompt")

    @server.feature(ext.LOOKUP)
    async def lookup_request(ls: RagServer, params: object) -> dict:
        decoded = lookup_params(params, LOOKUPS)
        await ls.first_index(ls.session.settings_for(decoded.path).first_index_wait_ms / 1000)
        answer = await ls.run(lookup, ls.session, decoded.symbol, decoded.what, decoded.path)
        return wire.lookup_json(answer, path_to_uri)

    @server.feature(ext.STATUS)
    async def status_request(ls: RagServer, params: object = None) -> dict:
        return wire.status_json(await ls.run(status, ls.session))

    @server.feature(ext.COMPLETION_CONTEXT)
    async def completion_context(ls: RagServer, params: object) -> dict:
        request = completion_params(params, ls.encoding)
        confine(ls, request.path)
        try:
            answer = await ls.run(engine.context, request)
        except (PositionError, CompletionError) as exc:
            raise JsonRpcInvalidParams(f"'position': {exc}" if isinstance(exc, PositionError) else str(exc)) from None
        return wire.completion_json(answer, path_to_uri)

    @server.feature(types.WORKSPACE_SYMBOL)
    async def workspace_symbol(ls: RagServer, params: types.WorkspaceSymbolParams) -> list[types.WorkspaceSymbol]:
        await ls.first_index(ls.session.settings_for().first_index_wait_ms / 1000)
        found = await ls.run(workspace_symbols, ls.session, params.query)
        return [symbol_information(root, definition) for root, definition in found]

    @server.command(ext.COMMAND_CONTEXT_FOR_SYMBOL)
    async def context_for_symbol(ls: RagServer, *args) -> dict:
        target = args[0] if args and not isinstance(args[0], list) else (args[0][0] if args and args[0] else None)
        name = field(target, "qualname") or field(target, "name")
        if not isinstance(name, str) or not name:
            raise JsonRpcInvalidParams(f"{ext.COMMAND_CONTEXT_FOR_SYMBOL} needs an argument with 'qualname'")
        focus = uri_to_path(field(target, "uri")) if field(target, "uri") else None
        settings = ls.session.settings_for(focus)
        request = ContextRequest(f"`{name}`", settings.top_k, settings.budget_tokens)
        await ls.first_index(settings.first_index_wait_ms / 1000)
        return wire.context_json(await ls.run(answer_context, ls.session, request, focus), path_to_uri)
