"""Language-server latency: one-line edits in a 5,000-line file, and ragLsp/context on a large workspace.

    .venv/bin/python bench/server_bench.py /tmp/rag-bench/Django-5.1.4

(see bench/index_bench.py for getting that tree). Three measurements, each
beside a baseline taken in the same run:

1. An edit of one line in a generated 5,000-line Python file until the index
   reflects it, through ``Session.change_document`` (what the server's
   didChange handler runs, minus JSON-RPC decoding): incremental tree-sitter
   re-parse and re-indexing only the changed chunk. Baseline: the same edit
   indexed from scratch (full parse, every chunk re-indexed).
2. ``ragLsp/context`` through a real ``rag-lsp serve`` process over stdio on the
   given workspace after its initial indexing, from a real LSP client.
   Baseline: the same questions asked of ``Session.context`` in-process.
3. The server's resident memory (VmRSS) after indexing that workspace.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "e2e"))

from common import DJANGO_QUESTIONS, median_p95
from lsp_harness import Harness

from rag_lsp.features.context import answer_context
from rag_lsp.retrieval.answer import ContextRequest
from rag_lsp.workspace.documents import TextEdit
from rag_lsp.workspace.session import Session


def generated_module(functions: int = 1000) -> str:
    """About 5,000 lines of Python: classes and functions with docstrings and bodies."""
    parts = []
    for i in range(functions):
        parts.append(f'def handler_{i}(request, value):\n    """Handle case {i}."""\n'
                     f"    total = value * {i} + len(request)\n    return total\n")
    return "\n".join(parts)


def edit_latency(tmp: Path, rounds: int = 200) -> tuple[list[float], list[float], int]:
    root = tmp / "edit"
    root.mkdir()
    path = root / "big.py"
    text = generated_module()
    path.write_text(text)
    session = Session(use_cache=False)
    session.add_root(root)
    session.index_roots()
    session.open_document(path, text, 1)
    rng = random.Random(7)
    incremental, full = [], []
    index = session.roots[root.resolve()].index
    for version in range(2, rounds + 2):
        line = rng.randrange(0, text.count("\n"))
        edit = TextEdit(line, 0, line, 0, f"# edit {version}\n")
        began = time.perf_counter()
        session.change_document(path, version, [edit])
        incremental.append((time.perf_counter() - began) * 1000)
        current = session.documents[path].text
        began = time.perf_counter()
        index.set_file("big.py", current)
        full.append((time.perf_counter() - began) * 1000)
    return incremental, full, session.documents[path].text.count("\n")


def in_process_context(root: Path, repeats: int) -> list[float]:
    session = Session(use_cache=True, cache_root=Path(tempfile.mkdtemp()))
    session.add_root(root)
    session.index_roots()
    latencies = []
    for _ in range(repeats):
        for query in DJANGO_QUESTIONS:
            began = time.perf_counter()
            answer_context(session, ContextRequest(query))
            latencies.append((time.perf_counter() - began) * 1000)
    return latencies


async def served_context(root: Path, tmp: Path, repeats: int) -> tuple[list[float], float, float, int]:
    harness = Harness(tmp / "cache", tmp / "server.log")
    began = time.perf_counter()
    await harness.start([root])
    await harness.wait_indexed(timeout=600)
    indexing = time.perf_counter() - began
    latencies = []
    for _ in range(repeats):
        for query in DJANGO_QUESTIONS:
            began = time.perf_counter()
            await harness.request("ragLsp/context", {"query": query}, timeout=60)
            latencies.append((time.perf_counter() - began) * 1000)
    status = await harness.request("ragLsp/status", None)
    pid = harness.client._server.pid
    rss = next(int(line.split()[1]) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
               if line.startswith("VmRSS")) / 1024
    await harness.stop()
    return latencies, indexing, rss, status.files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("root", type=Path, help="a workspace of over 2,000 files")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        incremental, full, lines = edit_latency(Path(tmp))
        print(f"one-line edit in a {lines}-line file, until indexed ({len(incremental)} edits), median / p95 ms:")
        print("| path | median / p95 ms |\n|---|---|")
        print(f"| incremental (Session.change_document) | {median_p95(incremental)} |")
        print(f"| baseline: full parse and re-index | {median_p95(full)} |")
        served, indexing, rss, files = asyncio.run(served_context(args.root, Path(tmp), args.repeats))
        local = in_process_context(args.root, args.repeats)
        print(f"\nragLsp/context on {files} files ({len(served)} questions), median / p95 ms:")
        print("| path | median / p95 ms |\n|---|---|")
        print(f"| rag-lsp serve over stdio (JSON-RPC round trip) | {median_p95(served)} |")
        print(f"| baseline: Session.context in-process | {median_p95(local)} |")
        print(f"\nserver: initial indexing (cold cache) {indexing:.1f} s; resident memory after indexing {rss:.0f} MB")


if __name__ == "__main__":
    main()
