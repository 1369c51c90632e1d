"""rag_lsp: ranked, token-budgeted code context for editors and AI assistants."""

__version__ = "0.1.0"
