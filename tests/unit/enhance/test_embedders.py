"""The embedders for real: wordllama's bundled weights, a model2vec model built in the test with model2vec's
own API, and the OpenAI-compatible endpoint against a stand-in server (no model server runs here)."""

from __future__ import annotations

import numpy as np
import pytest
from openai_standin import DIM, StandIn

from rag_lsp.index.vectors import embedders
from rag_lsp.index.vectors.embedders import (
    DenseConfig,
    EmbeddingError,
    Model2VecEmbedder,
    OpenAIEmbedder,
    WordLlamaEmbedder,
    load,
)


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


def test_wordllama_embeds_with_its_bundled_weights_and_no_download(monkeypatch):
    # Any attempt to reach the network fails the test.
    monkeypatch.setattr("socket.socket.connect", lambda *a: pytest.fail("wordllama tried the network"))
    embedder = WordLlamaEmbedder()
    vectors = embedder.embed(["parse the configuration file", "read settings from a config file",
                              "the cat sat on the mat"])
    assert vectors.shape == (3, 256) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert cosine(vectors[0], vectors[1]) > cosine(vectors[0], vectors[2])
    assert embedder.identity == "wordllama:l2_supercat:256"


def tiny_model2vec(directory, words: list[str]) -> None:
    """A model2vec model of a handful of words: a word-level tokenizer and random vectors, saved with
    ``StaticModel.save_pretrained`` (model2vec's distillation needs a model from a hub, which is out)."""
    from model2vec import StaticModel
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace

    vocabulary = {"[UNK]": 0, "[PAD]": 1, **{word: n + 2 for n, word in enumerate(words)}}
    tokenizer = Tokenizer(WordLevel(vocabulary, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = Whitespace()  # type: ignore[assignment]
    vectors = np.random.default_rng(7).normal(size=(len(vocabulary), 16)).astype(np.float32)
    StaticModel(vectors, tokenizer, normalize=True).save_pretrained(directory)


def test_model2vec_loads_a_local_model_directory(tmp_path):
    words = ["parse", "config", "file", "network", "socket", "retry"]
    tiny_model2vec(tmp_path / "tiny", words)
    embedder = Model2VecEmbedder(str(tmp_path / "tiny"))
    vectors = embedder.embed(["parse config file", "parse config", "network socket retry"])
    assert vectors.shape == (3, 16)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert cosine(vectors[0], vectors[1]) > cosine(vectors[0], vectors[2])
    assert embedder.identity == f"model2vec:{(tmp_path / 'tiny').resolve()}"


def test_model2vec_refuses_a_name_that_is_not_a_directory(monkeypatch):
    # model2vec would treat it as a hub name and download it.
    monkeypatch.setattr("socket.socket.connect", lambda *a: pytest.fail("model2vec tried the network"))
    with pytest.raises(EmbeddingError, match="does not exist .*never downloads"):
        Model2VecEmbedder("minishlab/potion-code-16M")


def test_openai_embeddings_against_a_stand_in_server():
    with StandIn() as server:
        embedder = OpenAIEmbedder(server.url, "nomic-embed-code", timeout_ms=5000)
        vectors = embedder.embed(["retry the socket", "retry the socket later", "parse yaml"])
        path, body = server.requests[-1]
    assert path == "/v1/embeddings" and body == {"model": "nomic-embed-code",
                                                  "input": ["retry the socket", "retry the socket later", "parse yaml"]}
    # The stand-in answers in reverse order: each vector is placed by its index.
    assert vectors.shape == (3, DIM)
    assert cosine(vectors[0], vectors[1]) > 0.8 > cosine(vectors[0], vectors[2])


def test_prefixes_go_to_queries_and_documents_and_key_the_cache():
    with StandIn() as server:
        config = DenseConfig(backend="openai", url=server.url, model="m", query_prefix="search_query: ",
                             document_prefix="search_document: ")
        embedder = load(config)
        embedder.queries(["where is retry"])
        embedder.documents(["def retry(): ..."])
        sent = [body["input"] for _, body in server.requests]
    assert sent == [["search_query: where is retry"], ["search_document: def retry(): ..."]]
    assert embedder.identity == "openai:m|search_document: "


def test_endpoint_failures_are_embedding_errors_with_a_short_message():
    with StandIn() as server:
        server.fail_with = 500
        with pytest.raises(EmbeddingError, match="HTTP 500") as failed:
            OpenAIEmbedder(server.url, "m", timeout_ms=5000).embed(["x"])
        assert len(str(failed.value)) < 300
        server.fail_with, server.delay = None, 0.5
        with pytest.raises(EmbeddingError, match="timeout"):
            OpenAIEmbedder(server.url, "m", timeout_ms=100).embed(["x"])
    with pytest.raises(EmbeddingError, match="cannot reach"):
        OpenAIEmbedder(server.url, "m", timeout_ms=500).embed(["x"])


def test_a_missing_backend_setting_is_an_error_not_a_guess():
    embedders._LOADED.clear()
    with pytest.raises(EmbeddingError, match="needs retrieval.dense.model"):
        load(DenseConfig(backend="model2vec"))
    with pytest.raises(EmbeddingError, match="needs retrieval.dense.url"):
        load(DenseConfig(backend="openai", model="m"))
