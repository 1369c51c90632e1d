"""Which files changed in the last week: git's commits and the edits since git last wrote its index, else
the files' modification times.

A modification time says when a file was written, not when it changed: a fresh clone, a branch switch or a
pull writes every file it touches, and then every place would be "changed this week". In a git checkout a
file changed recently when a commit of the last week touched it, or when it was written after git last wrote
``.git/index`` (an edit not staged yet: a checkout writes the files first and its index last, as git's own
racy-file check assumes). Outside a checkout, or when git is missing, slow or fails, the modification time is
all there is. A file indexed from an editor buffer carries no time: it changed just now.
"""

from __future__ import annotations

import subprocess
import threading
import time
import weakref
from dataclasses import dataclass
from pathlib import Path

from rag_lsp.git import git_dir, is_checkout, run_git
from rag_lsp.index.root_index import Index

RECENT_SECONDS = 7 * 24 * 3600
# How long git's answer is kept: commits and staging happen at human pace, questions at typing pace.
CHECK_SECONDS = 60.0
# The longest the git call may take. Only an index's first question waits for it; later ones are answered from
# the last answer while git is asked again in the background, every ``CHECK_SECONDS``, and after git was too
# slow or failed, every ``RETRY_SECONDS`` (the modification times answer meanwhile).
GIT_TIMEOUT_S = 1.0
RETRY_SECONDS = 600.0
# The most commits read: a repository busier than this in a week gets its latest ones.
MAX_COMMITS = 2000


@dataclass(frozen=True, slots=True)
class Recency:
    """What says a file changed recently: ``committed`` (paths relative to the root, touched by a commit of
    the last week) and ``staged_ns`` (when git last wrote its index, in the nanoseconds of file times: compared
    as floats, a file written in the same tick could seem later), or None for both outside a checkout."""

    now: float
    committed: frozenset[str] | None
    staged_ns: int | None

    def is_recent(self, path: str, mtime_ns: int) -> bool:
        """Whether the file at ``path``, written at ``mtime_ns`` (0 for an editor buffer), changed recently."""
        if not mtime_ns:
            return True
        written = mtime_ns / 1e9
        edited = self.now - written < RECENT_SECONDS
        if self.committed is None or self.staged_ns is None:
            return edited
        return path in self.committed or (edited and mtime_ns > self.staged_ns)


# Each index's last answer and when to ask git again, and the background reads under way.
_KNOWN: weakref.WeakKeyDictionary[Index, tuple[Recency, float]] = weakref.WeakKeyDictionary()
_READING: weakref.WeakKeyDictionary[Index, threading.Thread] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def recency_of(index: Index, now: float | None = None) -> Recency:
    """The index's recency: read from git on its first question; after ``CHECK_SECONDS`` (``RETRY_SECONDS``
    after a failure) git is asked again in the background while the last answer serves, so that a question
    never waits for git once it has answered (a ``git log`` of a large repository takes tens of milliseconds)."""
    now = time.time() if now is None else now
    with _LOCK:
        known = _KNOWN.get(index)
        if known is not None:
            if now >= known[1] and index not in _READING:
                reading = _READING[index] = threading.Thread(target=_read, args=(index, now), daemon=True,
                                                             name="rag-lsp recency")
                reading.start()
            return Recency(now, known[0].committed, known[0].staged_ns)
    return _read(index, now)


def settled(index: Index, timeout: float = 2 * GIT_TIMEOUT_S) -> None:
    """Wait (at most ``timeout`` seconds) for a background read of the index's recency to end."""
    with _LOCK:
        reading = _READING.get(index)
    if reading is not None:
        reading.join(timeout)


def _read(index: Index, now: float) -> Recency:
    """Read the index's recency from git and keep it until the next check is due."""
    try:
        found = read_recency(index.root, now)
        failed = found.committed is None and is_checkout(index.root)
        with _LOCK:
            _KNOWN[index] = (found, now + (RETRY_SECONDS if failed else CHECK_SECONDS))
        return found
    finally:
        with _LOCK:
            _READING.pop(index, None)


def read_recency(root: Path, now: float) -> Recency:
    """Ask git which files a commit of the last week touched, and when its index was written."""
    if not is_checkout(root):
        return Recency(now, None, None)
    arguments = ["log", f"--since=@{int(now - RECENT_SECONDS)}", f"--max-count={MAX_COMMITS}", "--relative",
                 "--name-only", "--no-renames", "--no-ext-diff", "--no-textconv", "--format=", "-z", "--"]
    try:
        done = run_git(root, arguments, GIT_TIMEOUT_S)
        staged_ns = (git_dir(root) / "index").stat().st_mtime_ns
    except (OSError, subprocess.TimeoutExpired):
        return Recency(now, None, None)
    if done.returncode != 0:
        return Recency(now, None, None)
    return Recency(now, frozenset(path.strip("\n") for path in done.stdout.split("\0") if path.strip("\n")),
                   staged_ns)
