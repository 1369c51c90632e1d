"""Provenance and staleness: the commit a root has checked out, whether it moved since the last answer, and
which places the caller already holds.

Every place names the git blob id of the text it came from (the index keeps git's id of each file's bytes) and
the commit checked out, so an assistant can tell whether what it read is still what is on disk. The commit is
read from the files under ``.git`` (``HEAD``, then the loose ref or ``packed-refs``; worktrees through their
``gitdir`` and ``commondir``) rather than by running git: it costs three small reads per question, never a
process, and answers the same while nothing changes. A root that is not in a git checkout has no commit.

A checkout that moved (another branch checked out, a pull) changes what the index should hold; the next
answer says so once per root (``Checkout.moved_from``), then the new commit is the one remembered.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from rag_lsp.index.root_index import Index

_OBJECT_ID = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
# Directories climbed from a root to find its repository (a root may be a folder inside one).
MAX_PARENTS = 64


@dataclass(frozen=True, slots=True)
class Checkout:
    """A root's checkout when an answer was made: its commit and branch (None outside git, or detached), and
    the ``branch@commit`` it had at the previous answer when that differs (said once)."""

    root: str
    commit: str | None
    branch: str | None = None
    moved_from: str | None = None

    @property
    def label(self) -> str:
        commit = self.commit[:12] if self.commit else "no commit"
        return f"{self.branch}@{commit}" if self.branch else commit


def read_checkout(root: Path) -> tuple[str | None, str | None]:
    """The commit and branch checked out for ``root`` (either None when unknown)."""
    git_dir = _git_dir(root)
    if git_dir is None:
        return None, None
    head = _read(git_dir / "HEAD")
    if head is None:
        return None, None
    if _OBJECT_ID.match(head):
        return head, None
    if not head.startswith("ref: "):
        return None, None
    ref = head[5:].strip()
    branch = ref.removeprefix("refs/heads/")
    common = git_dir
    if (pointer := _read(git_dir / "commondir")) is not None:
        common = (git_dir / pointer).resolve()
    for folder in dict.fromkeys((git_dir, common)):
        value = _read(folder / ref)
        if value is not None and _OBJECT_ID.match(value):
            return value, branch
    packed = _read(common / "packed-refs") or ""
    for line in packed.splitlines():
        parts = line.split(" ", 1)
        if len(parts) == 2 and parts[1] == ref and _OBJECT_ID.match(parts[0]):
            return parts[0], branch
    # A branch without commits yet.
    return None, branch


def _git_dir(root: Path) -> Path | None:
    for folder in [root, *list(root.parents)[:MAX_PARENTS]]:
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return dot_git
        if dot_git.is_file():
            pointer = _read(dot_git) or ""
            if pointer.startswith("gitdir: "):
                return (folder / pointer[8:].strip()).resolve()
            return None
    return None


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


class CheckoutWatch:
    """The checkout each index was last answered from, so that a move is said once, in the next answer."""

    def __init__(self) -> None:
        self._seen: weakref.WeakKeyDictionary[Index, tuple[str | None, str | None]] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def observe(self, index: Index) -> Checkout:
        commit, branch = read_checkout(index.root)
        with self._lock:
            before = self._seen.get(index)
            self._seen[index] = (commit, branch)
        moved = None
        if before is not None and before != (commit, branch):
            moved = Checkout(str(index.root), before[0], before[1]).label
        return Checkout(str(index.root), commit, branch, moved)


# One per process: the language server and the MCP server keep their indexes for their lifetime.
WATCH = CheckoutWatch()


def moved_warnings(checkouts: Iterable[Checkout]) -> list[str]:
    """The sentence an answer carries for each root whose checkout moved since the previous answer."""
    return [f"the checkout of {c.root} moved from {c.moved_from} to {c.label} since the last answer: places "
            f"and blob ids are from the files as they are now" for c in checkouts if c.moved_from is not None]


def known_blob(known: dict[str, str], root: str, path: str) -> str | None:
    """The blob id the caller holds for a place's file, by its path relative to the root or absolute."""
    return known.get(path) or known.get(str(Path(root) / path))
