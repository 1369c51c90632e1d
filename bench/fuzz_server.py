"""The long fuzz of ``rag-lsp serve``: 10,000 seeded messages, then the answers compared with a fresh index.

    .venv/bin/python bench/fuzz_server.py --messages 10000 --seed 20261201

Drives one server process with the strategies of ``tests/e2e/fuzz_messages.py`` (every registered method
with random and malformed params, bad URIs and positions, huge strings, out-of-order versions, cancels,
non-JSON-RPC envelopes, the server's own requests answered, refused or ignored at random) on a copy of the
tests' ledger workspace, in batches sent without waiting. After every batch: the process is alive, every
request got exactly one response, none an internal error, no handler failure in the log. At the end the
workspace is settled (documents closed, settings reset, folders restored) and the server's answers to four
questions, a lookup and the file count must equal a fresh index's. Prints the figures docs/reliability.md
reports; exits 1 on any failure.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "tests" / "e2e"), str(HERE.parent / "tests")]

from answers import context_of
from conftest import LEDGER_WORKSPACE, write_tree
from fuzz_messages import FuzzRun, Schema, Workspace, batches
from hypothesis import HealthCheck, Phase, given, seed, settings
from raw_client import RawServer

from rag_lsp.index.root_index import Index
from rag_lsp.retrieval.answer import ContextRequest

QUESTIONS = ("why does Ledger.post raise KeyError", "convert rate currency", "rate limit", "checkout price")


def comparable(items: list[dict]) -> list[tuple]:
    return [(i["path"], i["start_line"], i["end_line"], i["content"], round(i["score"], 9)) for i in items]


def fuzz(messages: int, seed_value: int, workdir: Path) -> dict:
    root = write_tree(workdir / "ws", LEDGER_WORKSPACE)
    schema = Schema(Workspace(root, sorted(LEDGER_WORKSPACE)))
    run: FuzzRun | None = None
    started = time.monotonic()
    with RawServer(workdir, answer=lambda message: run.answer(message) if run else "accept") as server:
        run = FuzzRun(server, seed_value)
        server.initialize([root])
        server.wait_indexed()

        # About 15 messages a batch: enough examples to reach the target; the rest return at once.
        @seed(seed_value)
        @settings(max_examples=messages // 10 + 100, deadline=None, database=None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck))
        @given(batch=batches(schema))
        def one_batch(batch) -> None:
            if run.figures.messages >= messages:
                return
            run.send(batch[: messages - run.figures.messages])
            failures = run.figures.failures()
            assert not failures, failures

        one_batch()
        fuzzed = time.monotonic() - started
        figures = run.figures
        run.settle(root)
        fresh = Index(root, use_cache=False)
        fresh.refresh()
        mismatches = [q for q in QUESTIONS if comparable(server.result("ragLsp/context", {"query": q, "topK": 20})
                                                         ["items"]) != comparable(context_of(
                                                             fresh, ContextRequest(q, top_k=20))["items"])]
        lookup = server.result("ragLsp/lookup", {"symbol": "Ledger.post"})
        status = server.result("ragLsp/status")
        exit_code = server.stop()
    waits = sorted(figures.waits) or [0.0]
    return {
        "seed": seed_value, "messages": figures.messages, "requests": figures.requests,
        "notifications": figures.notifications, "cancels": figures.cancels, "not_json_rpc": figures.raw,
        "results": figures.results, "errors": {str(code): n for code, n in sorted(figures.errors.items())},
        "unanswered": len(figures.unanswered), "internal_errors": len(figures.internal_errors),
        "answered_twice": figures.duplicates, "handler_failures": len(figures.handler_failures),
        "error_popups": len(figures.crash_messages), "methods": dict(sorted(figures.by_method.items())),
        "response_wait_s": {"median": round(statistics.median(waits), 4),
                            "p95": round(waits[int(0.95 * (len(waits) - 1))], 4), "max": round(waits[-1], 4)},
        "fuzz_seconds": round(fuzzed, 1),
        "after": {"answers_equal_fresh_index": not mismatches, "mismatched_questions": mismatches,
                  "lookup_items": len(lookup["items"]), "files": status["files"], "fresh_files": len(fresh.files),
                  "exit_code": exit_code},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=20261201)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rag-lsp-fuzz-") as workdir:
        result = fuzz(args.messages, args.seed, Path(workdir))
    print(json.dumps(result, indent=2))
    after = result["after"]
    ok = (after["answers_equal_fresh_index"] and after["files"] == after["fresh_files"] and after["exit_code"] == 0
          and not any(result[key] for key in ("unanswered", "internal_errors", "answered_twice", "handler_failures",
                                              "error_popups")))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
