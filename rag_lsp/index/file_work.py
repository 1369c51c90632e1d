"""What a refresh does to one changed file, in a parse worker or in the main process: parse it and make its
chunks' BM25 terms."""

from __future__ import annotations

import os
import sys
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import islice
from types import ModuleType
from typing import TYPE_CHECKING, TypeVar

from rag_lsp.index.cache import encode
from rag_lsp.index.parsing.parse import parse_file
from rag_lsp.index.terms import path_tokens, tokenize
from rag_lsp.model import Chunk, ParsedFile

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor


def chunk_terms(chunk: Chunk, path_terms: list[str] | None = None) -> list[str]:
    """The BM25 terms of a chunk: its text's tokens plus its path's (``path_terms``, when the caller has
    tokenized the path already: a file's chunks share it)."""
    return tokenize(chunk.content) + (path_terms if path_terms is not None else path_tokens(chunk.path))


def analyse(path: str, text: str, blob: str) -> tuple[ParsedFile, list[list[str]]]:
    """Parse one file (``blob`` is the blob id of its bytes on disk) and tokenize its chunks: the unit of work
    of a refresh."""
    parsed = parse_file(path, text, blob=blob)
    path_terms = path_tokens(path)
    return parsed, [chunk_terms(chunk, path_terms) for chunk in parsed.chunks]


# Files a parse worker is handed at once, and the bytes of the files handed to the workers and not yet returned:
# enough for a few seconds of both workers' parsing (Django's 33 MB take them some 5 s), so that they keep busy
# while the main process installs what they return or spills it, and a bound on the texts the main process
# holds for them, whatever the workspace (all of them were read at once: nineteen copies of Django, 0.7 GB).
WORKER_CHUNK = 16
WORKERS_AHEAD_BYTES = 32 << 20
_T = TypeVar("_T")


# A file to parse: path, text, blob id of its bytes, size, mtime_ns.
Work = tuple[str, str, str, int, int]


def analyse_in(pool: ProcessPoolExecutor, work: Iterator[Work]) -> Iterator[tuple[str, int, int, str, bytes]]:
    """``analyse_encoded`` of each file of ``work`` in the pool's workers, in order, each as its path, size and
    mtime with the blob id and payload, as soon as it and those before it are done; ``work`` is read only as far
    as ``WORKERS_AHEAD_BYTES`` of files (by their size) past what has been returned."""
    pending: deque[tuple[Future[list[tuple[str, bytes]]], list[tuple[str, int, int]]]] = deque()
    ahead = 0
    while chunk := list(islice(work, WORKER_CHUNK)):
        stamps = [(path, size, mtime) for path, _, _, size, mtime in chunk]
        pending.append((pool.submit(_analyse_each, [item[:3] for item in chunk]), stamps))
        ahead += sum(size for _, size, _ in stamps)
        # Waiting only when the bound is reached, and otherwise not holding what is done.
        while pending and (ahead >= WORKERS_AHEAD_BYTES or pending[0][0].done()):
            future, returned = pending.popleft()
            ahead -= sum(size for _, size, _ in returned)
            yield from _stamped(future, returned)
    while pending:
        yield from _stamped(*pending.popleft())


def _stamped(future: Future[list[tuple[str, bytes]]], stamps: list[tuple[str, int, int]]
             ) -> Iterator[tuple[str, int, int, str, bytes]]:
    """A chunk's results beside its files' path, size and mtime."""
    for (path, size, mtime), (blob, payload) in zip(stamps, future.result(), strict=True):
        yield path, size, mtime, blob, payload


def _analyse_each(chunk: list[tuple[str, str, str]]) -> list[tuple[str, bytes]]:
    """A worker's task: ``analyse_encoded`` of each ``(path, text, blob)`` of a chunk."""
    return [analyse_encoded(*work) for work in chunk]


def analyse_encoded(path: str, text: str, blob: str) -> tuple[str, bytes]:
    """``analyse`` in a worker process: the blob id and the cache's payload of the result.

    The payload (plain lists and strings, ``cache.encode``) is what the main
    process stores in the cache anyway; sent back instead of the objects, it
    is pickled and unpickled as one string, and the main process only decodes
    it (a cold index of Django sent 74 MB of pickled objects).
    """
    parsed, tokens = analyse(path, text, blob)
    return parsed.blob_id, encode(parsed, tokens)


def start_workers() -> ProcessPoolExecutor | None:
    """Parse workers, one per core (up to 8), each started now and importing what it needs; None on one core."""
    workers = min(os.cpu_count() or 1, 8)
    if workers < 2:
        return None
    # Imported here: a warm start parses nothing, and the two modules cost it some 40 ms to import.
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # A fork server, because forking a process that runs threads (the language server's) can copy a held lock
    # into the child.
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("forkserver"))
    # Workers start when work is submitted: one task each, which finds the others busy and starts the next.
    with _main_unnamed():
        for _ in range(workers):
            pool.submit(_ready)
    return pool


@contextmanager
def _main_unnamed() -> Iterator[None]:
    """Start processes meanwhile without this process's main module.

    multiprocessing runs the parent's main script again in every process it starts (and in the fork server),
    so that functions defined there can be found: for ``rag-lsp`` that is the console script, which imports
    the whole command line (0.3 s and some 20 MB in each worker). The workers run only this module's functions,
    so the main module they are told of is an empty one. Only the processes started inside the block see it:
    the pool starts all of its workers there.
    """
    main = sys.modules["__main__"]
    sys.modules["__main__"] = ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = main


def _ready() -> None:
    """Nothing: a parse worker that runs it has started and imported this module and the parser."""


def taken(work: list[_T]) -> Iterator[_T]:
    """The items of ``work`` in order, each dropped from the list as it is taken."""
    work.reverse()
    while work:
        yield work.pop()
