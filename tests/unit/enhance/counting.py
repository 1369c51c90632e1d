"""A test embedder that counts what it embeds, for the tests of incremental embedding and the cache.

Real backends are tested in ``test_embedders.py``; here the question is how often the index asks, so the
vectors only need to be deterministic: a bag of hashed words, as the stand-in server makes them.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
from openai_standin import hashed_vector

from rag_lsp.index.vectors import embedders
from rag_lsp.index.vectors.embedders import DenseConfig, normalised


class CountingEmbedder:
    def __init__(self, gate: threading.Event | None = None, fail: bool = False) -> None:
        self.identity = "counting:1"
        self.texts: list[str] = []
        # While the gate is closed, embedding documents waits (a slow model); queries never wait.
        self.gate = gate
        self.fail = fail

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self.fail:
            raise embedders.EmbeddingError("the test embedder fails")
        if self.gate is not None and not texts[0].startswith("q:"):
            self.gate.wait(30)
        self.texts.extend(texts)
        return normalised([hashed_vector(text) for text in texts])


def install(monkeypatch, embedder: CountingEmbedder) -> DenseConfig:
    """Make ``load`` hand out ``embedder`` for the returned configuration."""
    config = DenseConfig(backend="wordllama", model="counting", query_prefix="q: ", batch=4)
    monkeypatch.setattr(embedders, "_create", lambda _: embedder)
    monkeypatch.setattr(embedders, "_LOADED", {})
    return config
