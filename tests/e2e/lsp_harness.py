"""A real LSP client (pygls's LanguageClient) driving ``rag-lsp serve`` over stdio, for tests.

It records what the server sends on its own initiative ($/progress,
window/logMessage, registrations, lens refreshes) so tests can assert on it.
Every request has a deadline (``REQUEST_TIMEOUT``) and fails at once when the
server process is gone, so a dead or silent server fails the test instead of
hanging the run.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

RAG_LSP = str(Path(sys.executable).parent / "rag-lsp")
# The longest any request may wait for its response (a cold context question on a small tree takes < 5 s).
REQUEST_TIMEOUT = 60.0


class ServerGone(RuntimeError):
    """The server process exited before a request could be answered."""


class Harness:
    """One server process and a client with recorders."""

    def __init__(self, cache: Path, log_file: Path) -> None:
        self.client = LanguageClient("rag-lsp-tests", "1")
        self.progress: list[object] = []
        self.logs: list[str] = []
        self.registrations: list[str] = []
        self.lens_refreshes = 0
        self.cache = cache
        self.log_file = log_file
        self._install_recorders()

    def _install_recorders(self) -> None:
        client = self.client

        @client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def create(ls, params):
            return None

        @client.feature(types.PROGRESS)
        def progress(ls, params):
            self.progress.append(params.value)

        @client.feature(types.WINDOW_LOG_MESSAGE)
        def log_message(ls, params):
            self.logs.append(params.message)

        @client.feature(types.WINDOW_SHOW_MESSAGE)
        def show_message(ls, params):
            self.logs.append(params.message)

        @client.feature(types.CLIENT_REGISTER_CAPABILITY)
        def register(ls, params):
            self.registrations.extend(r.method for r in params.registrations)

        @client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
        def refresh(ls, params):
            self.lens_refreshes += 1

    async def start(self, folders: list[Path], options: dict | None = None,
                    env: dict[str, str] | None = None) -> types.InitializeResult:
        env = {**(os.environ if env is None else env), "RAG_LSP_CACHE_DIR": str(self.cache)}
        await self.client.start_io(RAG_LSP, "serve", "--log-file", str(self.log_file), env=env)
        self._guard_requests()
        capabilities = types.ClientCapabilities(
            window=types.WindowClientCapabilities(work_done_progress=True),
            workspace=types.WorkspaceClientCapabilities(
                did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True),
                code_lens=types.CodeLensWorkspaceClientCapabilities(refresh_support=True),
                workspace_folders=True,
            ),
        )
        result = await self.client.initialize_async(types.InitializeParams(
            capabilities=capabilities,
            workspace_folders=[types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in folders],
            initialization_options=options,
        ))
        self.client.initialized(types.InitializedParams())
        return result

    def _guard_requests(self) -> None:
        """Give every request the client sends (typed ``*_async`` methods included) a deadline, and fail one
        sent after the server exited (pygls fails only those pending when it exits)."""
        protocol = self.client.protocol
        send = protocol.send_request_async
        server = self.client._server

        def guarded(method: str, params: object = None, msg_id: object = None) -> asyncio.Future:
            if server is not None and server.returncode is not None:
                raise ServerGone(f"{method}: the server exited with code {server.returncode}")
            pending = send(method, params, msg_id)

            async def answer() -> object:
                try:
                    return await asyncio.wait_for(pending, REQUEST_TIMEOUT)
                except TimeoutError:
                    alive = server is None or server.returncode is None
                    raise TimeoutError(f"{method}: no response in {REQUEST_TIMEOUT} s "
                                       f"({'the server is alive' if alive else 'the server exited'})") from None

            # Sent now (tests read the request's id right after), awaited later.
            return asyncio.ensure_future(answer())

        protocol.send_request_async = guarded  # type: ignore[method-assign]

    async def request(self, method: str, params: object, timeout: float = 30) -> object:
        return await asyncio.wait_for(self.client.protocol.send_request_async(method, params), timeout)

    def progress_kinds(self) -> list[str]:
        """The kinds of the $/progress values received (they arrive as plain objects)."""
        return [v["kind"] if isinstance(v, dict) else getattr(v, "kind", "") for v in self.progress]

    async def wait_indexed(self, timeout: float = 60) -> None:
        """Until the $/progress end of the initial indexing arrives."""
        server = self.client._server

        async def ended() -> None:
            while "end" not in self.progress_kinds():
                if server is not None and server.returncode is not None:
                    raise ServerGone(f"the server exited with code {server.returncode} while indexing")
                await asyncio.sleep(0.05)
        await asyncio.wait_for(ended(), timeout)

    def open(self, path: Path, text: str | None = None, version: int = 1, language: str = "python") -> str:
        uri = path.as_uri()
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
            uri=uri, language_id=language, version=version,
            text=path.read_text(encoding="utf-8") if text is None else text)))
        return uri

    def change(self, uri: str, version: int, changes: list) -> None:
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=version), changes))

    async def stop(self) -> int | None:
        """shutdown + exit, then the server's exit code (None if it had to be killed)."""
        server = self.client._server
        try:
            await asyncio.wait_for(self.client.shutdown_async(None), 15)
            self.client.exit(None)
            await asyncio.wait_for(server.wait(), 15)
        except (TimeoutError, RuntimeError):
            server.kill()
            await server.wait()
            await self.client.stop()
            return None
        await self.client.stop()
        return server.returncode


def run(coroutine) -> object:
    return asyncio.run(coroutine)
