"""Tool-call latency over MCP against the same question over LSP, on the same workspace.

    .venv/bin/python bench/mcp_bench.py /work/benchtrees/mcp/fastapi --repeats 5

Starts ``rag-lsp serve`` (driven by pygls's LanguageClient, as bench/server_bench.py does) and ``rag-lsp mcp``
(driven by the MCP SDK's own ``mcp.Client`` over stdio) on the same root, waits until both have indexed it,
then asks each question of both in turn — ``ragLsp/context`` and the ``context`` tool — so that the load of
this shared machine falls on both alike. Each latency is one request's round trip as its client sees it:
encoding, the pipe, the ranking, the answer's JSON (and, for MCP, its readable text and freshness) and
decoding. The in-process ``answer_context`` on a ``Session`` of the same tree is the baseline without a
transport. Neither server has a language server on its PATH, so both rank with the patterns alone and the
numbers compare the transports, not pyright's warm-up.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "e2e"))

from latency import median_p95
from lsp_harness import Harness
from mcp_harness import call, connected, server_parameters, wait_indexed

from rag_lsp.features.context import answer_context
from rag_lsp.retrieval.answer import ContextRequest
from rag_lsp.workspace.session import Session

# Questions about FastAPI (the tree the completion benchmark uses, copied without its .git).
FASTAPI_QUESTIONS = [
    "how does Depends resolve sub-dependencies",
    "where is the OpenAPI schema generated for a route",
    "why does a request body fail validation with 422",
    "`APIRouter.include_router` prefixes the paths",
    "how are background tasks run after the response",
    "OAuth2PasswordBearer reads the Authorization header",
    "websocket endpoint dependency injection",
    "jsonable_encoder converts pydantic models",
]
# A PATH with no language server on it (the system's tools only).
PLAIN_PATH = "/usr/bin:/bin"


def _paths(items: list) -> list[str]:
    return [item["path"] if isinstance(item, dict) else item.path for item in items]


async def measure(root: Path, tmp: Path, repeats: int) -> tuple[list[float], list[float], int, int]:
    env = {**os.environ, "PATH": PLAIN_PATH}
    lsp = Harness(tmp / "lsp-cache", tmp / "server.log")
    began = time.perf_counter()
    await lsp.start([root], env=env)
    print(f"rag-lsp serve: process start to initialize answered {time.perf_counter() - began:.2f} s")
    (tmp / "mcp").mkdir()
    parameters = server_parameters([root], tmp / "mcp", env={"PATH": PLAIN_PATH})
    over_lsp: list[float] = []
    over_mcp: list[float] = []
    differing = 0
    began = time.perf_counter()
    async with connected(parameters) as client:
        print(f"rag-lsp mcp: process start to initialize answered {time.perf_counter() - began:.2f} s")
        await lsp.wait_indexed(timeout=900)
        status = await wait_indexed(client, seconds=900)
        for _ in range(repeats):
            for question in FASTAPI_QUESTIONS:
                began = time.perf_counter()
                by_lsp = await lsp.request("ragLsp/context", {"query": question}, timeout=120)
                over_lsp.append((time.perf_counter() - began) * 1000)
                began = time.perf_counter()
                by_mcp = await call(client, "context", {"question": question})
                over_mcp.append((time.perf_counter() - began) * 1000)
                assert not by_mcp.is_error and isinstance(by_mcp.structured_content, dict)
                # The same workspace and question: the same places, in the same order.
                differing += _paths(by_lsp.items) != _paths(by_mcp.structured_content["items"])  # type: ignore[attr-defined]
    await lsp.stop()
    return over_lsp, over_mcp, status["files"], differing


def in_process(root: Path, tmp: Path, repeats: int) -> list[float]:
    session = Session(cache_root=tmp / "in-process-cache")
    session.add_root(root)
    session.index_roots()
    latencies = []
    for _ in range(repeats):
        for question in FASTAPI_QUESTIONS:
            began = time.perf_counter()
            answer_context(session, ContextRequest(question))
            latencies.append((time.perf_counter() - began) * 1000)
    session.close()
    return latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("root", type=Path, help="the workspace (e.g. a copy of FastAPI, ~3,000 files)")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        over_lsp, over_mcp, files, differing = asyncio.run(measure(args.root.resolve(), Path(tmp), args.repeats))
        local = in_process(args.root.resolve(), Path(tmp), args.repeats)
    print(f"context for the same question on {files} files ({len(over_mcp)} questions each), median / p95 ms:")
    print("| path | median / p95 ms |\n|---|---|")
    print(f"| `context` tool, rag-lsp mcp over stdio (mcp.Client) | {median_p95(over_mcp)} |")
    print(f"| `ragLsp/context`, rag-lsp serve over stdio (pygls LanguageClient) | {median_p95(over_lsp)} |")
    print(f"| baseline: answer_context in-process | {median_p95(local)} |")
    print(f"\nanswers whose places differed between MCP and LSP: {differing} of {len(over_mcp)}")


if __name__ == "__main__":
    main()
