"""``RagServer``: the pygls server holding one ``Session`` and the threads that feed it.

Threads: edits and file events run in order on one "writer" thread; queries
run on pygls's thread pool after the writer has applied every edit that
arrived before them (``run``); the initial indexing runs on its own thread and
installs files in locked batches, so queries during indexing answer from what
is indexed so far.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from pygls.exceptions import FeatureNotificationError, JsonRpcException
from pygls.lsp.server import LanguageServer

from rag_lsp import __version__
from rag_lsp.server.progress import ProgressReporter
from rag_lsp.server.protocol import Protocol
from rag_lsp.workspace.session import Session

log = logging.getLogger("rag_lsp.server")

# Seconds between a burst of disk events and the lens refresh it triggers.
LENS_REFRESH_DELAY = 0.5
# How often a question waiting for the first index looks again.
FIRST_INDEX_POLL_S = 0.05
# What the indexing progress says while an index built by parsing is replaced by its snapshot (``Session.settle``).
RELOADING = "loading the index just saved"
# Logged when a notification handler raised: tests and the fuzzer look for it.
NOTIFICATION_FAILED = "a notification handler failed"
# JSON-RPC's code for a body that is not JSON.
PARSE_ERROR = -32700
# How often the client's process is checked for life.
PARENT_POLL_S = 1.0


class RagServer(LanguageServer):
    """A LanguageServer holding one ``Session`` and the threads that feed it."""

    def __init__(self, cache_root: Path | None = None, use_cache: bool = True) -> None:
        super().__init__("rag-lsp", __version__, protocol_cls=Protocol)
        self.session = Session(cache_root=cache_root, use_cache=use_cache, language_servers=True)
        self.writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rag-lsp-writer")
        self.indexer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rag-lsp-indexer")
        self.encoding = "utf-16"
        # The event loop pygls runs on, known from the first message; threads use it to talk to the client.
        self.loop: asyncio.AbstractEventLoop | None = None
        self._lens_refresh: asyncio.TimerHandle | None = None
        # The last mutation given to the writer thread.
        self._last_write: Future | None = None

    # Helpers used by handlers.

    def write(self, work: Callable[..., Any], *args: Any) -> Future:
        """Run a mutation on the writer thread, after every mutation submitted before it."""
        future = self.writer.submit(work, *args)
        future.add_done_callback(self._report_failure)
        self._last_write = future
        return future

    @staticmethod
    def _report_failure(future: Future) -> None:
        if not future.cancelled() and future.exception() is not None:
            log.error("update failed: %s", future.exception(), exc_info=future.exception())

    async def after_writes(self) -> None:
        """Wait until every edit received so far is applied (a query must see them). The writer applies them in
        the order they were submitted (all on the event loop), so when the last is done all are, and a question
        asked with no edit pending does not wait for a turn of the writer thread."""
        if self._last_write is not None and not self._last_write.done():
            await asyncio.wrap_future(self.writer.submit(lambda: None))

    async def run(self, work: Callable[..., Any], *args: Any) -> Any:
        """Answer a query off the event loop, once every edit received before it is applied."""
        await self.after_writes()
        try:
            return await asyncio.wrap_future(self.thread_pool.submit(self._answer, work, *args))
        finally:
            self._bound_mapped()

    def _answer(self, work: Callable[..., Any], *args: Any) -> Any:
        """``work(*args)`` as a question under way (``Session.answering``: not while an index is replaced)."""
        with self.session.answering():
            return work(*args)

    def _bound_mapped(self) -> None:
        """After an answer, off the event loop: the index files' pages it read stay counted in the server's
        resident size until dropped (``Session.bound_mapped``); nothing once the pool is shut down (exiting)."""
        try:
            self.thread_pool.submit(self.session.bound_mapped).add_done_callback(self._report_failure)
        except RuntimeError:
            pass

    async def first_index(self, seconds: float) -> None:
        """Wait up to ``seconds`` for every root's first index, so that a question asked just after the
        editor started gets a whole answer; a workspace too large for that answers from what is indexed.
        Waits on the event loop, holding no thread."""
        deadline = self.loop.time() + seconds if self.loop else 0.0
        while self.session.indexing.partial and self.loop and self.loop.time() < deadline:
            await asyncio.sleep(FIRST_INDEX_POLL_S)

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
        if not self.capability("workspace", "code_lens", "refresh_support") or self.loop is None:
            return
        if self._lens_refresh is not None:
            self._lens_refresh.cancel()
        self._lens_refresh = self.loop.call_later(LENS_REFRESH_DELAY,
                                                  lambda: self.workspace_code_lens_refresh(None))

    def start_indexing(self, roots: list[Path] | None = None) -> None:
        """Index roots in the background at once; progress shows if the client accepts a progress token.

        Called on the event loop. The run never waits for the client's answer to
        ``window/workDoneProgress/create`` (a client may refuse it or never answer).
        """
        token = str(uuid.uuid4()) if self.capability("window", "work_done_progress") else None
        loop = self.loop
        assert loop is not None, "indexing starts after initialize"
        reporter = ProgressReporter(self, token, loop)
        self.session.indexing_scheduled(roots)

        def run() -> None:
            try:
                for stats in self.session.index_roots(roots, reporter.report, scheduled=True):
                    log.info("indexed %s: %d files, %d chunks in %.0f ms", stats.root, stats.files, stats.chunks,
                             stats.elapsed_ms)
                    for warning in stats.warnings:
                        log.warning("%s", warning)
                # An index the run built by parsing is replaced by its snapshot before the progress ends:
                # requests and edits wait for that load, and the progress says what it is.
                self.session.settle(lambda: reporter.say(RELOADING))
            finally:
                reporter.end()
                if not loop.is_closed():
                    loop.call_soon_threadsafe(self.schedule_lens_refresh)
            # After the progress ends: the index is complete, and this only saves the first question's time.
            self.session.prepare_answers()

        reporter.ask()
        self.indexer.submit(run).add_done_callback(self._report_failure)

    def shutdown_threads(self) -> None:
        self.writer.shutdown(wait=True, cancel_futures=True)
        self.indexer.shutdown(wait=False, cancel_futures=True)
        for root in list(self.session.roots):
            self.session.remove_root(root)

    def report_server_error(self, error: Exception, source: Any) -> None:
        """A body that is not JSON (or too deeply nested to read) is answered with a JSON-RPC parse error and an
        id of null, as JSON-RPC asks; it is the client's fault, so nothing pops up in the editor."""
        # pygls's read loop reports what failed to read or decode with the source JsonRpcException; handlers'
        # failures come with their feature's error class.
        if source is JsonRpcException and isinstance(error, (ValueError, RecursionError)):
            log.warning("a message that is not JSON: %s", error)
            self.protocol._send_data({"jsonrpc": "2.0", "id": None,
                                      "error": {"code": PARSE_ERROR, "message": f"Parse error: {error}"}})
            return
        if source is FeatureNotificationError:
            # Nobody waits for a notification's outcome; a failure is a bug to find in the log, not a popup.
            data = getattr(error, "data", None)
            trace = "".join(data.get("traceback", [])) if isinstance(data, dict) else ""
            log.error("%s: %s\n%s", NOTIFICATION_FAILED, error, trace)
            return
        super().report_server_error(error, source)

    def shutdown(self) -> None:
        """The connection ended (``exit``, the client closed its pipe, a broken pipe): indexing stops at its
        next batch, the language servers are stopped, and the threads end, so the process exits at once."""
        self.session.close()
        self.writer.shutdown(wait=False, cancel_futures=True)
        self.indexer.shutdown(wait=True, cancel_futures=True)
        super().shutdown()

    def watch_parent(self, pid: int) -> None:
        """Exit when the client's process (``initialize``'s ``processId``) is gone, as LSP asks: an editor
        killed with SIGKILL may leave the pipe open in another process, so its end is not always seen."""
        def watch() -> None:
            while _alive(pid):
                time.sleep(PARENT_POLL_S)
            log.warning("the client process %d is gone: stopping", pid)
            self.session.close()
            logging.shutdown()
            os._exit(0)

        threading.Thread(target=watch, name="rag-lsp-parent-watch", daemon=True).start()


def _alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    except OSError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
