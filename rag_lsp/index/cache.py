"""The on-disk index cache: one SQLite file per workspace root.

A file's parse result (chunks, definitions, references, imports and the BM25
tokens of each chunk) is stored with the file's git blob id, size and mtime.
A warm start trusts size and mtime like git's index does, and otherwise
re-reads the file and reuses the stored result when the blob id still
matches, so only changed content is parsed again.

The cache is an optimisation and never a source of failure: a corrupt file,
a schema from another version of rag_lsp or an unwritable directory is
discarded or bypassed with a warning.
"""

from __future__ import annotations

import hashlib
import logging
import marshal
import os
import secrets
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, wraps
from importlib import resources
from pathlib import Path
from typing import Concatenate, ParamSpec, TypeVar

from rag_lsp import __version__, redaction
from rag_lsp.model import Chunk, Definition, Import, ParsedFile, Reference

log = logging.getLogger(__name__)

SCHEMA_VERSION = 3
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    blob_id TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    payload BLOB NOT NULL
);
"""


@dataclass(slots=True)
class CachedFile:
    """One file's cached parse result and the tokens of each of its chunks.

    ``payload`` is the row's encoded form when it is known already (read from the database, or made by the
    parse worker that produced the result), so that storing the file does not encode it again.
    """

    parsed: ParsedFile
    tokens: list[list[str]]
    size: int
    mtime_ns: int
    payload: bytes | None = None


def default_cache_root() -> Path:
    """``$RAG_LSP_CACHE_DIR``, else ``$XDG_CACHE_HOME/rag-lsp``, else ``~/.cache/rag-lsp``."""
    explicit = os.environ.get("RAG_LSP_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "rag-lsp"


def cache_path_for(root: Path, cache_root: Path | None = None) -> Path:
    """The SQLite file of one workspace root: a readable name plus a hash of the absolute path."""
    resolved = root.resolve()
    digest = hashlib.sha1(str(resolved).encode("utf-8")).hexdigest()[:16]
    return (cache_root or default_cache_root()) / f"{resolved.name or 'root'}-{digest}" / "index.sqlite"


# The data files that decide what parsing a file yields.
PARSE_TABLES = ("data/languages.toml", "data/declarations.toml")


@cache
def fingerprint() -> str:
    """Identifies everything a cached parse result depends on besides the content.

    Changing a query file (fragments included), the language table, the
    declaration patterns, the secret-masking rules or rag_lsp's version makes
    every cached result stale, so they are hashed together (a cache built
    before secrets were masked is never read).
    """
    digest = hashlib.sha1(f"{SCHEMA_VERSION}:{__version__}:{redaction.RULES_VERSION}".encode())
    package = resources.files("rag_lsp")
    for table in PARSE_TABLES:
        digest.update(package.joinpath(table).read_bytes())
    queries = package.joinpath("queries")
    for language in sorted(queries.iterdir(), key=lambda p: p.name):
        if language.is_dir():
            for query in sorted(language.iterdir(), key=lambda p: p.name):
                digest.update(f"{language.name}/{query.name}".encode())
                digest.update(query.read_bytes())
    return digest.hexdigest()



P = ParamSpec("P")
R = TypeVar("R")


def _serialised(method: Callable[Concatenate[IndexCache, P], R]) -> Callable[Concatenate[IndexCache, P], R]:
    """One database call at a time per cache. The indexing thread writes while a shutdown (or a removed root)
    closes the connection from another thread; closing a SQLite connection in use crashes the process, so a
    close waits for the write in progress, and calls after it find no connection and do nothing."""
    @wraps(method)
    def serialised(self: IndexCache, *args: P.args, **kwargs: P.kwargs) -> R:
        with self._lock:
            return method(self, *args, **kwargs)
    return serialised


class IndexCache:
    """Read and write cached parse results; every failure degrades to "not cached".

    The connection may be used from several threads (the language server indexes
    on one and closes on another); sqlite3 serialises access to it.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        # The whole index in bulk form (``store/snapshot.py``), beside the database and discarded with it.
        self.snapshot_path = path.with_name("index.snapshot")
        self.epoch = ""
        self.warnings: list[str] = []
        self._db: sqlite3.Connection | None = None
        # One connection, used by the indexing thread and closed by shutdown on another: see ``_serialised``.
        self._lock = threading.RLock()
        # The check of the database's pages, running beside the caller until the database is first used.
        self._check: threading.Thread | None = None
        self._damage: str | None = None
        self._renewed = False
        self._open()

    @property
    def available(self) -> bool:
        return self._db is not None

    def _open(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = self._connect()
        except (OSError, sqlite3.Error) as exc:
            self._warn(f"cache disabled: cannot open {self.path}: {exc}")
            self._db = None

    def _connect(self) -> sqlite3.Connection:
        """Connect, first discarding a file that is unreadable or from another version, and start the check of
        its pages (``_start_check``)."""
        try:
            db = sqlite3.connect(self.path, timeout=10, check_same_thread=False)
            if not self._usable(db):
                db.close()
                self._delete_files()
                db = sqlite3.connect(self.path, timeout=10, check_same_thread=False)
        except sqlite3.DatabaseError as exc:
            self._warn(f"discarding corrupt cache {self.path}: {exc}")
            self._delete_files()
            db = sqlite3.connect(self.path, timeout=10, check_same_thread=False)
        # No sync to disk at each commit (a cold index of Django commits 42 batches, about a second of waiting):
        # the database is a cache, a crash of the process cannot damage it, and one that a crash of the machine
        # damaged fails the check at the next open and is rebuilt.
        db.execute("PRAGMA synchronous=OFF")
        db.executescript(_SCHEMA)
        db.execute("INSERT OR REPLACE INTO meta VALUES ('fingerprint', ?)", (fingerprint(),))
        # The database's identity: a snapshot written beside another database (one since discarded) is stale.
        db.execute("INSERT OR IGNORE INTO meta VALUES ('epoch', ?)", (secrets.token_hex(8),))
        db.commit()
        self.epoch = db.execute("SELECT value FROM meta WHERE key='epoch'").fetchone()[0]
        self._start_check()
        return db

    def _start_check(self) -> None:
        """Check every page of the database on a thread of its own, while the caller loads the snapshot and
        walks the tree; the first use of the database waits for the verdict (``_settled``).

        ``PRAGMA quick_check`` reads the whole file (60–100 ms for Django's 83 MB, a twentieth of a warm
        start, which mostly never reads the database) and SQLite runs it without holding the interpreter.
        A damaged page is reported as a row, not always raised: a database that fails the check is rebuilt
        before it is used rather than failing halfway through a refresh.
        """
        self._damage = None

        def check() -> None:
            try:
                db = sqlite3.connect(self.path, timeout=10, check_same_thread=False)
                try:
                    row = db.execute("PRAGMA quick_check").fetchone()
                finally:
                    db.close()
                self._damage = None if row == ("ok",) else (row[0] if row else "no answer")
            except sqlite3.Error as exc:
                self._damage = str(exc)

        self._check = threading.Thread(target=check, name="rag-lsp-cache-check", daemon=True)
        self._check.start()

    def _settled(self) -> None:
        """Wait for the check of the pages; a damaged database is discarded (with the snapshot beside it) and
        started anew, empty."""
        check, self._check = self._check, None
        if check is None:
            return
        check.join()
        if self._damage is None or self._db is None:
            return
        self._warn(f"discarding corrupt cache {self.path}: {self._damage}")
        self._db.close()
        self._db = None
        self._delete_files()
        self._renewed = True
        self._open()

    @_serialised
    def settle(self) -> bool:
        """Wait for the check of the database's pages; True when it was found damaged and started anew (empty,
        under a new epoch, its snapshot gone) since the last call."""
        self._settled()
        renewed, self._renewed = self._renewed, False
        return renewed

    def _usable(self, db: sqlite3.Connection) -> bool:
        """True for an empty database or one written with the current fingerprint (its pages are checked
        beside the caller, ``_start_check``)."""
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not tables:
            return True
        if {"meta", "files"} <= tables:
            row = db.execute("SELECT value FROM meta WHERE key='fingerprint'").fetchone()
            if row and row[0] == fingerprint():
                return True
        self._warn(f"discarding cache built by another rag_lsp version: {self.path}")
        return False

    def _delete_files(self) -> None:
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)
        self.discard_snapshot()

    def discard_snapshot(self) -> None:
        """Remove the snapshot beside the database, if the file system lets us (a rebuild replaces it anyway)."""
        try:
            self.snapshot_path.unlink(missing_ok=True)
        except OSError as exc:
            log.info("cannot remove %s: %s", self.snapshot_path, exc)

    def warn(self, message: str) -> None:
        """Record a problem of the cache (reported with the index statistics) and log it."""
        self._warn(message)

    def _warn(self, message: str) -> None:
        log.warning(message)
        self.warnings.append(message)

    @_serialised
    def load_all(self) -> dict[str, tuple[str, int, int]]:
        """path → (blob_id, size, mtime_ns) for every cached file."""
        self._settled()
        if self._db is None:
            return {}
        try:
            rows = self._db.execute("SELECT path, blob_id, size, mtime_ns FROM files").fetchall()
        except sqlite3.Error as exc:
            self._fail(exc)
            return {}
        return {path: (blob, size, mtime) for path, blob, size, mtime in rows}

    @_serialised
    def get(self, path: str, blob_id: str | None = None) -> CachedFile | None:
        """The cached result for a path (only if its blob id matches, when one is given)."""
        self._settled()
        if self._db is None:
            return None
        try:
            row = self._db.execute(
                "SELECT blob_id, size, mtime_ns, payload FROM files WHERE path=?", (path,)
            ).fetchone()
            if row is None or (blob_id is not None and row[0] != blob_id):
                return None
            return decode(path, row[0], row[1], row[2], row[3])
        except (sqlite3.Error, ValueError, KeyError, TypeError, EOFError) as exc:
            self._fail(exc)
            return None

    @_serialised
    def put_many(self, entries: list[CachedFile]) -> None:
        self._settled()
        if self._db is None or not entries:
            return
        try:
            with self._db:
                self._db.executemany(
                    "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?)",
                    [(e.parsed.path, e.parsed.blob_id, e.size, e.mtime_ns,
                      e.payload if e.payload is not None else encode(e.parsed, e.tokens)) for e in entries],
                )
        except sqlite3.Error as exc:
            self._fail(exc)

    @_serialised
    def restamp(self, path: str, size: int, mtime_ns: int) -> None:
        """A file's content is unchanged but its size and mtime are new (a touch, a checkout)."""
        self._settled()
        if self._db is None:
            return
        try:
            with self._db:
                self._db.execute("UPDATE files SET size=?, mtime_ns=? WHERE path=?", (size, mtime_ns, path))
        except sqlite3.Error as exc:
            self._fail(exc)

    @_serialised
    def delete_many(self, paths: list[str]) -> None:
        self._settled()
        if self._db is None or not paths:
            return
        try:
            with self._db:
                self._db.executemany("DELETE FROM files WHERE path=?", [(p,) for p in paths])
        except sqlite3.Error as exc:
            self._fail(exc)

    def _fail(self, exc: Exception) -> None:
        """A failure mid-run: stop using the cache for this run and rebuild it next time."""
        self._warn(f"cache disabled after an error, it will be rebuilt: {exc}")
        self.close()
        self._delete_files()

    @_serialised
    def close(self) -> None:
        if self._check is not None:
            self._check.join()
            self._check = None
        if self._db is not None:
            self._db.close()
            self._db = None


def encode(parsed: ParsedFile, tokens: list[list[str]]) -> bytes:
    """A file's row payload: plain lists and strings (its path and blob id are columns of their own).

    A parse worker encodes its result itself: the payload is smaller and
    quicker to send back than the objects, and the main process stores it as
    is and builds the objects with ``decode``.
    """
    payload = {
        "language": parsed.language,
        "error": parsed.error,
        "chunks": [[getattr(c, f) for f in _CHUNK_FIELDS] for c in parsed.chunks],
        "definitions": [[getattr(d, f) for f in _DEFINITION_FIELDS] for d in parsed.definitions],
        "references": [[r.name, r.line, r.kind] for r in parsed.references],
        "imports": [[i.module, i.line, list(i.names), [list(pair) for pair in i.aliases]] for i in parsed.imports],
        "tokens": [" ".join(chunk_tokens) for chunk_tokens in tokens],
    }
    # marshal, not JSON: decoding is what a warm start spends its time on, and marshal reads
    # plain lists and strings several times faster. It never runs code, unlike pickle.
    return marshal.dumps(payload)


def decode(path: str, blob: str, size: int, mtime_ns: int, raw: bytes) -> CachedFile:
    """The ``CachedFile`` a payload of ``encode`` holds; the objects are built by position (a cold index
    decodes every file's result, a warm start from the database every cached file)."""
    payload = marshal.loads(raw)
    language = payload["language"]
    parsed = ParsedFile(
        path=path,
        language=language,
        blob_id=blob,
        chunks=[Chunk(path, start_line, end_line, start_byte, end_byte, symbol, qualname, kind, language, blob, content)
                for start_line, end_line, start_byte, end_byte, symbol, qualname, kind, content in payload["chunks"]],
        definitions=[Definition(name, qualname, kind, path, start_line, end_line, start_byte, end_byte, container)
                     for name, qualname, kind, start_line, end_line, start_byte, end_byte, container
                     in payload["definitions"]],
        references=[Reference(name, path, line, kind) for name, line, kind in payload["references"]],
        imports=[Import(module, path, line, tuple(names), tuple(tuple(pair) for pair in aliases))
                 for module, line, names, aliases in payload["imports"]],
        error=payload["error"],
    )
    tokens = [text.split(" ") if text else [] for text in payload["tokens"]]
    return CachedFile(parsed, tokens, size, mtime_ns, raw)


# The payload's columns of a chunk and of a definition, in the order of their fields (``decode`` unpacks them in
# this order).
_CHUNK_FIELDS = tuple(f for f in Chunk._fields if f not in ("path", "language", "blob_id"))
_DEFINITION_FIELDS = tuple(f for f in Definition._fields if f != "path")


class CachedStamps:
    """The cache's (blob id, size, mtime) per path, read from the database only when first needed.

    A warm start whose snapshot matches every file never reads them.
    """

    def __init__(self, cache: IndexCache | None) -> None:
        self._cache = cache
        self._stamps: dict[str, tuple[str, int, int]] | None = None

    def get(self, path: str) -> tuple[str, int, int] | None:
        if self._stamps is None:
            self._stamps = self._cache.load_all() if self._cache else {}
        return self._stamps.get(path)

    def loaded(self) -> set[str]:
        return set(self._stamps or ())
