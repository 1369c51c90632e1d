"""The completion engine's caches, each keyed by what its value was read from, so none is ever stale.

Completion is asked on every pause in typing, within ~50 ms, mostly for the
same file and the same imports as the last time. So what the engine reads is
kept, keyed by its source's version: the cursor file's analysis by document
version and text (and patched from the file's previous analysis when only a
few lines changed), an indexed file's text and a definition's excerpt by the
file's blob id, an import's resolution by the blob ids of every file the
resolver read, and a file's windows of similar code by buffer version or blob
id. A changed source means a new key; old entries age out of bounded
least-recently-stored tables.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

from rag_lsp import languages
from rag_lsp.completion import similar, weights
from rag_lsp.completion.cursor import FileAnalysis, analyse, split_lines
from rag_lsp.index.bindings import Binding, Resolver, Target
from rag_lsp.index.outline import Excerpt, FileText, body, head
from rag_lsp.index.root_index import Index
from rag_lsp.model import CLASS_LIKE_KINDS, Definition
from rag_lsp.workspace.session import Session


def trim(table: OrderedDict, size: int) -> None:
    """Drop the oldest entries of ``table`` beyond ``size``."""
    while len(table) > size:
        table.popitem(last=False)


class Caches:
    """Per-version caches over a ``Session``'s roots and open documents. Thread-safe."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._lock = threading.Lock()
        self._analyses: OrderedDict[tuple, FileAnalysis] = OrderedDict()
        # The newest analysis of each file, patched into the next one.
        self._latest: OrderedDict[tuple, FileAnalysis] = OrderedDict()
        self._texts: OrderedDict[tuple, FileText] = OrderedDict()
        self._resolved: OrderedDict[tuple, tuple] = OrderedDict()
        self._excerpts: OrderedDict[tuple, Excerpt] = OrderedDict()
        self._windows: OrderedDict[tuple, list[similar.Window]] = OrderedDict()

    def analysis(self, index: Index, rel: str, version: int | None, text: str, lines: list[str],
                 language: str) -> FileAnalysis:
        """The cursor file's analysis (call under ``index.lock``)."""
        entry = index.files.get(rel)
        key = (str(index.root), rel, version, entry.blob_id if entry else None, hash(text))
        with self._lock:
            found = self._analyses.get(key)
        if found is None:
            with self._lock:
                previous = self._latest.get((str(index.root), rel))
            found = analyse(index, rel, lines, language, previous)
            with self._lock:
                self._analyses[key] = found
                trim(self._analyses, 16)
                self._latest[(str(index.root), rel)] = found
                trim(self._latest, 64)
        return found

    def file_text(self, index: Index, path: str) -> FileText:
        """An indexed file's text, from its chunks."""
        entry = index.files.get(path)
        key = (str(index.root), path, entry.blob_id if entry else None)
        with self._lock:
            found = self._texts.get(key)
            if found is not None:
                self._texts.move_to_end(key)
                return found
        found = FileText.from_chunks([chunk for _, chunk in index.chunks_of(path)])
        with self._lock:
            self._texts[key] = found
            trim(self._texts, 128)
        return found

    def resolve(self, index: Index, resolver: Resolver, binding: Binding, from_path: str) -> Target:
        """``resolver.binding``, remembered while the files it read are unchanged and no file came or went.

        A name that resolved to nothing (a module outside the workspace) is
        also looked up again once the importing file changes, so a file that
        appears under a rename is found as soon as the user types.
        """
        key = (str(index.root), from_path, binding)
        with self._lock:
            known = self._resolved.get(key)
        if known is not None:
            target, files, stamps = known
            if files == len(index.files) and all(
                    (entry.blob_id if (entry := index.files.get(path)) else None) == blob
                    for path, blob in stamps):
                resolver.consulted.update(path for path, _ in stamps)
                return target
        before = set(resolver.consulted)
        resolver.consulted.clear()
        target = resolver.binding(binding, from_path)
        consulted = resolver.consulted
        resolver.consulted = before | consulted
        # A name that resolves to nothing is looked up again after any change to the importing file.
        stamped = consulted if target else consulted | {from_path}
        stamps = tuple((path, entry.blob_id if (entry := index.files.get(path)) else None)
                       for path in sorted(stamped))
        with self._lock:
            self._resolved[key] = (target, len(index.files), stamps)
            trim(self._resolved, 8192)
        return target

    def excerpt(self, index: Index, path: str, definition: Definition, language: str, full: bool) -> Excerpt:
        """A definition's head (or body, when ``full``) in an indexed file, cached by the file's content."""
        entry = index.files.get(path)
        key = (str(index.root), path, entry.blob_id if entry else None, definition, full)
        with self._lock:
            found = self._excerpts.get(key)
        if found is None:
            members = ([d for d in index.symbols.in_file(path) if d.container == definition.qualname]
                       if definition.kind in CLASS_LIKE_KINDS else [])
            cut = body if full else head
            found = cut(self.file_text(index, path), definition, language, languages.spec(language).comment,
                        members)
            with self._lock:
                self._excerpts[key] = found
                trim(self._excerpts, 4096)
        return found

    def neighbour_windows(self, index: Index, exclude: Path) -> list[tuple[str, str, list[similar.Window]]]:
        """Windows of the files the user works in, as (kind, path in ``index``, windows): the open buffers
        (``open``, the most recently edited first), then the recently edited files closed since
        (``recent``), whose text is the index's; files of other roots and ``exclude`` are left out."""
        recent = [path for path in self.session.recently_edited() if path != exclude]
        rank = {path: position for position, path in enumerate(recent)}
        opened = [path for path in list(self.session.documents) if path != exclude]
        ordered = sorted(opened, key=lambda path: (rank.get(path, len(rank)), str(path)))
        found = []
        for path in ordered[: weights.SIMILAR_FILES]:
            document = self.session.documents.get(path)
            rel = self._rel(index, path)
            if document is None or rel is None:
                continue
            with document.lock:
                version, text = document.version, document.text
            found.append(("open", rel, self._windows_of((path, version), rel, lambda text=text: split_lines(text))))
        closed = [path for path in recent if path not in self.session.documents]
        for path in closed[: weights.RECENT_FILES]:
            rel = self._rel(index, path)
            entry = index.files.get(rel) if rel is not None else None
            if rel is None or entry is None:
                # Deleted, or never saved before its buffer closed: nothing left to show.
                continue
            found.append(("recent", rel, self._windows_of((str(index.root), rel, entry.blob_id), rel,
                                                          lambda rel=rel: self.file_text(index, rel).lines)))
        return found

    def _rel(self, index: Index, path: Path) -> str | None:
        located = self.session.locate(path)
        return located[1] if located is not None and located[0].index is index else None

    def _windows_of(self, key: tuple, rel: str, lines: Callable[[], list[str]]) -> list[similar.Window]:
        """A file's windows, cached under ``key`` (a buffer's version, a file's blob id); ``lines`` reads it."""
        with self._lock:
            cached = self._windows.get(key)
        if cached is None:
            cached = similar.windows(rel, lines())
            with self._lock:
                self._windows[key] = cached
                trim(self._windows, 64)
        return cached
