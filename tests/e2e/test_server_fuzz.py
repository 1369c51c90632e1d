"""A short seeded fuzz of the server (bench/fuzz_server.py runs the long one): every request answered, no
handler failing, and afterwards the same answers as a fresh index of the same files."""

from __future__ import annotations

from answers import context_of
from conftest import LEDGER_WORKSPACE, write_tree
from fuzz_messages import FuzzRun, Schema, Workspace, batches
from hypothesis import HealthCheck, Phase, given, seed, settings
from raw_client import RawServer

from rag_lsp.index.root_index import Index
from rag_lsp.retrieval.answer import ContextRequest

SEED = 20261201
BATCHES = 80
QUESTIONS = ("why does Ledger.post raise KeyError", "convert rate currency", "rate limit", "checkout price")


def comparable(items: list[dict]) -> list[tuple]:
    return [(i["path"], i["start_line"], i["end_line"], i["content"], round(i["score"], 9)) for i in items]


def test_fuzzed_messages_get_answers_and_leave_the_server_answering_correctly(tmp_path):
    root = write_tree(tmp_path / "ws", LEDGER_WORKSPACE)
    workspace = Workspace(root, sorted(LEDGER_WORKSPACE))
    schema = Schema(workspace)
    run: FuzzRun | None = None
    with RawServer(tmp_path, answer=lambda message: run.answer(message) if run else "accept") as server:
        run = FuzzRun(server, SEED)
        server.initialize([root])
        server.wait_indexed()

        @seed(SEED)
        @settings(max_examples=BATCHES, deadline=None, database=None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck))
        @given(batch=batches(schema))
        def fuzz(batch) -> None:
            run.send(batch)

        fuzz()
        figures = run.figures
        assert figures.failures() == []
        assert figures.requests > 100 and figures.notifications > 100 and figures.cancels and figures.raw
        run.settle(root)
        fresh = Index(root, use_cache=False)
        fresh.refresh()
        for question in QUESTIONS:
            served = server.result("ragLsp/context", {"query": question, "topK": 20})
            expected = context_of(fresh, ContextRequest(question, top_k=20))
            assert comparable(served["items"]) == comparable(expected["items"]), question
        assert server.result("ragLsp/status")["files"] == len(fresh.files)
        assert server.stop() == 0
