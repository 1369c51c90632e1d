"""Server logging: to a log file and to the client's log (window/logMessage), never to stdout.

stdout carries the JSON-RPC stream when serving over stdio, so a stray print
or a default logging handler would corrupt it.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from lsprotocol import types

from rag_lsp.index.cache import default_cache_root

_LEVELS = {
    logging.ERROR: types.MessageType.Error,
    logging.WARNING: types.MessageType.Warning,
    logging.INFO: types.MessageType.Info,
}


class ClientLogHandler(logging.Handler):
    """Forwards records to the client as window/logMessage, from any thread."""

    def __init__(self, server, level: int = logging.INFO) -> None:
        super().__init__(level)
        self.server = server

    def emit(self, record: logging.LogRecord) -> None:
        loop = getattr(self.server, "loop", None)
        if loop is None or loop.is_closed():
            return
        params = types.LogMessageParams(type=_LEVELS.get(record.levelno, types.MessageType.Log),
                                        message=self.format(record))
        try:
            loop.call_soon_threadsafe(self.server.window_log_message, params)
        except RuntimeError:
            # The loop is shutting down; the file log still has the record.
            pass


def default_log_file() -> Path:
    return Path(os.environ.get("RAG_LSP_LOG_FILE") or default_cache_root() / "server.log")


def configure(server, log_file: Path | None, level: int = logging.INFO) -> Path | None:
    """Send rag_lsp's log records to the file and the client; returns the file actually used."""
    logger = logging.getLogger("rag_lsp")
    logger.setLevel(level)
    logger.propagate = False
    formatter = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    used = None
    target = log_file or default_log_file()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        file_handler = logging.FileHandler(target, encoding="utf-8")
        file_handler.setFormatter(formatter)
        logger.addHandler(file_handler)
        used = target
    except OSError:
        # No writable log file: the client's log still gets everything.
        pass
    client = ClientLogHandler(server)
    client.setFormatter(logging.Formatter("%(message)s"))
    logger.addHandler(client)
    return used
