"""The plain records of an index (``root_index.py``): what it remembers of a file, how much it may hold, and the
statistics of a refresh, which the status and the command line's text report."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rag_lsp.index.walk import WalkedFile


@dataclass(slots=True)
class FileEntry:
    """What the index remembers about one indexed file."""

    blob_id: str
    language: str
    size: int
    mtime_ns: int
    chunk_ids: list[int]
    error: str | None = None


@dataclass(frozen=True, slots=True)
class IndexBudget:
    """How much one root's index may hold and how long one refresh may take (``seconds`` 0: no limit).

    Files are taken in the walk's path order until the file or byte budget is
    spent, so the same tree always keeps the same files.
    """

    files: int = 200_000
    bytes: int = 2 << 30
    seconds: float = 0

    def spent(self, root: object, which: str) -> str:
        """What an answer says of ``root``'s index when a refresh stopped at the budget ``which``."""
        return (f"the index of {root} is truncated: its {which} budget is spent (maxIndexFiles {self.files}, "
                f"maxIndexBytes {self.bytes}, maxIndexSeconds {self.seconds:g})")

    def first_files(self, candidates: list[WalkedFile]) -> tuple[list[WalkedFile], str | None]:
        """The walk's first files that fit the file and byte budgets, and which budget cut the rest."""
        if len(candidates) > self.files:
            candidates, cut = candidates[: self.files], "files"
        else:
            cut = None
        total = 0
        for position, walked in enumerate(candidates):
            total += walked.size
            if total > self.bytes:
                return candidates[:position], "bytes"
        return candidates, cut


@dataclass(slots=True)
class IndexStats:
    """Counts that describe the index after a refresh, reported by ``rag-lsp index``."""

    root: str
    files: int = 0
    chunks: int = 0
    definitions: int = 0
    languages: Counter = field(default_factory=Counter)
    skipped: Counter = field(default_factory=Counter)
    skip_examples: dict[str, list[str]] = field(default_factory=dict)
    parse_errors: int = 0
    parse_error_examples: list[str] = field(default_factory=list)
    parsed: int = 0
    reused: int = 0
    removed: int = 0
    elapsed_ms: float = 0.0
    cache: str | None = None
    warnings: list[str] = field(default_factory=list)
    # Which budget left files out of the index ("files", "bytes", "seconds"), or None.
    truncated: str | None = None


# The budget of an index made without one (the budgets' own defaults).
DEFAULT_BUDGET = IndexBudget()
