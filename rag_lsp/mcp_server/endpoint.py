"""``rag-lsp mcp``: the MCP server, built with the official ``mcp`` SDK (its low-level ``Server``), over stdio
or streamable HTTP on a loopback port.

The low-level server rather than the decorator API (``MCPServer``): the input schemas are written from the
bounds the language server checks (``tools.py``) instead of inferred from Python signatures, and every call's
arguments go through the same checks, so a bad argument is a tool error (``isError``) naming the field, which
the agent reads and corrects, rather than a validation message of the SDK's. An unknown tool is a protocol
error, as the specification asks. Handlers hold no logic: ``LiveWorkspace.call`` answers, off the event loop.
"""

from __future__ import annotations

import logging
import signal
import threading
from pathlib import Path

import anyio
from mcp import types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from rag_lsp import __version__
from rag_lsp.mcp_server.live_workspace import LiveWorkspace
from rag_lsp.mcp_server.tools import TOOL_NAMES, TOOLS
from rag_lsp.server.arguments import ArgumentError

log = logging.getLogger("rag_lsp.mcp")

# Hosts the HTTP transport may bind: it serves the workspace's code to whoever connects, so only this machine.
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
INSTRUCTIONS = (
    "rag_lsp indexes this workspace's code (definitions, references, imports, text) and keeps the index in step "
    "with the files on disk. Call 'context' with a question, task or pasted error to get the ranked places to "
    "read, with their code; 'lookup' for the definitions, references, implementations or hover text of a "
    "named symbol, or a file's outline; 'completion_context' for the signatures the code at a line uses; "
    "'status' when a file seems missing. Every answer ends with how fresh the index is."
)


def build_server(workspace: LiveWorkspace) -> Server:
    """The SDK's server with rag_lsp's four tools over ``workspace``."""
    tools = [types.Tool(name=tool.name, title=tool.title, description=tool.description,
                        input_schema=tool.input_schema,
                        annotations=types.ToolAnnotations(title=tool.title, read_only_hint=True,
                                                          idempotent_hint=True, open_world_hint=False))
             for tool in TOOLS]

    async def list_tools(ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
                         ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: ServerRequestContext, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name not in TOOL_NAMES:
            raise MCPError(types.INVALID_PARAMS, f"unknown tool {params.name!r}; rag_lsp has {', '.join(TOOL_NAMES)}")
        cancel = threading.Event()
        try:
            answer = await anyio.to_thread.run_sync(workspace.call, params.name, params.arguments, cancel,
                                                    abandon_on_cancel=True)
        except anyio.get_cancelled_exc_class():
            # notifications/cancelled: stop the ranking the thread is doing, not only the wait for it.
            cancel.set()
            raise
        except ArgumentError as exc:
            return types.CallToolResult(content=[types.TextContent(text=f"{params.name}: {exc}")], is_error=True)
        return types.CallToolResult(content=[types.TextContent(text=answer.text)], structured_content=answer.result)

    return Server("rag-lsp", version=__version__, title="rag_lsp",
                  description="Ranked, token-budgeted code context from a live index of the workspace.",
                  instructions=INSTRUCTIONS, on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_stdio(workspace: LiveWorkspace) -> None:
    """Serve one client over stdin/stdout until it closes stdin."""
    server = build_server(workspace)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


async def serve_http(workspace: LiveWorkspace, host: str, port: int) -> None:
    """Serve streamable HTTP at ``http://HOST:PORT/mcp`` until interrupted; ``host`` must be a loopback name."""
    import uvicorn

    if host not in LOOPBACK_HOSTS:
        raise ValueError(f"the HTTP transport binds a loopback address only ({', '.join(LOOPBACK_HOSTS)}), got {host}")
    app = build_server(workspace).streamable_http_app(host=host)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve()


def run(roots: list[Path], cache_root: Path | None, use_cache: bool, language_servers: bool, polling: bool,
        http: tuple[str, int] | None = None) -> None:
    """Index ``roots`` in the background, watch them, serve until the client leaves, then stop everything
    that was started (watcher, threads, language servers, caches)."""
    workspace = LiveWorkspace(roots, cache_root, use_cache, language_servers, polling)
    for warning in workspace.warnings:
        log.warning("%s", warning)
    # SIGTERM (how a client stops a server that does not leave when its stdin closes, and how an HTTP server
    # is stopped) unwinds like an exit, so that the language servers and caches are closed below.
    signal.signal(signal.SIGTERM, _exit)
    workspace.start()
    try:
        if http is None:
            anyio.run(serve_stdio, workspace)
        else:
            anyio.run(serve_http, workspace, *http)
    finally:
        workspace.close()


def _exit(signum: int, frame: object) -> None:
    raise SystemExit(0)
