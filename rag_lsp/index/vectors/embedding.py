"""Background embedding of one root's chunks: ``VectorIndex``, the dense side of a root.

A worker thread keeps the vectors in step with the index: it notices a change
of ``Index.version`` (a file added, changed or removed), takes the list of
chunks under the index's lock, drops the vectors of chunks that are gone, takes
what the cache on disk has, and embeds the rest in batches, outside the lock.
The index reuses a chunk's id while its text is unchanged, so an edit embeds
only the chunks whose text changed. Questions never wait for it: until most
chunks have a vector (``READY_SHARE``) a question is answered lexically and
says so, and a failing embedder (an endpoint down) costs only the dense side,
with the error in the status and in each answer. The model itself loads on the
worker thread too.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rag_lsp.index.parsing.parse import blob_id
from rag_lsp.index.root_index import Index
from rag_lsp.index.vectors.embedders import DenseConfig, EmbeddingError, Prefixed, load
from rag_lsp.index.vectors.vector_cache import FILE_NAME, VectorCache
from rag_lsp.index.vectors.vector_store import VectorStore
from rag_lsp.model import Chunk

log = logging.getLogger(__name__)

# A question uses the vectors once this share of the indexed chunks has one (an edit's few new chunks do not
# switch a question back to lexical while they are embedded).
READY_SHARE = 0.95
# How often the worker looks at the index's version, and how long it waits after a failure.
POLL_SECONDS = 0.5
RETRY_SECONDS = 30.0
# Characters of a chunk's text embedded (chunks are at most 2,400 characters of code; a description adds a line).
MAX_TEXT_CHARS = 4000
_WORD_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|[_.:#/\\-]+")


@dataclass(frozen=True, slots=True)
class VectorStatus:
    """What the dense side of a root has: shown by ``ragLsp/status`` and in every answer that used it."""

    backend: str
    # ``loading`` (the model), ``pending`` (the index changed, the worker has not looked yet), ``embedding``,
    # ``ready``, ``failed`` or ``stopped``.
    state: str
    embedded: int
    chunks: int
    search: str
    error: str | None = None
    chunks_per_second: float | None = None
    memory_bytes: int = 0

    @property
    def ready(self) -> bool:
        return self.chunks == 0 or self.embedded >= READY_SHARE * self.chunks


def chunk_text(chunk: Chunk, describe: bool) -> str:
    """What is embedded for a chunk: optionally a line describing it (its kind, its qualified name also spelled as
    words, its path: what a question in prose may say), then its code with each run of white space as one space
    (indentation carries no meaning for a pooled embedding, and tokenizing it tripled wordllama's time)."""
    head = ""
    if describe:
        name = chunk.qualname or chunk.symbol or ""
        words = " ".join(part.lower() for part in _WORD_BOUNDARY.split(name) if part)
        path_words = " ".join(part.lower() for part in _WORD_BOUNDARY.split(chunk.path.rsplit(".", 1)[0]) if part)
        head = f"{chunk.language} {chunk.kind} {name} ({words}) in {chunk.path} ({path_words})\n"
    return (head + " ".join(chunk.content.split()))[:MAX_TEXT_CHARS]


class VectorIndex:
    """The vectors of one root's chunks, kept in step with its ``Index`` by a background worker."""

    def __init__(self, index: Index, config: DenseConfig, cache_dir: Path | None = None) -> None:
        self.index = index
        self.config = config
        self.store: VectorStore | None = None
        self.cache = VectorCache(cache_dir / FILE_NAME) if cache_dir is not None else None
        self._embedder: Prefixed | None = None
        self._state = "loading"
        self._error: str | None = None
        self._embedded = 0
        self._chunks = 0
        self._synced_version: tuple[int, int] | None = None
        self._rate: float | None = None
        self._pruned = False
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._sync_lock = threading.Lock()

    @classmethod
    def for_index(cls, index: Index, config: DenseConfig) -> VectorIndex:
        """A vector index whose cache lives beside the index's own (none when the index has no cache)."""
        return cls(index, config, index.cache.path.parent if index.cache is not None else None)

    # The worker.

    def start(self) -> None:
        """Embed in the background from now on (idempotent)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name=f"rag-lsp-embed-{self.index.root.name}",
                                             daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        self._state = "stopped"
        if self.cache is not None:
            self.cache.close()

    def wake(self) -> None:
        """Look at the index now rather than at the next poll."""
        self._wake.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            if self._synced_version != self.index.version:
                try:
                    self.sync()
                except EmbeddingError as exc:
                    log.warning("embedding failed for %s: %s", self.index.root, exc)
                    self._fail(str(exc))
                    self._wake.wait(RETRY_SECONDS)
                except Exception as exc:
                    log.exception("embedding failed for %s", self.index.root)
                    self._fail(f"failed: {exc!r}")
                    self._wake.wait(RETRY_SECONDS)
            self._wake.wait(POLL_SECONDS)
            self._wake.clear()

    def _fail(self, message: str) -> None:
        self._state, self._error = "failed", message

    # Embedding.

    def embedder(self) -> Prefixed:
        """The loaded embedder (loading it if needed); raises EmbeddingError."""
        if self._embedder is None:
            try:
                self._embedder = load(self.config)
            except EmbeddingError as exc:
                self._fail(str(exc))
                raise
        return self._embedder

    def sync(self, seconds: float | None = None) -> int:
        """Bring the vectors in line with the index now; returns how many chunks were embedded (not counting
        those the cache had). Stops early after ``seconds`` or when the index is closed; raises EmbeddingError."""
        with self._sync_lock:
            deadline = None if seconds is None else time.monotonic() + seconds
            embedder = self.embedder()
            with self.index.lock:
                version = self.index.version
                chunks = list(self.index.chunks.items())
            live = {chunk_id for chunk_id, _ in chunks}
            if self.store is not None:
                self.store.remove(self.store.ids() - live)
            have = self.store.ids() if self.store is not None else set()
            todo = [(chunk_id, chunk_text(chunk, self.config.describe)) for chunk_id, chunk in chunks
                    if chunk_id not in have]
            self._chunks, self._embedded = len(chunks), len(live & have)
            self._state, self._error = ("embedding" if todo else "ready"), None
            keys = [blob_id(text.encode("utf-8", "surrogatepass")) for _, text in todo]
            todo_keys = self._from_cache(embedder, todo, keys)
            embedded = self._embed(embedder, todo_keys, deadline)
            if self._embedded >= len(chunks):
                self._state, self._synced_version = "ready", version
                if not self._pruned and self.cache is not None:
                    self._prune(embedder, chunks)
            return embedded

    def _from_cache(self, embedder: Prefixed, todo: list[tuple[int, str]], keys: list[str]
                    ) -> list[tuple[int, str, str]]:
        """Add what the cache on disk has; return the (chunk id, text, key) left to embed."""
        cached = self.cache.get_many(embedder.identity, keys, self.store.dim if self.store else None) \
            if self.cache is not None else {}
        if cached:
            hits = [(chunk_id, key) for (chunk_id, _), key in zip(todo, keys) if key in cached]
            self._add([chunk_id for chunk_id, _ in hits], np.stack([cached[key] for _, key in hits]))
        return [(chunk_id, text, key) for (chunk_id, text), key in zip(todo, keys) if key not in cached]

    def _embed(self, embedder: Prefixed, todo: list[tuple[int, str, str]], deadline: float | None) -> int:
        done = 0
        started = time.perf_counter()
        for start in range(0, len(todo), self.config.batch):
            if self._stop.is_set() or (deadline is not None and time.monotonic() > deadline):
                break
            batch = todo[start:start + self.config.batch]
            vectors = embedder.documents([text for _, text, _ in batch])
            if len(vectors) != len(batch):
                raise EmbeddingError(f"the embedder returned {len(vectors)} vectors for {len(batch)} texts")
            self._add([chunk_id for chunk_id, _, _ in batch], vectors)
            if self.cache is not None:
                self.cache.put_many(embedder.identity, [key for _, _, key in batch], vectors)
            done += len(batch)
            self._rate = done / max(time.perf_counter() - started, 1e-9)
        return done

    def _add(self, chunk_ids: list[int], vectors: np.ndarray) -> None:
        if self.store is None:
            self.store = VectorStore(vectors.shape[1], self.config.ann_threshold)
        self.store.add(chunk_ids, vectors)
        self._embedded += len(chunk_ids)

    def _prune(self, embedder: Prefixed, chunks: list[tuple[int, Chunk]]) -> None:
        """Once per run, after the first complete sync: forget this model's vectors of texts no longer indexed."""
        self._pruned = True
        assert self.cache is not None
        live = {blob_id(chunk_text(chunk, self.config.describe).encode("utf-8", "surrogatepass"))
                for _, chunk in chunks}
        self.cache.retain(embedder.identity, live)

    # Questions.

    def status(self) -> VectorStatus:
        with self.index.lock:
            chunks = len(self.index.chunks)
            version = self.index.version
        store = self.store
        state = self._state
        if state == "ready" and version != self._synced_version:
            # The index changed since the last sync: the worker has not looked yet.
            state = "pending"
        return VectorStatus(
            backend=self._embedder.identity if self._embedder is not None else self.config.backend,
            state=state,
            embedded=min(self._embedded, chunks),
            chunks=chunks,
            search=(store.search_kind if store is not None else "exact") + (
                " (no usearch or hnswlib installed)" if store is not None and store.ann_missing else ""),
            error=self._error,
            chunks_per_second=round(self._rate, 1) if self._rate is not None else None,
            memory_bytes=store.memory_bytes() if store is not None else 0,
        )

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Query vectors (with the query prefix); raises EmbeddingError, or when the model is not loaded yet."""
        if self._embedder is None:
            raise EmbeddingError(f"the embedding model is {self._state}" + (f": {self._error}" if self._error else ""))
        return self._embedder.queries(texts)

    def search(self, query: np.ndarray, count: int) -> list[tuple[int, float]]:
        return self.store.search(query, count) if self.store is not None else []

    def similarity(self, chunk_ids: Sequence[int], query: np.ndarray) -> dict[int, float]:
        return self.store.similarity(chunk_ids, query) if self.store is not None else {}
