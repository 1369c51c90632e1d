"""Context for LLM code completion: what the code at the cursor needs from elsewhere, in a few hundred tokens.

``CompletionEngine.context`` answers ``ragLsp/completionContext`` and
``rag-lsp completion-context``. From the live index only (never the disk,
except for the cursor's own file when it is not open), within a hard time
budget, it fuses these sources into one ranking (``sources.py``):

- **definitions of imported names** (``import``/``from ... import``, aliases,
  re-exports through ``__init__.py``/``index.ts``, ``module.attr``), each
  scored by its evidence (``scoring.Evidence``): used on the cursor line or
  in the call being typed, used just above or below, imported but not used
  yet (about to be; shared out when many are), named like a parameter the
  function has not used yet, the type the function returns and has not made
  yet, used elsewhere in code that looks like the code around the cursor or
  together with the names used around it, being typed;
- **definitions in the cursor's own file far from the cursor** that the code
  near the cursor uses (nearby ones are on screen already), and, in languages
  where names need no import, names used nearby found by the symbol index;
- the **enclosing class's and function's signatures** when they are off screen;
- what a **warm language server** resolves at the cursor (the type of the receiver
  being typed, the function whose call is open), when the time budget allows
  (``server_hints.py``);
- **similar code** from other open buffers and, a little below them, from
  recently edited files closed since (``Session.recently_edited``, their text
  the index's), by Jaccard over sliding windows, weighted below resolved
  definitions.

Each definition is shown as its signature and docstring first; leftover
budget then expands the best ones to their bodies (``prompt.py``). Answers are
cached per (document version, line, character) and re-validated against the
files they came from (closed files searched for similar code included) and
the open buffers' versions, so an edit anywhere they depend on invalidates
them; what an answer is built from is cached per version (``caches.py``).
The weights are in ``weights.py``.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, replace
from pathlib import Path

from rag_lsp import languages
from rag_lsp.completion.caches import Caches, trim
from rag_lsp.completion.cursor import TYPED, FileAnalysis, code_point, split_lines
from rag_lsp.completion.prompt import Excerpts, pack_answer
from rag_lsp.completion.scoring import Evidence
from rag_lsp.completion.signals import Cursor, read_signals
from rag_lsp.completion.snippets import DEFAULT_BUDGET_TOKENS, CompletionAnswer
from rag_lsp.completion.sources import Gathering
from rag_lsp.index.root_index import Index
from rag_lsp.langservers.pool import ServerPool
from rag_lsp.workspace.session import Session

# The request's defaults and limits (the server validates its parameters against them).
DEFAULT_TIME_BUDGET_MS = 50.0
# At most this many snippets, whatever the budget.
MAX_SNIPPETS = 100
# Answers kept for repeated requests at one cursor.
MAX_CACHED_ANSWERS = 256


class PositionError(ValueError):
    """The position is not in the document."""


class CompletionError(ValueError):
    """The request cannot be answered (the document cannot be read)."""


@dataclass(frozen=True, slots=True)
class CompletionRequest:
    """A cursor: ``line`` is 0-based, ``character`` counts units of ``encoding`` into the line
    (``utf-32``: code points; a language server's clients usually count ``utf-16`` units)."""

    path: Path
    line: int
    character: int = 0
    budget_tokens: int = DEFAULT_BUDGET_TOKENS
    max_snippets: int | None = None
    time_budget_ms: float = DEFAULT_TIME_BUDGET_MS
    encoding: str = "utf-32"


@dataclass(frozen=True, slots=True)
class _Cached:
    answer: CompletionAnswer
    # The blob id of every indexed file the answer was built from (None: the file was not indexed).
    depends: dict[str, str | None]
    documents: tuple


class CompletionEngine:
    """Completion context over a ``Session``, with its caches. Thread-safe."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.caches = Caches(session)
        self._lock = threading.Lock()
        self._answers: OrderedDict[tuple, _Cached] = OrderedDict()

    def context(self, request: CompletionRequest) -> CompletionAnswer:
        started = time.perf_counter()
        deadline = started + request.time_budget_ms / 1000
        text, version = self._document_text(request.path)
        lines = split_lines(text)
        request = replace(request, character=_code_point(request, lines))
        documents = self._note_documents()
        located = self.session.locate(request.path)
        if located is None:
            return CompletionAnswer(None, (), "", 0, request.budget_tokens, 0, False, _elapsed(started),
                                    warnings=("the file is outside every workspace folder",))
        root, rel = located
        key = (request.path, version, request.line, request.character, request.budget_tokens, request.max_snippets)
        with root.index.lock:
            if version is not None and (cached := self._cached(key, root.index, documents)) is not None:
                return replace(cached, elapsed_ms=_elapsed(started), cached=True)
            language = languages.language_for_path(rel)
            prefix = lines[request.line][: request.character]
            typed = TYPED.search(prefix)
            cursor = Cursor(request.path, rel, request.line + 1, request.character, language,
                            typed.group(1) if typed else "")
            analysis = self.caches.analysis(root.index, rel, version, text, lines, language)
            answer, depends, final = self._build(root.index, cursor, analysis, request, deadline, text, root.servers)
        answer = replace(answer, elapsed_ms=_elapsed(started))
        # A partial answer is not kept: the next request may have the time to finish, or a server be warm.
        if version is not None and not answer.truncated and final:
            with self._lock:
                self._answers[key] = _Cached(answer, depends, documents)
                trim(self._answers, MAX_CACHED_ANSWERS)
        return answer

    def _build(self, index: Index, cursor: Cursor, analysis: FileAnalysis, request: CompletionRequest,
               deadline: float, text: str, servers: ServerPool | None
               ) -> tuple[CompletionAnswer, dict[str, str | None], bool]:
        """One answer, what it depends on (path → blob id), and whether a language server could still add
        to it."""
        evidence = Evidence(analysis, cursor, read_signals(analysis, cursor))
        gathering = Gathering(self.caches, index, evidence, text, servers, deadline)
        ranked = gathering.run()
        limit = min(request.max_snippets or MAX_SNIPPETS, MAX_SNIPPETS)
        answer = pack_answer(ranked, Excerpts(self.caches, index, analysis, cursor.rel), request.budget_tokens,
                             limit, str(index.root), gathering.timed_out)
        depends = {path: (entry.blob_id if (entry := index.files.get(path)) else None)
                   for path in gathering.resolver.consulted | {c.path for c in ranked} | gathering.neighbours
                   | {cursor.rel}}
        return answer, depends, gathering.server_final

    def _document_text(self, path: Path) -> tuple[str, int | None]:
        """The cursor's document (the open buffer, else the file) and its version (None for a file).

        Raises CompletionError for an unreadable file.
        """
        document = self.session.documents.get(path)
        if document is not None:
            with document.lock:
                return document.text, document.version
        try:
            return path.read_text(encoding="utf-8-sig"), None
        except (OSError, UnicodeDecodeError) as exc:
            raise CompletionError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from exc

    def _note_documents(self) -> tuple:
        """The open buffers' versions: a cached answer is served only while they are unchanged."""
        return tuple(sorted((path, document.version) for path, document in list(self.session.documents.items())))

    def _cached(self, key: tuple, index: Index, documents: tuple) -> CompletionAnswer | None:
        with self._lock:
            cached = self._answers.get(key)
        if cached is None or cached.documents != documents:
            return None
        for path, blob in cached.depends.items():
            entry = index.files.get(path)
            if (entry.blob_id if entry else None) != blob:
                return None
        return cached.answer


def _code_point(request: CompletionRequest, lines: list[str]) -> int:
    """The cursor's index into its line's text; PositionError when the position is not in the document."""
    where = f"position {request.line}:{request.character}"
    if request.line >= len(lines):
        raise PositionError(f"{where} is past the end of {request.path} ({len(lines)} lines)")
    index = code_point(lines[request.line], request.character, request.encoding)
    if index is None:
        raise PositionError(f"{where} is past the end of line {request.line} in {request.path}")
    return index


def _elapsed(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)
