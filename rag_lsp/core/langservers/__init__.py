"""Real language servers as child processes, spoken to as an LSP client.

``spec`` plans which server serves which language, ``client`` drives one
server process (with ``jsonrpc`` framing and ``results`` validation) and
``pool`` holds the servers of one workspace root. Nothing here imports pygls
or lsprotocol: the core stays protocol-free, and the client is small enough to
own outright.
"""

from rag_lsp.core.langservers.client import LanguageServerClient, ServerUnavailable
from rag_lsp.core.langservers.pool import ServerPool
from rag_lsp.core.langservers.results import Place, ServerCallError
from rag_lsp.core.langservers.spec import ServerSpec, Unserved, language_id, plan_servers, resolve_command

__all__ = [
    "LanguageServerClient",
    "Place",
    "ServerCallError",
    "ServerPool",
    "ServerSpec",
    "ServerUnavailable",
    "Unserved",
    "language_id",
    "plan_servers",
    "resolve_command",
]
