"""A live workspace: several roots, open buffers, settings and disk events: the state features ask.

This is what the language server and the command line drive, kept free of
any protocol so it can be tested directly; the questions themselves are
``rag_lsp/features/``, each a function of a ``Session``. Paths crossing this boundary are absolute filesystem
paths; the server turns URIs into them and back.

Threading: every method may be called from any thread. Index contents are
guarded by each ``Index.lock``; the session's own tables by ``self._lock``.
Callers are expected to apply edits in order (the server does so on one
thread) while queries and the initial indexing run elsewhere.
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from pathlib import Path

from rag_lsp.gc_pause import paused_gc, tune_for_answers
from rag_lsp.heap import map_large_blocks, resident_file_bytes
from rag_lsp.index.admission import Admission
from rag_lsp.index.cache import default_cache_root
from rag_lsp.index.file_bm25 import prepare as prepare_file_table
from rag_lsp.index.index_records import IndexBudget, IndexStats
from rag_lsp.index.root_index import Index
from rag_lsp.index.symbol_provider import IndexSymbolProvider, SymbolProvider
from rag_lsp.index.tables import WorkspaceTables, workspace_tables
from rag_lsp.index.vectors.embedding import VectorIndex
from rag_lsp.index.walk import read_inside, skip_reason
from rag_lsp.langservers.composite import CompositeSymbolProvider
from rag_lsp.langservers.pool import ServerPool
from rag_lsp.redaction import load_detectors
from rag_lsp.retrieval.bundle.classify import classify
from rag_lsp.retrieval.bundle.tokenizers import tokenizer
from rag_lsp.retrieval.enhance.plan import NO_EMBEDDER, Enhancements, RootDense
from rag_lsp.retrieval.ranking.candidates import path_stems
from rag_lsp.retrieval.ranking.centrality import graph
from rag_lsp.retrieval.ranking.rerank import workspace_of
from rag_lsp.retrieval.strategies.base import Budget
from rag_lsp.workspace.documents import EditError, OpenDocument, TextEdit
from rag_lsp.workspace.reload import AnswerGate, replace_built_index, worth_replacing
from rag_lsp.workspace.settings import (
    OPERATOR_FILE,
    Settings,
    SettingsError,
    apply_settings,
    load_operator_file,
    snake_case,
)

VECTOR_POLL_SECONDS = 0.1
# Buffers remembered as recently edited (for completion's similar code), open or closed since.
MAX_RECENT_EDITS = 20
# The resident pages of mapped files the process keeps across questions (``bound_mapped``): the index files'
# pages the questions read, counted in its resident size though the page cache holds them (0.3-0.7 GB after
# twenty questions at 100,000 files, some 15 MB a question).
MAPPED_BUDGET = 256 << 20


class _Stopped(Exception):
    """Raised from a refresh's progress callback once the session is closing: the refresh stops there."""


# What an indexing state is: some root never indexed and nothing running, a run in progress, or every root
# indexed and nothing running.
PENDING, RUNNING, DONE = "pending", "running", "done"


@dataclass(frozen=True, slots=True)
class IndexingState:
    """How far indexing has got: ``done`` of ``total`` files of the roots not yet indexed (else of the roots
    being refreshed, else of every root in its last run), and whether answers come from a partial index."""

    done: int = 0
    total: int = 0
    state: str = DONE
    # Roots whose first index is not complete: answers cover only what they hold so far.
    partial: tuple[str, ...] = ()

    @property
    def running(self) -> bool:
        """True until every root is indexed (what editors show as "indexing")."""
        return self.state != DONE

    def warning(self) -> str | None:
        """What a question answered now must say about the index, or None when it is complete."""
        if not self.partial:
            return None
        if self.state == PENDING:
            return "indexing has not started yet: the answer covers only what is indexed so far (open documents)"
        if not self.total:
            return "indexing in progress, listing files: the answer covers only what is indexed so far"
        return (f"indexing in progress: {self.done} of {self.total} files indexed so far; "
                "the answer covers only what is indexed")


@dataclass(slots=True)
class _Root:
    index: Index
    settings: Settings
    warnings: list[str] = field(default_factory=list)
    # The root's language servers (None when the session does not use them).
    servers: ServerPool | None = None
    # True once a refresh of this index ran to the end; until then answers are partial.
    indexed: bool = False
    # Refreshes of this root running now, and the files done of the walk's total in the latest one.
    refreshing: int = 0
    done: int = 0
    total: int = 0
    # The root's chunk vectors, embedded in the background (None when no embedder is configured).
    vectors: VectorIndex | None = None


class Session:
    """Roots with their indexes, the open documents, and the client's settings."""

    def __init__(self, client_settings: Settings | None = None, cache_root: Path | None = None,
                 use_cache: bool = True, language_servers: bool = False,
                 wait_for_servers: float = 0.0) -> None:
        """``language_servers`` lets real language servers answer symbol questions (the server turns it on;
        in-process tests leave it off so that no process is started behind their back).
        ``wait_for_servers`` is how long a question may wait for a server to start: 0 in the editor, where
        the patterns answer while it starts, longer for one-shot command-line questions."""
        # A session holds an index and answers questions: the collector runs less often (``gc_pause.py``), and
        # large blocks are always mapped of their own, so their pages go back when freed (``heap.py``).
        tune_for_answers()
        map_large_blocks()
        self.client_settings = client_settings or Settings()
        self.language_servers = language_servers
        self.wait_for_servers = wait_for_servers
        self.cache_root = cache_root
        self.use_cache = use_cache
        self.roots: dict[Path, _Root] = {}
        self.documents: dict[Path, OpenDocument] = {}
        # Open documents that were indexed from disk before they were opened.
        self._indexed_before_open: set[Path] = set()
        # Paths of the buffers edited through the editor, most recent last (see ``recently_edited``).
        self._recent_edits: dict[Path, None] = {}
        # Indexing runs asked for and not started yet (``indexing_scheduled``).
        self._scheduled = 0
        # Set by ``close``: a refresh running then stops at its next batch.
        self._closing = False
        self._lock = threading.RLock()
        # Questions being answered (``answering``) and root indexes being replaced (``settle``): a replacement
        # waits for the questions under way, and questions and refreshes wait for it.
        self._gate = AnswerGate(self._lock)

    # Roots and settings.

    def add_root(self, path: Path) -> list[str]:
        """Start tracking a workspace folder (not yet indexed); returns settings warnings."""
        path = path.resolve()
        settings, warnings = self._root_settings(path, self.client_settings)
        with self._lock:
            if path not in self.roots:
                index = self._new_index(path, settings)
                self.roots[path] = _Root(index, settings, warnings, self._new_servers(path, settings),
                                         vectors=self._new_vectors(index, settings))
        return warnings

    def remove_root(self, path: Path) -> None:
        with self._lock:
            root = self.roots.pop(path.resolve(), None)
        if root:
            if root.vectors:
                root.vectors.stop()
            root.index.close()
            if root.servers:
                root.servers.stop()

    def close(self) -> None:
        """Stop indexing (at its next batch), every language server, and close the indexes (the session is not
        used afterwards)."""
        with self._lock:
            self._closing = True
            roots = list(self.roots.values())
        for root in roots:
            if root.servers:
                root.servers.stop()
            if root.vectors:
                root.vectors.stop()
            root.index.close()

    def _new_servers(self, path: Path, settings: Settings) -> ServerPool | None:
        # Servers start lazily, on the first question that needs one.
        return ServerPool(path, settings.language_servers) if self.language_servers else None

    @staticmethod
    def _new_vectors(index: Index, settings: Settings) -> VectorIndex | None:
        """The root's vectors, embedding in the background from now on, when an embedder is configured."""
        if not settings.retrieval.dense.enabled:
            return None
        vectors = VectorIndex.for_index(index, settings.retrieval.dense)
        vectors.start()
        return vectors

    def _root_settings(self, path: Path, client: Settings) -> tuple[Settings, list[str]]:
        """Client settings overlaid with the root's operator file; an invalid file is reported, not applied.

        The cache directory is confined (``_cache_dir``): the result's ``cache_dir`` is an absolute path the
        session may write, or None for the cache root.
        """
        try:
            operator = load_operator_file(path)
            settings, warnings = apply_settings(client, operator, overlay=True)
        except SettingsError as exc:
            operator, settings, warnings = {}, client, [str(exc)]
        from_operator = any(snake_case(str(key)) == "cache_dir" for key in operator)
        cache_dir, warning = self._cache_dir(path, settings.cache_dir, from_operator)
        return replace(settings, cache_dir=cache_dir), warnings + ([warning] if warning else [])

    def _cache_dir(self, root: Path, wanted: str | None, from_operator: bool) -> tuple[str | None, str | None]:
        """Where a setting may put a root's cache: the session writes only inside its roots and its cache root.

        The cache root is chosen by whoever starts rag_lsp (``--cache-dir``, ``$RAG_LSP_CACHE_DIR``, the XDG
        cache home). The operator file travels with the repository, so its ``cache_dir`` (relative to the
        root) may name a directory inside the root or inside the cache root; a client's ``cacheDir``
        (relative to the cache root) only one inside the cache root. Anything else is ignored with a warning.
        """
        if wanted is None:
            return None, None
        cache_root = (self.cache_root or default_cache_root()).resolve()
        chosen = ((root if from_operator else cache_root) / Path(wanted).expanduser()).resolve()
        allowed = (root, cache_root) if from_operator else (cache_root,)
        if any(chosen == place or place in chosen.parents for place in allowed):
            return str(chosen), None
        source = f"{OPERATOR_FILE} cache_dir" if from_operator else "the client's cacheDir"
        return None, (f"{source} {wanted!r} ignored: the cache may only go inside "
                      f"{'the workspace root or ' if from_operator else ''}the cache root {cache_root} "
                      "(start rag-lsp with --cache-dir or RAG_LSP_CACHE_DIR to move the cache root)")

    def _new_index(self, path: Path, settings: Settings) -> Index:
        return Index(
            path,
            cache_root=Path(settings.cache_dir) if settings.cache_dir else self.cache_root,
            use_cache=self.use_cache,
            admission=Admission(settings.ignore, settings.max_file_bytes, settings.disabled_languages()),
            budget=IndexBudget(settings.max_index_files, settings.max_index_bytes, settings.max_index_seconds),
        )

    def update_settings(self, raw: object) -> tuple[list[str], list[Path]]:
        """Apply new client settings; raises SettingsError (nothing changes) if any value is invalid.

        Returns the warnings and the roots whose index must be rebuilt
        because what they index changed (ignore globs, languages, cache, size).
        """
        settings, warnings = apply_settings(self.client_settings, raw)
        rebuild = []
        with self._lock:
            self.client_settings = settings
            for path, root in list(self.roots.items()):
                merged, root_warnings = self._root_settings(path, settings)
                warnings.extend(root_warnings)
                if root.servers:
                    root.servers.reconfigure(merged.language_servers)
                if _index_shape(merged) != _index_shape(root.settings):
                    if root.vectors:
                        root.vectors.stop()
                    root.index.close()
                    index = self._new_index(path, merged)
                    self.roots[path] = _Root(index, merged, root_warnings, root.servers,
                                             vectors=self._new_vectors(index, merged))
                    rebuild.append(path)
                else:
                    if merged.retrieval.dense != root.settings.retrieval.dense:
                        if root.vectors:
                            root.vectors.stop()
                        root.vectors = self._new_vectors(root.index, merged)
                    root.settings = merged
        return warnings, rebuild

    def settings_for(self, path: Path | None = None) -> Settings:
        """The settings of the root holding ``path``; without a path, the first root's."""
        located = self.locate(path) if path else None
        if located:
            return located[0].settings
        with self._lock:
            first = next(iter(self.roots.values()), None)
        return first.settings if first else self.client_settings

    # Indexing.

    def indexing_scheduled(self, roots: list[Path] | None = None) -> None:
        """Say that ``index_roots(roots)`` will run soon (on another thread), so that until it starts
        the state reads "pending" rather than "done"."""
        with self._lock:
            self._scheduled += 1

    def index_roots(self, roots: list[Path] | None = None, progress=None, *, scheduled: bool = False
                    ) -> list[IndexStats]:
        """Refresh the given roots (all by default) from disk; open buffers keep their text.

        ``scheduled`` says this is the run announced by ``indexing_scheduled``. ``progress(done, total)``
        counts files over every root of the run.
        """
        with self._lock:
            # A root whose index is being replaced is refreshed once the new one is loaded.
            self._gate.wait_open()
            if scheduled:
                self._scheduled = max(0, self._scheduled - 1)
            targets = [(p, r) for p, r in self.roots.items() if roots is None or p in roots]
            for _, root in targets:
                root.refreshing += 1
                root.done = root.total = 0
        reports = []
        offset = [0, 0]
        try:
            for path, root in targets:
                def report(done: int, total: int, root=root) -> None:
                    if self._closing:
                        raise _Stopped
                    root.done, root.total = done, total
                    if progress:
                        progress(offset[0] + done, offset[1] + total)

                try:
                    stats = root.index.refresh(report, skip=lambda rel, path=path: self._is_open_under(path, rel))
                except _Stopped:
                    break
                except OSError as exc:
                    # A folder the client named that is gone, or is a file: nothing to index there, and said so.
                    stats = IndexStats(root=str(path), warnings=[f"not indexed: {exc}"])
                with self._lock:
                    root.refreshing -= 1
                    root.indexed = True
                    root.done = root.total = stats.files
                    offset[0] += stats.files
                    offset[1] += stats.files
                reports.append(stats)
        finally:
            with self._lock:
                for _, root in targets[len(reports):]:
                    root.refreshing -= 1
        return reports

    @property
    def indexing(self) -> IndexingState:
        """The indexing state now (a snapshot)."""
        with self._lock:
            roots = list(self.roots.items())
            scheduled = self._scheduled
        partial = tuple(str(path) for path, root in roots if not root.indexed)
        running = any(root.refreshing for _, root in roots)
        # The roots still to index, else those being refreshed, else every root as of its last run.
        counted = ([root for _, root in roots if not root.indexed] or [r for _, r in roots if r.refreshing]
                   or [root for _, root in roots])
        state = RUNNING if running else PENDING if partial or scheduled else DONE
        return IndexingState(sum(r.done for r in counted), sum(r.total for r in counted), state, partial)

    def _is_open_under(self, root: Path, rel: str) -> bool:
        """Whether the file at ``rel`` under ``root`` is open; no path is built while nothing is open (a
        refresh asks this of every file)."""
        return bool(self.documents) and root / rel in self.documents

    # Files and buffers.

    def locate(self, path: Path) -> tuple[_Root, str] | None:
        """The root holding an absolute path and the path relative to it (the innermost root wins)."""
        best = None
        for root_path, root in self.roots.items():
            inside = path == root_path or root_path in path.parents
            if inside and (best is None or len(root_path.parts) > len(best[0].parts)):
                best = (root_path, root)
        if best is None:
            return None
        return best[1], path.relative_to(best[0]).as_posix()

    # Buffers are split in two halves so that typing never waits for indexing:
    # track/apply/untrack are cheap and run in message order on the caller's
    # thread; index_document/restore_document do the parsing and indexing and
    # may run later on another thread, coalescing a burst of edits into one pass.

    def track_document(self, path: Path, text: str, version: int, encoding: str = "utf-16") -> None:
        """Start tracking an opened buffer (no parsing yet: see ``index_document``)."""
        document = OpenDocument(str(path), text, version, encoding=encoding, parsed=False)
        with self._lock:
            self.documents[path] = document
            located = self.locate(path)
            if located and located[1] in located[0].index.files:
                self._indexed_before_open.add(path)

    def apply_changes(self, path: Path, version: int, changes: list[TextEdit | str]) -> str | None:
        """Apply a burst of edits (a ``str`` replaces the whole text) to a buffer's text and tree.

        Raises EditError for an unknown document or an edit that does not fit
        it (the buffer keeps the edits applied before the bad one). Returns a
        message when the change is skipped (a version older than the buffer's).
        """
        document = self.documents.get(path)
        if document is None:
            raise EditError(f"document is not open: {path}")
        with document.lock:
            if version is not None and version <= document.version:
                return f"ignored change to {path.name}: version {version} is not newer than {document.version}"
            document.version = version
            document.dirty = True
            for change in changes:
                if isinstance(change, str):
                    document.replace_all(change)
                else:
                    document.apply(change)
        with self._lock:
            self._recent_edits.pop(path, None)
            self._recent_edits[path] = None
            while len(self._recent_edits) > MAX_RECENT_EDITS:
                del self._recent_edits[next(iter(self._recent_edits))]
        return None

    def recently_edited(self) -> list[Path]:
        """The last ``MAX_RECENT_EDITS`` buffers edited, most recent first, whether still open or not.

        Only paths are kept: a closed file's text is the index's (the disk's
        once the buffer is gone), so a file deleted since has no text left.
        """
        with self._lock:
            return list(reversed(self._recent_edits))

    def index_document(self, path: Path) -> str | None:
        """Index a tracked buffer's current text if it changed since last time; returns a skip reason.

        The syntax tree is re-parsed under the document's lock (incrementally,
        from the edited old tree); chunking and indexing run outside it.
        """
        document = self.documents.get(path)
        located = self.locate(path)
        if document is None or not document.dirty:
            return None
        if located is None:
            document.dirty = False
            return "outside the workspace"
        root, rel = located
        with document.lock:
            text = document.text
            reason = root.index.admission.buffer_reason(rel, text.encode("utf-8", "surrogatepass"))
            if reason:
                # No tree is kept for a buffer that is not indexed: parsing a
                # 20 MB file only to throw the tree away would stall every edit.
                document.drop_tree()
                document.parsed = False
            tree = None if reason else document.reparse()
            document.dirty = False
        if reason:
            root.index.remove_file(rel)
            return reason
        root.index.set_file(rel, text, tree=tree, reuse=document.nodes)
        return None

    def untrack_document(self, path: Path) -> bool:
        """Stop tracking a closed buffer; returns whether the file was indexed before it was opened."""
        with self._lock:
            self.documents.pop(path, None)
            was_indexed = path in self._indexed_before_open
            self._indexed_before_open.discard(path)
        return was_indexed

    def restore_document(self, path: Path, was_indexed: bool) -> None:
        """After a close: the disk's version (if any, and indexable) is indexed again.

        A file that was not indexed before it was opened is indexed now if it has since been saved where the
        walk would find it (a new file written in the editor); otherwise its buffer's text leaves the index.
        """
        located = self.locate(path)
        if located is None or path in self.documents:
            return
        root, rel = located
        if was_indexed or skip_reason(root.index.root, rel, root.index.admission) is None:
            self.file_changed(path)
        else:
            root.index.remove_file(rel)

    def open_document(self, path: Path, text: str, version: int, encoding: str = "utf-16") -> str | None:
        """Track and index an opened buffer at once; returns a skip reason when it is not indexed."""
        self.track_document(path, text, version, encoding)
        return self.index_document(path)

    def change_document(self, path: Path, version: int, changes: list[TextEdit | str]) -> str | None:
        """Apply edits and re-index at once (see ``apply_changes`` for errors and skips)."""
        skipped = self.apply_changes(path, version, changes)
        self.index_document(path)
        return skipped

    def close_document(self, path: Path) -> None:
        self.restore_document(path, self.untrack_document(path))

    def file_changed(self, path: Path) -> str | None:
        """A file was created or changed on disk; returns a skip reason when it is not indexed."""
        if path in self.documents:
            return "open in the editor"
        located = self.locate(path)
        if located is None:
            return "outside the workspace"
        root, rel = located
        try:
            data = read_inside(root.index.root, path)
        except OSError as exc:
            data, reason = None, f"unreadable: {exc.strerror or exc}"
        else:
            reason = "not a regular file inside the root (a symlink, a directory, a special file)"
        if data is None:
            root.index.remove_file(rel)
            return reason
        skip = root.index.admission.buffer_reason(rel, data)
        if skip:
            root.index.remove_file(rel)
            return skip
        root.index.set_file(rel, data.decode("utf-8-sig"), data=data)
        return None

    def file_deleted(self, path: Path) -> None:
        located = self.locate(path)
        if located is None:
            return
        root, rel = located
        prefix = rel + "/"
        for indexed in [p for p in root.index.files if p == rel or p.startswith(prefix)]:
            if root.index.root / indexed not in self.documents:
                root.index.remove_file(indexed)

    def file_renamed(self, old: Path, new: Path) -> None:
        self.file_deleted(old)
        located = self.locate(new)
        if located and new.is_dir():
            self.index_roots([located[0].index.root])
        elif located:
            self.file_changed(new)

    # What features ask of the workspace.

    def root_list(self) -> list[tuple[Path, _Root]]:
        """The roots in the order they were added, with their state."""
        with self._lock:
            return list(self.roots.items())

    def provider(self, root: _Root, max_calls: int | None = None, questions: int = 1
                  ) -> CompositeSymbolProvider | None:
        """A symbol provider for one question on one root: its language servers composed with the patterns.

        ``questions`` scales the server-time budget for a caller that asks several things at once (a lookup
        follows several definitions)."""
        if root.servers is None:
            return None
        settings = root.settings
        # A one-shot question starts its servers cold: their first answers (loading the project) take seconds.
        timeout = max(settings.language_server_timeout_ms / 1000, self.wait_for_servers)
        deadline = time.monotonic() + max(Budget().seconds, self.wait_for_servers)
        budget = max(settings.language_server_budget_ms / 1000 * questions, self.wait_for_servers)
        return CompositeSymbolProvider(
            IndexSymbolProvider(root.index, _tables(root)), root.servers,
            lambda rel, root=root: self._text_of(root, rel), timeout=timeout,
            max_calls=settings.language_server_calls if max_calls is None else max(0, max_calls),
            budget=budget, deadline=deadline, wait_for_start=self.wait_for_servers,
            open_paths=lambda root=root: self._open_paths(root), version=root.index.version)

    def _open_paths(self, root: _Root) -> list[str]:
        """The root's open buffers as relative paths, in path order."""
        with self._lock:
            paths = list(self.documents)
        return sorted(path.relative_to(root.index.root).as_posix() for path in paths
                      if root.index.root in path.parents)

    def _text_of(self, root: _Root, rel: str) -> str | None:
        """An indexed file's current text: the editor's buffer when open, else the disk's (never a secret)."""
        path = root.index.root / rel
        document = self.documents.get(path)
        if document is not None:
            with document.lock:
                return document.text
        if rel not in root.index.files:
            return None
        try:
            data = read_inside(root.index.root, path)
            return data.decode("utf-8-sig") if data is not None else None
        except (OSError, UnicodeDecodeError):
            return None

    def answering(self) -> AbstractContextManager[None]:
        """Mark a question under way for the block (the server's and the MCP server's answers): it waits while
        ``settle`` replaces an index, and ``settle`` waits for it, so that no answer reads two indexes of one
        root and no replaced index is kept alive by a question while its heir loads."""
        return self._gate.answering()

    def settle(self, replacing: Callable[[], None] | None = None) -> None:
        """Replace each root's index that its indexing built by parsing with one loaded from the snapshot it
        then saved (``workspace/reload.py`` says when). Questions wait for the loading (4.7 s at 100,000 files,
        0.2 s on Django); edits wait for it, then go to the new index. A snapshot that fails to load leaves the
        root to be indexed again, as on a first start. Roots with vectors keep their index: the vectors embed
        the chunks of that object. ``replacing()`` is called as each replacement begins."""
        for path, root in self.root_list():
            with self._lock:
                if (root.refreshing or root.vectors is not None or self.roots.get(path) is not root
                        or not worth_replacing(root.index)):
                    continue
                self._gate.close()
            try:
                self._gate.drain()
                failed = replace_built_index(root, replacing)
            finally:
                self._gate.open()
            if failed:
                self.index_roots([path])

    def prepare_answers(self) -> None:
        """Build what the first question of each root would otherwise build, whatever it asks: the lookup
        tables, the path words by stem, what the workspace's files say of its code, the chunks' files, the
        code graph, the references in name order (in a thread of their own) and the BM25 score arrays the next
        queries fill (``BM25Index.prepare``), all of it then out of the garbage collector's sight; and load the
        secret detectors every answer passes at the edge (a warm start parses nothing, so nothing loaded them),
        the default tokenizer that budgets a bundle and the task classifier's patterns. The server calls this
        once its indexing is done, so that a question asked a moment later is answered in the usual time: on a
        warm start of Django the first question took 0.16 s against 0.02 for the next, and 3.5 s at 100,000
        files. The indexes their indexing built are replaced by their snapshots first (``settle``)."""
        self.settle()
        load_detectors()
        tokenizer()
        classify("")
        # What is built here lives as long as the index: moved out of the collector's sight, as a snapshot's
        # objects are, so that a full collection during a question does not traverse it (20-30 ms at 100,000
        # files, on a question of 60-100). The garbage of the indexing is collected first, so that no cycle of it
        # is kept with them.
        gc.collect()
        with paused_gc(keep=True):
            for _, root in self.root_list():
                with root.index.lock:
                    path_stems(workspace_tables(root.index))
                    workspace_of(root.index)
                    prepare_file_table(root.index)
                    if root.settings.ranking.graph:
                        graph(root.index)
                    if root.index.references.stored is not None:
                        root.index.references.stored.start_sorting()
                    root.index.bm25.prepare()

    def bound_mapped(self) -> bool:
        """Drop the pages of the index files this process has read once they pass ``MAPPED_BUDGET``; True if
        they did. The server calls it after each question, off the event loop; a read pages in what it needs
        again (a minor fault from the page cache). Files mapped by the libraries count towards the budget as
        well: /proc tells the total in a few microseconds, not whose pages they are."""
        if resident_file_bytes() <= MAPPED_BUDGET:
            return False
        for _, root in self.root_list():
            root.index.release_mapped()
        return True

    def warm_servers(self, seconds: float) -> None:
        """Start every root's language servers and let them load their projects, within ``seconds``: for
        one-shot questions, whose answer should not be the patterns' only because a server was starting."""
        for _, root in self.root_list():
            if root.servers is not None:
                root.servers.warm(list(root.index.files), lambda rel, root=root: self._text_of(root, rel), seconds)

    def wait_for_vectors(self, seconds: float) -> bool:
        """Wait until every root's vectors are ready, at most ``seconds`` (for one-shot questions); whether they are."""
        deadline = time.monotonic() + seconds
        while True:
            pending = [root.vectors for _, root in self.root_list()
                       if root.vectors is not None and not root.vectors.status().ready
                       and root.vectors.status().state != "failed"]
            if not pending:
                return True
            if time.monotonic() >= deadline:
                return False
            for vectors in pending:
                vectors.wake()
            time.sleep(VECTOR_POLL_SECONDS)

    def enhancements(self, focus: Path | None = None) -> Enhancements:
        """What a question's enhancements may use: the focused (else the first) root's retrieval settings and
        knob values, and each root's vectors."""
        settings = self.settings_for(focus)
        by_index = {id(root.index): root for _, root in self.root_list()}

        def dense_of(index: Index) -> RootDense:
            root = by_index.get(id(index))
            if root is None or root.vectors is None:
                return RootDense(None, settings.retrieval.fusion, NO_EMBEDDER)
            return RootDense(root.vectors, root.settings.retrieval.fusion)

        return Enhancements(settings.retrieval, settings.enhancements, dense_of)

    def symbols(self, root: _Root, max_calls: int | None = None, questions: int = 1) -> SymbolProvider:
        """The provider of one question on one root: its language servers composed with the patterns, or
        the patterns alone when the session does not use servers."""
        return (self.provider(root, max_calls, questions)
                or IndexSymbolProvider(root.index, _tables(root)))

def _tables(root: _Root) -> WorkspaceTables:
    """The root's lookup tables, synchronised under the index's lock (indexing may be installing files)."""
    with root.index.lock:
        return workspace_tables(root.index)


def _index_shape(settings: Settings) -> tuple:
    """The settings that change what an index holds."""
    return (settings.ignore, settings.disabled_languages(), settings.cache_dir, settings.max_file_bytes,
            settings.max_index_files, settings.max_index_bytes, settings.max_index_seconds)
