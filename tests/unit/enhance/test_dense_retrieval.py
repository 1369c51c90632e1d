"""Dense retrieval in answers: lexical (and saying so) until the vectors exist, never blocked by embedding,
hybrid afterwards, both fusion modes, unknown hits, quoted questions, and a failing dense side."""

from __future__ import annotations

import threading
import time

import pytest
from answers import ask
from conftest import write_tree
from counting import CountingEmbedder, install
from openai_standin import StandIn

from rag_lsp.index.root_index import Index
from rag_lsp.index.tables import workspace_tables
from rag_lsp.index.vectors.embedding import VectorIndex
from rag_lsp.retrieval.answer import ContextRequest
from rag_lsp.retrieval.enhance.dense_lists import fused_config, nearest, weighted_list
from rag_lsp.retrieval.enhance.retrieval_config import FusionConfig
from rag_lsp.retrieval.ranking.config import DEFAULT_RANKING
from rag_lsp.workspace import reload
from rag_lsp.workspace.session import Session
from rag_lsp.workspace.settings import Settings, apply_settings

FILES = {
    "net/backoff.py": "def wait_between_attempts(attempt):\n    \"\"\"Sleep longer after each failed attempt.\"\"\"\n"
                      "    return 2 ** attempt\n",
    "net/client.py": "from net.backoff import wait_between_attempts\n\n\ndef fetch(url, attempts=3):\n"
                     "    for attempt in range(attempts):\n        wait_between_attempts(attempt)\n    return url\n",
    "store/lru.py": "class LruCache:\n    \"\"\"Evict the least recently used entry.\"\"\"\n\n    def get(self, key):\n"
                    "        return key\n",
    "docs/guide.md": "# Guide\n\nThe client retries failed requests.\n",
}


def session_with(tmp_path, monkeypatch, embedder, fusion="rrf") -> Session:
    config = install(monkeypatch, embedder)
    settings, _ = apply_settings(Settings(), {"retrieval": {"dense": {"backend": config.backend, "model": config.model,
                                                                      "queryPrefix": "q: ", "batch": 4},
                                                            "fusion": {"mode": fusion}}})
    session = Session(settings, cache_root=tmp_path / "cache")
    session.add_root(write_tree(tmp_path / "ws", FILES))
    session.index_roots()
    return session


def test_a_question_before_the_vectors_is_lexical_says_so_and_does_not_wait(tmp_path, monkeypatch):
    gate = threading.Event()
    session = session_with(tmp_path, monkeypatch, CountingEmbedder(gate=gate))
    try:
        started = time.perf_counter()
        answer = ask(session, ContextRequest("sleep longer after a failed attempt"))
        assert time.perf_counter() - started < 5
        assert answer["items"] and answer["retrieval"]["mode"] == "lexical"
        assert "vectors not ready" in answer["retrieval"]["reason"]
        assert answer["retrieval"]["roots"][0]["vectors"]["state"] in ("loading", "pending", "embedding")
        gate.set()
        assert session.wait_for_vectors(20)
        answer = ask(session, ContextRequest("sleep longer after a failed attempt"))
        assert answer["retrieval"]["mode"] == "hybrid-rrf" and answer["retrieval"]["reason"] is None
        assert any("dense #1: dense cosine" in why for item in answer["items"] for why in item["why"])
        assert answer["retrieval"]["roots"][0]["vectors"]["embedded"] == answer["index"]["chunks"]
    finally:
        gate.set()
        session.close()


def test_a_failing_embedder_degrades_to_lexical_and_says_why(tmp_path, monkeypatch):
    session = session_with(tmp_path, monkeypatch, CountingEmbedder(fail=True))
    try:
        deadline = time.monotonic() + 10
        while session.root_list()[0][1].vectors.status().state != "failed" and time.monotonic() < deadline:  # type: ignore[union-attr]
            time.sleep(0.05)
        answer = ask(session, ContextRequest("wait_between_attempts"))
        assert answer["items"][0]["qualname"] == "wait_between_attempts"
        assert answer["retrieval"]["mode"] == "lexical"
        assert "the embedder failed: the test embedder fails" in answer["retrieval"]["reason"]
    finally:
        session.close()


def test_an_endpoint_that_dies_after_embedding_degrades_the_question_to_lexical(tmp_path, monkeypatch):
    with StandIn() as server:
        settings, _ = apply_settings(Settings(), {"retrieval": {"dense": {"backend": "openai", "url": server.url,
                                                                          "model": "m", "timeoutMs": 500}}})
        session = Session(settings, cache_root=tmp_path / "cache")
        session.add_root(write_tree(tmp_path / "ws", FILES))
        session.index_roots()
        try:
            assert session.wait_for_vectors(20)
            assert ask(session, ContextRequest("failed attempt"))["retrieval"]["mode"] == "hybrid-rrf"
            server.fail_with = 503
            answer = ask(session, ContextRequest("failed attempt"))
            assert answer["items"] and answer["retrieval"]["mode"] == "lexical"
            assert "embedding the question failed: HTTP 503" in answer["retrieval"]["reason"]
        finally:
            session.close()


def test_a_quoted_question_is_an_exact_match_without_vectors(tmp_path, monkeypatch):
    session = session_with(tmp_path, monkeypatch, CountingEmbedder())
    try:
        assert session.wait_for_vectors(20)
        answer = ask(session, ContextRequest('"Evict the least recently used entry"'))
        assert answer["retrieval"]["mode"] == "exact"
        assert answer["items"][0]["path"] == "store/lru.py"
        assert answer["retrieval"]["enhancements"]["expand"]["degraded"].startswith("the question is quoted")
        assert not any("dense" in why for item in answer["items"] for why in item["why"])
    finally:
        session.close()


def test_a_request_above_the_operator_ceiling_is_clamped_and_reported(tmp_path, monkeypatch):
    session = session_with(tmp_path, monkeypatch, CountingEmbedder())
    try:
        from rag_lsp.features.context import answer_context
        from rag_lsp.server import wire

        answer = wire.context_json(answer_context(session, ContextRequest("attempt backoff"),
                                                  knobs={"expand": 10, "hyde": 1, "rerank": False}))
        knobs = answer["retrieval"]["enhancements"]
        assert (knobs["expand"]["value"], knobs["expand"]["requested"], knobs["expand"]["max"]) == (3, 10, 3)
        assert knobs["expand"]["method"] == "prf" and knobs["expand"]["source"] == "request"
        assert knobs["hyde"]["value"] == 0 and "no language model" in knobs["hyde"]["degraded"]
        assert (knobs["rerank"]["value"], knobs["rerank"]["method"]) == (False, "off")
    finally:
        session.close()


@pytest.mark.parametrize("alpha", [0.0, 0.2, 0.5, 0.9])
def test_rrf_gives_the_dense_list_alpha_of_the_fused_weight(alpha):
    weights = dict(fused_config(DEFAULT_RANKING, FusionConfig(alpha=alpha)).list_weights)
    assert weights["dense"] == pytest.approx(alpha * sum(weights.values()))
    lexical = {name: weight for name, weight in weights.items() if name != "dense"}
    assert lexical == pytest.approx({name: (1 - alpha) * weight for name, weight in DEFAULT_RANKING.list_weights})


def vector_index(tmp_path, monkeypatch) -> tuple[Index, VectorIndex]:
    config = install(monkeypatch, CountingEmbedder())
    index = Index(write_tree(tmp_path / "ws", FILES), use_cache=False)
    index.refresh()
    vectors = VectorIndex(index, config)
    vectors.sync()
    return index, vectors


def test_a_dense_hit_unknown_to_the_chunk_table_takes_no_rank(tmp_path, monkeypatch):
    index, vectors = vector_index(tmp_path, monkeypatch)
    query = vectors.embed_queries(["evict least recently used entry"])[0]
    honest = nearest(index, workspace_tables(index), vectors, query, 3, "dense")
    assert vectors.store is not None
    vectors.store.add([999_999], query.reshape(1, -1))  # the nearest of all, for a chunk that is gone
    listed = nearest(index, workspace_tables(index), vectors, query, 3, "dense")
    assert listed == honest and len(listed) == 3


def test_weighted_fusion_scores_and_the_minimum(tmp_path, monkeypatch):
    index, vectors = vector_index(tmp_path, monkeypatch)
    terms = ["attempt"]
    query = vectors.embed_queries(["sleep after a failed attempt"])[0]
    fusion = FusionConfig(mode="weighted", keyword_weight=0.4)
    listed = weighted_list(index, workspace_tables(index), vectors, query, terms, 10, fusion)
    keyword = dict(index.bm25.top_k(terms, 10))
    best = max(keyword.values())
    cosines = vectors.similarity([item.chunk_id for item in listed], query)
    expected = {item.chunk_id: 0.6 * max(cosines[item.chunk_id], 0) + 0.4 * keyword.get(item.chunk_id, 0) / best
                for item in listed}
    assert [item.chunk_id for item in listed] == sorted(expected, key=lambda c: (-expected[c], c))
    assert listed[0].reason == f"hybrid {expected[listed[0].chunk_id]:.2f} (cosine and BM25)"
    cut = min(expected.values()) + 0.01
    strict = weighted_list(index, workspace_tables(index), vectors, query, terms, 10,
                           FusionConfig(mode="weighted", min_score=cut))
    assert [item.chunk_id for item in strict] == [c for c in (item.chunk_id for item in listed) if expected[c] >= cut]
    weights = dict(fused_config(DEFAULT_RANKING, fusion).list_weights)
    assert weights["bm25_chunks"] == 0 and weights["hybrid"] == 1.0


def test_the_weighted_mode_answers_through_the_session(tmp_path, monkeypatch):
    session = session_with(tmp_path, monkeypatch, CountingEmbedder(), fusion="weighted")
    try:
        assert session.wait_for_vectors(20)
        answer = ask(session, ContextRequest("least recently used eviction"))
        assert answer["retrieval"]["mode"] == "hybrid-weighted"
        assert answer["items"][0]["path"] == "store/lru.py"
        assert any(why.startswith("hybrid #") for why in answer["items"][0]["why"])
    finally:
        session.close()


def test_questions_are_embedded_with_the_query_prefix_and_chunks_without(tmp_path, monkeypatch):
    embedder = CountingEmbedder()
    session = session_with(tmp_path, monkeypatch, embedder)
    try:
        assert session.wait_for_vectors(20)
        ask(session, ContextRequest("sleep longer after a failed attempt"))
        assert "q: sleep longer after a failed attempt" in embedder.texts
        assert not any(text.startswith("q: ") for text in embedder.texts[:5])
    finally:
        session.close()


def test_a_root_with_vectors_keeps_the_index_they_embed(tmp_path, monkeypatch):
    # ``Session.settle`` replaces an index built by parsing with its snapshot; the vectors embed this object's
    # chunks, so a root with vectors keeps it (the fixture's few files count as built).
    monkeypatch.setattr(reload, "RELOAD_MIN_PARSED", 1)
    session = session_with(tmp_path, monkeypatch, CountingEmbedder())
    try:
        index = session.root_list()[0][1].index
        assert index.stats.parsed
        session.settle()
        assert session.root_list()[0][1].index is index
        assert session.wait_for_vectors(20)
    finally:
        session.close()
