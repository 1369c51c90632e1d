"""``ragLsp/status``: what is indexed, what was skipped and why, the settings in force, and each language
server's state, so a user can see why a file they expected is missing or a server is not answering."""

from __future__ import annotations

from dataclasses import dataclass, replace

from rag_lsp import __version__
from rag_lsp.index.index_records import IndexStats
from rag_lsp.index.vectors.embedding import VectorStatus
from rag_lsp.langservers.spec import ServerStatus
from rag_lsp.workspace.session import Session
from rag_lsp.workspace.settings import Settings


@dataclass(frozen=True, slots=True)
class RootStatus:
    """One root: its index's statistics (counts as of now), settings, and language servers."""

    stats: IndexStats
    settings: Settings
    settings_warnings: tuple[str, ...]
    language_servers: tuple[ServerStatus, ...]
    # The root's chunk vectors (None when no embedder is configured).
    vectors: VectorStatus | None = None


@dataclass(frozen=True, slots=True)
class IndexingStatus:
    done: int
    total: int
    running: bool
    # "pending" (not started), "running" or "done" (workspace/session.py).
    state: str


@dataclass(frozen=True, slots=True)
class Status:
    version: str
    roots: tuple[RootStatus, ...]
    open_documents: int
    indexing: IndexingStatus

    @property
    def files(self) -> int:
        return sum(root.stats.files for root in self.roots)

    @property
    def chunks(self) -> int:
        return sum(root.stats.chunks for root in self.roots)

    @property
    def language_servers(self) -> tuple[ServerStatus, ...]:
        return tuple(server for root in self.roots for server in root.language_servers)


def status(session: Session) -> Status:
    roots = []
    for _, root in session.root_list():
        with root.index.lock:
            stats = replace(root.index.stats, files=len(root.index.files), chunks=len(root.index.chunks),
                            definitions=len(root.index.symbols))
        servers = tuple(root.servers.status()) if root.servers else ()
        vectors = root.vectors.status() if root.vectors else None
        roots.append(RootStatus(stats, root.settings, tuple(root.warnings), servers, vectors))
    indexing = session.indexing
    return Status(__version__, tuple(roots), len(session.documents),
                  IndexingStatus(indexing.done, indexing.total, indexing.running, indexing.state))
