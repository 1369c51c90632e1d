"""The documented JSON of typed answers, for tests written against the wire format.

Tests that check what a client receives read the same dictionaries the server
and the command line send (``rag_lsp/server/wire.py``); these helpers ask a
feature and encode its answer in one call.
"""

from __future__ import annotations

from pathlib import Path

from rag_lsp.features.context import answer_context
from rag_lsp.features.lenses import usage_counts
from rag_lsp.features.lookup import lookup
from rag_lsp.features.status import status
from rag_lsp.retrieval.retrieve import retrieve
from rag_lsp.server import wire


def file_uri(path: Path) -> str:
    return path.as_uri()


def context_of(index, request, **options) -> dict:
    """``retrieve`` over one index, as ``rag-lsp context --json`` prints it."""
    return wire.context_json(retrieve(index, request, **options))


def ask(session, request, focus=None, cancel=None) -> dict:
    """``ragLsp/context`` over a session, as the server sends it (each item with its root and URI)."""
    return wire.context_json(answer_context(session, request, focus, cancel), file_uri)


def status_of(subject) -> dict | list[dict]:
    """A session's ``ragLsp/status``, a pool's server entries or one client's entry, as JSON."""
    if hasattr(subject, "roots") and hasattr(subject, "documents"):
        return wire.status_json(status(subject))
    found = subject.status()
    if isinstance(found, list):
        return [wire.server_status_json(entry) for entry in found]
    return wire.server_status_json(found)


def lookup_of(session, symbol: str, what: str, path: Path | None = None) -> dict:
    return wire.lookup_json(lookup(session, symbol, what, path))


def usage_of(session, path: Path, name: str, qualname: str) -> dict:
    return wire.usage_json(usage_counts(session, path, name, qualname))


def notes_of(provider) -> list[dict]:
    return [wire.server_note_json(note) for note in provider.notes()]


def completion_of(engine, request) -> dict:
    return wire.completion_json(engine.context(request))
