"""A short soak (bench/soak_server.py runs the long one): random edits across open documents with questions
asked while they arrive; afterwards the answers equal a fresh index of the final texts, and memory did not
grow with the edits."""

from __future__ import annotations

from answers import context_of
from raw_client import RawServer
from soak_driver import QUESTIONS, comparable, fresh_index, soak

from rag_lsp.retrieval.answer import ContextRequest


def test_edits_across_open_documents_with_questions_meanwhile_equal_a_fresh_index(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    with RawServer(tmp_path) as server:
        server.initialize([root])
        figures, texts = soak(server, root, edits=1200, documents=12, seed=20261202, every=20)
        assert figures.unanswered == [] and figures.other_errors == []
        assert figures.questions == 2 * 60 and figures.answered >= figures.questions // 2
        served = [comparable(server.result("ragLsp/context", {"query": q, "topK": 10})["items"]) for q in QUESTIONS]
        assert server.stop() == 0
    fresh = fresh_index(tmp_path / "fresh", texts)
    expected = [comparable(context_of(fresh, ContextRequest(q, top_k=10))["items"]) for q in QUESTIONS]
    assert served == expected
    assert any(served)
    # Memory: the second half of the edits did not raise the resident size by more than a little.
    middle = [rss for _, edits, rss in figures.memory if edits <= figures.edits // 2]
    assert figures.memory[-1][2] <= max(middle) * 1.25 + 32, figures.memory
