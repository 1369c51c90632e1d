"""Real language servers as child processes, spoken to as an LSP client.

``spec`` plans which server serves which language, ``client`` drives one
server process (with ``jsonrpc`` framing and ``results`` validation) and
``pool`` holds the servers of one workspace root. Nothing here imports pygls
or lsprotocol: the core stays protocol-free, and the client is small enough to
own outright.
"""
