"""One answer from real language servers and the tree-sitter patterns, routed per file language.

A real language server knows types: which ``allow`` a call means, who
implements an interface. rag_lsp's own patterns know every language it
parses and never stall. ``CompositeSymbolProvider`` asks, for each language,
the server that serves it when that server is ready, and lets the patterns
answer the rest — a Go service, its TypeScript client and Python scripts each
get the best source available within one retrieval.

The rules, from issue 5 and written down in docs/architecture.md:

- Patterns always answer first, for free. A server is asked to confirm and
  correct a name only in languages where the patterns found a definition of
  it: ``workspace/symbol`` is fuzzy and slow on unknown words, and the call
  budget (4 per retrieval by default) is better spent on the workspace's
  own names.
- A server that is missing, still starting, restarting, down, slow (over the
  per-call timeout), or that answers with an error or malformed data is
  skipped for the rest of the retrieval, and the reason is kept for the
  answer; the patterns' answer stands for its languages. All calls of one
  question together get a time budget too (500 ms by default): a warm
  server answers well within it, and a busy one costs at most that.
- Every definition remembers its source, so strategies can weigh a server's
  answer above a pattern's and the answer can say which one it was.
- An empty answer (no definition, no reference) is not trusted over the
  patterns: servers answer ``[]`` while they load, and it looks final.
- Implementations need types: without a server, ``implementations`` raises
  ``NeedsServer`` with the reason instead of guessing. A server that does
  not answer them but answers references (pyright, jedi) still tells
  subclasses apart from namesakes: the classes whose header names a base
  (``@reference.base`` in the language's patterns) where the server puts a
  reference to the class, then their subclasses while the budget lasts.
- Given the index's version, a server's non-empty answers are remembered in
  its pool and reused by later questions while the indexed text stays the
  same; a remembered answer costs no call and no budget, and is reused even
  while its server restarts.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any, NamedTuple

from rag_lsp import languages
from rag_lsp.index.symbol_provider import PATTERNS, IndexSymbolProvider, NeedsServer, ServerNote
from rag_lsp.langservers.client import LanguageServerClient, Place, ServerCallError, ServerUnavailable
from rag_lsp.langservers.pool import ServerPool
from rag_lsp.langservers.spec import language_id
from rag_lsp.model import CLASS_LIKE_KINDS, Definition, Reference

# Below this many seconds left in the retrieval, a server is not asked at all.
MIN_CALL_SECONDS = 0.05
# Open buffers sent to a server before its first call in a question (the client keeps at most 64 open).
MAX_OPEN_SYNCED = 32
# Classes whose subclasses one implementations question looks for through references (a call each).
MAX_HIERARCHY_CLASSES = 8
_QUALIFIER = re.compile(r"::|\.|#")
# Lines that cannot hold a definition's name: comments and decorators.
_NOT_A_NAME_LINE = re.compile(r"^\s*(#|//|/\*|\*|--|@)")


class _Answer(NamedTuple):
    """A server's answer to one question (None when it gave none) and the client that gave it."""

    client: LanguageServerClient
    value: Any


@dataclass(slots=True)
class _Tally:
    """What one server did in one retrieval, counted as it happens (``ServerNote`` is its snapshot)."""

    server: str
    languages: tuple[str, ...]
    state: str = "idle"
    calls: int = 0
    answered: int = 0
    remembered: int = 0
    skipped: str | None = None

    def snapshot(self) -> ServerNote:
        return ServerNote(self.server, self.languages, self.state, self.calls, self.answered, self.remembered,
                          self.skipped)


class CompositeSymbolProvider:
    """A ``SymbolProvider`` that lets ready language servers answer for their languages, patterns the rest.

    One instance serves one retrieval: it counts the calls against the
    budget, remembers which servers failed, and caches what it asked.
    ``text_of`` gives a file's current text (the editor's unsaved buffer when
    one is open), which is what the servers are sent before being asked.
    ``version`` is the index's version (``Index.version``) while the question
    is answered; without it nothing is remembered across questions.
    """

    def __init__(self, patterns: IndexSymbolProvider, pool: ServerPool | None, text_of: Callable[[str], str | None], *,
                 timeout: float = 1.5, max_calls: int = 4, budget: float | None = None,
                 deadline: float | None = None,
                 wait_for_start: float = 0.0, open_paths: Callable[[], list[str]] = list,
                 version: Any = None, clock: Callable[[], float] = time.monotonic) -> None:
        self._patterns = patterns
        self._pool = pool
        self._text_of = text_of
        self._timeout = timeout
        self._max_calls = max_calls
        # Seconds all server calls of this question may take together (None: only the deadline bounds them).
        self._budget = budget
        self._spent = 0.0
        self._deadline = deadline
        self._clock = clock
        # A one-shot caller (the command line, an explicit lookup) may wait this long for a server to start;
        # the editor's questions do not wait: the patterns answer while it starts.
        self._wait_for_start = wait_for_start
        # The editor's open buffers: a server sees their unsaved text before its first call in a question, so
        # a call typed a second ago in another file counts as a reference.
        self._open_paths = open_paths
        self._synced_open: set[str] = set()
        self._version = version
        self.calls = 0
        self._notes: dict[str, _Tally] = {}
        self._failed: set[str] = set()
        self._sources: dict[tuple[str, int, str], str] = {}
        self._reference_sources: dict[tuple[str, int, str], str] = {}
        self._cache: dict[tuple, Any] = {}
        # Set by an answer cut short by the budget, so that it is not remembered for later questions.
        self._unfinished = False

    # The SymbolProvider interface.

    def definitions(self, name: str) -> list[Definition]:
        """Definitions of a name: a ready server's for its languages, the patterns' for the others."""
        found = self._patterns.definitions(name)
        if not found or self._pool is None:
            return found
        by_language: dict[str, list[Definition]] = {}
        for definition in found:
            by_language.setdefault(languages.language_for_path(definition.path) or "", []).append(definition)
        answer: list[Definition] = []
        for language in sorted(by_language):
            confirmed = self._server_definitions(language, name, by_language[language])
            answer.extend(confirmed if confirmed else by_language[language])
        return sorted(answer, key=lambda d: (d.path, d.start_line, d.qualname))

    def definitions_in(self, path: str) -> list[Definition]:
        # Strategies ask this for every finding; the patterns answer it exactly and for free.
        return self._patterns.definitions_in(path)

    def import_lines(self, path: str) -> frozenset[int]:
        return self._patterns.import_lines(path)

    def uses(self, name: str) -> dict[str, list[Reference]]:
        # Uses of a bare name are weak evidence over many files: the patterns' table, not a server call each.
        return self._patterns.uses(name)

    # What only a server answers well.

    def references(self, definition: Definition) -> dict[str, list[Reference]]:
        """Uses of one definition: a ready server's type-aware references, else every use of its name."""
        key = ("references", definition.path, definition.start_line, definition.name)
        if key not in self._cache:
            self._cache[key] = self._server_references(definition)
        answered = self._cache[key]
        return self._patterns.references(definition) if answered is None else answered

    def implementations(self, definition: Definition) -> list[Definition]:
        """Definitions implementing an interface, class or method; raises NeedsServer when no server can tell."""
        def ask(client: LanguageServerClient) -> list[Place] | None:
            if client.supports("textDocument/implementation"):
                return self._at_name(client, definition, client.implementation)
            if client.supports("textDocument/references") and _captures_bases(language):
                return self._through_bases(client, definition)
            raise NeedsServer(f"{client.spec.name} does not answer implementations")

        language = languages.language_for_path(definition.path) or ""
        asked = self._asked(language, ("implementation", *_at(definition)), ask, required=True)
        if asked is None:
            raise NeedsServer(f"no language server serves {language or 'this file'}")
        client, places = asked
        if places is None:
            note = self._notes[client.spec.name]
            raise NeedsServer(f"{client.spec.name} did not answer: {note.skipped}")
        found = [self._definition_at(place, None) for place in places]
        for item in found:
            self._sources[(item.path, item.start_line, item.name)] = client.spec.name
        return sorted(set(found), key=lambda d: (d.path, d.start_line))

    def hover(self, definition: Definition) -> tuple[str, str] | None:
        """A server's hover text (signature, type, docs) for a definition; None without a ready server."""
        asked = self._asked(languages.language_for_path(definition.path) or "", ("hover", *_at(definition)),
                            lambda client: self._at_name(client, definition, client.hover))
        return (asked.value, asked.client.spec.name) if asked is not None and asked.value else None

    def document_symbols(self, path: str) -> list[Definition]:
        """A file's definitions: a ready server's outline, else the patterns'."""
        asked = self._asked(
            languages.language_for_path(path) or "", ("outline", path),
            lambda client: self._call(client, client.document_symbols, path) if self._sync(client, path) else None)
        if asked is not None and asked.value:
            client, places = asked
            found = [self._definition_at(place, place.name) for place in places if place.name]
            for item in found:
                self._sources[(item.path, item.start_line, item.name)] = client.spec.name
            return found
        return self._patterns.definitions_in(path)

    def resolve(self, path: str, line: int, character: int) -> Definition | None:
        """The indexed definition a ready server resolves the name at a position to (1-based line, code
        points), or None: no ready server, no answer, or a definition outside the index (a library's)."""
        def ask(client: LanguageServerClient) -> list[Place] | None:
            return self._call(client, client.definition, path, line, character) if self._sync(client, path) else None

        asked = self._asked(languages.language_for_path(path) or "", ("definition", path, line, character), ask)
        if asked is None:
            return None
        client, places = asked
        for place in places or ():
            indexed = self._patterns.definitions_in(place.path)
            found = definition_at(indexed, place)
            if found in indexed:
                self._sources[(found.path, found.start_line, found.name)] = client.spec.name
                return found
        return None

    def source_of(self, definition: Definition) -> str:
        """Which source answered a definition: a server's name, or ``tree-sitter``."""
        return self._sources.get((definition.path, definition.start_line, definition.name), PATTERNS)

    def reference_source(self, definition: Definition) -> str:
        """Which source answered the references of a definition."""
        return self._reference_sources.get((definition.path, definition.start_line, definition.name), PATTERNS)

    def notes(self) -> list[ServerNote]:
        """For the answer: each server this retrieval wanted, what it did, and why it was skipped."""
        return [self._notes[name].snapshot() for name in sorted(self._notes)]

    # Asking a server.

    def _asked(self, language: str, key: tuple, ask: Callable[[LanguageServerClient], Any],
               required: bool = False) -> _Answer | None:
        """The serving client and its answer for ``key``: remembered from an earlier question on the same
        indexed text, or asked now through ``ask`` when the client may be asked (else None).

        Only non-empty answers are remembered: an empty one may be a loading server's.
        """
        pool = self._pool
        planned = pool.client_for(language) if pool is not None else None
        if pool is not None and planned is not None and not isinstance(planned, str) and self._version is not None:
            remembered = pool.answers.recall(self._version, (planned.spec.name, *key))
            if remembered is not None:
                note = self._notes.setdefault(planned.spec.name, _Tally(planned.spec.name, planned.spec.languages))
                note.state = planned.state
                note.remembered += 1
                return _Answer(planned, remembered)
        client = self._client(language, required)
        if client is None:
            return None
        self._unfinished = False
        answer = ask(client)
        if answer and pool is not None and self._version is not None and not self._unfinished:
            pool.answers.remember(self._version, (client.spec.name, *key), answer)
        return _Answer(client, answer)

    def _client(self, language: str, required: bool = False) -> LanguageServerClient | None:
        """The ready client for a language, or None with the reason noted (NeedsServer raised when required)."""
        client = self._pool.client_for(language) if self._pool is not None else "no language servers are in use"
        if isinstance(client, str):
            # A language that has a planned server which is missing or disabled is worth saying; one that has
            # none at all (Markdown) is not.
            server = getattr(client, "server", "")
            if server:
                self._notes.setdefault(server, _Tally(server, (language,), getattr(client, "state", "missing"),
                                                          skipped=str(client)))
            if required:
                raise NeedsServer(client)
            return None
        note = self._notes.setdefault(client.spec.name, _Tally(client.spec.name, client.spec.languages))
        note.state = client.state
        if client.spec.name in self._failed:
            # The first failure of the question is what the answer reports, not the state it led to.
            return self._refused(note, required)
        reason = None
        if client.state != "ready":
            client.ensure_started()
            if self._wait_for_start > 0 and client.state in ("idle", "starting"):
                left = self._wait_for_start if self._deadline is None else self._seconds_left()
                client.wait_ready(min(self._wait_for_start, max(0.0, left)))
            note.state = client.state
        if client.state != "ready":
            reason = _state_reason(client)
        elif client.warming:
            reason = "loading its project"
        elif self.calls >= self._max_calls:
            reason = f"the budget of {self._max_calls} server calls per retrieval was spent"
        elif self._budget is not None and self._budget - self._spent < MIN_CALL_SECONDS:
            reason = f"the budget of {self._budget * 1000:.0f} ms of server time per retrieval was spent"
        elif self._seconds_left() < MIN_CALL_SECONDS:
            reason = "the retrieval's time budget was spent"
        if reason is None:
            self._sync_open(client)
            return client
        note.skipped = reason
        return self._refused(note, required)

    @staticmethod
    def _refused(note: _Tally, required: bool) -> None:
        if required:
            raise NeedsServer(f"{note.server}: {note.skipped}")

    def _sync_open(self, client: LanguageServerClient) -> None:
        """Once per question and server: send the open buffers of its languages (unchanged ones cost nothing)."""
        if client.spec.name in self._synced_open:
            return
        self._synced_open.add(client.spec.name)
        served = set(client.spec.languages)
        for path in self._open_paths()[:MAX_OPEN_SYNCED]:
            if languages.language_for_path(path) in served:
                self._sync(client, path)

    def _seconds_left(self) -> float:
        if self._deadline is None:
            return self._timeout
        return self._deadline - self._clock()

    def _call(self, client: LanguageServerClient, method: Callable, *args):
        """One counted call within the timeout; None (and the server skipped from now on) when it fails."""
        note = self._notes[client.spec.name]
        self.calls += 1
        note.calls += 1
        left = self._seconds_left() if self._budget is None else min(self._seconds_left(), self._budget - self._spent)
        timeout = max(MIN_CALL_SECONDS, min(self._timeout, left))
        started = self._clock()
        try:
            answer = method(*args, timeout=timeout)
        except (ServerUnavailable, ServerCallError) as exc:
            self._spent += self._clock() - started
            kind = getattr(exc, "kind", None)
            note.skipped = f"{kind}: {exc}" if kind else str(exc)
            note.state = client.state
            self._failed.add(client.spec.name)
            return None
        self._spent += self._clock() - started
        note.answered += 1
        return answer

    def _sync(self, client: LanguageServerClient, path: str) -> bool:
        """Send a file's current text to a server before asking about it; False when the text is unavailable."""
        text = self._text_of(path)
        if text is None:
            return False
        language = languages.language_for_path(path) or ""
        try:
            client.sync(path, text, language_id(language, path))
        except (ServerUnavailable, ServerCallError) as exc:
            self._notes[client.spec.name].skipped = str(exc)
            self._failed.add(client.spec.name)
            return False
        return True

    def _at_name(self, client: LanguageServerClient, definition: Definition, method: Callable):
        """Ask ``method`` at the position of a definition's name; None when it cannot be placed or asked."""
        text = self._text_of(definition.path)
        position = name_position(text, definition) if text is not None else None
        if position is None or not self._sync(client, definition.path):
            return None
        return self._call(client, method, definition.path, *position)

    def _server_definitions(self, language: str, name: str, found: list[Definition]) -> list[Definition] | None:
        """A server's definitions of ``name`` in its language, or None when the patterns' answer must stand."""
        bare = _QUALIFIER.split(name)[-1]

        def ask(client: LanguageServerClient) -> list[Place] | None:
            # tsserver answers for the projects of the files it has open and opens none by itself, so one is
            # opened when none is. Not more: pyright re-checks a file on every didOpen before it answers.
            ready = client.has_documents() or self._sync(client, found[0].path)
            return self._call(client, client.workspace_symbols, bare) if ready else None

        if (language, bare) not in self._cache:
            self._cache[(language, bare)] = self._asked(language, ("symbols", bare), ask)
        asked = self._cache[(language, bare)]
        if asked is None or not asked.value:
            return None
        client, places = asked
        served = set(client.spec.languages)
        confirmed = [self._definition_at(place, bare) for place in places
                     if _symbol_name(place.name) == bare and languages.language_for_path(place.path) in served]
        if _QUALIFIER.search(name):
            qualifier = _QUALIFIER.split(name)[-2]
            confirmed = [d for d in confirmed if (d.container or "").rsplit(".", 1)[-1] == qualifier
                         or d in found]
        for definition in confirmed:
            self._sources[(definition.path, definition.start_line, definition.name)] = client.spec.name
        return sorted(set(confirmed), key=lambda d: (d.path, d.start_line)) or None

    def _through_bases(self, client: LanguageServerClient, definition: Definition) -> list[Place] | None:
        """Subclasses of a class (or, for a method, their members of its name), breadth first: the classes
        whose base list holds a reference the server resolved to a class found so far. None when the first
        call failed; a server loading its project is not asked at all, so an empty answer means none."""
        top = definition if definition.kind in CLASS_LIKE_KINDS else self._owner(definition)
        if top is None:
            raise NeedsServer(f"{client.spec.name} does not answer implementations, and `{definition.qualname}` "
                              "is not a class or a member of one")
        language = languages.language_for_path(top.path) or ""
        queue, seen, subclasses = [top], {_at(top)}, []
        while queue:
            cls = queue.pop(0)
            if len(seen) > MAX_HIERARCHY_CLASSES or (cls is not top and self._client(language) is None):
                # What was found holds, but more may exist: not worth remembering as the answer.
                self._unfinished = True
                break
            places = self._at_name(client, cls, client.references)
            if places is None and cls is top:
                return None
            for place in places or ():
                if (place.start_line, cls.name) not in self._patterns.bases_in(place.path):
                    continue
                subclass = self._definition_at(place, None)
                if subclass.kind in CLASS_LIKE_KINDS and _at(subclass) not in seen:
                    seen.add(_at(subclass))
                    subclasses.append(subclass)
                    queue.append(subclass)
        found = subclasses if top is definition else [
            member for subclass in subclasses for member in self._patterns.definitions_in(subclass.path)
            if member.container == subclass.qualname and member.name == definition.name]
        return [Place(d.path, d.start_line, 0, d.end_line, 0, name=d.name, kind=d.kind, container=d.container)
                for d in found]

    def _owner(self, definition: Definition) -> Definition | None:
        """The class a member is defined in, from its file's definitions."""
        return next((d for d in self._patterns.definitions_in(definition.path)
                     if d.qualname == definition.container and d.kind in CLASS_LIKE_KINDS), None)

    def _server_references(self, definition: Definition) -> dict[str, list[Reference]] | None:
        asked = self._asked(languages.language_for_path(definition.path) or "", ("references", *_at(definition)),
                            lambda client: self._at_name(client, definition, client.references))
        if asked is None or not asked.value:
            # Servers answer [] while they load (pyright until it has its configuration), and such an answer
            # looks final: an empty one is not trusted over the patterns, as for definitions.
            return None
        client, places = asked
        self._reference_sources[(definition.path, definition.start_line, definition.name)] = client.spec.name
        found: dict[str, list[Reference]] = {}
        imports: dict[str, frozenset[int]] = {}
        for place in sorted(places, key=lambda p: (p.path, p.start_line)):
            # Servers count `from m import X` as a reference; a use is what the patterns count too, so a lens
            # does not change its number when the server warms up.
            if place.start_line in imports.setdefault(place.path, self._patterns.import_lines(place.path)):
                continue
            found.setdefault(place.path, []).append(Reference(definition.name, place.path, place.start_line,
                                                              "reference"))
        return found

    def _definition_at(self, place: Place, name: str | None) -> Definition:
        return definition_at(self._patterns.definitions_in(place.path), place, name)


def definition_at(definitions: list[Definition], place: Place, name: str | None = None) -> Definition:
    """The indexed definition (of ``definitions``, its file's) a server's place falls in, with its full extent;
    else one made from the place: a server may know a definition the patterns do not."""
    inside = [d for d in definitions
              if d.start_line <= place.start_line <= d.end_line and (name is None or d.name == name)]
    if inside:
        return max(inside, key=lambda d: (d.start_line, -d.end_line))
    symbol = _symbol_name(place.name) or name or "?"
    return Definition(name=symbol, qualname=f"{place.container}.{symbol}" if place.container else symbol,
                      kind=place.kind or "symbol", path=place.path, start_line=place.start_line,
                      end_line=max(place.end_line, place.start_line), start_byte=0, end_byte=0,
                      container=place.container)


def name_position(text: str, definition: Definition) -> tuple[int, int] | None:
    """Where a definition's name is written (1-based line, 0-based code point), skipping comments and decorators.

    A definition's extent starts at its decorators and attached comments, and
    servers answer about the name, so the first whole-word occurrence of the
    name on a code line of the definition is the place to ask at.
    """
    pattern = re.compile(rf"(?<![\w$]){re.escape(definition.name)}(?![\w$])")
    lines = text.splitlines()
    for number in range(definition.start_line, min(definition.end_line, len(lines)) + 1):
        line = lines[number - 1]
        if _NOT_A_NAME_LINE.match(line):
            continue
        match = pattern.search(line)
        if match:
            return number, match.start()
    return None


@cache
def _captures_bases(language: str) -> bool:
    """Whether a language's patterns name base classes (``@reference.base``), which implementations through
    references need."""
    return "@reference.base" in (languages.query_source(language, "tags") or "")


def _at(definition: Definition) -> tuple[str, int, str]:
    """The key of a question asked at a definition's name."""
    return definition.path, definition.start_line, definition.name


def _symbol_name(name: str | None) -> str | None:
    """A server's symbol name as a bare name: gopls writes ``RateLimiter.Allow``, others ``allow()``."""
    if not name:
        return None
    return _QUALIFIER.split(name.split("(", 1)[0].strip())[-1]


def _state_reason(client: LanguageServerClient) -> str:
    state = client.state
    last = client.status().last_error
    if state in ("idle", "starting"):
        return "starting"
    if state == "down":
        return f"down: {last}" if last else "down"
    if state == "restarting":
        return f"restarting after a crash: {last}" if last else "restarting after a crash"
    return state
