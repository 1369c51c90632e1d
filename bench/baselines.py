"""Same-run BM25 baselines: rank_bm25's BM25Okapi over whole files or over fixed line windows.

The development sets' READMEs give reference points measured elsewhere;
numbers compare only on one machine in one run, so every benchmark computes
its baselines beside rag_lsp's answer. Documents are the files rag_lsp
indexed (so both see the same files), tokenized with the project's tokenizer
(identifiers split on camelCase and snake_case, kept whole too), content plus
path terms; the question is tokenized the same way.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from common import Place
from rank_bm25 import BM25Okapi

from rag_lsp.index.root_index import Index
from rag_lsp.index.terms import path_tokens, tokenize
from rag_lsp.languages import language_for_path, parsed_languages

WINDOW_LINES = 40


@dataclass(frozen=True, slots=True)
class Document:
    place: Place
    tokens: list[str]


class TokenCache:
    """Whole files as documents, remembered by (path, blob id): cases on nearby commits of one repository
    share most of their files, so most are tokenized once."""

    def __init__(self) -> None:
        self._documents: dict[tuple[str, str], Document] = {}

    def file_documents(self, index: Index) -> list[Document]:
        documents = []
        for path in sorted(index.files):
            key = (path, index.files[path].blob_id)
            if key not in self._documents:
                text = _read(index.root / path)
                place = Place(path, 1, text.count("\n") + 1)
                self._documents[key] = Document(place, tokenize(text) + path_tokens(path))
            documents.append(self._documents[key])
        return documents


def window_documents(index: Index, lines_per_window: int = WINDOW_LINES) -> list[Document]:
    """Consecutive, non-overlapping windows of ``lines_per_window`` lines of every indexed file."""
    documents = []
    for path in sorted(index.files):
        lines = _read(index.root / path).splitlines()
        extra = path_tokens(path)
        for start in range(0, max(len(lines), 1), lines_per_window):
            window = lines[start:start + lines_per_window]
            place = Place(path, start + 1, start + max(len(window), 1))
            documents.append(Document(place, tokenize("\n".join(window)) + extra))
    return documents


def source_only(documents: list[Document]) -> list[Document]:
    """The documents of files in a language rag_lsp parses: the development sets' README ranks "all source
    extensions of these languages", while the indexed files also hold prose, settings and data."""
    source = set(parsed_languages())
    return [document for document in documents if language_for_path(document.place.path) in source]


class BM25Baseline:
    """BM25Okapi over documents; building it is not timed, asking is."""

    def __init__(self, documents: list[Document]) -> None:
        self.places = [document.place for document in documents]
        self.bm25 = BM25Okapi([document.tokens for document in documents]) if documents else None

    def rank(self, question: str, limit: int) -> tuple[list[Place], float]:
        """The best ``limit`` places (ties broken by path and line) and the milliseconds asking took."""
        started = time.perf_counter()
        if self.bm25 is None:
            return [], 0.0
        scores = self.bm25.get_scores(tokenize(question))
        order = sorted(range(len(self.places)),
                       key=lambda i: (-scores[i], self.places[i].path, self.places[i].start_line))
        return [self.places[i] for i in order[:limit]], (time.perf_counter() - started) * 1000


def _read(path: Path) -> str:
    return path.read_text("utf-8", "replace")
