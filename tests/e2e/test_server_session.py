"""The language server end to end: a real stdio subprocess and a real LSP client."""

from __future__ import annotations

import asyncio

from lsp_harness import Harness, run
from lsprotocol import types


def test_initialize_index_context_edit_lens_command_shutdown(ledger_root, tmp_path):
    async def scenario() -> None:
        harness = Harness(tmp_path / "cache", tmp_path / "server.log")
        result = await harness.start([ledger_root])
        capabilities = result.capabilities
        assert capabilities.code_lens_provider.resolve_provider is True
        assert "ragLsp.server.contextForSymbol" in capabilities.execute_command_provider.commands
        await harness.wait_indexed()
        kinds = harness.progress_kinds()
        assert kinds[0] == "begin" and kinds[-1] == "end" and "report" in kinds
        assert types.WORKSPACE_DID_CHANGE_WATCHED_FILES in harness.registrations
        # Once indexing is done the client is asked to refresh its lenses (debounced).
        for _ in range(100):
            if harness.lens_refreshes:
                break
            await asyncio.sleep(0.05)
        assert harness.lens_refreshes >= 1

        answer = await harness.request("ragLsp/context", {"query": "why does `Ledger.post` raise KeyError"})
        first = answer.items[0]
        assert (first.path, first.qualname) == ("shop/ledger.py", "Ledger.post")
        assert first.uri == (ledger_root / "shop/ledger.py").as_uri()

        # An unsaved edit: a new function typed into an open buffer is found at once.
        ledger = ledger_root / "shop/ledger.py"
        uri = harness.open(ledger)
        lines = ledger.read_text().splitlines()
        harness.change(uri, 2, [types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(len(lines), 0), types.Position(len(lines), 0)),
            text="\n\ndef reconcile_overdraft(ledger):\n    \"\"\"Fix négative balances 🎉.\"\"\"\n    return ledger\n",
        )])
        answer = await harness.request("ragLsp/context", {"query": "reconcile_overdraft"})
        assert answer.items[0].qualname == "reconcile_overdraft"
        assert answer.items[0].start_line == len(lines) + 3

        lenses = await harness.client.text_document_code_lens_async(
            types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri)))
        by_name = {lens.data["qualname"]: lens for lens in lenses}
        assert {"Ledger", "Ledger.post", "reconcile_overdraft"} <= set(by_name)
        resolved = await harness.client.code_lens_resolve_async(by_name["Ledger.post"])
        assert resolved.command.title == "0 references · 0 tests · context"
        assert resolved.command.command == "ragLsp.server.contextForSymbol"

        convert_lens = await harness.client.code_lens_resolve_async(types.CodeLens(
            range=types.Range(types.Position(3, 0), types.Position(3, 0)),
            data={"uri": (ledger_root / "shop/currency.py").as_uri(), "qualname": "convert", "name": "convert"}))
        assert convert_lens.command.title.startswith("1 reference · ")

        executed = await harness.client.workspace_execute_command_async(types.ExecuteCommandParams(
            command=resolved.command.command, arguments=resolved.command.arguments))
        assert executed["items"][0]["qualname"] == "Ledger.post"

        symbols = await harness.client.workspace_symbol_async(types.WorkspaceSymbolParams(query="conv"))
        assert [s.name for s in symbols][:1] == ["convert"]

        status = await harness.request("ragLsp/status", None)
        assert status.files == 6 and status.open_documents == 1
        assert status.roots[0].cache.startswith(str(tmp_path / "cache"))

        assert await harness.stop() == 0

    run(scenario())


def test_serve_over_tcp_for_debugging(ledger_root, tmp_path):
    import os
    import socket
    import subprocess

    from lsp_harness import RAG_LSP
    from pygls.lsp.client import LanguageClient

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "RAG_LSP_CACHE_DIR": str(tmp_path / "cache")}
    server = subprocess.Popen([RAG_LSP, "serve", "--tcp", f"127.0.0.1:{port}", "--log-file", str(tmp_path / "log")],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    async def scenario() -> None:
        client = LanguageClient("tcp-test", "1")
        for _ in range(100):
            try:
                await client.start_tcp("127.0.0.1", port)
                break
            except OSError:
                await asyncio.sleep(0.1)
        await client.initialize_async(types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            workspace_folders=[types.WorkspaceFolder(uri=ledger_root.as_uri(), name="ws")]))
        client.initialized(types.InitializedParams())
        for _ in range(100):
            status = await client.protocol.send_request_async("ragLsp/status", None)
            if status.files == 6:
                break
            await asyncio.sleep(0.05)
        assert status.files == 6
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()

    try:
        run(scenario())
        assert server.wait(15) == 0
    finally:
        if server.poll() is None:
            server.kill()
    assert server.stdout.read() == b""
