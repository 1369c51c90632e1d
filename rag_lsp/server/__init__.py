"""The protocol layer: the only code that knows about LSP, pygls and lsprotocol."""
