"""Embedded vectors on disk: one SQLite file per root, beside the index cache, keyed by text and model.

A vector depends only on the text embedded and the model, so the key is the
git blob id of that text (prefix, description and code) and the embedder's
identity: a chunk whose text did not change is never embedded again, whatever
moved around it, across restarts and across the commits of a checkout. Vectors
are stored as float16 (half the disk; cosines change in the fourth decimal).

Like the index cache it is an optimisation, never a source of failure: any
SQLite error disables it for the run with a warning, and a corrupt file is
discarded.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

FILE_NAME = "vectors.sqlite"
# Keys per SELECT (SQLite's default limit on host parameters is far above it).
LOOKUP_BATCH = 500
_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (
    model TEXT NOT NULL,
    blob_id TEXT NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, blob_id)
) WITHOUT ROWID;
"""


class VectorCache:
    """Read and write vectors by (model identity, text blob id); failures degrade to "not cached"."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.warnings: list[str] = []
        self._db: sqlite3.Connection | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = self._connect()
        except (OSError, sqlite3.Error) as exc:
            self._warn(f"vector cache disabled: cannot open {path}: {exc}")

    def _connect(self) -> sqlite3.Connection:
        try:
            db = sqlite3.connect(self.path, timeout=10, check_same_thread=False)
            db.execute("PRAGMA quick_check").fetchone()
        except sqlite3.DatabaseError as exc:
            self._warn(f"discarding corrupt vector cache {self.path}: {exc}")
            self.path.unlink(missing_ok=True)
            db = sqlite3.connect(self.path, timeout=10, check_same_thread=False)
        db.executescript(_SCHEMA)
        db.commit()
        return db

    def _warn(self, message: str) -> None:
        log.warning(message)
        self.warnings.append(message)

    def get_many(self, model: str, blob_ids: Sequence[str], dim: int | None) -> dict[str, np.ndarray]:
        """The cached vectors among ``blob_ids`` (of dimension ``dim`` when given), as float32."""
        if self._db is None or not blob_ids:
            return {}
        found: dict[str, np.ndarray] = {}
        try:
            for start in range(0, len(blob_ids), LOOKUP_BATCH):
                part = list(blob_ids[start:start + LOOKUP_BATCH])
                rows = self._db.execute(
                    f"SELECT blob_id, vector FROM vectors WHERE model=? AND blob_id IN ({','.join('?' * len(part))})",
                    [model, *part]).fetchall()
                for blob, raw in rows:
                    vector = np.frombuffer(raw, dtype=np.float16).astype(np.float32)
                    if dim is None or len(vector) == dim:
                        found[blob] = vector
        except sqlite3.Error as exc:
            self._fail(exc)
            return {}
        return found

    def put_many(self, model: str, blob_ids: Sequence[str], vectors: np.ndarray) -> None:
        if self._db is None or not len(blob_ids):
            return
        rows = [(model, blob, vector.astype(np.float16).tobytes()) for blob, vector in zip(blob_ids, vectors)]
        try:
            with self._db:
                self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)", rows)
        except sqlite3.Error as exc:
            self._fail(exc)

    def count(self, model: str) -> int:
        if self._db is None:
            return 0
        try:
            return int(self._db.execute("SELECT COUNT(*) FROM vectors WHERE model=?", (model,)).fetchone()[0])
        except sqlite3.Error as exc:
            self._fail(exc)
            return 0

    def retain(self, model: str, blob_ids: set[str]) -> int:
        """Delete this model's vectors of texts no longer indexed; returns how many were deleted."""
        if self._db is None:
            return 0
        try:
            with self._db:
                self._db.execute("CREATE TEMP TABLE IF NOT EXISTS live (blob_id TEXT PRIMARY KEY)")
                self._db.execute("DELETE FROM live")
                self._db.executemany("INSERT OR IGNORE INTO live VALUES (?)", [(blob,) for blob in blob_ids])
                deleted = self._db.execute(
                    "DELETE FROM vectors WHERE model=? AND blob_id NOT IN (SELECT blob_id FROM live)", (model,))
                return deleted.rowcount
        except sqlite3.Error as exc:
            self._fail(exc)
            return 0

    def _fail(self, exc: Exception) -> None:
        self._warn(f"vector cache disabled after an error: {exc}")
        self.close()

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
