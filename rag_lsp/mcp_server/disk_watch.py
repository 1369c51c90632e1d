"""Following the disk: file events under the workspace roots, for a server whose client sends no edits.

An MCP client never says that a file changed (there is no didChange or didChangeWatchedFiles), so the index
follows the disk. ``watchdog`` asks the operating system for events (inotify on Linux, FSEvents on macOS,
ReadDirectoryChangesW on Windows): a change reaches the index milliseconds after it is written, and the cost
grows with the changes, not with the tree. Polling would cost a walk of every file per interval and still lag
by that interval; it is only the fallback when the native watcher cannot start (Linux's inotify watch limit,
``fs.inotify.max_user_watches``, reached on a very large tree), and the freshness report says which one runs.

Events inside directories the walk never enters by name (``.git``, ``node_modules``, ``__pycache__``, hidden
ones, ...) are dropped here, so a ``git commit`` or an ``npm install`` costs nothing downstream; everything
else goes to ``on_change``, which applies the walk's full admission rules.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver
from watchdog.observers.polling import PollingObserver

from rag_lsp.index.admission import directory_reason

log = logging.getLogger("rag_lsp.mcp")

# How often the polling fallback compares the tree with its last snapshot.
POLL_SECONDS = 2.0
# The events that can change what is indexed (opening, reading and attribute changes cannot). With inotify a
# file is written when its writer closes it: "modified" events come while it is still being written, and
# indexing a half-written file would answer from text that never existed. Its "created" event counts only
# when the file already has content (one moved in from outside the roots); an empty new file is indexed when
# its writer closes it. Watchers that report no closes (polling, FSEvents, Windows) report creations and
# modifications instead. A directory that appears (moved in, or copied) has its files indexed.
STRUCTURE: list[type[FileSystemEvent]] = [FileDeletedEvent, FileMovedEvent, DirDeletedEvent, DirMovedEvent,
                                          DirCreatedEvent]
WRITES_CLOSED: list[type[FileSystemEvent]] = [FileClosedEvent, FileCreatedEvent]
WRITES: list[type[FileSystemEvent]] = [FileCreatedEvent, FileModifiedEvent]
# What ``on_change`` is told: a file was created or changed, a directory appeared, a file or directory was
# deleted, or moved (then with its destination).
CHANGED, APPEARED, DELETED, MOVED = "changed", "appeared", "deleted", "moved"
OnChange = Callable[[str, Path, Path | None], None]


class DiskWatcher:
    """Watches every root recursively and reports the changes that may concern the index."""

    def __init__(self, roots: list[Path], on_change: OnChange, polling: bool = False) -> None:
        self.roots = [root.resolve() for root in roots]
        self.on_change = on_change
        self.polling = polling
        # "inotify", "fsevents", "kqueue", "windows", "polling", or "off" (with ``error`` saying why).
        self.kind = "off"
        self.error: str | None = None
        # Whether the watcher reports a writer closing a file (then creations count only with content).
        self.closes = False
        self._observer: BaseObserver | None = None

    def start(self) -> None:
        """Start watching; a native watcher that fails falls back to polling, and polling that fails to none."""
        attempts: list[Callable[[], BaseObserver]] = [] if self.polling else [Observer]
        attempts.append(lambda: PollingObserver(timeout=POLL_SECONDS))
        for make in attempts:
            observer = make()
            try:
                handler = _Handler(self)
                self.closes = _kind(observer) == "inotify"
                writes = WRITES_CLOSED if self.closes else WRITES
                for root in self.roots:
                    observer.schedule(handler, str(root), recursive=True, event_filter=[*writes, *STRUCTURE])
                observer.start()
            except OSError as exc:
                self.error = f"{type(observer).__name__}: {exc.strerror or exc}"
                log.warning("cannot watch the workspace with %s", self.error)
                _stop(observer)
                continue
            self._observer, self.kind, self.error = observer, _kind(observer), None
            return

    def stop(self) -> None:
        observer, self._observer = self._observer, None
        if observer is not None:
            _stop(observer)

    def concerns(self, path: Path) -> bool:
        """Whether a path is under a root and outside every directory the walk prunes by its name."""
        for root in self.roots:
            if path != root and root in path.parents:
                parts = path.relative_to(root).parts[:-1]
                return not any(directory_reason(name, os.path.join(root, *parts[: i + 1]))
                               for i, name in enumerate(parts))
        return False


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: DiskWatcher) -> None:
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        source = Path(os.fsdecode(event.src_path))
        if isinstance(event, FileMovedEvent | DirMovedEvent):
            destination = Path(os.fsdecode(event.dest_path))
            if self.watcher.concerns(source) or self.watcher.concerns(destination):
                self.watcher.on_change(MOVED, source, destination)
        elif not self.watcher.concerns(source):
            return
        elif isinstance(event, FileDeletedEvent | DirDeletedEvent):
            self.watcher.on_change(DELETED, source, None)
        elif isinstance(event, DirCreatedEvent):
            self.watcher.on_change(APPEARED, source, None)
        elif not (self.watcher.closes and isinstance(event, FileCreatedEvent) and _empty(source)):
            self.watcher.on_change(CHANGED, source, None)


def _empty(path: Path) -> bool:
    try:
        return path.stat().st_size == 0
    except OSError:
        return True


def _kind(observer: BaseObserver) -> str:
    name = type(observer).__name__
    return {"InotifyObserver": "inotify", "FSEventsObserver": "fsevents", "KqueueObserver": "kqueue",
            "WindowsApiObserver": "windows", "PollingObserver": "polling"}.get(name, name)


def _stop(observer: BaseObserver) -> None:
    observer.stop()
    if observer.is_alive():
        observer.join(timeout=5)
