"""Embedders: text → unit vectors, from a static model on disk or an OpenAI-compatible endpoint.

Three backends, chosen in configuration (``retrieval.dense.backend``), none of
which downloads anything:

- ``wordllama``: the 256-dimension static embeddings inside the ``wordllama``
  wheel (``pip install rag-lsp[dense]``), loaded from the package's own
  directory with downloads disabled. A general-purpose model: it knows English,
  not code (docs/benchmarks.md measures what that costs).
- ``model2vec``: a model2vec ``StaticModel`` in a local directory the user
  downloaded once (a potion-code model, say). The directory must exist: given a
  name that is not a directory, model2vec would fetch it from a hub, so it is
  refused before model2vec sees it.
- ``openai``: any OpenAI-compatible ``/v1/embeddings`` endpoint (Ollama,
  llama.cpp's server, vLLM, text-embeddings-inference) at the configured URL.

Every backend returns float32 rows of unit length, so a dot product is the
cosine. Query and document prefixes (``search_query: `` for nomic models) are
prepended here, for every backend alike.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from rag_lsp.index.vectors.http_json import ProviderError, post_json

BACKENDS = ("none", "wordllama", "model2vec", "openai")
WORDLLAMA_DIM = 256
WORDLLAMA_BATCH = 32


class EmbeddingError(RuntimeError):
    """An embedder cannot be loaded or failed on a batch; the message says why."""


@dataclass(frozen=True, slots=True)
class DenseConfig:
    """Which embedder runs and how chunks are embedded and searched (``[retrieval.dense]``)."""

    backend: str = "none"
    # model2vec: the model's directory; openai: the model's name at the endpoint.
    model: str | None = None
    # openai: the base URL, e.g. http://127.0.0.1:11434/v1 (``/embeddings`` is appended).
    url: str | None = None
    # openai: the environment variable holding an API key, if the endpoint wants one.
    api_key_env: str | None = None
    timeout_ms: int = 10_000
    query_prefix: str = ""
    document_prefix: str = ""
    # Embed a one-line description (kind, qualified name spelled as words, path) above each chunk's code.
    describe: bool = True
    # Texts per embedding call.
    batch: int = 64
    # Above this many vectors, search through an approximate index (usearch, else hnswlib) instead of numpy.
    ann_threshold: int = 200_000

    @property
    def enabled(self) -> bool:
        return self.backend != "none"


class Embedder(Protocol):
    """Turns texts into unit-length float32 rows; ``identity`` keys the cached vectors."""

    identity: str

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def normalised(vectors: Any) -> np.ndarray:
    """Rows scaled to unit length (a zero row stays zero), as float32."""
    array = np.asarray(vectors, dtype=np.float32)
    if array.ndim != 2:
        raise EmbeddingError(f"an embedder returned an array of shape {array.shape}, not rows")
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    return np.divide(array, norms, out=np.zeros_like(array), where=norms > 0)


class WordLlamaEmbedder:
    """wordllama's bundled weights; never downloads (``disable_download``, the package directory as cache)."""

    def __init__(self) -> None:
        try:
            wordllama = import_module("wordllama")
        except ImportError as exc:
            raise EmbeddingError("the wordllama backend needs the 'dense' extra: pip install 'rag-lsp[dense]'") \
                from exc
        package = Path(str(wordllama.__file__)).parent
        try:
            self._model = wordllama.WordLlama.load(dim=WORDLLAMA_DIM, cache_dir=package, disable_download=True)
        except Exception as exc:
            raise EmbeddingError(f"cannot load wordllama's bundled weights: {exc}") from exc
        self.identity = f"wordllama:l2_supercat:{WORDLLAMA_DIM}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        # Small batches: wordllama pads a batch to its longest text.
        return normalised(self._model.embed(list(texts), norm=False, return_np=True, batch_size=WORDLLAMA_BATCH))


class Model2VecEmbedder:
    """A model2vec ``StaticModel`` from a local directory."""

    def __init__(self, directory: str) -> None:
        path = Path(directory).expanduser()
        if not path.is_dir():
            # model2vec treats a path that does not exist as a hub name and downloads it.
            raise EmbeddingError(f"the model2vec model directory {str(path)!r} does not exist (rag_lsp never "
                                 f"downloads a model: download it once and point retrieval.dense.model at it)")
        try:
            model2vec = import_module("model2vec")
        except ImportError as exc:
            raise EmbeddingError("the model2vec backend needs the 'dense' extra: pip install 'rag-lsp[dense]'") \
                from exc
        try:
            self._model = model2vec.StaticModel.from_pretrained(path.resolve(), force_download=False)
        except Exception as exc:
            raise EmbeddingError(f"cannot load the model2vec model in {path}: {exc}") from exc
        self.identity = f"model2vec:{path.resolve()}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        # No process pool: embedding runs on a background thread of a server that has other threads.
        return normalised(self._model.encode(list(texts), use_multiprocessing=False, show_progress_bar=False))


class OpenAIEmbedder:
    """An OpenAI-compatible ``/embeddings`` endpoint."""

    def __init__(self, url: str, model: str, timeout_ms: int, api_key_env: str | None = None) -> None:
        self.url = url.rstrip("/") + "/embeddings"
        self.model = model
        self.timeout_s = timeout_ms / 1000
        self.api_key_env = api_key_env
        # The model name identifies the weights; the URL is only where they run.
        self.identity = f"openai:{model}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        try:
            answer = post_json(self.url, {"model": self.model, "input": list(texts)}, self.timeout_s,
                               self.api_key_env)
        except ProviderError as exc:
            raise EmbeddingError(str(exc)) from None
        data = answer.get("data")
        if not isinstance(data, list) or len(data) != len(texts):
            raise EmbeddingError(f"{self.url} answered {len(data) if isinstance(data, list) else 'no'} embeddings "
                                 f"for {len(texts)} texts")
        rows: list[Any] = [None] * len(texts)
        for position, item in enumerate(data):
            index = item.get("index", position) if isinstance(item, dict) else None
            vector = item.get("embedding") if isinstance(item, dict) else None
            if not isinstance(index, int) or not 0 <= index < len(texts) or not isinstance(vector, list):
                raise EmbeddingError(f"{self.url} answered a malformed embedding at position {position}")
            rows[index] = vector
        if any(row is None for row in rows) or len({len(row) for row in rows}) > 1:
            raise EmbeddingError(f"{self.url} answered embeddings of different lengths or with gaps")
        try:
            return normalised(rows)
        except (TypeError, ValueError) as exc:
            raise EmbeddingError(f"{self.url} answered non-numeric embeddings: {exc}") from None


class Prefixed:
    """An embedder with the configured query and document prefixes."""

    def __init__(self, embedder: Embedder, config: DenseConfig) -> None:
        self.embedder = embedder
        self.config = config
        # The document prefix changes every document vector, so it is part of the key of the cached ones.
        self.identity = embedder.identity + (f"|{config.document_prefix}" if config.document_prefix else "")

    def documents(self, texts: Sequence[str]) -> np.ndarray:
        return self.embedder.embed([self.config.document_prefix + text for text in texts])

    def queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.embedder.embed([self.config.query_prefix + text for text in texts])


_LOADED: dict[tuple, Embedder] = {}
_LOADING = threading.Lock()


def load(config: DenseConfig) -> Prefixed:
    """The configured embedder, loaded once per process and shared by every root that uses it; raises
    EmbeddingError when it cannot be loaded."""
    key = (config.backend, config.model, config.url, config.api_key_env, config.timeout_ms)
    with _LOADING:
        embedder = _LOADED.get(key)
        if embedder is None:
            embedder = _LOADED[key] = _create(config)
    return Prefixed(embedder, config)


def _create(config: DenseConfig) -> Embedder:
    if config.backend == "wordllama":
        return WordLlamaEmbedder()
    if config.backend == "model2vec":
        if not config.model:
            raise EmbeddingError("the model2vec backend needs retrieval.dense.model: the model's directory")
        return Model2VecEmbedder(config.model)
    if config.backend == "openai":
        if not config.url or not config.model:
            raise EmbeddingError("the openai backend needs retrieval.dense.url and retrieval.dense.model")
        return OpenAIEmbedder(config.url, config.model, config.timeout_ms, config.api_key_env)
    raise EmbeddingError(f"no embedder: retrieval.dense.backend is {config.backend!r}")
