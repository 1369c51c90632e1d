"""The MCP SDK's real client (``mcp.Client`` over stdio) driving ``rag-lsp mcp``, for tests and benchmarks."""

from __future__ import annotations

import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters, types

RAG_LSP = str(Path(sys.executable).parent / "rag-lsp")


def server_parameters(roots: list[Path], cache: Path, env: dict[str, str] | None = None,
                      extra: tuple[str, ...] = (), exit_code_file: Path | None = None,
                      command: str = RAG_LSP, cwd: Path | None = None) -> StdioServerParameters:
    """``rag-lsp mcp`` on ``roots``; with ``exit_code_file``, run under ``sh``, which writes the server's exit
    code there once it has ended by itself (the client kills the process group of a server that does not end
    within 2 s of its stdin closing, and then ``sh`` dies too and writes nothing). It runs in ``cwd``
    (default: ``cache``, which must exist)."""
    args = ["mcp", *(f"--root={root}" for root in roots), "--cache-dir", str(cache), *extra]
    if exit_code_file is None:
        return StdioServerParameters(command=command, args=args, env=env, cwd=str(cwd or cache))
    script = 'file="$1"; shift; "$@"; echo $? > "$file"'
    return StdioServerParameters(command="sh", args=["-c", script, "sh", str(exit_code_file), command, *args],
                                 env=env, cwd=str(cwd or cache))


@asynccontextmanager
async def connected(parameters: StdioServerParameters) -> AsyncIterator[Client]:
    async with Client(parameters, read_timeout_seconds=120) as client:
        yield client


async def call(client: Client, tool: str, arguments: dict | None = None) -> types.CallToolResult:
    result = await client.call_tool(tool, arguments or {})
    assert isinstance(result, types.CallToolResult)
    return result


def text_of(result: types.CallToolResult) -> str:
    (content,) = result.content
    assert isinstance(content, types.TextContent)
    return content.text


async def wait_indexed(client: Client, seconds: float = 120) -> dict:
    """The ``status`` JSON once the first indexing is done."""
    deadline = time.monotonic() + seconds
    while True:
        status = (await call(client, "status")).structured_content
        assert isinstance(status, dict)
        if not status["freshness"]["indexing"] or time.monotonic() > deadline:
            return status
        await anyio.sleep(0.1)
