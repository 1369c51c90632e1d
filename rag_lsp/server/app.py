"""The rag_lsp language server: pygls wiring from LSP messages to the core's ``Session``.

Handlers stay thin: decode params (``convert``, ``params``), call the session,
encode the answer. Threads: edits and file events run in order on one
"writer" thread; queries run on pygls's thread pool after the writer has
applied every edit that arrived before them; the initial indexing runs on its
own thread and installs files in locked batches, so queries during indexing
answer from what is indexed so far.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from rag_lsp import __version__
from rag_lsp.features.lookup import LOOKUPS
from rag_lsp.retrieval.retrieve import ContextRequest
from rag_lsp.server import ext
from rag_lsp.server.completion import register_completion
from rag_lsp.server.convert import (
    encoding_name,
    line_range,
    path_to_uri,
    symbol_information,
    text_edits,
    uri_to_path,
)
from rag_lsp.server.params import context_params, field, lookup_params
from rag_lsp.workspace.documents import EditError
from rag_lsp.workspace.session import Session
from rag_lsp.workspace.settings import Settings, SettingsError, apply_settings

log = logging.getLogger("rag_lsp.server")

# Seconds between a burst of disk events and the lens refresh it triggers.
LENS_REFRESH_DELAY = 0.5


class _Protocol(LanguageServerProtocol):
    """pygls's protocol with two repairs.

    A request or notification without a ``params`` member is valid JSON-RPC
    (Neovim sends ``ragLsp/status`` that way) but pygls cannot decode it, so
    the member is added as null. A change to a document that is not open is
    logged instead of raising.
    """

    def structure_message(self, data: dict):
        if "jsonrpc" in data and "method" in data and "params" not in data:
            data = {**data, "params": None}
        return super().structure_message(data)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams):
        if params.text_document.uri not in self.workspace.text_documents:
            log.warning("change ignored: document is not open: %s", params.text_document.uri)
            return
        yield from super().lsp_text_document__did_change(params)


class RagServer(LanguageServer):
    """A LanguageServer holding one ``Session`` and the threads that feed it."""

    def __init__(self, cache_root: Path | None = None, use_cache: bool = True) -> None:
        super().__init__("rag-lsp", __version__, protocol_cls=_Protocol)
        self.session = Session(cache_root=cache_root, use_cache=use_cache, language_servers=True)
        self.writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rag-lsp-writer")
        self.indexer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rag-lsp-indexer")
        self.encoding = "utf-16"
        # The event loop pygls runs on, known from the first message; threads use it to talk to the client.
        self.loop: asyncio.AbstractEventLoop | None = None
        self._lens_refresh: asyncio.TimerHandle | None = None

    # Helpers used by handlers.

    def write(self, work, *args) -> Future:
        """Run a mutation on the writer thread, after every mutation submitted before it."""
        future = self.writer.submit(work, *args)
        future.add_done_callback(self._report_failure)
        return future

    @staticmethod
    def _report_failure(future: Future) -> None:
        if not future.cancelled() and future.exception() is not None:
            log.error("update failed: %s", future.exception(), exc_info=future.exception())

    async def after_writes(self) -> None:
        """Wait until every edit received so far is applied (a query must see them)."""
        await asyncio.wrap_future(self.writer.submit(lambda: None))

    def capability(self, *names: str) -> object:
        """A nested client capability, or None when the client did not declare it."""
        value: object = self.client_capabilities
        for name in names:
            value = getattr(value, name, None)
            if value is None:
                return None
        return value

    def schedule_lens_refresh(self) -> None:
        """Ask the client to re-request lenses soon (debounced), if it supports that."""
        if not self.capability("workspace", "code_lens", "refresh_support"):
            return
        loop = self.loop
        if self._lens_refresh is not None:
            self._lens_refresh.cancel()
        self._lens_refresh = loop.call_later(LENS_REFRESH_DELAY, lambda: self.workspace_code_lens_refresh(None))

    def start_indexing(self, roots: list[Path] | None = None) -> None:
        """Index roots in the background with work-done progress when the client shows it."""
        token = str(uuid.uuid4()) if self.capability("window", "work_done_progress") else None
        loop = self.loop

        def run() -> None:
            reporter = _ProgressReporter(self, token, loop)
            try:
                reports = self.session.index_roots(roots, reporter.report)
                for report in reports:
                    log.info("indexed %s: %d files, %d chunks in %.0f ms", report["root"], report["files"],
                             report["chunks"], report["elapsed_ms"])
                    for warning in report["warnings"]:
                        log.warning("%s", warning)
            finally:
                reporter.end()
                loop.call_soon_threadsafe(self.schedule_lens_refresh)

        if token:
            self.work_done_progress.create(token, callback=lambda *_: self.indexer.submit(run))
        else:
            self.indexer.submit(run)

    def shutdown_threads(self) -> None:
        self.writer.shutdown(wait=True, cancel_futures=True)
        self.indexer.shutdown(wait=False, cancel_futures=True)
        for root in list(self.session.roots):
            self.session.remove_root(root)


class _ProgressReporter:
    """Sends $/progress begin/report/end for one indexing run (thread-safe, rate-limited to whole percents)."""

    def __init__(self, server: RagServer, token: str | None, loop: asyncio.AbstractEventLoop) -> None:
        self.server, self.token, self.loop = server, token, loop
        self.percent = -1
        if token:
            loop.call_soon_threadsafe(server.work_done_progress.begin, token, types.WorkDoneProgressBegin(
                title="rag-lsp: indexing", percentage=0, cancellable=False))

    def report(self, done: int, total: int) -> None:
        percent = int(100 * done / total) if total else 100
        if self.token and percent != self.percent:
            self.percent = percent
            self.loop.call_soon_threadsafe(self.server.work_done_progress.report, self.token,
                                           types.WorkDoneProgressReport(message=f"{done}/{total} files",
                                                                        percentage=percent))

    def end(self) -> None:
        if self.token:
            self.loop.call_soon_threadsafe(self.server.work_done_progress.end, self.token,
                                           types.WorkDoneProgressEnd(message="indexing done"))


def build_server(cache_root: Path | None = None, use_cache: bool = True) -> RagServer:
    """A server with every handler registered."""
    server = RagServer(cache_root=cache_root, use_cache=use_cache)
    _register_lifecycle(server)
    _register_documents(server)
    _register_workspace(server)
    _register_requests(server)
    _register_lenses(server)
    register_completion(server)
    return server


def _register_lifecycle(server: RagServer) -> None:
    @server.feature(types.INITIALIZE)
    def initialize(ls: RagServer, params: types.InitializeParams) -> None:
        ls.loop = asyncio.get_running_loop()
        ls.encoding = encoding_name(ls.workspace.position_encoding)
        try:
            settings, warnings = apply_settings(Settings(), params.initialization_options)
        except SettingsError as exc:
            settings, warnings = Settings(), [f"initializationOptions rejected, defaults used: {exc}"]
        ls.session.client_settings = settings
        folders = [f.uri for f in params.workspace_folders or []] or ([params.root_uri] if params.root_uri else [])
        for uri in folders:
            warnings.extend(ls.session.add_root(uri_to_path(uri)))
        for warning in warnings:
            log.warning("%s", warning)

    @server.feature(types.INITIALIZED)
    def initialized(ls: RagServer, params: types.InitializedParams) -> None:
        if ls.capability("workspace", "did_change_watched_files", "dynamic_registration"):
            watchers = [types.FileSystemWatcher(glob_pattern="**/*")]
            ls.client_register_capability(types.RegistrationParams(registrations=[types.Registration(
                id="rag-lsp-watch", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers))]))
        ls.start_indexing()

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: RagServer, *args) -> None:
        ls.shutdown_threads()


def _register_documents(server: RagServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: RagServer, params: types.DidOpenTextDocumentParams) -> None:
        document = params.text_document
        path = uri_to_path(document.uri)
        ls.session.track_document(path, document.text, document.version, ls.encoding)
        ls.write(_index_document, ls, path)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: RagServer, params: types.DidChangeTextDocumentParams) -> None:
        # Edits apply here, in message order and at once; indexing follows on
        # the writer thread, where a burst of changes is indexed in one pass.
        path = uri_to_path(params.text_document.uri)
        try:
            skipped = ls.session.apply_changes(path, params.text_document.version, text_edits(params.content_changes))
        except EditError as exc:
            log.warning("edit not applied: %s", exc)
        else:
            if skipped:
                log.warning("%s", skipped)
        ls.write(_index_document, ls, path)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: RagServer, params: types.DidCloseTextDocumentParams) -> None:
        path = uri_to_path(params.text_document.uri)
        ls.write(ls.session.restore_document, path, ls.session.untrack_document(path))

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: RagServer, params: types.DidSaveTextDocumentParams) -> None:
        # The open buffer already holds the saved text; nothing to re-read.
        log.debug("saved %s", params.text_document.uri)


def _register_workspace(server: RagServer) -> None:
    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched(ls: RagServer, params: types.DidChangeWatchedFilesParams) -> None:
        for change in params.changes:
            path = uri_to_path(change.uri)
            if change.type == types.FileChangeType.Deleted:
                ls.write(ls.session.file_deleted, path)
            else:
                ls.write(ls.session.file_changed, path)
        ls.write(lambda: None).add_done_callback(lambda _: ls.loop.call_soon_threadsafe(ls.schedule_lens_refresh))

    file_filters = types.FileOperationRegistrationOptions(
        filters=[types.FileOperationFilter(pattern=types.FileOperationPattern(glob="**/*"), scheme="file")])

    @server.feature(types.WORKSPACE_DID_CREATE_FILES, file_filters)
    def created(ls: RagServer, params: types.CreateFilesParams) -> None:
        for item in params.files:
            ls.write(ls.session.file_changed, uri_to_path(item.uri))

    @server.feature(types.WORKSPACE_DID_DELETE_FILES, file_filters)
    def deleted(ls: RagServer, params: types.DeleteFilesParams) -> None:
        for item in params.files:
            ls.write(ls.session.file_deleted, uri_to_path(item.uri))

    @server.feature(types.WORKSPACE_DID_RENAME_FILES, file_filters)
    def renamed(ls: RagServer, params: types.RenameFilesParams) -> None:
        for item in params.files:
            ls.write(ls.session.file_renamed, uri_to_path(item.old_uri), uri_to_path(item.new_uri))

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def folders(ls: RagServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        added = []
        for folder in params.event.removed:
            ls.session.remove_root(uri_to_path(folder.uri))
        for folder in params.event.added:
            path = uri_to_path(folder.uri)
            for warning in ls.session.add_root(path):
                log.warning("%s", warning)
            added.append(path.resolve())
        if added:
            ls.start_indexing(added)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def configuration(ls: RagServer, params: types.DidChangeConfigurationParams) -> None:
        try:
            warnings, rebuild = ls.session.update_settings(params.settings)
        except SettingsError as exc:
            log.error("settings rejected, the previous settings stay in force: %s", exc)
            ls.window_show_message(types.ShowMessageParams(types.MessageType.Error, f"rag-lsp: {exc}"))
            return
        for warning in warnings:
            log.warning("%s", warning)
        if rebuild:
            ls.start_indexing(rebuild)

    @server.feature(types.WORKSPACE_SYMBOL)
    async def workspace_symbol(ls: RagServer, params: types.WorkspaceSymbolParams) -> list[types.WorkspaceSymbol]:
        await ls.after_writes()
        found = await asyncio.wrap_future(ls.thread_pool.submit(ls.session.workspace_symbols, params.query))
        return [symbol_information(root, definition) for root, definition in found]


def _register_requests(server: RagServer) -> None:
    @server.feature(ext.CONTEXT)
    async def context(ls: RagServer, params: object) -> dict:
        focus_uri = field(field(params, "textDocument"), "uri")
        settings = ls.session.settings_for(uri_to_path(focus_uri) if isinstance(focus_uri, str) and
                                           focus_uri.startswith("file:") else None)
        decoded = context_params(params, settings)
        await ls.after_writes()
        focus = decoded.focus
        request = decoded.request
        cancel = threading.Event()

        def answer() -> dict:
            # A cursor's question may ask a language server what the name under it means: off the event loop.
            asked = request
            if focus is not None and not request.query.strip():
                asked = ContextRequest(ls.session.focus_query(focus.path, focus.line, focus.character),
                                       request.top_k, request.budget_tokens, request.evidence)
            return ls.session.context(asked, focus.path if focus else None, cancel)

        try:
            result = await asyncio.wrap_future(ls.thread_pool.submit(answer))
        except asyncio.CancelledError:
            # $/cancelRequest: stop the work the thread is doing, not only the wait for it.
            cancel.set()
            raise
        return _with_uris(result, decoded.verbosity)

    @server.feature(ext.LOOKUP)
    async def lookup(ls: RagServer, params: object) -> dict:
        decoded = lookup_params(params, LOOKUPS)
        await ls.after_writes()
        answer = await asyncio.wrap_future(
            ls.thread_pool.submit(ls.session.lookup, decoded.symbol, decoded.what, decoded.path))
        for item in answer["items"]:
            item["uri"] = path_to_uri(Path(item["root"]) / item["path"])
        return answer

    @server.feature(ext.STATUS)
    async def status(ls: RagServer, params: object = None) -> dict:
        await ls.after_writes()
        return await asyncio.wrap_future(ls.thread_pool.submit(ls.session.status))

    @server.command(ext.COMMAND_CONTEXT_FOR_SYMBOL)
    async def context_for_symbol(ls: RagServer, *args) -> dict:
        target = args[0] if args and not isinstance(args[0], list) else (args[0][0] if args and args[0] else None)
        name = field(target, "qualname") or field(target, "name")
        if not isinstance(name, str) or not name:
            raise JsonRpcInvalidParams(f"{ext.COMMAND_CONTEXT_FOR_SYMBOL} needs an argument with 'qualname'")
        await ls.after_writes()
        focus = uri_to_path(field(target, "uri")) if field(target, "uri") else None
        settings = ls.session.settings_for(focus)
        request = ContextRequest(f"`{name}`", settings.top_k, settings.budget_tokens)
        result = await asyncio.wrap_future(ls.thread_pool.submit(ls.session.context, request, focus))
        return _with_uris(result, "full")


def _register_lenses(server: RagServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=True))
    async def code_lens(ls: RagServer, params: types.CodeLensParams) -> list[types.CodeLens]:
        await ls.after_writes()
        path = uri_to_path(params.text_document.uri)
        definitions = await asyncio.wrap_future(ls.thread_pool.submit(ls.session.definitions_in, path))
        return [
            types.CodeLens(
                range=line_range(d.start_line, d.start_line),
                data={"uri": params.text_document.uri, "qualname": d.qualname, "name": d.name},
            )
            for d in definitions
            if d.kind in ext.LENS_KINDS
        ]

    @server.feature(types.CODE_LENS_RESOLVE)
    async def resolve(ls: RagServer, lens: types.CodeLens) -> types.CodeLens:
        data = lens.data or {}
        uri, qualname, name = field(data, "uri"), field(data, "qualname"), field(data, "name")
        if not all(isinstance(v, str) and v for v in (uri, qualname, name)):
            raise JsonRpcInvalidParams("a code lens's data needs 'uri', 'qualname' and 'name'")
        await ls.after_writes()
        counts = await asyncio.wrap_future(
            ls.thread_pool.submit(ls.session.usage_counts, uri_to_path(uri), name, qualname))
        lens.command = types.Command(
            title=_lens_title(counts) if counts["found"] else f"{qualname} is no longer defined here",
            command=ext.COMMAND_CONTEXT_FOR_SYMBOL,
            arguments=[{"uri": uri, "qualname": qualname, "name": name}],
            tooltip=f"references counted by {counts['source']}" if counts["found"] else None,
        )
        return lens


def _index_document(ls: RagServer, path: Path) -> None:
    reason = ls.session.index_document(path)
    if reason == "outside the workspace":
        # Editors open settings files and untitled buffers all the time: not worth the user's attention.
        log.debug("not indexing %s: %s", path, reason)
    elif reason:
        log.info("not indexing %s: %s", path, reason)


def _lens_title(counts: dict) -> str:
    references = counts["references"]
    tests = counts["tests"]
    return (f"{references} reference{'s' if references != 1 else ''} · "
            f"{tests} test{'s' if tests != 1 else ''} · context")


def _with_uris(result: dict, verbosity: str) -> dict:
    """The core's answer plus a ``uri`` per item (and without content when only locations are wanted)."""
    default_root = result.get("index", {}).get("root")
    for item in result["items"]:
        root = item.get("root") or default_root
        item["uri"] = path_to_uri(Path(root) / item["path"]) if root else None
        if verbosity == "locations":
            item.pop("content", None)
    return result
