"""Bad input, configuration, disk events and several roots, against the real server process."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from conftest import write_tree
from lsp_harness import Harness, run
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams


async def started(ledger_root: Path, tmp_path: Path, options: dict | None = None, folders=None) -> Harness:
    harness = Harness(tmp_path / "cache", tmp_path / "server.log")
    await harness.start(folders or [ledger_root], options)
    await harness.wait_indexed()
    return harness


async def ask(harness: Harness, query: str, **extra) -> object:
    return await harness.request("ragLsp/context", {"query": query, **extra})


@pytest.mark.parametrize("params, message", [
    ({"query": 5}, "'query' must be a string"),
    ({"query": "x", "topK": 0}, "'topK' must be an integer"),
    ({"query": "x", "budgetTokens": "many"}, "'budgetTokens' must be an integer"),
    ({"query": "x", "evidence": "not a list"}, "'evidence' must be a list"),
    ({"query": "x", "verbosity": "loud"}, "'verbosity' must be one of"),
    ({"query": "", "textDocument": {"uri": "http://example.com/x.py"}, "position": {"line": 0, "character": 0}},
     "only file: URIs"),
    ({"query": ""}, "give a 'query'"),
    (None, "needs params"),
])
def test_malformed_context_params_get_a_clear_error(ledger_root, tmp_path, params, message):
    async def scenario() -> None:
        harness = await started(ledger_root, tmp_path)
        with pytest.raises(JsonRpcInvalidParams, match=message):
            await harness.request("ragLsp/context", params)
        # The server is still answering.
        assert (await ask(harness, "ledger")).items
        assert await harness.stop() == 0

    run(scenario())


@pytest.mark.parametrize("params, message", [
    (None, "'symbol' must be a non-empty name"),
    ({"symbol": "   "}, "'symbol' must be a non-empty name"),
    ({"symbol": "x" * 501}, "at most 500 characters"),
    ({"symbol": "post", "what": "callers"}, "'what' must be one of definitions, references"),
    ({"what": "documentSymbols"}, "'documentSymbols' needs 'textDocument'"),
    ({"symbol": "post", "textDocument": {"uri": "http://example.com/x.py"}}, "only file: URIs"),
])
def test_malformed_lookup_params_get_a_clear_error(ledger_root, tmp_path, params, message):
    async def scenario() -> None:
        harness = await started(ledger_root, tmp_path)
        with pytest.raises(JsonRpcInvalidParams, match=message):
            await harness.request("ragLsp/lookup", params)
        assert (await harness.request("ragLsp/lookup", {"symbol": "Ledger.post"})).items
        assert await harness.stop() == 0

    run(scenario())


def test_bad_documents_and_edits_never_crash_the_server(ledger_root, tmp_path):
    async def scenario() -> None:
        harness = await started(ledger_root, tmp_path)
        ledger = ledger_root / "shop/ledger.py"
        uri = harness.open(ledger)
        # Past the end, then out of order, then for a document that was never opened.
        harness.change(uri, 2, [types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(500, 0), types.Position(500, 3)), text="x")])
        harness.change(uri, 1, [types.TextDocumentContentChangeWholeDocument(text="def stale(): pass\n")])
        harness.change((ledger_root / "nowhere.py").as_uri(), 3, [
            types.TextDocumentContentChangeWholeDocument(text="x = 1\n")])
        # 20 MB of text and a binary buffer are skipped, not indexed.
        huge = ledger_root / "shop/huge.py"
        harness.open(huge, text="HUGE_CONSTANT = 1\n" * (20 * 1024 * 1024 // 18))
        harness.open(ledger_root / "shop/blob.py", text="BINARY_MARKER = 1\x00\x01\x02")
        harness.open(ledger_root / ".env", text="SECRET_TOKEN=hunter2\n")
        answer = await ask(harness, "HUGE_CONSTANT BINARY_MARKER SECRET_TOKEN hunter2 stale")
        assert all(item.path == "shop/ledger.py" or item.path.startswith("README") or item.path.startswith("shop/")
                   for item in answer.items)
        assert not any("hunter2" in (item.content or "") for item in answer.items)
        assert not any(item.path in ("shop/huge.py", "shop/blob.py") for item in answer.items)
        # Lens and command requests with garbage get errors, not crashes.
        with pytest.raises(JsonRpcInvalidParams):
            await harness.client.code_lens_resolve_async(types.CodeLens(
                range=types.Range(types.Position(0, 0), types.Position(0, 0)), data={"nonsense": 1}))
        with pytest.raises(JsonRpcInvalidParams):
            await harness.client.workspace_execute_command_async(types.ExecuteCommandParams(
                command="ragLsp.server.contextForSymbol", arguments=[]))
        lenses = await harness.client.text_document_code_lens_async(types.CodeLensParams(
            text_document=types.TextDocumentIdentifier(uri=(tmp_path / "elsewhere.py").as_uri())))
        assert not lenses
        status = await harness.request("ragLsp/status", None)
        assert status.files == 6
        assert await harness.stop() == 0
        log = harness.log_file.read_text()
        assert "past the end" in log and "not newer than" in log and "document is not open" in log
        assert not any(line.startswith("Error in server") for line in harness.logs)
        assert "too_large" in log and "binary" in log and "secret" in log

    run(scenario())


def test_configuration_sources_and_validation(ledger_root, tmp_path):
    (ledger_root / ".rag-lsp.toml").write_text('ignore = ["web/**"]\ntop_k = 3\nbogus_key = 1\n')

    async def scenario() -> None:
        harness = await started(ledger_root, tmp_path, options={"budgetTokens": 900, "mystery": True})
        status = await harness.request("ragLsp/status", None)
        root = status.roots[0]
        assert root.files == 4 and root.settings.topK == 3 and root.settings.budgetTokens == 900
        assert any("bogus_key" in w for w in root.settings_warnings)
        assert any("unknown setting 'mystery'" in line for line in harness.logs)
        assert len((await ask(harness, "ledger currency rate limit convert")).items) == 3

        harness.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
            settings={"ragLsp": {"topK": "many"}}))
        await asyncio.sleep(0.3)
        assert any("'topK' must be a positive integer" in line for line in harness.logs)
        harness.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
            settings={"ragLsp": {"languages": {"markdown": False}}}))
        await harness.wait_indexed()
        for _ in range(100):
            status = await harness.request("ragLsp/status", None)
            if status.roots[0].files == 3:
                break
            await asyncio.sleep(0.05)
        assert status.roots[0].files == 3 and status.roots[0].settings.budgetTokens == 900
        assert await harness.stop() == 0

    run(scenario())


def test_disk_events_and_workspace_folders(ledger_root, tmp_path):
    other = write_tree(tmp_path / "other", {"billing/invoice.go": "package billing\n\nfunc IssueInvoice() {}\n"})

    async def scenario() -> None:
        harness = await started(ledger_root, tmp_path)
        new_file = ledger_root / "shop/refunds.py"
        new_file.write_text("def refund_payment(order):\n    return order\n")
        harness.client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
            types.FileEvent(uri=new_file.as_uri(), type=types.FileChangeType.Created)]))
        assert (await ask(harness, "refund_payment")).items[0].path == "shop/refunds.py"
        new_file.unlink()
        harness.client.workspace_did_delete_files(types.DeleteFilesParams(files=[
            types.FileDelete(uri=new_file.as_uri())]))
        assert all(i.path != "shop/refunds.py" for i in (await ask(harness, "refund_payment")).items)

        harness.client.workspace_did_change_workspace_folders(types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[types.WorkspaceFolder(uri=other.as_uri(), name="other")], removed=[])))
        for _ in range(200):
            answer = await ask(harness, "IssueInvoice")
            if answer.items and answer.items[0].path == "billing/invoice.go":
                break
            await asyncio.sleep(0.05)
        assert answer.items[0].uri == (other / "billing/invoice.go").as_uri()
        harness.client.workspace_did_change_workspace_folders(types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[], removed=[types.WorkspaceFolder(uri=other.as_uri(), name="other")])))
        assert all(i.path != "billing/invoice.go" for i in (await ask(harness, "IssueInvoice")).items)
        assert await harness.stop() == 0

    run(scenario())


def descendants(pid: int) -> set[int]:
    """Every process below ``pid`` in the process tree, read from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, stack = set(), [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.add(child)
            stack.append(child)
    return found


def running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_shutdown_leaves_no_child_process(tmp_path):
    many = write_tree(tmp_path / "many", {f"pkg/m{i:03}.py": f"def f{i}():\n    return {i}\n" for i in range(150)})

    async def scenario() -> None:
        harness = Harness(tmp_path / "cache", tmp_path / "server.log")
        await harness.start([many])
        server_pid = harness.client._server.pid
        seen: set[int] = set()
        while "end" not in harness.progress_kinds():
            seen |= descendants(server_pid)
            await asyncio.sleep(0.01)
        assert (await harness.request("ragLsp/status", None)).files == 150
        assert await harness.stop() == 0
        # Helpers end when the server does; a zombie awaiting its reaper is already dead.
        for _ in range(100):
            alive = [pid for pid in seen if running(pid)]
            if not alive:
                break
            await asyncio.sleep(0.05)
        assert alive == []
        assert seen, "the cold index of 150 files should have used worker processes"

    run(scenario())


def test_cancel_request_cancels_a_context_query(ledger_root, tmp_path):
    from pygls.exceptions import JsonRpcRequestCancelled

    async def scenario() -> None:
        harness = await started(ledger_root, tmp_path)
        protocol = harness.client.protocol
        # A large buffer keeps the writer busy, so the query is still waiting when the cancel arrives.
        body = "".join(f"def generated_{i}(value):\n    return value * {i}\n\n" for i in range(15000))
        assert len(body) < 1 << 20  # Indexed, not skipped as too large: that is what takes time.
        harness.open(ledger_root / "shop/generated.py", text=body)
        before = set(protocol._request_futures)
        future = protocol.send_request_async("ragLsp/context", {"query": "ledger currency"})
        (request_id,) = set(protocol._request_futures) - before
        protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=request_id))
        with pytest.raises(JsonRpcRequestCancelled):
            await asyncio.wait_for(future, 10)
        assert (await ask(harness, "ledger currency")).items
        assert await harness.stop() == 0

    run(scenario())
