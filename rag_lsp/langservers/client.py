"""``LanguageServerClient``: one language server process, driven synchronously from worker threads.

rag_lsp asks real language servers (pyright, gopls, clangd, ...) for
definitions, references and symbols, and falls back to tree-sitter when they
cannot answer. So this client never makes a caller wait longer than the
timeout it gave, never raises anything but ``ServerUnavailable`` (ask again
later, or fall back) and ``ServerCallError`` (this call failed), and treats
the server as an unreliable program: a crash fails the calls in flight, the
server restarts lazily with exponential backoff, and after repeated crashes it
stays down with the last error for the status report.

Positions in this API are what rag_lsp uses everywhere: 1-based lines and
0-based characters in code points of the text last synced for that path. The
client converts them to the position encoding the server chose (UTF-16 or
UTF-8) and converts answers back.

Processes are started in their own session (one process group, so stopping a
server also stops the children it spawned, like tsserver) and, on Linux, with
a parent-death signal so a killed rag_lsp leaves no server behind.
"""

from __future__ import annotations

import collections
import logging
import os
import re
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, cast
from urllib.parse import unquote

import rag_lsp
from rag_lsp.langservers import results
from rag_lsp.langservers.jsonrpc import (
    Connection,
    ConnectionLost,
    MethodNotFound,
    RequestTimeout,
    ResponseError,
)
from rag_lsp.langservers.process import STOP_GRACE, exit_status, kill_group, popen, spawner, telling
from rag_lsp.langservers.results import Place, ServerCallError
from rag_lsp.langservers.spec import ServerSpec, ServerStatus

__all__ = ["LanguageServerClient", "Place", "ServerCallError", "ServerUnavailable"]

log = logging.getLogger("rag_lsp.langservers")

ENCODINGS = ("utf-16", "utf-8", "utf-32")
# UTF-16 first: every server must support it, and some that accept UTF-8 do not honour it.
# jedi-language-server 0.47 picks UTF-8 when offered first, then reads and writes code points,
# which shifts every position after a non-ASCII character; with UTF-16 it is wrong only after
# characters beyond the BMP (emoji).
OFFERED_ENCODINGS = ["utf-16", "utf-8"]
HUNG_AFTER_TIMEOUTS = 3
# ... and the server said nothing at all for this long (a late answer to a timed-out request counts).
HUNG_SILENCE = 10.0
# After initialize, one query with this long a timeout lets a server load its project before questions come.
WARM_UP_SECONDS = 60.0
WARM_UP_PAUSE = 0.5
# How long a crashed server's exit status is waited for before its process group is killed.
EXIT_STATUS_WAIT = 0.2
# Files larger than this are not read from disk to convert result positions;
# their characters stay in the server's encoding.
MAX_CONVERT_BYTES = 4 * 1024 * 1024
_LINE_BREAK = re.compile(r"\r\n|\r|\n")

# Server capabilities that announce each request.
_PROVIDERS = {
    "textDocument/definition": "definitionProvider",
    "textDocument/declaration": "declarationProvider",
    "textDocument/typeDefinition": "typeDefinitionProvider",
    "textDocument/implementation": "implementationProvider",
    "textDocument/references": "referencesProvider",
    "textDocument/documentSymbol": "documentSymbolProvider",
    "textDocument/hover": "hoverProvider",
    "workspace/symbol": "workspaceSymbolProvider",
}
# Server requests that rag_lsp acknowledges without doing anything.
_NULL_ANSWERS = frozenset(
    {
        "client/registerCapability",
        "client/unregisterCapability",
        "window/workDoneProgress/create",
        "window/showMessageRequest",
    }
)
_SYMBOL_KINDS = {"valueSet": list(range(1, 27))}


class ServerUnavailable(Exception):
    """The server cannot be asked now; ``str()`` is why ("starting", "stopped", ...)."""


@dataclass(slots=True)
class _Document:
    """The text last sent to the server for one path, with its lines split on first need."""

    text: str
    version: int
    _lines: list[str] | None = field(default=None, repr=False)

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            self._lines = _LINE_BREAK.split(self.text)
        return self._lines


def _to_units(line: str, codepoints: int, encoding: str) -> int:
    prefix = line[:codepoints]
    if encoding == "utf-8":
        return len(prefix.encode("utf-8", "surrogatepass"))
    if encoding == "utf-16":
        return len(prefix.encode("utf-16-le", "surrogatepass")) // 2
    return len(prefix)


def _to_codepoints(line: str, units: int, encoding: str) -> int:
    if encoding == "utf-32":
        return units
    counted = 0
    for index, char in enumerate(line):
        if counted >= units:
            return index
        if encoding == "utf-8":
            counted += len(char.encode("utf-8", "surrogatepass"))
        else:
            counted += 2 if ord(char) > 0xFFFF else 1
    # Past the end of the line: keep the distance so a range end stays after its start.
    return len(line) + units - counted


class LanguageServerClient:
    """An LSP client for one server process serving one workspace root.

    States: ``idle`` (never started), ``starting``, ``ready``, ``restarting``
    (waiting out a backoff after a crash), ``down`` (too many crashes, or the
    command cannot be executed) and ``stopped``. Every method is safe to call
    from several threads at once.

    ``backoff_base``, ``max_crashes``, ``crash_window`` and ``clock`` exist so
    tests can make the crash policy fast and deterministic; the defaults are
    1 s, 2 s, 4 s ... between restarts and "down" after 3 crashes in 5 minutes.
    """

    def __init__(
        self,
        spec: ServerSpec,
        root: Path,
        *,
        start_timeout: float = 10.0,
        max_open_documents: int = 64,
        backoff_base: float = 1.0,
        max_crashes: int = 3,
        crash_window: float = 300.0,
        hung_silence: float = HUNG_SILENCE,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.spec = spec
        self.root = Path(os.path.normpath(Path(root).absolute()))
        self._start_timeout = start_timeout
        self._max_open = max(1, max_open_documents)
        self._backoff_base = backoff_base
        self._max_crashes = max_crashes
        self._crash_window = crash_window
        self._hung_silence = hung_silence
        self._clock = clock
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._state = "idle"
        self._generation = 0
        self._crashing = 0
        self._process: subprocess.Popen | None = None
        self._conn: Connection | None = None
        self._capabilities: dict = {}
        self._encoding = "utf-16"
        self._version: str | None = None
        self._documents: collections.OrderedDict[str, _Document] = collections.OrderedDict()
        # Documents (unquoted URIs) whose diagnostics the server published since they were last synced.
        self._checked: set[str] = set()
        self._timeouts = 0
        self._crash_times: collections.deque[float] = collections.deque()
        self._next_start = 0.0
        self._restarts = 0
        self._last_error: str | None = None
        # True while the warm-up query runs: the server is loading its project and would answer slowly.
        self.warming = False

    @property
    def state(self) -> str:
        return self._state

    @property
    def capabilities(self) -> dict:
        """The server's capabilities from ``initialize``; {} before it answered."""
        return self._capabilities

    def ensure_started(self) -> None:
        """Start the server in the background if it never ran or its backoff has passed; never blocks."""
        with self._lock:
            if self._state == "restarting" and self._clock() >= self._next_start:
                self._restarts += 1
            elif self._state != "idle":
                return
            self._state = "starting"
            self._generation += 1
            threading.Thread(
                target=self._start, args=(self._generation,), name=f"lsp-start-{self.spec.name}", daemon=True
            ).start()

    def wait_ready(self, timeout: float) -> bool:
        """Wait while the server is starting (at most ``timeout`` s); True if it is ready.

        Returns at once in any other state, so call ``ensure_started`` first.
        """
        with self._changed:
            self._changed.wait_for(lambda: self._state != "starting", timeout)
            return self._state == "ready"

    def stop(self) -> None:
        """Shut the server down politely (≤1 s), then SIGKILL its process group; idempotent."""
        with self._lock:
            if self._state == "stopped":
                return
            was_ready = self._state == "ready"
            self._state = "stopped"
            process, conn = self._process, self._conn
            self._process = self._conn = None
            self._changed.notify_all()
        if conn is not None and process is not None and was_ready:
            try:
                conn.request("shutdown", None, STOP_GRACE)
            except (RequestTimeout, ResponseError, ConnectionLost):
                # A server that cannot shut down politely is killed below.
                pass
            conn.notify("exit")
            try:
                process.wait(timeout=STOP_GRACE)
            except subprocess.TimeoutExpired:
                log.debug("%s did not exit after the exit notification", self.spec.name)
        if process is not None:
            kill_group(process)
        if conn is not None:
            conn.close("stopped")

    def status(self) -> ServerStatus:
        """What the status report shows for this server; ``pid`` only while a process runs."""
        with self._lock:
            return ServerStatus(self.spec.name, self.spec.command, tuple(self.spec.languages), self._state,
                                self._version, self._process.pid if self._process is not None else None,
                                self._restarts, self._last_error)

    def has_documents(self) -> bool:
        """Whether any document is open in the server (tsserver knows only the projects of open files)."""
        with self._lock:
            return bool(self._documents)

    def supports(self, method: str) -> bool:
        """Whether the server announced ``method`` (an options object ``{}`` counts as yes)."""
        key = _PROVIDERS.get(method)
        return key is not None and self._capabilities.get(key) not in (None, False)

    def sync(self, path: str, text: str, language_id: str) -> None:
        """Make the server see ``text`` for ``path``: didOpen, or didChange when it differs from the last sync.

        At most ``max_open_documents`` stay open; the least recently used is
        closed beyond that. Raises ``ServerUnavailable`` when not ready (nothing
        is remembered: sync again before the next request).
        """
        self.ensure_started()
        with self._lock:
            conn = self._ready_connection()
            uri = self._uri(path)
            document = self._documents.get(path)
            if document is None or document.text != text:
                self._checked.discard(unquote(uri))
            if document is None:
                self._documents[path] = _Document(text, 1)
                item = {"uri": uri, "languageId": language_id, "version": 1, "text": text}
                conn.notify("textDocument/didOpen", {"textDocument": item})
            else:
                self._documents.move_to_end(path)
                if document.text != text:
                    version = document.version + 1
                    self._documents[path] = _Document(text, version)
                    conn.notify(
                        "textDocument/didChange",
                        {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]},
                    )
            while len(self._documents) > self._max_open:
                closed, _ = self._documents.popitem(last=False)
                self._checked.discard(unquote(self._uri(closed)))
                conn.notify("textDocument/didClose", {"textDocument": {"uri": self._uri(closed)}})

    def request(self, method: str, params: Any, timeout: float) -> Any:
        """Any request, its raw result; the typed methods below are built on it."""
        self.ensure_started()
        with self._lock:
            conn = self._ready_connection()
            generation = self._generation
        try:
            result = conn.request(method, params, timeout)
        except RequestTimeout:
            # Recorded before counting: a third timeout in a row replaces it with the "hung" crash.
            error = self._failed(ServerCallError("timeout", f"{method} timed out after {timeout:g} s"))
            self._count_timeout(generation)
            raise error from None
        except ResponseError as exc:
            self._count_answer(generation)
            raise self._failed(ServerCallError("error", f"{method} failed: {exc.message} (code {exc.code})")) from None
        except ConnectionLost as exc:
            raise ServerCallError("crashed", f"{method}: the server crashed ({exc})") from None
        self._count_answer(generation)
        return result

    def definition(self, path: str, line: int, character: int, timeout: float) -> list[Place]:
        return self._locations("textDocument/definition", path, line, character, timeout)

    def references(
        self, path: str, line: int, character: int, timeout: float, include_declaration: bool = False
    ) -> list[Place]:
        context = {"context": {"includeDeclaration": include_declaration}}
        return self._locations("textDocument/references", path, line, character, timeout, context)

    def type_definition(self, path: str, line: int, character: int, timeout: float) -> list[Place]:
        return self._locations("textDocument/typeDefinition", path, line, character, timeout)

    def implementation(self, path: str, line: int, character: int, timeout: float) -> list[Place]:
        return self._locations("textDocument/implementation", path, line, character, timeout)

    def document_symbols(self, path: str, timeout: float) -> list[Place]:
        method = "textDocument/documentSymbol"
        raw = self.request(method, {"textDocument": {"uri": self._uri(path)}}, timeout)
        return self._parse(method, lambda convert: results.document_symbols(method, raw, path, self.root, convert))

    def hover(self, path: str, line: int, character: int, timeout: float) -> str | None:
        method = "textDocument/hover"
        raw = self.request(method, self._text_position(path, line, character), timeout)
        return self._parse(method, lambda _: results.hover_text(method, raw))

    def workspace_symbols(self, query: str, timeout: float) -> list[Place]:
        method = "workspace/symbol"
        raw = self.request(method, {"query": query}, timeout)
        return self._parse(method, lambda convert: results.workspace_symbols(method, raw, self.root, convert))

    def _locations(
        self, method: str, path: str, line: int, character: int, timeout: float, extra: dict | None = None
    ) -> list[Place]:
        raw = self.request(method, {**self._text_position(path, line, character), **(extra or {})}, timeout)
        return self._parse(method, lambda convert: results.locations(method, raw, self.root, convert))

    def _parse(self, method: str, parse: Callable[[results.Convert], Any]) -> Any:
        """Run a result parser; a malformed result is recorded as the last error and the server stays up."""
        try:
            return parse(self._converter())
        except ServerCallError as exc:
            error = exc
        except Exception as exc:  # noqa: BLE001 - the typed methods promise to raise only the two client errors.
            error = ServerCallError("malformed", f"{method}: unreadable result ({type(exc).__name__}: {exc})")
        raise self._failed(error)

    def _failed(self, error: ServerCallError) -> ServerCallError:
        """Record a failed call as the last error (shown by the status) and return it to be raised."""
        with self._lock:
            self._last_error = str(error)
        log.warning("%s: %s", self.spec.name, error)
        return error

    def wait_checked(self, path: str, timeout: float) -> bool:
        """Wait (at most ``timeout`` s) until the server has published diagnostics for ``path`` since its last
        sync; True if it has. pyright checks a file it was just sent before it answers anything quickly again,
        and says it is done by publishing the file's diagnostics (as every common server does)."""
        uri = unquote(self._uri(path))
        deadline = time.monotonic() + timeout
        with self._lock:
            while uri not in self._checked:
                left = deadline - time.monotonic()
                if left <= 0 or self._state != "ready":
                    return False
                self._changed.wait(left)
            return True

    def _notified(self, method: str, params: Any) -> None:
        """The server's notifications (on the reader thread): only published diagnostics matter here."""
        if method == "textDocument/publishDiagnostics" and isinstance(params, dict) \
                and isinstance(params.get("uri"), str):
            uri = unquote(params["uri"])
            with self._lock:
                # Only open documents are waited for, which also keeps the set as small as they are few.
                if any(unquote(self._uri(path)) == uri for path in self._documents):
                    self._checked.add(uri)
                    self._changed.notify_all()

    def _uri(self, path: str) -> str:
        return (self.root / path).as_uri()

    def _text_position(self, path: str, line: int, character: int) -> dict:
        """``TextDocumentPositionParams`` for a 1-based line and a code point character."""
        with self._lock:
            if path in self._documents:
                self._documents.move_to_end(path)
            encoding = self._encoding
        lines = self._lines(path, {})
        line0 = max(0, line - 1)
        units = character
        if lines is not None and line0 < len(lines):
            units = _to_units(lines[line0], max(0, character), encoding)
        return {"textDocument": {"uri": self._uri(path)}, "position": {"line": line0, "character": units}}

    def _lines(self, path: str, disk: dict[str, list[str] | None]) -> list[str] | None:
        """The lines of ``path`` as last synced, else as on disk (memoised in ``disk``); None if unreadable.

        The disk is read outside the lock, so a large file does not hold up other threads' calls.
        """
        with self._lock:
            document = self._documents.get(path)
        if document is not None:
            return document.lines
        if path not in disk:
            file = self.root / path
            try:
                if file.stat().st_size > MAX_CONVERT_BYTES:
                    raise OSError("too large to convert positions")
                disk[path] = _LINE_BREAK.split(file.read_bytes().decode("utf-8"))
            except (OSError, UnicodeDecodeError):
                disk[path] = None
        return disk[path]

    def _converter(self) -> results.Convert:
        """Server characters → code points, for the answer of one call."""
        encoding = self._encoding
        disk: dict[str, list[str] | None] = {}

        def convert(path: str, line0: int, units: int) -> int:
            lines = self._lines(path, disk)
            if lines is None or line0 >= len(lines):
                return units
            return _to_codepoints(lines[line0], units, encoding)

        return convert

    def _ready_connection(self) -> Connection:
        """The live connection; raises ``ServerUnavailable`` with the reason otherwise. Call under the lock."""
        if self._state == "ready" and self._conn is not None:
            return self._conn
        if self._state == "restarting":
            wait = max(0.0, self._next_start - self._clock())
            raise ServerUnavailable(f"restarting after a crash (next try in {wait:.1f} s)")
        if self._state == "down":
            crashes = len(self._crash_times)
            prefix = f"down after {crashes} crashes" if crashes else "down"
            raise ServerUnavailable(f"{prefix}: {self._last_error}")
        raise ServerUnavailable("not started" if self._state == "idle" else self._state)

    def _start(self, generation: int) -> None:
        """Launch, initialize, and become ready; on any failure record it as a crash (or "down")."""
        argv = [self.spec.command, *self.spec.args]
        try:
            process = spawner().submit(popen, argv, self.root).result()
        except OSError as exc:
            self._cannot_execute(generation, f"cannot execute {self.spec.command}: {exc.strerror or exc}")
            return
        except (ValueError, TypeError, RuntimeError) as exc:
            # Arguments Popen rejects (a NUL byte), or an interpreter that is shutting down: retrying cannot help.
            self._cannot_execute(generation, f"cannot start {self.spec.command}: {exc}")
            return
        # Popen with PIPE for all three always gives the three streams.
        conn = Connection(
            cast(BinaryIO, process.stdout),
            cast(BinaryIO, process.stdin),
            cast(BinaryIO, process.stderr),
            handle_request=self._answer_server,
            on_close=lambda reason: self._crashed(generation, reason),
            name=self.spec.name,
            handle_notification=self._notified,
        )
        with self._lock:
            current = generation == self._generation and self._state == "starting"
            if current:
                self._process, self._conn = process, conn
        conn.start()
        if not current:
            kill_group(process)
            conn.close("stopped")
            return
        threading.Thread(target=self._watch_exit, args=(generation, process), daemon=True).start()
        log.debug("%s: started pid %d: %s", self.spec.name, process.pid, " ".join(argv))
        try:
            answer = conn.request("initialize", self._initialize_params(), self._start_timeout)
        except RequestTimeout:
            self._crashed(generation, f"initialize got no answer within {self._start_timeout:g} s")
            return
        except ResponseError as exc:
            self._crashed(generation, f"initialize failed: {exc.message}")
            return
        except ConnectionLost:
            # The reader or the exit watcher has already reported the crash.
            return
        capabilities = answer.get("capabilities") if isinstance(answer, dict) else None
        if not isinstance(capabilities, dict):
            self._crashed(generation, f"initialize answered without capabilities: {answer!r:.100}")
            return
        info = answer.get("serverInfo")
        version = info.get("version") if isinstance(info, dict) else None
        encoding = capabilities.get("positionEncoding", "utf-16")
        conn.notify("initialized", {})
        with self._lock:
            if generation != self._generation or self._state != "starting":
                return
            self._capabilities = capabilities
            self._encoding = encoding if encoding in ENCODINGS else "utf-16"
            self._version = version if isinstance(version, str) else None
            self._timeouts = 0
            self._documents.clear()
            self._checked.clear()
            # Set with the state, so that no caller woken by "ready" asks before the warm-up has begun.
            self.warming = bool(self.spec.warm_up and capabilities.get("workspaceSymbolProvider"))
            self._state = "ready"
            self._changed.notify_all()
        log.debug("%s: ready (version %s, %s positions)", self.spec.name, self._version, self._encoding)
        self._warm_up(conn)

    def _warm_up(self, conn: Connection) -> None:
        """Ask workspace-symbol queries until one has answers, ignoring them: the server loads its project now,
        not during the first question.

        pyright answers ``[]`` at once until it has taken in its configuration (a second or two after
        ``initialize``), then takes seconds to answer its first real query on a large tree, well over the
        per-call timeout; afterwards a query takes ~0.2 s.
        """
        if not self.warming:
            return
        try:
            self.settle(WARM_UP_SECONDS)
        except (ServerUnavailable, ServerCallError) as exc:
            log.debug("%s: warm-up query: %s", self.spec.name, exc)
        finally:
            self.warming = False

    def settle(self, seconds: float) -> None:
        """Let the server load its project, within ``seconds``; raises like the typed requests.

        A ``warm_up`` server (pyright) is asked until it has answers: it answers ``[]`` at once until it has
        its configuration ("e" matches some symbol in any project). Another (tsserver, with its syntax
        server off) holds its first answer until its project is loaded, and answers nothing to a one-letter
        query, so it is asked once.
        """
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            if self.request("workspace/symbol", {"query": "e"}, left) or not self.spec.warm_up:
                return
            time.sleep(min(WARM_UP_PAUSE, max(0.0, deadline - time.monotonic())))

    def _initialize_params(self) -> dict:
        folder = {"uri": self.root.as_uri(), "name": self.root.name or str(self.root)}
        params = {
            "processId": os.getpid(),
            "clientInfo": {"name": "rag-lsp", "version": rag_lsp.__version__},
            "rootUri": folder["uri"],
            "rootPath": str(self.root),
            "workspaceFolders": [folder],
            "capabilities": {
                "general": {"positionEncodings": OFFERED_ENCODINGS},
                "textDocument": {
                    "synchronization": {"dynamicRegistration": False, "didSave": False},
                    "definition": {"linkSupport": True},
                    "typeDefinition": {"linkSupport": True},
                    "references": {},
                    "implementation": {"linkSupport": True},
                    "documentSymbol": {"hierarchicalDocumentSymbolSupport": True, "symbolKind": _SYMBOL_KINDS},
                    "hover": {"contentFormat": ["plaintext", "markdown"]},
                    "publishDiagnostics": {},
                },
                "workspace": {"symbol": {"symbolKind": _SYMBOL_KINDS}, "workspaceFolders": True, "configuration": True},
            },
        }
        if self.spec.initialization_options is not None:
            params["initializationOptions"] = self.spec.initialization_options
        return params

    def _answer_server(self, method: str, params: Any) -> Any:
        """Answers to the server's own requests: enough for servers to carry on, never any real setting."""
        if method == "workspace/configuration":
            items = params.get("items") if isinstance(params, dict) else None
            return [None] * len(items) if isinstance(items, list) else []
        if method == "workspace/workspaceFolders":
            return [{"uri": self.root.as_uri(), "name": self.root.name or str(self.root)}]
        if method in _NULL_ANSWERS:
            return None
        raise MethodNotFound(method)

    def _watch_exit(self, generation: int, process: subprocess.Popen) -> None:
        """Report an exit even when a grandchild keeps the server's stdout open (so no EOF arrives)."""
        returncode = process.wait()
        self._crashed(generation, f"the server exited ({exit_status(returncode)})")

    def _count_answer(self, generation: int) -> None:
        with self._lock:
            if generation == self._generation:
                self._timeouts = 0

    def _count_timeout(self, generation: int) -> None:
        with self._lock:
            if generation != self._generation:
                return
            self._timeouts += 1
            conn = self._conn
            # A server loading a large project answers late but still answers; only one that has also been
            # silent for a while is hung.
            silent = conn is None or time.monotonic() - conn.last_heard >= self._hung_silence
            hung = self._timeouts >= HUNG_AFTER_TIMEOUTS and silent
        if hung:
            self._crashed(generation, f"hung: {self._timeouts} requests in a row got no answer and the server "
                                      f"said nothing for {self._hung_silence:g} s")

    def _cannot_execute(self, generation: int, error: str) -> None:
        """A command that cannot run will not run on retry either: down at once."""
        log.warning("%s: %s", self.spec.name, error)
        with self._lock:
            if generation != self._generation or self._state != "starting":
                return
            self._last_error = error
            self._state = "down"
            self._changed.notify_all()

    def _crashed(self, generation: int, reason: str) -> None:
        """Kill what is left of the process, fail its calls, and schedule a restart or give up.

        Called by whichever notices first (the reader, the exit watcher, a
        timeout); later reports for the same process are ignored.
        """
        with self._lock:
            if generation != self._generation or self._state not in ("starting", "ready"):
                return
            if self._crashing == generation:
                return
            self._crashing = generation
            process, conn = self._process, self._conn
        exited = None
        if process is not None:
            # A server that closed its output is usually exiting: its exit status says why (a signal, a code).
            try:
                exited = process.wait(timeout=EXIT_STATUS_WAIT)
            except subprocess.TimeoutExpired:
                exited = None
            kill_group(process)
        tail: list[str] = []
        if conn is not None:
            conn.close(reason)
            tail = telling(conn.stderr_tail(50, wait=0.5))
        error = reason
        if exited is not None and "exited" not in reason:
            error += f" ({exit_status(exited)})"
        if tail:
            error += "; stderr: " + " | ".join(tail)
        with self._lock:
            if generation != self._generation or self._state == "stopped":
                return
            now = self._clock()
            self._crash_times.append(now)
            while self._crash_times and now - self._crash_times[0] > self._crash_window:
                self._crash_times.popleft()
            self._last_error = error
            self._process = self._conn = None
            self._capabilities = {}
            self._version = None
            self._documents.clear()
            self._checked.clear()
            if len(self._crash_times) >= self._max_crashes:
                self._state = "down"
            else:
                self._state = "restarting"
                self._next_start = now + self._backoff_base * 2 ** (len(self._crash_times) - 1)
            self._changed.notify_all()
            state = self._state
        log.warning("%s crashed (%s): %s", self.spec.name, state, error)
