"""Work-done progress for an indexing run: ``$/progress`` begin, report and end, from any thread."""

from __future__ import annotations

import asyncio

from lsprotocol import types
from pygls.lsp.server import LanguageServer


class ProgressReporter:
    """Sends $/progress begin/report/end for one indexing run (thread-safe, rate-limited to whole percents);
    silent without a token."""

    def __init__(self, server: LanguageServer, token: str | None, loop: asyncio.AbstractEventLoop) -> None:
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
