"""A seeded, reproducible fuzzer of ``rag-lsp serve``: hypothesis strategies over the LSP schema and rag_lsp's
custom requests, and a driver that sends what they draw and checks every answer.

Strategies: every method the server registers (read from ``build_server().protocol.fm``: features,
built-in features and commands, less the lifecycle methods, which end the session) gets params drawn from
its lsprotocol params type, walked field by field (``lsprotocol``'s attrs classes drive the strategy), or for
the custom requests from their documented shape; then a good share is broken on purpose: a field dropped or
given the wrong type, a huge string, a negative or huge position, a URI that is no file or lies outside the
root, a version older than the buffer's. Batches interleave notifications and requests, cancel earlier
requests at random, and mix in envelopes that are not JSON-RPC at all.

The driver (``FuzzRun``) sends each batch without waiting, then requires: the process is alive, every
request got exactly one response (a result or a JSON-RPC error), no error is an internal error (a handler
that raised), and no ``Error in server`` message came. ``FuzzRun.settle`` then puts the workspace back
(documents closed, settings reset, the root indexed again) so that the answers can be compared with a fresh
index of the same files. Used by ``tests/e2e/test_server_fuzz.py`` (a short run) and ``bench/fuzz_server.py``
(10,000 messages).
"""

from __future__ import annotations

import enum
import json
import random
import time
import types as pytypes
import typing
from collections import Counter, abc
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import attrs
from hypothesis import strategies as st
from lsprotocol import types
from raw_client import ACCEPT, IGNORE, REFUSE, RawServer

from rag_lsp.server.app import build_server
from rag_lsp.server.language_server import NOTIFICATION_FAILED
from rag_lsp.server.wire import settings_json
from rag_lsp.workspace.settings import Settings

LIFECYCLE = {"initialize", "initialized", "shutdown", "exit"}
INTERNAL_ERROR = -32603
# The longest a batch may wait for its answers (a cold question on the fuzz workspace takes well under 1 s).
BATCH_TIMEOUT = 60.0
NAMES = ["Ledger.post", "Ledger", "post", "convert", "allow", "RATE_LIMIT", "CartClient.checkout", "formatPrice",
         "checkout", "RATES", "Nope", "", " ", "a" * 600, "Ledger..post", "__init__", "çà", "🎉"]
WORDS = ["ledger", "post", "account", "currency", "convert", "rate", "limit", "checkout", "price", "KeyError",
         "why", "does", "fail", "def", "class", "return", "Traceback", "File", "line", "3f2a9c1", "GET /cart"]
CODE = ["a", "b", "x", "_", " ", "(", ")", ":", "\n", "\r\n", "é", "ß", "中", "🎉", "𝔘", "def ", "class ",
        "return ", "    ", "#", "'", '"', "=", "1", "import ", "from ", "\t", "\x00", "\ud800"]


@cache
def registered() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The methods (features and built-in features, less lifecycle) and the commands the server registers."""
    server = build_server(use_cache=False)
    manager = server.protocol.fm
    methods = sorted((set(manager.features) | set(manager.builtin_features)) - LIFECYCLE)
    commands = tuple(sorted(manager.commands))
    server.session.close()
    return tuple(methods), commands


def json_values(max_leaves: int = 8) -> st.SearchStrategy:
    scalars = st.none() | st.booleans() | st.integers(-(2 ** 40), 2 ** 40) | st.floats(allow_nan=False) | \
        st.text(max_size=20)
    return st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) |
                        st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=max_leaves)


@dataclass
class Workspace:
    """What the strategies aim at: the root's files and the documents the fuzzer has opened."""

    root: Path
    files: list[str]

    def uris(self) -> st.SearchStrategy[str]:
        real = st.sampled_from([(self.root / path).as_uri() for path in self.files])
        made_up = st.sampled_from(["shop/new_module.py", "web/new.ts", "deep/a/b/c.md", "shop/.env", "x.bin"]).map(
            lambda rel: (self.root / rel).as_uri())
        bad = st.sampled_from(["http://example.com/x.py", "file:///etc/passwd", "file:///nonexistent/dir/x.py",
                               "", "not a uri", "file://", "untitled:Untitled-1", "file:///" + "a" * 5000,
                               (self.root / "../outside.py").as_uri(), self.root.as_uri()])
        return st.one_of(real, real, real, made_up, bad)


def text() -> st.SearchStrategy[str]:
    """Text as editors send it: code-like pieces, at times huge or with a NUL or a lone surrogate."""
    pieces = st.lists(st.sampled_from(CODE), max_size=60).map("".join)
    return st.one_of(pieces, pieces, st.text(max_size=200), st.sampled_from(["", "x" * 300_000,
                                                                             "def f():\n    pass\n" * 5000]))


def positions() -> st.SearchStrategy[dict]:
    small = st.integers(0, 60)
    odd = st.sampled_from([-1, -(2 ** 31), 2 ** 31 - 1, 2 ** 31, 10 ** 12])
    return st.fixed_dictionaries({"line": small | odd, "character": small | odd})


class Schema:
    """Params for every method: lsprotocol's types walked field by field, and the custom requests' shapes."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self._classes: dict[type, st.SearchStrategy] = {}

    def params(self, method: str) -> st.SearchStrategy:
        custom = {
            "ragLsp/context": self._context, "ragLsp/lookup": self._lookup, "ragLsp/status": self._status,
            "ragLsp/completionContext": self._completion, "workspace/executeCommand": self._command,
            "workspace/didChangeConfiguration": self._configuration,
        }.get(method)
        if custom is not None:
            return custom()
        entry = types.METHOD_TO_TYPES.get(method)
        if entry is None or entry[2] is None:
            return json_values()
        return self._of(entry[2], "params")

    def _of(self, hint: object, name: str) -> st.SearchStrategy:
        """Values of one annotation; ``name`` steers strings (URIs, text) and integers (positions)."""
        origin, args = typing.get_origin(hint), typing.get_args(hint)
        if hint is typing.Any or hint is object:
            return json_values()
        if origin in (typing.Union, pytypes.UnionType):
            return st.one_of(*[self._of(arg, name) for arg in args])
        if origin is typing.Literal:
            return st.sampled_from(args)
        if origin in (list, tuple, abc.Sequence):
            return st.lists(self._of(args[0] if args else typing.Any, name), max_size=4)
        if origin in (dict, abc.Mapping):
            return st.dictionaries(st.text(max_size=8), self._of(args[1] if len(args) > 1 else typing.Any, name),
                                   max_size=3)
        if hint is type(None):
            return st.none()
        if isinstance(hint, type) and issubclass(hint, enum.Enum):
            return st.sampled_from([member.value for member in hint]) | st.integers(-3, 99)
        if hint is bool:
            return st.booleans()
        if hint is int:
            return st.integers(-5, 80) if name in ("line", "character", "version") else st.integers(-(2 ** 31), 2 ** 31)
        if hint is float:
            return st.floats(allow_nan=False)
        if hint is str:
            lowered = name.lower()
            if "uri" in lowered:
                return self.workspace.uris()
            if lowered in ("text", "query", "message", "value"):
                return text()
            return st.text(max_size=20)
        if isinstance(hint, type) and attrs.has(hint):
            return self._class(hint)
        return json_values()

    def _class(self, cls: type) -> st.SearchStrategy:
        if cls not in self._classes:
            self._classes[cls] = st.deferred(lambda: self._fields(cls))
        return self._classes[cls]

    def _fields(self, cls: type) -> st.SearchStrategy:
        hints = typing.get_type_hints(cls)
        required, optional = {}, {}
        for item in attrs.fields(cls):
            key = _camel(item.name)
            strategy = self._of(hints.get(item.name, typing.Any), item.name)
            if item.default is attrs.NOTHING:
                required[key] = strategy
            else:
                optional[key] = strategy
        return st.fixed_dictionaries(required, optional=optional)

    def folders(self) -> st.SearchStrategy[dict]:
        """Workspace folder changes among places that exist or plainly do not, never ``/`` or the home: a
        client may name any folder, and the fuzzer must not have the whole disk indexed."""
        root = self.workspace.root
        places = [root, root / "shop", root / "web", root.parent / "fuzz-other", root / "missing", root / "README.md"]
        folder = st.sampled_from(places).map(lambda path: {"uri": path.as_uri(), "name": path.name}) | json_values(2)
        return st.fixed_dictionaries({"event": st.fixed_dictionaries({"added": st.lists(folder, max_size=2),
                                                                      "removed": st.lists(folder, max_size=2)})})

    def _document(self) -> st.SearchStrategy[dict]:
        return st.fixed_dictionaries({"uri": self.workspace.uris()})

    def _context(self) -> st.SearchStrategy:
        fields = {"query": st.sampled_from(WORDS) | st.lists(st.sampled_from(WORDS), max_size=8).map(" ".join) | text(),
                  "evidence": st.lists(text(), max_size=3), "topK": st.integers(-2, 120),
                  "budgetTokens": st.integers(-2, 250_000), "verbosity": st.sampled_from(["full", "locations", "x"]),
                  "textDocument": self._document(), "position": positions()}
        return st.fixed_dictionaries({}, optional=fields)

    def _lookup(self) -> st.SearchStrategy:
        fields = {"symbol": st.sampled_from(NAMES) | st.text(max_size=10),
                  "what": st.sampled_from(["definitions", "references", "implementations", "hover",
                                           "documentSymbols", "callers"]), "textDocument": self._document()}
        return st.fixed_dictionaries({}, optional=fields)

    def _status(self) -> st.SearchStrategy:
        return st.none() | st.just({})

    def _completion(self) -> st.SearchStrategy:
        fields = {"budgetTokens": st.integers(-1, 300_000), "maxSnippets": st.integers(-1, 40),
                  "timeBudgetMs": st.integers(-1, 20_000)}
        return st.fixed_dictionaries({"textDocument": self._document(), "position": positions()}, optional=fields)

    def _command(self) -> st.SearchStrategy:
        _, commands = registered()
        target = st.fixed_dictionaries({}, optional={"uri": self.workspace.uris(), "qualname": st.sampled_from(NAMES),
                                                     "name": st.sampled_from(NAMES)})
        return st.fixed_dictionaries({"command": st.sampled_from([*commands, "no.such.command", ""])},
                                     optional={"arguments": st.lists(target | json_values(), max_size=2)})

    def _configuration(self) -> st.SearchStrategy:
        # Never a language server command: the fuzzer must not make the server start arbitrary programs.
        settings = st.fixed_dictionaries({}, optional={
            "topK": st.integers(-1, 120), "budgetTokens": st.integers(-1, 300_000), "ignore": st.lists(
                st.sampled_from(["web/**", "*.md", "", "[", "**"]), max_size=2),
            "languages": st.dictionaries(st.sampled_from(["python", "markdown", "typescript", "klingon"]),
                                         st.booleans() | st.integers(), max_size=2),
            "cacheDir": st.sampled_from([None, "sub", "/tmp/elsewhere", "", 5]),
            "maxFileBytes": st.integers(-1, 1 << 27), "firstIndexWaitMs": st.integers(-1, 40_000),
            "languageServers": st.dictionaries(st.sampled_from(["python", "go", "cobol"]),
                                               st.fixed_dictionaries({}, optional={"enabled": st.booleans()}),
                                               max_size=1),
            "bogusSetting": json_values()})
        return st.fixed_dictionaries({"settings": st.fixed_dictionaries({"ragLsp": settings}) | settings})


def _camel(name: str) -> str:
    head, *rest = name.rstrip("_").split("_")
    return head + "".join(part.title() for part in rest)


def broken(value: object, draw) -> object:
    """``value`` with one thing wrong: a field dropped, a value of the wrong type, a huge string, or null."""
    if isinstance(value, dict) and value and draw(st.booleans()):
        key = draw(st.sampled_from(sorted(value)))
        how = draw(st.sampled_from(["drop", "type", "huge", "null", "deeper"]))
        changed = dict(value)
        if how == "drop":
            del changed[key]
        elif how == "type":
            changed[key] = draw(json_values(3))
        elif how == "huge":
            changed[key] = "z" * 200_000
        elif how == "null":
            changed[key] = None
        else:
            changed[key] = broken(changed[key], draw)
        return changed
    return draw(st.sampled_from([None, [], "a string", 5, {"unexpected": True}, [value]]))


@dataclass(frozen=True)
class Message:
    """One thing to send: a request or notification, a cancel of an earlier request, or raw bytes."""

    kind: str  # "request", "notification", "cancel", "raw", "bad-id"
    method: str = ""
    params: object = None
    raw: bytes = b""


# What each message of a batch is, by weight: mostly a method call, now and then a cancel, a body that is
# not JSON-RPC, or a request whose id is not an id.
KINDS = ["call"] * 22 + ["cancel", "cancel", "raw", "bad-id"]


@cache
def weighted_methods() -> tuple[str, ...]:
    """Every registered method, rag_lsp's own requests and the text sync three times over, plus methods the
    server does not know."""
    methods, _ = registered()
    heavy = {"ragLsp/context", "ragLsp/lookup", "ragLsp/completionContext", "ragLsp/status", "textDocument/didOpen",
             "textDocument/didChange", "textDocument/didClose", "textDocument/codeLens", "codeLens/resolve",
             "workspace/symbol", "workspace/executeCommand"}
    return tuple(m for method in methods for m in [method] * (3 if method in heavy else 1)) + \
        ("no/suchMethod", "$/cancelRequest")


@st.composite
def batches(draw, schema: Schema, size: int = 30) -> list[Message]:
    """A batch of up to ``size`` messages: requests and notifications of every registered method, a quarter of
    them broken, cancels, and now and then an envelope that is not JSON-RPC."""
    out = []
    # Hypothesis leans towards the first of a list and towards small numbers (it shrinks that way); kinds and
    # methods should come evenly, so they are picked by a Random seeded with a number hypothesis draws.
    pick = random.Random(draw(st.integers(0, 2 ** 64)))
    for _ in range(draw(st.integers(1, size))):
        kind = pick.choice(KINDS)
        if kind == "cancel":
            out.append(Message("cancel"))
            continue
        if kind == "raw":
            out.append(Message("raw", raw=draw(st.sampled_from(sorted(RAW)))))
            continue
        if kind == "bad-id":
            out.append(Message("bad-id", "ragLsp/status"))
            continue
        method = pick.choice(weighted_methods())
        params = draw(schema.folders() if method == "workspace/didChangeWorkspaceFolders" else schema.params(method))
        if pick.random() < 0.25:
            params = broken(params, draw)
        request = method in REQUESTS or (method not in NOTIFICATIONS and pick.random() < 0.5)
        out.append(Message("request" if request else "notification", method, params))
    return out


# Bodies that are not JSON-RPC messages, and whether each is answered (with a null id: there is no id to use).
RAW = {b"{not json": True, b"[]": True, b"5": True, b'"x"': True, b"\xff\xfe": True, b"{}": False,
       json.dumps({"jsonrpc": "1.0", "method": "ragLsp/status"}).encode(): False,
       json.dumps({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": [1]}}).encode(): False}

# Which registered methods are requests and which notifications (a wrong pairing is fuzzed too, at times).
REQUESTS = {"codeLens/resolve", "ragLsp/completionContext", "ragLsp/context", "ragLsp/lookup", "ragLsp/status",
            "textDocument/codeLens", "workspace/executeCommand", "workspace/symbol"}
NOTIFICATIONS = {"textDocument/didChange", "textDocument/didClose", "textDocument/didOpen", "textDocument/didSave",
                 "workspace/didChangeConfiguration", "workspace/didChangeWatchedFiles",
                 "workspace/didChangeWorkspaceFolders", "workspace/didCreateFiles", "workspace/didDeleteFiles",
                 "workspace/didRenameFiles", "notebookDocument/didChange", "notebookDocument/didClose",
                 "notebookDocument/didOpen", "window/workDoneProgress/cancel", "$/cancelRequest", "$/setTrace"}


@dataclass
class Figures:
    """What a run did and found."""

    messages: int = 0
    requests: int = 0
    notifications: int = 0
    cancels: int = 0
    raw: int = 0
    results: int = 0
    errors: Counter = field(default_factory=Counter)
    by_method: Counter = field(default_factory=Counter)
    unanswered: list = field(default_factory=list)
    internal_errors: list = field(default_factory=list)
    duplicates: int = 0
    crash_messages: list = field(default_factory=list)
    # Handlers that raised (notifications, the writer thread), as the server's log reports them.
    handler_failures: list = field(default_factory=list)
    # Seconds from the end of sending a batch to each of its responses, and the slowest requests.
    waits: list = field(default_factory=list)
    slowest: list = field(default_factory=list)

    def failures(self) -> list[str]:
        found = []
        if self.unanswered:
            found.append(f"{len(self.unanswered)} requests unanswered, e.g. {self.unanswered[:3]}")
        if self.internal_errors:
            found.append(f"{len(self.internal_errors)} internal errors, e.g. {self.internal_errors[:3]}")
        if self.duplicates:
            found.append(f"{self.duplicates} requests answered twice")
        if self.crash_messages:
            found.append(f"'Error in server' messages: {self.crash_messages[:3]}")
        if self.handler_failures:
            found.append(f"{len(self.handler_failures)} handler failures in the log, e.g. {self.handler_failures[:2]}")
        return found


class FuzzRun:
    """One server under fuzz: sends batches, waits for every answer, keeps the figures."""

    def __init__(self, server: RawServer, seed: int) -> None:
        self.server = server
        self.rng = random.Random(seed)
        self.figures = Figures()
        self.outstanding: list[int] = []
        self.opened: set[str] = set()
        self.folders: set[str] = set()

    def answer(self, message: dict) -> str:
        """How the fuzzing client answers the server's own requests: mostly accepted, sometimes refused or
        ignored (the server must not depend on the answer)."""
        return self.rng.choices([ACCEPT, REFUSE, IGNORE], weights=[6, 2, 2])[0]

    def send(self, batch: list[Message]) -> None:
        server, figures = self.server, self.figures
        sent: list[tuple[int, str]] = []
        null_expected = 0
        for message in batch:
            figures.messages += 1
            if message.kind == "raw":
                figures.raw += 1
                server.send_bytes(message.raw)
                null_expected += RAW[message.raw]
            elif message.kind == "bad-id":
                figures.requests += 1
                server.send({"jsonrpc": "2.0", "id": {"not": "an id"}, "method": message.method})
                null_expected += 1
            elif message.kind == "cancel":
                figures.cancels += 1
                target = self.rng.choice(self.outstanding) if self.outstanding else self.rng.randrange(10 ** 6)
                server.notify("$/cancelRequest", {"id": target})
            elif message.kind == "request":
                figures.requests += 1
                figures.by_method[message.method] += 1
                request_id = server.request_async(message.method, message.params)
                sent.append((request_id, message.method))
                self.outstanding.append(request_id)
            else:
                figures.notifications += 1
                figures.by_method[message.method] += 1
                self._remember(message)
                server.notify(message.method, message.params)
        sent_at = time.monotonic()
        for request_id, method in sent:
            try:
                response = server.response(request_id, BATCH_TIMEOUT)
            except TimeoutError:
                figures.unanswered.append((request_id, method))
                continue
            waited = time.monotonic() - sent_at
            figures.waits.append(waited)
            figures.slowest = sorted([*figures.slowest, (round(waited, 2), method)], reverse=True)[:5]
            if "error" in response:
                code = response["error"].get("code")
                figures.errors[code] += 1
                if code == INTERNAL_ERROR:
                    figures.internal_errors.append((method, response["error"].get("message")))
            else:
                figures.results += 1
        self.outstanding = [i for i in self.outstanding if i not in {request_id for request_id, _ in sent}][-50:]
        # Parse errors and unknown-id errors are answered with id null, after the requests sent before them.
        null_started = time.monotonic()
        server.wait_for(lambda: len(server.null_responses) >= self._null_total + null_expected, 30,
                        "the errors answered with a null id")
        self._null_total += null_expected
        if time.monotonic() - null_started > 1:
            figures.slowest.append((round(time.monotonic() - null_started, 2), "null-id errors"))
        figures.duplicates = len(server.duplicates)
        figures.crash_messages = [n["params"]["message"] for n in server.notifications
                                  if n.get("method") == "window/showMessage"
                                  and "Error in server" in str(n.get("params", {}).get("message", ""))]
        log = server.log_file.read_text(encoding="utf-8", errors="replace") if server.log_file.exists() else ""
        figures.handler_failures = [line for line in log.splitlines()
                                    if NOTIFICATION_FAILED in line or "update failed" in line]
        assert server.process.poll() is None, f"the server exited with code {server.process.returncode}"

    _null_total = 0

    def _remember(self, message: Message) -> None:
        params = message.params if isinstance(message.params, dict) else {}
        document = params.get("textDocument") if isinstance(params.get("textDocument"), dict) else {}
        uri = document.get("uri")
        if message.method == "textDocument/didOpen" and isinstance(uri, str):
            self.opened.add(uri)
        event = params.get("event") if isinstance(params.get("event"), dict) else {}
        added = event.get("added") if isinstance(event.get("added"), list) else []
        self.folders.update(folder["uri"] for folder in added if isinstance(folder, dict)
                            and isinstance(folder.get("uri"), str))

    def settle(self, root: Path) -> None:
        """Put the workspace back as the disk has it: documents closed, default settings, every folder the fuzzer
        added removed, and the root added again (indexed afresh from the disk, its cache reused)."""
        for uri in sorted(self.opened):
            self.server.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        self.server.notify("workspace/didChangeConfiguration", {"settings": {"ragLsp": settings_json(Settings())}})
        folders = [{"uri": uri, "name": "x"} for uri in sorted(self.folders | {root.as_uri()})]
        self.server.notify("workspace/didChangeWorkspaceFolders", {"event": {"added": [], "removed": folders}})
        folder = {"uri": root.as_uri(), "name": root.name}
        self.server.notify("workspace/didChangeWorkspaceFolders", {"event": {"added": [folder], "removed": []}})
        self.server.wait_indexed(120)
