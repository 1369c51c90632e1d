"""rag_lsp's own protocol extensions, in one place: custom methods and commands.

docs/protocol.md documents each of these; tests/integration/test_protocol_doc.py
fails when this module and the document disagree.
"""

CONTEXT = "ragLsp/context"
STATUS = "ragLsp/status"
COMPLETION_CONTEXT = "ragLsp/completionContext"
LOOKUP = "ragLsp/lookup"

# Server command ids use the ``ragLsp.server.`` prefix so that they never
# collide with a client extension's own ``ragLsp.*`` commands.
COMMAND_CONTEXT_FOR_SYMBOL = "ragLsp.server.contextForSymbol"

CUSTOM_REQUESTS = (CONTEXT, STATUS, COMPLETION_CONTEXT, LOOKUP)
COMMANDS = (COMMAND_CONTEXT_FOR_SYMBOL,)
