"""``ServerPool``: the language servers of one workspace root.

A pool plans once which server serves each language and creates a client the
first time a language needs one, without starting it (the client starts on
its first request). Languages planned onto the same server share one client
and so one process: JavaScript, TypeScript and TSX one
typescript-language-server, C and C++ one clangd.

The pool also remembers servers' answers across questions, for as long as
the workspace's indexed text stays the same: a code lens asked again on
scroll, or a second question about the same class, costs no server call.
pyright takes 65–160 ms per ``workspace/symbol`` on a 2,000-file tree, which
would otherwise be paid again for every question that names the same class.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from rag_lsp import languages
from rag_lsp.langservers.client import LanguageServerClient, ServerCallError, ServerUnavailable
from rag_lsp.langservers.spec import ServerSpec, ServerStatus, Unserved, language_id, plan_servers

log = logging.getLogger("rag_lsp.langservers")

# Answers remembered per pool; the least recently used is forgotten first.
MAX_REMEMBERED = 2048
# How long a one-shot warm-up waits for a server to check the file it opened (see LanguageServerClient.wait_checked).
CHECK_SECONDS = 5.0


class AnswerMemo:
    """Servers' answers for one version of the workspace's indexed text (``Index.version``), least recently
    used forgotten first; an answer for a new version forgets all older ones."""

    def __init__(self, capacity: int = MAX_REMEMBERED) -> None:
        self._capacity = capacity
        self._lock = threading.Lock()
        self._answers: OrderedDict[tuple, Any] = OrderedDict()
        self._version: Any = None

    def recall(self, version: Any, key: tuple) -> Any:
        """The answer remembered for ``key`` while the workspace was at ``version``, or None."""
        with self._lock:
            if version != self._version or key not in self._answers:
                return None
            self._answers.move_to_end(key)
            return self._answers[key]

    def remember(self, version: Any, key: tuple, answer: Any) -> None:
        """Keep ``answer`` for ``key`` at ``version``; an answer for a new version forgets all older ones."""
        with self._lock:
            if version != self._version:
                self._answers.clear()
                self._version = version
            self._answers[key] = answer
            self._answers.move_to_end(key)
            while len(self._answers) > self._capacity:
                self._answers.popitem(last=False)

    def forget(self) -> None:
        with self._lock:
            self._answers.clear()
            self._version = None


class ServerPool:
    """The language servers of one workspace root: one client per distinct ServerSpec, created lazily (not started).

    ``client_options`` (``max_open_documents``, the crash policy) are passed
    to every client; tests use them to make backoff fast.
    """

    def __init__(
        self, root: Path, overrides: dict[str, dict] | None = None, *, start_timeout: float = 10.0, **client_options: Any
    ):
        self.root = Path(root)
        self._start_timeout = start_timeout
        self._client_options = client_options
        self._lock = threading.Lock()
        self._plan = plan_servers(overrides or {})
        self._clients: list[LanguageServerClient] = []
        self._stopped = False
        self.answers = AnswerMemo()

    def client_for(self, language: str) -> LanguageServerClient | str:
        """The client serving ``language``, or the reason none does."""
        with self._lock:
            if self._stopped:
                return "the server pool is stopped"
            entry = self._plan.get(language)
            if entry is None:
                return f"no server configured for {language}"
            if isinstance(entry, str):
                return entry
            for client in self._clients:
                if client.spec == entry:
                    return client
            client = LanguageServerClient(entry, self.root, start_timeout=self._start_timeout, **self._client_options)
            self._clients.append(client)
            return client

    def warm(self, paths: Iterable[str], text_of: Callable[[str], str | None], seconds: float,
             only: Collection[str] | None = None) -> None:
        """Start the servers of the languages of ``paths`` (or of ``only`` among them) and let each load its
        project, for one-shot callers; the editor never does this, its questions do not wait for a server.

        The first readable file of each language, in path order, is opened in its server (tsserver knows
        only the projects of open files) and checked by it, then the server is settled, all within ``seconds``.
        """
        deadline = time.monotonic() + seconds
        clients: dict[str, tuple[LanguageServerClient, str, str]] = {}
        for path in sorted(paths):
            language = languages.language_for_path(path)
            client = self.client_for(language) if only is None or language in only else "not wanted"
            if isinstance(client, str) or client.spec.name in clients:
                continue
            if (text := text_of(path)) is not None:
                client.ensure_started()
                clients[client.spec.name] = (client, path, text)
        for client, path, text in clients.values():
            if not client.wait_ready(max(0.0, deadline - time.monotonic())):
                continue
            try:
                # A warm_up server (pyright) settles itself after initialize, and must do so before a file is
                # opened: it would answer the warm-up query from the open file's symbols before it has read
                # the workspace, and the questions would then wait for the rest.
                while client.warming and time.monotonic() < deadline:
                    time.sleep(0.05)
                client.sync(path, text, language_id(languages.language_for_path(path), path))
                client.wait_checked(path, min(CHECK_SECONDS, deadline - time.monotonic()))
                client.settle(deadline - time.monotonic())
            except (ServerUnavailable, ServerCallError) as exc:
                log.info("%s did not warm up: %s", client.spec.name, exc)

    def clients(self) -> list[LanguageServerClient]:
        """The clients created so far, in creation order (after ``stop()``, the stopped ones)."""
        with self._lock:
            return list(self._clients)

    def status(self) -> list[ServerStatus]:
        """One entry per planned server, ordered by its first language's name.

        Created clients report ``client.status()``; a planned server not yet
        needed is ``idle``; a language no server serves is ``missing`` or
        ``disabled`` with the reason as ``last_error``.
        """
        with self._lock:
            plan, clients = dict(self._plan), list(self._clients)
        entries: list[ServerStatus] = []
        seen: list[ServerSpec] = []
        for language, entry in plan.items():
            if isinstance(entry, ServerSpec):
                if any(entry is spec for spec in seen):
                    continue
                seen.append(entry)
                client = next((c for c in clients if c.spec == entry), None)
                entries.append(client.status() if client else ServerStatus(entry.name, entry.command,
                                                                            tuple(entry.languages)))
            else:
                server, state = (entry.server, entry.state) if isinstance(entry, Unserved) else ("", "missing")
                # A missing server of several languages (typescript-language-server) is one entry, as it
                # would be one process.
                same = next((i for i, e in enumerate(entries) if server and e.server == server and e.state == state),
                            None)
                if same is not None:
                    entries[same] = replace(entries[same], languages=(*entries[same].languages, language))
                else:
                    entries.append(ServerStatus(server, None, (language,), state=state, last_error=str(entry)))
        return sorted(entries, key=lambda e: e.languages[0])

    def reconfigure(self, overrides: dict[str, dict]) -> None:
        """Re-plan with new overrides; stop the clients whose spec changed or is no longer planned."""
        plan = plan_servers(overrides)
        specs = [entry for entry in plan.values() if isinstance(entry, ServerSpec)]
        with self._lock:
            self._plan = plan
            self.answers.forget()
            stale = [c for c in self._clients if c.spec not in specs]
            self._clients = [c for c in self._clients if c not in stale]
        _stop_all(stale)

    def stop(self) -> None:
        """Stop every client (in parallel: each may take a second or two to shut down politely)."""
        with self._lock:
            self._stopped = True
            clients = list(self._clients)
        _stop_all(clients)



def _stop_all(clients: list[LanguageServerClient]) -> None:
    threads = [threading.Thread(target=client.stop, daemon=True) for client in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
