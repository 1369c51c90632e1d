"""A live workspace: several roots, open buffers, settings, and the questions asked of them.

This is what the language server drives, kept free of any protocol so it can
be tested directly. Paths crossing this boundary are absolute filesystem
paths; the server turns URIs into them and back.

Threading: every method may be called from any thread. Index contents are
guarded by each ``Index.lock``; the session's own tables by ``self._lock``.
Callers are expected to apply edits in order (the server does so on one
thread) while queries and the initial indexing run elsewhere.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from rag_lsp import __version__, languages
from rag_lsp.features.focus import focus_name, resolve_chain, word_at
from rag_lsp.features.lookup import LOOKUP_DEFINITIONS, lookup_items
from rag_lsp.index.root_index import Index
from rag_lsp.index.symbol_provider import PATTERNS, IndexSymbolProvider, NeedsServer
from rag_lsp.index.tables import workspace_tables
from rag_lsp.index.walk import is_secret_path, load_bytes, name_skip_reason, skip_reason
from rag_lsp.langservers.composite import CompositeSymbolProvider
from rag_lsp.langservers.pool import ServerPool
from rag_lsp.model import Definition
from rag_lsp.path_kinds import is_test_path
from rag_lsp.retrieval.rank import Cancelled
from rag_lsp.retrieval.retrieve import ContextRequest, build_context
from rag_lsp.retrieval.strategies.base import Budget
from rag_lsp.workspace.documents import EditError, OpenDocument, TextEdit
from rag_lsp.workspace.settings import Settings, SettingsError, apply_settings, load_operator_file

MAX_WORKSPACE_SYMBOLS = 100
# Buffers remembered as recently edited (for completion's similar code), open or closed since.
MAX_RECENT_EDITS = 20


@dataclass(slots=True)
class IndexingState:
    """Progress of the background indexing, reported with every answer while it runs."""

    done: int = 0
    total: int = 0
    running: bool = False
    roots: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"done": self.done, "total": self.total}


@dataclass(slots=True)
class _Root:
    index: Index
    settings: Settings
    warnings: list[str] = field(default_factory=list)
    # The root's language servers (None when the session does not use them).
    servers: ServerPool | None = None


class Session:
    """Roots with their indexes, the open documents, and the client's settings."""

    def __init__(self, client_settings: Settings | None = None, cache_root: Path | None = None,
                 use_cache: bool = True, language_servers: bool = False,
                 wait_for_servers: float = 0.0) -> None:
        """``language_servers`` lets real language servers answer symbol questions (the server turns it on;
        in-process tests leave it off so that no process is started behind their back).
        ``wait_for_servers`` is how long a question may wait for a server to start: 0 in the editor, where
        the patterns answer while it starts, longer for one-shot command-line questions."""
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
        self.indexing = IndexingState()
        self._lock = threading.RLock()

    # Roots and settings.

    def add_root(self, path: Path) -> list[str]:
        """Start tracking a workspace folder (not yet indexed); returns settings warnings."""
        path = path.resolve()
        settings, warnings = self._root_settings(path, self.client_settings)
        with self._lock:
            if path not in self.roots:
                self.roots[path] = _Root(self._new_index(path, settings), settings, warnings,
                                         self._new_servers(path, settings))
        return warnings

    def remove_root(self, path: Path) -> None:
        with self._lock:
            root = self.roots.pop(path.resolve(), None)
        if root:
            root.index.close()
            if root.servers:
                root.servers.stop()

    def close(self) -> None:
        """Stop every language server and close the indexes (the session is not used afterwards)."""
        with self._lock:
            roots = list(self.roots.values())
        for root in roots:
            if root.servers:
                root.servers.stop()
            root.index.close()

    def _new_servers(self, path: Path, settings: Settings) -> ServerPool | None:
        # Servers start lazily, on the first question that needs one.
        return ServerPool(path, settings.language_servers) if self.language_servers else None

    def _root_settings(self, path: Path, client: Settings) -> tuple[Settings, list[str]]:
        """Client settings overlaid with the root's operator file; an invalid file is reported, not applied."""
        try:
            return apply_settings(client, load_operator_file(path), overlay=True)
        except SettingsError as exc:
            return client, [str(exc)]

    def _new_index(self, path: Path, settings: Settings) -> Index:
        return Index(
            path,
            cache_root=Path(settings.cache_dir) if settings.cache_dir else self.cache_root,
            use_cache=self.use_cache,
            extra_ignores=settings.ignore,
            max_bytes=settings.max_file_bytes,
            disabled_languages=settings.disabled_languages(),
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
                    root.index.close()
                    self.roots[path] = _Root(self._new_index(path, merged), merged, root_warnings, root.servers)
                    rebuild.append(path)
                else:
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

    def index_roots(self, roots: list[Path] | None = None, progress=None) -> list[dict]:
        """Refresh the given roots (all by default) from disk; open buffers keep their text."""
        with self._lock:
            targets = [(p, r) for p, r in self.roots.items() if roots is None or p in roots]
            self.indexing = IndexingState(running=True, roots=[str(p) for p, _ in targets])
        reports = []
        offset = 0
        try:
            for path, root in targets:
                def report(done: int, total: int, offset=offset) -> None:
                    self.indexing.done = offset + done
                    self.indexing.total = max(self.indexing.total, offset + total)
                    if progress:
                        progress(self.indexing.done, self.indexing.total)

                stats = root.index.refresh(report, skip=lambda rel, path=path: self._is_open(path / rel))
                offset = self.indexing.done
                reports.append(stats.to_dict())
        finally:
            self.indexing.running = False
        return reports

    def _is_open(self, path: Path) -> bool:
        return path in self.documents

    # Files and buffers.

    def locate(self, path: Path) -> tuple[_Root, str] | None:
        """The root holding an absolute path and the path relative to it (the innermost root wins)."""
        best = None
        for root_path, root in self.roots.items():
            if path == root_path or root_path in path.parents:
                if best is None or len(root_path.parts) > len(best[0].parts):
                    best = (root_path, root)
        if best is None:
            return None
        return best[1], path.relative_to(best[0]).as_posix()

    def _skip_reason(self, root: _Root, rel: str, data: bytes) -> str | None:
        """Why a file's content must not be indexed (None when it may be): the walk's rules, per file."""
        if is_secret_path(rel):
            return "secret"
        for part in rel.split("/"):
            reason = name_skip_reason(part)
            if reason:
                return reason
        if languages.language_for_path(rel) in root.settings.disabled_languages():
            return "language_disabled"
        return load_bytes(rel, data, max_bytes=root.settings.max_file_bytes).skip

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
            reason = self._skip_reason(root, rel, text.encode("utf-8", "surrogatepass"))
            if reason:
                # No tree is kept for a buffer that is not indexed: parsing a
                # 20 MB file only to throw the tree away would stall every edit.
                document.tree, document.parsed = None, False
            tree = None if reason else document.reparse()
            document.dirty = False
        if reason:
            root.index.remove_file(rel)
            return reason
        root.index.set_file(rel, text, tree=tree)
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
        if was_indexed or skip_reason(root.index.root, rel, extra_ignores=root.settings.ignore,
                                      max_bytes=root.settings.max_file_bytes) is None:
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
            data = path.read_bytes() if path.is_file() and not path.is_symlink() else None
        except OSError as exc:
            data, reason = None, f"unreadable: {exc.strerror or exc}"
        else:
            reason = "not a regular file"
        if data is None:
            root.index.remove_file(rel)
            return reason
        skip = self._skip_reason(root, rel, data)
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

    # Questions.

    def context(self, request: ContextRequest, focus: Path | None = None,
                cancel: threading.Event | None = None) -> dict:
        """Ranked context over every root (or the focused document's root first), merged and re-packed.

        Raises Cancelled soon after ``cancel`` is set (checked between roots and between strategies).
        """
        started = time.perf_counter()
        with self._lock:
            roots = list(self.roots.items())
        if focus is not None and (located := self.locate(focus)):
            roots.sort(key=lambda item: item[1] is not located[0])
        results = []
        calls_left = self.settings_for().language_server_calls
        for path, root in roots:
            if cancel is not None and cancel.is_set():
                raise Cancelled("the context request was cancelled")
            with root.index.lock:
                provider = self._provider(root, calls_left)
                answer = build_context(root.index, request, cancel=cancel, provider=provider)
            calls_left -= provider.calls if provider else 0
            for item in answer["items"]:
                item["root"] = str(path)
            results.append(answer)
        merged = _merge(results, request)
        merged["elapsed_ms"] = round((time.perf_counter() - started) * 1000, 2)
        if self.indexing.running:
            merged["indexing"] = self.indexing.to_dict()
        return merged

    def _provider(self, root: _Root, max_calls: int | None = None, questions: int = 1
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
            IndexSymbolProvider(root.index, workspace_tables(root.index)), root.servers,
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
            return path.read_bytes().decode("utf-8-sig")
        except (OSError, UnicodeDecodeError):
            return None

    def lookup(self, symbol: str, what: str, path: Path | None = None) -> dict:
        """One provider question asked directly: definitions, references, implementations, hover or outline.

        ``symbol`` names a definition (``Ledger.post``); ``documentSymbols``
        takes ``path`` instead. Each item says which source answered it; an
        answer that needs a server it cannot have says so in ``unanswered``.
        """
        with self._lock:
            roots = list(self.roots.items())
        located = self.locate(path) if path is not None else None
        if located is not None:
            roots = [(p, r) for p, r in roots if r is located[0]]
        elif what == "documentSymbols":
            return {"symbol": symbol, "what": what, "items": [], "language_servers": [],
                    "unanswered": f"{path} is outside every workspace folder"}
        items: list[dict] = []
        notes: list[dict] = []
        unanswered: list[str] = []
        for root_path, root in roots:
            # A lookup follows up to LOOKUP_DEFINITIONS definitions, each worth a question's call budget.
            calls = root.settings.language_server_calls * LOOKUP_DEFINITIONS
            provider = (self._provider(root, calls, LOOKUP_DEFINITIONS)
                        or IndexSymbolProvider(root.index, workspace_tables(root.index)))
            rel = located[1] if located is not None and what == "documentSymbols" else None
            with root.index.lock:
                try:
                    found = lookup_items(provider, what, symbol, rel)
                except NeedsServer as exc:
                    found = []
                    unanswered.append(str(exc))
            items += [{**item, "root": str(root_path)} for item in found]
            notes += provider.notes()
        answer = {"symbol": symbol, "what": what, "items": items, "language_servers": notes}
        if unanswered and not items:
            answer["unanswered"] = unanswered[0]
        return answer

    def focus_query(self, path: Path, line: int, character: int) -> str:
        """A question for a cursor: the identifier under it, or with its enclosing definition when it defines
        nothing (a local, a keyword).

        ``line`` is 0-based and ``character`` counts code points; the open
        buffer's text is used when there is one. Where a ready language server
        or, failing that, the file's imports and annotations resolve the
        identifier, it is named as the definition it means
        (``rate_limiter.RateLimiter.allow`` for ``limiter.allow``), so that
        namesakes elsewhere do not count as much as it (``core/focus.py``).
        """
        document = self.documents.get(path)
        try:
            text = document.text if document else path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return ""
        lines = text.splitlines()
        current = lines[line] if 0 <= line < len(lines) else ""
        word = word_at(current, character)
        located = self.locate(path)
        enclosing = None
        if located:
            root, rel = located
            with root.index.lock:
                covering = [d for d in root.index.symbols.in_file(rel) if d.start_line <= line + 1 <= d.end_line]
                defined = False
                if word:
                    provider = self._provider(root, max_calls=1)
                    resolved = provider.resolve(rel, line + 1, character) if provider is not None else None
                    resolved = resolved or resolve_chain(root.index, rel, word, lines, line + 1)
                    word = focus_name(root.index, resolved, word)
                    defined = resolved is not None or bool(root.index.symbols.lookup(word))
            # The enclosing definition is on the user's screen already: it is the question only when the name
            # under the cursor defines nothing (a local, a keyword), not a rival to the name's definition.
            if covering and not defined:
                enclosing = max(covering, key=lambda d: d.start_line).qualname
        return " ".join(f"`{name}`" for name in dict.fromkeys(n for n in (word, enclosing) if n))

    def status(self) -> dict:
        with self._lock:
            roots = list(self.roots.items())
            open_documents = len(self.documents)
        described = []
        for path, root in roots:
            with root.index.lock:
                stats = root.index.stats.to_dict()
                stats.update(files=len(root.index.files), chunks=len(root.index.chunks),
                             definitions=len(root.index.symbols))
            stats["settings"] = root.settings.to_dict()
            stats["settings_warnings"] = list(root.warnings)
            stats["language_servers"] = root.servers.status() if root.servers else []
            described.append(stats)
        return {
            "version": __version__,
            "roots": described,
            "files": sum(r["files"] for r in described),
            "chunks": sum(r["chunks"] for r in described),
            "open_documents": open_documents,
            "indexing": {**self.indexing.to_dict(), "running": self.indexing.running},
            "language_servers": [server for root in described for server in root["language_servers"]],
        }

    def workspace_symbols(self, query: str) -> list[tuple[Path, Definition]]:
        """Definitions whose names match ``query`` fuzzily, best first, at most 100."""
        scored = []
        needle = query.lower()
        for path, root in list(self.roots.items()):
            with root.index.lock:
                for name in list(root.index.symbols.names()):
                    score = _fuzzy_score(needle, name)
                    if score is None:
                        continue
                    for definition in root.index.symbols.by_name(name):
                        scored.append((score, definition.qualname, str(path), definition.path,
                                       definition.start_line, path, definition))
        scored.sort(key=lambda item: item[:5])
        return [(path, definition) for *_, path, definition in scored[:MAX_WORKSPACE_SYMBOLS]]

    def definitions_in(self, path: Path) -> list[Definition]:
        located = self.locate(path)
        if located is None:
            return []
        root, rel = located
        with root.index.lock:
            return root.index.symbols.in_file(rel)

    def usage_counts(self, path: Path, name: str, qualname: str) -> dict:
        """How often a definition is used: references (outside its own definition), test files, and the source.

        A ready language server counts the references of this very definition
        (one call, within the usual timeout); otherwise, or when it fails, the
        patterns count every use of the name.
        """
        located = self.locate(path)
        if located is None:
            return {"references": 0, "tests": 0, "found": False, "source": PATTERNS}
        root, rel = located
        with root.index.lock:
            definition = next((d for d in root.index.symbols.in_file(rel) if d.qualname == qualname), None)
            found: dict = {}
            source = PATTERNS
            if definition is not None:
                symbols = (self._provider(root, max_calls=1)
                           or IndexSymbolProvider(root.index, workspace_tables(root.index)))
                found = symbols.references(definition)
                source = symbols.reference_source(definition)
            references = 0
            test_files = set()
            for ref_path, refs in found.items():
                for ref in refs:
                    if ref.name != name:
                        continue
                    if definition and ref_path == rel and definition.start_line <= ref.line <= definition.end_line:
                        continue
                    references += 1
                    if is_test_path(ref_path):
                        test_files.add(ref_path)
        return {"references": references, "tests": len(test_files), "found": definition is not None,
                "start_line": definition.start_line if definition else None, "source": source}

def _index_shape(settings: Settings) -> tuple:
    """The settings that change what an index holds."""
    return settings.ignore, settings.disabled_languages(), settings.cache_dir, settings.max_file_bytes


def _merge(results: list[dict], request: ContextRequest) -> dict:
    """One answer from per-root answers: items by score (ties by root order, path), re-packed to budget."""
    if len(results) == 1:
        return results[0]
    if not results:
        return {"items": [], "elapsed_ms": 0.0, "truncated": False, "index": {"roots": [], "files": 0, "chunks": 0},
                "tokens": 0, "budget_tokens": request.budget_tokens, "token_count": "estimate",
                "warnings": ["no workspace folder is open"]}
    ranked = sorted(
        ((item, order) for order, result in enumerate(results) for item in result["items"]),
        key=lambda pair: (-pair[0]["score"], pair[1], pair[0]["path"], pair[0]["start_line"]),
    )
    items, used = [], 0
    truncated = any(r["truncated"] for r in results)
    for item, _ in ranked:
        if len(items) >= request.top_k:
            truncated = True
            break
        if used + item["tokens"] > request.budget_tokens:
            truncated = True
            continue
        items.append(item)
        used += item["tokens"]
    merged = dict(results[0])
    merged.update(
        items=items,
        truncated=truncated,
        tokens=used,
        index={"roots": [r["index"] for r in results], "files": sum(r["index"]["files"] for r in results),
               "chunks": sum(r["index"]["chunks"] for r in results)},
    )
    warnings = sorted({w for r in results for w in r.get("warnings", ())})
    if warnings:
        merged["warnings"] = warnings
    # A strategy ran if it ran for any root; it was skipped only if it ran for none.
    ran = list(dict.fromkeys(name for r in results for name in r.get("strategies_run", ())))
    skipped = {}
    for result in results:
        for entry in result.get("strategies_skipped", ()):
            if entry["strategy"] not in ran:
                skipped.setdefault(entry["strategy"], entry)
    merged.update(strategies_run=ran, strategies_skipped=list(skipped.values()),
                  language_servers=[note for result in results for note in result.get("language_servers", ())])
    return merged


def _fuzzy_score(needle: str, name: str) -> tuple[int, int] | None:
    """Rank of a name for a workspace-symbol query: exact, prefix, substring, then subsequence; None if no match."""
    lowered = name.lower()
    if not needle:
        return (3, len(name))
    if lowered == needle:
        return (0, len(name))
    if lowered.startswith(needle):
        return (1, len(name))
    if needle in lowered:
        return (2, len(name))
    position = 0
    for char in lowered:
        if position < len(needle) and char == needle[position]:
            position += 1
    return (4, len(name)) if position == len(needle) else None
