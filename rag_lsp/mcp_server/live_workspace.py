"""``LiveWorkspace``: the session an MCP server answers from, indexed in the background and kept in step with
the disk, and the one call that turns a tool call into its JSON and text.

Threads, as in ``rag-lsp serve``: the first indexing runs on its own thread and installs files in locked
batches, so a call during it answers from what is indexed so far (and says so); disk events are applied in
arrival order on one writer thread, coalesced per path, and only once the first indexing is done (a refresh
that read a file before an event must not install its older text after it). A call waits for every event
received before it, so an answer reflects every change the watcher had seen when it was asked; the
``freshness`` of each answer says when the index last changed and how many events were still pending.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from rag_lsp.completion.engine import CompletionEngine, CompletionError, PositionError
from rag_lsp.features.context import answer_context
from rag_lsp.features.lookup import lookup
from rag_lsp.features.status import status
from rag_lsp.index.admission import directory_reason
from rag_lsp.index.walk import skip_reason
from rag_lsp.mcp_server.disk_watch import APPEARED, CHANGED, DELETED, DiskWatcher
from rag_lsp.mcp_server.tools import CompletionCall, ContextCall, LookupCall, ToolCall, decode
from rag_lsp.server import readable, wire
from rag_lsp.server.arguments import ArgumentError
from rag_lsp.workspace.session import Session

log = logging.getLogger("rag_lsp.mcp")

Json = dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolAnswer:
    """A tool's result: the documented JSON (with ``freshness``) and the text an agent reads."""

    result: Json
    text: str


@dataclass(slots=True)
class _Events:
    """Disk events received and not yet applied, by path (the last one wins), and what was applied."""

    queued: dict[Path, tuple[str, Path | None]]
    in_flight: int = 0
    scheduled: bool = False
    applied: int = 0
    # Wall-clock time of the last change to the index (the first indexing's end, then each batch of events).
    updated_at: float | None = None


class LiveWorkspace:
    """A ``Session`` over some roots with its completion engine, first indexing, disk watcher and writer."""

    def __init__(self, roots: list[Path], cache_root: Path | None = None, use_cache: bool = True,
                 language_servers: bool = True, polling: bool = False) -> None:
        self.session = Session(cache_root=cache_root, use_cache=use_cache, language_servers=language_servers)
        self.warnings: list[str] = []
        for root in roots:
            self.warnings.extend(self.session.add_root(root))
        self.engine = CompletionEngine(self.session)
        self.watcher = DiskWatcher([path for path, _ in self.session.root_list()], self._received, polling)
        self._events = _Events({})
        self._lock = threading.Lock()
        self._indexed = threading.Event()
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rag-lsp-mcp-writer")
        self._indexer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rag-lsp-mcp-indexer")

    # Lifecycle.

    def start(self) -> None:
        """Watch first, then index: a change made while the first indexing runs is applied after it."""
        self.watcher.start()
        self._indexer.submit(self._index)

    def _index(self) -> None:
        try:
            for stats in self.session.index_roots():
                log.info("indexed %s: %d files, %d chunks in %.0f ms", stats.root, stats.files, stats.chunks,
                         stats.elapsed_ms)
                for warning in stats.warnings:
                    log.warning("%s", warning)
        except Exception:
            log.exception("indexing failed")
        finally:
            with self._lock:
                self._events.updated_at = time.time()
            self._indexed.set()
        # What the language server does once its indexing is done: the first tool call then answers in the
        # usual time (``Session.prepare_answers``).
        try:
            self.session.prepare_answers()
        except Exception:
            log.exception("preparing for answers failed")

    def wait_indexed(self, seconds: float | None = None) -> bool:
        return self._indexed.wait(seconds)

    def close(self) -> None:
        """Stop watching, drop pending events, stop the language servers and close the indexes."""
        self.watcher.stop()
        # Events wait for the first indexing; a close during it must not leave the writer waiting forever.
        self._indexed.set()
        self._writer.shutdown(wait=True, cancel_futures=True)
        self._indexer.shutdown(wait=False, cancel_futures=True)
        self.session.close()

    # Disk events.

    def _received(self, kind: str, path: Path, destination: Path | None) -> None:
        """Queue an event (watcher thread); the writer applies the queue in one pass."""
        with self._lock:
            self._events.queued[path] = (kind, destination)
            if self._events.scheduled:
                return
            self._events.scheduled = True
        self._writer.submit(self._apply_events)

    def _apply_events(self) -> None:
        self._indexed.wait()
        with self._lock:
            batch, self._events.queued = self._events.queued, {}
            self._events.scheduled = False
            self._events.in_flight = len(batch)
        try:
            for path, (kind, destination) in batch.items():
                try:
                    self._apply(kind, path, destination)
                except Exception:
                    log.exception("cannot apply the change to %s", path)
        finally:
            with self._lock:
                self._events.in_flight = 0
                self._events.applied += len(batch)
                self._events.updated_at = time.time()

    def _apply(self, kind: str, path: Path, destination: Path | None) -> None:
        if kind == DELETED:
            self.session.file_deleted(path)
        elif kind == CHANGED:
            self._changed(path)
        elif kind == APPEARED:
            self._appeared(path)
        elif destination is not None and destination.is_dir():
            self.session.file_renamed(path, destination)
        else:
            self.session.file_deleted(path)
            self._changed(destination or path)

    def _changed(self, path: Path) -> None:
        """Index a file the walk would index; drop one it would leave out (ignored, secret, too large...)
        without reading it."""
        located = self.session.locate(path)
        if located is None:
            return
        root, rel = located
        if path.is_dir():
            return
        if skip_reason(root.index.root, rel, root.index.admission) is None:
            self.session.file_changed(path)
        else:
            self.session.file_deleted(path)

    def _appeared(self, directory: Path) -> None:
        """Index the files of a directory that appeared, in path order, skipping what the walk prunes."""
        for parent, names, files in os.walk(directory):
            names[:] = sorted(name for name in names if not directory_reason(name, os.path.join(parent, name)))
            for name in sorted(files):
                self._changed(Path(parent) / name)

    def _after_events(self) -> None:
        """Wait until every event received so far is applied (once the first indexing is done)."""
        if self._indexed.is_set():
            self._writer.submit(lambda: None).result()

    def freshness(self) -> Json:
        """How current the index is: when it last changed, what is still pending, and how the disk is watched."""
        with self._lock:
            events = self._events
            pending = len(events.queued) + events.in_flight
            updated = events.updated_at
            applied = events.applied
        indexed_at = datetime.fromtimestamp(updated, UTC).isoformat(timespec="milliseconds") if updated else None
        return {
            "indexed_at": indexed_at,
            "seconds_since_update": round(time.time() - updated, 3) if updated else None,
            "indexing": not self._indexed.is_set(),
            "pending_events": pending,
            "events_applied": applied,
            "watcher": self.watcher.kind,
            "watcher_error": self.watcher.error,
        }

    # Tool calls.

    def resolve_file(self, name: str, value: object) -> Path:
        """A file argument (an absolute path, a ``file:`` URI, or a path relative to a root) → an absolute
        path of an existing file inside a workspace root that is not a secret."""
        if not isinstance(value, str) or not value.strip():
            raise ArgumentError(f"'{name}' must be a file path, got {value!r}")
        text = value.strip()
        if text.startswith("file:"):
            text = unquote(urlparse(text).path)
        candidates = [Path(text)] if Path(text).is_absolute() else [root / text for root, _ in self.session.root_list()]
        for candidate in candidates:
            path = candidate.resolve()
            located = self.session.locate(path)
            if located is None or not path.is_file():
                continue
            if skip_reason(located[0].index.root, located[1], located[0].index.admission) == "secret":
                raise ArgumentError(f"'{name}' names a secret file, which rag_lsp never reads: {value}")
            return path
        roots = ", ".join(str(root) for root, _ in self.session.root_list())
        raise ArgumentError(f"'{name}' is not a file inside the workspace ({roots}): {value}")

    def call(self, name: str, arguments: object, cancel: threading.Event | None = None) -> ToolAnswer:
        """Answer one tool call (blocking: run it off the event loop). Raises ArgumentError for bad
        arguments, with a message for the agent."""
        decoded = decode(name, arguments, self.session.settings_for(), self.resolve_file)
        self._after_events()
        with self.session.answering():
            encoded, text = self._answer(decoded, cancel)
        fresh = self.freshness()
        encoded["freshness"] = fresh
        if decoded.format == "json":
            text = json.dumps(encoded, indent=2, ensure_ascii=False)
        elif decoded.format == "prompt":
            # The block alone: it goes into cached prompt prefixes, where a freshness line would change it.
            pass
        else:
            text = f"{text}\n\n{_freshness_line(fresh)}"
        # The index files' pages the answer read stay counted in the process's resident size until dropped
        # (``Session.bound_mapped``: nothing to do until they pass its budget, a few milliseconds when they do).
        self.session.bound_mapped()
        return ToolAnswer(encoded, text)

    def _answer(self, call: ToolCall, cancel: threading.Event | None) -> tuple[Json, str]:
        if isinstance(call, ContextCall):
            answer = answer_context(self.session, call.request, cancel=cancel, knobs=call.knobs)
            locations = call.format == "locations"
            shown = replace(answer, items=tuple(replace(item, content="") for item in answer.items)) \
                if locations else answer
            encoded = wire.context_json(answer, _uri, content=not locations, prompt=call.format == "prompt")
            text = encoded["prompt"] if call.format == "prompt" else readable.context_text(shown, absolute=True)
            return encoded, text
        if isinstance(call, LookupCall):
            answer = lookup(self.session, call.symbol, call.what, call.path)
            return wire.lookup_json(answer, _uri), readable.lookup_text(answer, absolute=True)
        if isinstance(call, CompletionCall):
            try:
                completion = self.engine.context(call.request)
            except PositionError as exc:
                raise ArgumentError(f"'line'/'column': {exc}") from None
            except CompletionError as exc:
                raise ArgumentError(f"'file': {exc}") from None
            return wire.completion_json(completion, _uri), readable.completion_text(completion)
        report = status(self.session)
        return wire.status_json(report), readable.status_text(report)


def _uri(path: Path) -> str:
    return path.as_uri()


def _freshness_line(fresh: Json) -> str:
    if fresh["indexing"]:
        state = "still indexing: this answer is from the files indexed so far"
    else:
        state = f"index updated {fresh['seconds_since_update']:.1f} s ago ({fresh['indexed_at']})"
    pending = f", {fresh['pending_events']} file changes pending" if fresh["pending_events"] else ""
    watching = (f"following the disk ({fresh['watcher']})" if fresh["watcher"] != "off"
                else f"not following the disk ({fresh['watcher_error']})")
    return f"[rag-lsp: {state}{pending}; {watching}]"
