"""The pure retrieval core. Nothing under this package imports pygls or lsprotocol."""
