"""Notifications: the editor's buffers (didOpen, didChange, didClose, didSave), disk events, workspace folders
and configuration. Each is applied in arrival order on the writer thread; none answers, and a bad one is
logged and skipped."""

from __future__ import annotations

import functools
import logging
from pathlib import Path

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from rag_lsp.server.convert import text_edits, uri_to_path
from rag_lsp.server.language_server import RagServer
from rag_lsp.workspace.documents import EditError
from rag_lsp.workspace.settings import SettingsError

log = logging.getLogger("rag_lsp.server")


def notification(server: RagServer, method: str, options: object = None):
    """Register a notification handler that logs and skips a notification whose params are bad (a URI that
    is no file URI) instead of raising: nobody waits for an answer, and the editor shows no error for it."""
    def register_handler(handler):
        @functools.wraps(handler)
        def guarded(ls: RagServer, params):
            try:
                return handler(ls, params)
            except JsonRpcInvalidParams as exc:
                log.warning("notification %s skipped: %s", method, exc.message)
                return None
        return (server.feature(method, options) if options is not None else server.feature(method))(guarded)
    return register_handler


def register(server: RagServer) -> None:
    @notification(server, types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: RagServer, params: types.DidOpenTextDocumentParams) -> None:
        document = params.text_document
        path = uri_to_path(document.uri)
        ls.session.track_document(path, document.text, document.version, ls.encoding)
        ls.write(_index_document, ls, path)

    @notification(server, types.TEXT_DOCUMENT_DID_CHANGE)
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

    @notification(server, types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: RagServer, params: types.DidCloseTextDocumentParams) -> None:
        path = uri_to_path(params.text_document.uri)
        ls.write(ls.session.restore_document, path, ls.session.untrack_document(path))

    @notification(server, types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: RagServer, params: types.DidSaveTextDocumentParams) -> None:
        # The open buffer already holds the saved text; nothing to re-read.
        log.debug("saved %s", params.text_document.uri)

    @notification(server, types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched(ls: RagServer, params: types.DidChangeWatchedFilesParams) -> None:
        for change in params.changes:
            path = uri_to_path(change.uri)
            if change.type == types.FileChangeType.Deleted:
                ls.write(ls.session.file_deleted, path)
            else:
                ls.write(_file_changed, ls, path)
        loop = ls.loop
        if loop is not None:
            ls.write(lambda: None).add_done_callback(lambda _: loop.call_soon_threadsafe(ls.schedule_lens_refresh))

    file_filters = types.FileOperationRegistrationOptions(
        filters=[types.FileOperationFilter(pattern=types.FileOperationPattern(glob="**/*"), scheme="file")])

    @notification(server, types.WORKSPACE_DID_CREATE_FILES, file_filters)
    def created(ls: RagServer, params: types.CreateFilesParams) -> None:
        for item in params.files:
            ls.write(_file_changed, ls, uri_to_path(item.uri))

    @notification(server, types.WORKSPACE_DID_DELETE_FILES, file_filters)
    def deleted(ls: RagServer, params: types.DeleteFilesParams) -> None:
        for item in params.files:
            ls.write(ls.session.file_deleted, uri_to_path(item.uri))

    @notification(server, types.WORKSPACE_DID_RENAME_FILES, file_filters)
    def renamed(ls: RagServer, params: types.RenameFilesParams) -> None:
        for item in params.files:
            ls.write(ls.session.file_renamed, uri_to_path(item.old_uri), uri_to_path(item.new_uri))

    @notification(server, types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
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

    @notification(server, types.WORKSPACE_DID_CHANGE_CONFIGURATION)
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


def _file_changed(ls: RagServer, path: Path) -> None:
    reason = ls.session.file_changed(path)
    if reason:
        log.info("not indexing %s: %s", path, reason)


def _index_document(ls: RagServer, path: Path) -> None:
    reason = ls.session.index_document(path)
    if reason == "outside the workspace":
        # Editors open settings files and untitled buffers all the time: not worth the user's attention.
        log.debug("not indexing %s: %s", path, reason)
    elif reason:
        log.info("not indexing %s: %s", path, reason)
