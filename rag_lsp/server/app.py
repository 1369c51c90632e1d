"""The rag_lsp language server: ``build_server`` registers every handler on a ``RagServer``.

Handlers stay thin (``lifecycle``, ``notifications``, ``requests``,
``code_lens``): decode params (``convert``, ``params``), call a feature over
the session, encode the answer (``wire``).
"""

from __future__ import annotations

from pathlib import Path

from rag_lsp.server import code_lens, lifecycle, notifications, requests
from rag_lsp.server.language_server import RagServer


def build_server(cache_root: Path | None = None, use_cache: bool = True) -> RagServer:
    """A server with every handler registered."""
    server = RagServer(cache_root=cache_root, use_cache=use_cache)
    for module in (lifecycle, notifications, requests, code_lens):
        module.register(server)
    return server
