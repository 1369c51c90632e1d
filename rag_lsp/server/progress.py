"""Work-done progress for an indexing run: ``$/progress`` begin, report and end, from any thread.

Indexing never waits for the client: the run starts at once, and progress is
shown only for a token the client accepted (``window/workDoneProgress/create``
answered without an error). A client that refuses the token (pygls's own
client has no handler for the request) or never answers sees no progress,
and the index is built all the same.
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import Future

from lsprotocol import types
from pygls.lsp.server import LanguageServer

log = logging.getLogger("rag_lsp.server")


class ProgressReporter:
    """``$/progress`` begin/report/end for one indexing run (rate-limited to whole percents).

    ``report`` and ``end`` may be called from any thread; every decision is
    taken on the event loop, so an acceptance that arrives after the run ended
    still shows a begin and an end, and nothing is sent for a refused token.
    """

    def __init__(self, server: LanguageServer, token: str | None, loop: asyncio.AbstractEventLoop) -> None:
        self.server, self.token, self.loop = server, token, loop
        self.accepted = False
        self.ended = False
        self.done, self.total = 0, 0
        self.percent = -1

    def ask(self) -> None:
        """Ask the client to create the token (on the event loop); progress starts when it accepts."""
        if self.token is None:
            return
        future = self.server.work_done_progress.create(self.token)
        future.add_done_callback(lambda answered: self.loop.call_soon_threadsafe(self._answered, answered))

    def report(self, done: int, total: int) -> None:
        self._on_loop(self._report, done, total)

    def say(self, message: str) -> None:
        """Report ``message`` at the current percentage (what the run does now that the files are indexed)."""
        self._on_loop(self._say, message)

    def end(self) -> None:
        self._on_loop(self._end)

    def _on_loop(self, work, *args) -> None:
        # Once the connection is gone the loop is closed, and there is nobody to tell.
        if not self.loop.is_closed():
            try:
                self.loop.call_soon_threadsafe(work, *args)
            except RuntimeError:
                pass

    def _answered(self, answered: Future) -> None:
        if answered.cancelled() or answered.exception() is not None:
            log.info("the client refused the progress token, indexing goes on without progress: %s",
                     None if answered.cancelled() else answered.exception())
            return
        self.accepted = True
        assert self.token is not None
        self.percent = self._percent()
        self.server.work_done_progress.begin(self.token, types.WorkDoneProgressBegin(
            title="rag-lsp: indexing", percentage=self.percent, cancellable=False))
        if self.ended:
            self._send_end()

    def _report(self, done: int, total: int) -> None:
        self.done, self.total = done, total
        percent = self._percent()
        if self.accepted and not self.ended and percent != self.percent:
            self.percent = percent
            self._send_report(f"{done}/{total} files")

    def _say(self, message: str) -> None:
        if self.accepted and not self.ended:
            self._send_report(message)

    def _send_report(self, message: str) -> None:
        assert self.token is not None
        self.server.work_done_progress.report(self.token, types.WorkDoneProgressReport(
            message=message, percentage=max(self.percent, 0)))

    def _end(self) -> None:
        self.ended = True
        if self.accepted:
            self._send_end()

    def _send_end(self) -> None:
        assert self.token is not None
        self.server.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message="indexing done"))

    def _percent(self) -> int:
        return int(100 * self.done / self.total) if self.total else 0
