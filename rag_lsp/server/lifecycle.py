"""initialize, initialized and shutdown: settings and roots from the client, file watching, first indexing."""

from __future__ import annotations

import asyncio
import logging
import os

from lsprotocol import types

from rag_lsp.server.convert import encoding_name, uri_to_path
from rag_lsp.server.language_server import RagServer
from rag_lsp.workspace.settings import Settings, SettingsError, apply_settings

log = logging.getLogger("rag_lsp.server")


def register(server: RagServer) -> None:
    @server.feature(types.INITIALIZE)
    def initialize(ls: RagServer, params: types.InitializeParams) -> None:
        ls.loop = asyncio.get_running_loop()
        ls.encoding = encoding_name(ls.workspace.position_encoding)
        if isinstance(params.process_id, int) and params.process_id > 0 and params.process_id != os.getpid():
            ls.watch_parent(params.process_id)
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
