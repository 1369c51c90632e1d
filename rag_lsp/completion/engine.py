"""Context for LLM code completion: what the code at the cursor needs from elsewhere, in a few hundred tokens.

``CompletionEngine.context`` answers ``ragLsp/completionContext`` and
``rag-lsp completion-context``. From the live index only (never the disk,
except for the cursor's own file when it is not open), within a hard time
budget, it fuses these sources into one ranking:

- **definitions of imported names** (``import``/``from ... import``, aliases,
  re-exports through ``__init__.py``/``index.ts``, ``module.attr``), each
  scored by its evidence (``_Builder._evidence``): used on the cursor line or
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
  (``core/langservers/hints.py``);
- **similar code** from other open buffers and, a little below them, from
  recently edited files closed since (``Session.recently_edited``, their text
  the index's), by Jaccard over sliding windows, weighted below resolved
  definitions.

Each definition is shown as its signature and docstring first; leftover
budget then expands the best ones to their bodies. Answers are cached per
(document version, line, character) and re-validated against the files they
came from (closed files searched for similar code included) and the open
buffers' versions, so an edit anywhere they depend on invalidates them.

What an answer is built from is cached per version (``caches.py``); the
weights are in ``weights.py``.
"""

from __future__ import annotations

import threading
import time
from bisect import bisect_left, bisect_right
from collections import OrderedDict
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from rag_lsp import languages
from rag_lsp.completion import similar, weights
from rag_lsp.completion.caches import Caches, trim
from rag_lsp.completion.cursor import (
    CHAIN_PART,
    KEYWORDS,
    RECEIVERS,
    TYPED,
    FileAnalysis,
    code_point,
    enclosing,
    name_words,
    open_call,
    parameters,
    read_line,
    split_lines,
    split_signature,
)
from rag_lsp.completion.server_hints import cursor_hints
from rag_lsp.completion.snippets import DEFAULT_BUDGET_TOKENS, CompletionAnswer, Snippet
from rag_lsp.index.bindings import Binding, Resolver, Target
from rag_lsp.index.outline import FUNCTION_KINDS, Excerpt, FileText, body, head, signature_end
from rag_lsp.index.terms import tokenize
from rag_lsp.langservers.pool import ServerPool
from rag_lsp.model import CLASS_LIKE_KINDS, Definition
from rag_lsp.path_kinds import is_test_path
from rag_lsp.retrieval.packing import PackRules, pack
from rag_lsp.retrieval.token_count import estimate_tokens

# The request's defaults and limits (the server validates its parameters against them).
DEFAULT_TIME_BUDGET_MS = 50.0
# At most this many snippets, whatever the budget.
MAX_SNIPPETS = 100
# Answers kept for repeated requests at one cursor.
MAX_CACHED_ANSWERS = 256
# Languages where a name from another file is visible only through an import: no guessing by name.
IMPORT_ONLY_LANGUAGES = frozenset({"python", "javascript", "typescript", "tsx"})


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


@dataclass(slots=True)
class _Candidate:
    definition: Definition | None
    path: str
    score: float
    source: str
    why: list[str]
    language: str = ""
    # For similar-code windows: the lines themselves.
    window: tuple[int, int] | None = None


@dataclass(slots=True)
class _Cached:
    answer: CompletionAnswer
    depends: dict[str, str | None]
    documents: tuple


@dataclass(slots=True)
class _Cursor:
    path: Path
    rel: str
    line: int  # 1-based
    character: int
    language: str
    typed: str  # the identifier chain just before the cursor (``Hea``, ``params.Fi``, ``self.``)


class CompletionEngine:
    """Completion context over a ``Session``, with its caches. Thread-safe."""

    def __init__(self, session) -> None:
        self.session = session
        self._lock = threading.Lock()
        self.caches = Caches(session)
        self._answers: OrderedDict[tuple, _Cached] = OrderedDict()

    # The request.

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
            cursor = _Cursor(request.path, rel, request.line + 1, request.character, language,
                             typed.group(1) if typed else "")
            analysis = self.caches.analysis(root.index, rel, version, text, lines, language)
            builder = _Builder(self, root.index, cursor, analysis, request, deadline, text, root.servers)
            answer, depends = builder.build()
        answer = replace(answer, elapsed_ms=_elapsed(started))
        # A partial answer is not kept: the next request may have the time to finish, or a server be warm.
        if version is not None and not answer.truncated and builder.server_final:
            with self._lock:
                self._answers[key] = _Cached(answer, depends, documents)
                trim(self._answers, MAX_CACHED_ANSWERS)
        return answer

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

    def _cached(self, key: tuple, index, documents: tuple) -> CompletionAnswer | None:
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


def _proximity(lines: list[int], cursor: int) -> tuple[float, int | None]:
    """How close to the cursor a name is used: 1 on the cursor line, halving with distance (noisy-or).

    ``lines`` is sorted; uses beyond a few half-lives add nothing and are skipped.
    """
    low = bisect_left(lines, cursor - weights.PROXIMITY_REACH * weights.HALF_LIFE_BEFORE)
    high = bisect_right(lines, cursor + weights.PROXIMITY_REACH * weights.HALF_LIFE_AFTER)
    miss = 1.0
    for line in lines[low:high]:
        distance = line - cursor
        if distance <= 0:
            weight = 0.5 ** (-distance / weights.HALF_LIFE_BEFORE)
        else:
            weight = weights.AFTER_WEIGHT * 0.5 ** ((distance - 1) / weights.HALF_LIFE_AFTER)
        miss *= 1 - min(weight, 0.999)
    if not lines:
        return 0.0, None
    position = bisect_left(lines, cursor)
    nearest = min((lines[i] - cursor for i in (position - 1, position) if 0 <= i < len(lines)), key=abs)
    return 1 - miss, nearest


def _where(distance: int | None) -> str:
    if distance is None:
        return ""
    if distance == 0:
        return "on the cursor line"
    lines = abs(distance)
    return f"{lines} line{'s' if lines != 1 else ''} {'above' if distance < 0 else 'below'}"


class _Builder:
    """One answer: candidates from every source, scored, then packed."""

    def __init__(self, engine: CompletionEngine, index, cursor: _Cursor, analysis: FileAnalysis,
                 request: CompletionRequest, deadline: float, text: str, servers: ServerPool | None) -> None:
        self.engine = engine
        # The buffer's text, sent to a warm language server, and the root's servers (None without any).
        self.text = text
        self.servers = servers
        # False when a language server could still add to this answer (it was starting, loading or slow).
        self.server_final = True
        self.index = index
        self.cursor = cursor
        self.analysis = analysis
        self.request = request
        self.deadline = deadline
        self.resolver = Resolver(index)
        self.candidates: dict[tuple, _Candidate] = {}
        # Closed files whose windows were searched for similar code.
        self.neighbours: set[str] = set()
        self.timed_out = False
        around = enclosing(analysis, cursor.line, cursor.character)
        self.function = next((d for d in reversed(around) if d.kind in FUNCTION_KINDS), None)
        self.owner = next((d for d in reversed(around) if d.kind in CLASS_LIKE_KINDS), None)
        self.signature_names: set[str] = set()
        # Names in the signature outside its parameters (the type the function returns) that its body
        # has not used yet: what it still has to make.
        self.result_names: set[str] = set()
        # Parameters not used before the cursor: nowhere else in the body, or only below the cursor.
        self.pending: set[str] = set()
        self.pending_later: set[str] = set()
        if self.function is not None:
            self._read_signature()
        # Words of the code around the cursor that are not imported names (locals, attributes, parameters).
        low, high = max(cursor.line - weights.NAME_CONTEXT_BEFORE, 1), cursor.line + weights.NAME_CONTEXT_AFTER
        # (``mod.Name`` chains of an imported module are left out whole: they are uses, not words.)
        bound = analysis.bindings.names
        words = []
        for line in analysis.lines[low - 1 : high]:
            for keys in read_line(line)[2]:
                if keys[0] not in bound:
                    words.extend(keys[-1].split("."))
        if self.function is not None:
            words.append(self.function.name)
        self.open_call = open_call(analysis.lines, cursor.line, cursor.character, weights.OPEN_CALL_LINES)
        # The identifiers on the cursor line, the one being typed excepted (it is not a whole word yet).
        cursor_line = analysis.lines[cursor.line - 1]
        typed_start = cursor.character - len(cursor.typed)
        self.cursor_terms = (frozenset(CHAIN_PART.findall(cursor_line[:typed_start] + " " + cursor_line[cursor.character:]))
                             - KEYWORDS)
        self.context_words = set(tokenize(" ".join(words)))
        # The imported and defined names used around the cursor (its line excepted: it is being written).
        self.companions: set[str] = set()
        for number in range(max(cursor.line - weights.COMPANION_LINES, 1), cursor.line + weights.COMPANION_LINES + 1):
            if number != cursor.line and number <= len(analysis.line_terms):
                self.companions.update(analysis.line_terms[number - 1] & analysis.wanted)
        # How many imported names each word is part of (``auth`` in Auth, BasicAuth, ...): shared words tell less.
        self.word_counts: dict[str, int] = {}
        for local in analysis.bindings.names:
            for word in name_words(local):
                self.word_counts[word] = self.word_counts.get(word, 0) + 1
        unused = sum(1 for local in analysis.bindings.names if local not in analysis.uses)
        self.unused_weight = (weights.UNUSED_IMPORT * min(1.0, weights.UNUSED_SHARED / unused) if unused
                              else weights.UNUSED_IMPORT)
        self.pending_words = set(tokenize(" ".join(self.pending)))
        self.later_words = set(tokenize(" ".join(self.pending_later))) - self.pending_words

    def _read_signature(self) -> None:
        """Names in the enclosing function's signature, and the parameters its body has not used yet."""
        function, analysis, cursor = self.function, self.analysis, self.cursor
        text = FileText(analysis.lines)
        end = signature_end(text, function, cursor.language)
        header = "\n".join(text.slice(function.start_line, end))
        self.signature_names.update(CHAIN_PART.findall(header))
        before, after = set(), set()
        for number in range(end + 1, cursor.line):
            before.update(analysis.line_terms[number - 1])
        before.update(CHAIN_PART.findall(analysis.lines[cursor.line - 1][: cursor.character]))
        for number in range(cursor.line + 1, min(function.end_line, len(analysis.lines)) + 1):
            after.update(analysis.line_terms[number - 1])
        unused = [name for name in parameters(header) if name not in before]
        self.result_names = set(CHAIN_PART.findall(split_signature(header)[1])) - before - {function.name}
        self.pending = {name for name in unused if name not in after}
        self.pending_later = {name for name in unused if name in after}

    def out_of_time(self) -> bool:
        if time.perf_counter() > self.deadline:
            self.timed_out = True
        return self.timed_out

    def build(self) -> tuple[CompletionAnswer, dict[str, str | None]]:
        for source in (self._imports, self._server, self._own_file, self._unbound, self._enclosing, self._similar):
            if self.out_of_time():
                break
            source()
        ranked = sorted(self.candidates.values(), key=_rank_key)
        answer = self._pack(ranked)
        depends = {path: (entry.blob_id if (entry := self.index.files.get(path)) else None)
                   for path in self.resolver.consulted | {c.path for c in ranked} | self.neighbours
                   | {self.cursor.rel}}
        return answer, depends

    # Sources.

    def _add(self, definition: Definition, score: float, source: str, why: list[str]) -> None:
        key = (definition.path, definition.start_line, definition.qualname)
        known = self.candidates.get(key)
        if known is None:
            self.candidates[key] = _Candidate(definition, definition.path, score, source, why,
                                              _language(definition.path))
        elif score > known.score:
            known.score, known.source, known.why = score, source, why + [w for w in known.why if w not in why]

    def _typed_match(self, name: str) -> bool:
        """Whether ``name`` completes the identifier being typed at the cursor."""
        typed = self.cursor.typed.rsplit(".", 1)[-1]
        return bool(typed) and name.startswith(typed)

    def _imports(self) -> None:
        analysis, cursor = self.analysis, self.cursor
        typed_owner = cursor.typed.rsplit(".", 1)[0] if "." in cursor.typed else None
        # Most promising first, so that running out of time drops the least likely names.
        order = sorted(analysis.bindings.names.items(),
                       key=lambda item: (-self._prior(item[0]), item[0]))
        for position, (local, binding) in enumerate(order):
            if position >= weights.MIN_RESOLVED and self.out_of_time():
                return
            target = self.engine.caches.resolve(self.index, self.resolver, binding, cursor.rel)
            if not target:
                continue
            uses = analysis.uses.get(local, [])
            if target.modules and not target.definitions:
                self._module_members(local, binding, target, typed_owner == local)
                if (found := self.resolver.named_in_module(target, local)) and uses:
                    target = found
                else:
                    continue
            score, why = self._evidence(local, uses)
            if not typed_owner and self._typed_match(local):
                score += weights.TYPED_PREFIX
                why.append(f"matches '{cursor.typed}' at the cursor")
            why.insert(0, _import_why(binding, target))
            for definition in target.definitions[:2]:
                self._add(definition, score * _kind_weight(definition), "import", why)

    def _prior(self, name: str) -> float:
        """A cheap first guess of a name's evidence: how close it is used, or whether it is unused."""
        uses = self.analysis.uses.get(name)
        if not uses:
            return weights.UNUSED_IMPORT
        proximity, nearest = _proximity(uses, self.cursor.line)
        return proximity + (weights.ON_CURSOR_LINE if nearest == 0 else 0.0)

    def _evidence(self, name: str, uses: list[int], unused_counts: bool = True,
                  words: bool = True) -> tuple[float, list[str]]:
        """How strongly the code around the cursor calls for ``name``, and why.

        ``words``: whether the words of the name count (not for the cursor
        file's own members, whose names are what the code nearby is made of).
        """
        analysis, cursor = self.analysis, self.cursor
        calls = [line for line in uses if line not in analysis.signature_lines]
        proximity, nearest = _proximity(calls, cursor.line)
        score = proximity
        why = [f"used {_where(nearest)}"] if nearest is not None else []
        if not uses and unused_counts:
            score += self.unused_weight
            why.append("imported but not used yet")
        if nearest == 0:
            score += weights.ON_CURSOR_LINE
        if self.open_call and (self.open_call == name or self.open_call.endswith("." + name)):
            score += weights.OPEN_CALL
            why.append("the cursor is in its call's arguments")
        if name in self.signature_names:
            score += weights.IN_SIGNATURE
            why.append("named in the enclosing signature")
            if name in self.result_names:
                score += weights.RESULT_TYPE
                why.append("the enclosing function returns it and has not made one yet")
        if words and self.function is not None and name == self.function.name:
            score += weights.ENCLOSING_NAME
            why.append("named like the enclosing function")
        parts = name_words(name)
        if words and parts:
            pending = (self._words_share(parts & self.pending_words)
                       + weights.PENDING_USED_LATER * self._words_share(parts & self.later_words)) / len(parts)
            if pending:
                score += weights.PENDING * min(pending, 1.0)
                why.append("named like a parameter the function has not used yet")
            near = self._words_share(parts & self.context_words) / len(parts)
            if near:
                score += weights.NAME_CONTEXT * near
                why.append(f"its name shares {', '.join(sorted(parts & self.context_words))} with the code nearby")
        similarity, line = self._use_context(name, calls)
        if similarity > 0.05:
            score += weights.USE_CONTEXT * similarity
            why.append(f"the code around its use on line {line} looks like the code around the cursor")
        share, line, shared = self._companions(name, calls)
        if share > 0:
            score += weights.COMPANIONS * share
            why.append(f"used with {', '.join(shared)} on line {line}, as near the cursor")
        return score, why

    def _companions(self, name: str, uses: list[int]) -> tuple[float, int | None, list[str]]:
        """How much of what is used near the cursor was also used near another use of ``name``.

        Code uses names in families (``if is_async_gen(f)`` goes with ``elif
        is_gen(f)``): a name whose other uses came with the imported and
        defined names used around the cursor is likely to come with them again,
        in whatever order the lines are.
        """
        companions = self.companions
        if not companions or name in companions:
            return 0.0, None, []
        terms, cursor = self.analysis.line_terms, self.cursor.line
        best, where, shared = 0.0, None, set()
        for line in uses[-weights.USE_CONTEXT_LIMIT:] if len(uses) > weights.USE_CONTEXT_LIMIT else uses:
            if abs(line - cursor) <= weights.COMPANION_LINES:
                continue
            near = set()
            for other in terms[max(line - weights.COMPANION_LINES, 1) - 1 : line + weights.COMPANION_LINES]:
                near.update(other & companions)
            if len(near) > len(shared):
                best, where, shared = len(near) / len(companions), line, near
        return best, where, sorted(shared)

    def _words_share(self, words: set[str]) -> float:
        """Credit for name words found nearby: a word in the names of n imports gives each 1/n."""
        return sum(1 / self.word_counts.get(word, 1) for word in words)

    def _use_context(self, name: str, uses: list[int]) -> tuple[float, int | None]:
        """The best similarity between the lines around a use of ``name`` and the lines around the cursor.

        Lines are compared at the same offsets (the line above a use with the
        line above the cursor, ...), nearer offsets weighing more; what is
        typed on the cursor line is compared with the rest of the use's line.
        """
        terms, cursor = self.analysis.line_terms, self.cursor.line
        around = [(k, terms[cursor + k - 1]) for k in weights.USE_CONTEXT_OFFSETS
                  if 0 < cursor + k <= len(terms) and terms[cursor + k - 1]]
        total = sum(1 / abs(k) for k in weights.USE_CONTEXT_OFFSETS)
        typed = self.cursor_terms - {name}
        if typed:
            total += 1
        if not around and not typed:
            return 0.0, None
        reach = max(weights.USE_CONTEXT_OFFSETS)
        best, where = 0.0, None
        if len(uses) > weights.USE_CONTEXT_LIMIT:
            position = bisect_left(uses, cursor)
            start = max(0, min(position - weights.USE_CONTEXT_LIMIT // 2, len(uses) - weights.USE_CONTEXT_LIMIT))
            uses = uses[start : start + weights.USE_CONTEXT_LIMIT]
        for line in uses:
            if abs(line - cursor) <= reach:
                continue
            similarity = 0.0
            for k, mine in around:
                if 0 < line + k <= len(terms) and (theirs := terms[line + k - 1]):
                    shared = len(mine & theirs)
                    if shared:
                        similarity += shared / (len(mine) + len(theirs) - shared) / abs(k)
            if typed:
                similarity += similar.jaccard(typed, terms[line - 1] - {name})
            if similarity > best:
                best, where = similarity, line
        return best / total, where

    def _module_members(self, local: str, binding: Binding, target: Target, typed_here: bool) -> None:
        """``module.name`` uses of an imported module: the members used near the cursor (or being typed)."""
        cursor = self.cursor
        prefix = local + "."
        members = {key[len(prefix):].split(".", 1)[0] for key in self.analysis.uses if key.startswith(prefix)}
        typed = cursor.typed.rsplit(".", 1)[-1] if typed_here else None
        # Members never used yet: the one being typed, or one named like the code nearby (a name that
        # an import binds is that import's, not this module's).
        near = (self._names_near() - self.analysis.bindings.names.keys()) | (
            {self.function.name} if self.function else set())
        for path in target.modules:
            members.update(d.name for d in self.index.symbols.in_file(path) if d.container is None
                           and (d.name in near or (typed_here and d.name.startswith(typed))))
        for member in sorted(members):
            uses = self.analysis.uses.get(prefix + member, [])
            score, why = self._evidence(member, uses, unused_counts=False)
            if typed_here and member.startswith(typed):
                score += weights.TYPED_PREFIX
            if score < 0.01:
                continue
            found = self.resolver.attribute(target, member)
            why.insert(0, f"`{local}.{member}`: `{local}` is the module {binding.module}")
            for definition in found.definitions[:2]:
                self._add(definition, score * _kind_weight(definition), "import", why)

    def _server(self) -> None:
        """What a warm language server resolves at the cursor, in the time left (``langservers/hints.py``)."""
        cursor = self.cursor
        prefix = self.analysis.lines[cursor.line - 1][: cursor.character]
        hints, self.server_final = cursor_hints(
            self.servers, self.index.symbols.in_file, cursor.rel, self.text, prefix, cursor.language, cursor.line,
            cursor.character, lambda: self.deadline - time.perf_counter())
        for hint in hints:
            definition = hint.definition
            # The cursor's own file counts only for definitions off screen, as for every source.
            if definition.path == cursor.rel and abs(definition.start_line - cursor.line) <= weights.NEAR_LINES:
                continue
            self._add(definition, weights.SERVER_SCORE * _kind_weight(definition), "server",
                      [f"{hint.why} ({hint.server})"])

    def _own_file(self) -> None:
        """Definitions of the cursor's file used near the cursor but defined off screen."""
        cursor, analysis = self.cursor, self.analysis
        low, high = max(cursor.line - weights.NEAR_LINES, 1), cursor.line + weights.NEAR_LINES
        names = self._names_near()
        owner = self.owner.qualname if self.owner else None
        for definition in analysis.definitions:
            if low <= definition.start_line <= high or definition.start_line <= cursor.line <= definition.end_line:
                continue
            if definition.container is None:
                uses = analysis.uses.get(definition.name, []) if definition.name in names else []
            elif definition.container == owner:
                uses = [line for receiver in RECEIVERS
                        for line in analysis.uses.get(f"{receiver}.{definition.name}", [])]
            else:
                continue
            uses = [u for u in uses if not definition.start_line <= u <= definition.end_line]
            if not uses:
                continue
            score, why = self._evidence(definition.name, uses, unused_counts=False, words=False)
            if self._typed_match(definition.name):
                score += weights.TYPED_PREFIX
            why.insert(0, f"defined in this file, {abs(definition.start_line - cursor.line)} lines away")
            self._add(definition, weights.LOCAL_WEIGHT * score * _kind_weight(definition), "local", why)

    def _names_near(self) -> set[str]:
        cursor = self.cursor
        low, high = max(cursor.line - weights.CONTEXT_BEFORE, 1), cursor.line + weights.CONTEXT_AFTER
        names = set(CHAIN_PART.findall(self.analysis.lines[cursor.line - 1]))
        for terms in self.analysis.line_terms[low - 1 : high]:
            names.update(terms)
        return names

    def _unbound(self) -> None:
        """Names used near the cursor that no import or local definition binds: the symbol index's guess."""
        analysis, cursor = self.analysis, self.cursor
        if cursor.language in IMPORT_ONLY_LANGUAGES:
            return
        local = {d.name for d in analysis.definitions}
        wildcard_files = {path for item in analysis.bindings.wildcards
                          for path in self.resolver.module_files(item.module, cursor.rel)}
        for name in sorted(self._names_near()):
            if name in analysis.bindings.names or name in local or len(name) < 3:
                continue
            if self.out_of_time():
                return
            found = [d for d in self.index.symbols.by_name(name)
                     if d.container is None and d.path != cursor.rel and d.kind != "constant"
                     and not is_test_path(d.path)]
            if wildcard_files:
                visible = [d for d in found if d.path in wildcard_files]
                found = visible or found
            if not found or len(found) > weights.MAX_UNBOUND_DEFINITIONS:
                continue
            lines = [number for number in range(max(cursor.line - weights.CONTEXT_BEFORE, 1),
                                                cursor.line + weights.CONTEXT_AFTER + 1)
                     if number <= len(analysis.line_terms) and name in analysis.line_terms[number - 1]]
            proximity, nearest = _proximity(lines, cursor.line)
            for definition in found:
                count = f"{len(found)} definition{'s' if len(found) > 1 else ''} in the workspace"
                self._add(definition, weights.UNBOUND_WEIGHT * proximity / len(found), "symbol",
                          [f"`{name}` is defined here ({count})", f"used {_where(nearest)}"])

    def _enclosing(self) -> None:
        cursor = self.cursor
        for definition, what in ((self.owner, "class"), (self.function, "function")):
            if definition is None or cursor.line - definition.start_line <= weights.NEAR_LINES:
                continue
            self._add(definition, weights.ENCLOSING_SCORE, "enclosing",
                      [f"the enclosing {what}, {cursor.line - definition.start_line} lines above"])

    def _similar(self) -> None:
        """Windows of the open and recently edited files that look like the lines above the cursor."""
        query = similar.query_terms(self.analysis.lines, self.cursor.line - 1)
        pool = []
        kinds = {}
        for kind, rel, windows in self.engine.caches.neighbour_windows(self.index, self.cursor.path):
            if self.out_of_time():
                return
            kinds[rel] = kind
            pool.extend(windows)
        # A closed file's text comes from the index: the answer depends on it staying the same.
        self.neighbours = {rel for rel, kind in kinds.items() if kind == "recent"}
        for score, window in similar.rank(query, pool, weights.SIMILAR_LIMIT):
            weight, where = ((weights.SIMILAR_WEIGHT, "an open file") if kinds[window.path] == "open"
                             else (weights.RECENT_WEIGHT, "a recently edited file"))
            key = (window.path, window.start_line, None)
            self.candidates[key] = _Candidate(None, window.path, weight * score, "similar",
                                              [f"similar code in {where} (Jaccard {score:.2f})"],
                                              languages.language_for_path(window.path),
                                              (window.start_line, window.end_line))

    # Packing.

    def _text_of(self, path: str) -> FileText:
        if path == self.cursor.rel:
            return FileText(self.analysis.lines)
        return self.engine.caches.file_text(self.index, path)

    def _excerpt(self, candidate: _Candidate, full: bool) -> Excerpt:
        if candidate.window is not None:
            if candidate.path == self.cursor.rel:
                lines = self._text_of(candidate.path).slice(*candidate.window)
            else:
                lines = self._window_lines(candidate)
            return Excerpt("\n".join(lines).rstrip(), candidate.window[0], candidate.window[1], True)
        if candidate.path == self.cursor.rel:
            # The cursor's file changes with every keystroke: not worth caching.
            definition = candidate.definition
            members = [d for d in self.analysis.definitions if d.container == definition.qualname]
            cut = body if full else head
            return cut(self._text_of(candidate.path), definition, candidate.language,
                       languages.spec(candidate.language).comment, members)
        return self.engine.caches.excerpt(self.index, candidate.path, candidate.definition, candidate.language,
                                          full)

    def _window_lines(self, candidate: _Candidate) -> list[str]:
        document = self.engine.session.documents.get(self.index.root / candidate.path)
        if document is not None:
            with document.lock:
                lines = split_lines(document.text)
            return lines[candidate.window[0] - 1 : candidate.window[1]]
        return self._text_of(candidate.path).slice(*candidate.window)

    def _pack(self, ranked: list[_Candidate]) -> CompletionAnswer:
        """The best candidates that fit the budget as heads (signature and docstring); leftover budget then
        shows the best of them whole."""
        budget = self.request.budget_tokens
        limit = min(self.request.max_snippets or MAX_SNIPPETS, MAX_SNIPPETS)
        rules: PackRules[_Candidate, Excerpt] = PackRules(
            show=lambda candidate: self._excerpt(candidate, full=False),
            text=lambda excerpt: excerpt.content,
            cut=lambda excerpt, shorter: Excerpt(shorter, excerpt.start_line,
                                                 excerpt.start_line + shorter.count("\n"), False),
            cost=self._cost,
            min_cut_tokens=weights.MIN_CUT_TOKENS,
            min_room=weights.MIN_SNIPPET_TOKENS,
            redundant=lambda candidate, excerpt, packed: any(
                _overlaps(candidate, excerpt, other.item, other.shown) for other in packed),
        )
        packing = pack(ranked, budget, limit, rules)
        chosen = [(packed.item, packed.shown, packed.cost) for packed in packing.packed]
        used = packing.used
        # Leftover budget: bodies for the best snippets that are shown in part.
        for position, (candidate, excerpt, cost) in enumerate(chosen):
            if excerpt.complete or candidate.window is not None:
                continue
            fuller = self._excerpt(candidate, full=True)
            extra = self._cost(candidate, fuller.content) - cost
            if fuller.content != excerpt.content and used + extra <= budget:
                chosen[position] = (candidate, fuller, cost + extra)
                used += extra
        return self._answer(chosen, packing.over_budget + packing.over_limit, packing.cut)

    def _header(self, candidate: _Candidate) -> str:
        return f"{languages.spec(candidate.language).comment} {candidate.path}"

    def _cost(self, candidate: _Candidate, content: str) -> int:
        return _snippet_cost(self._header(candidate), content)

    def _answer(self, chosen: list[tuple[_Candidate, Excerpt, int]], omitted: int, cut_short: bool
                ) -> CompletionAnswer:
        snippets = []
        blocks = []
        for candidate, excerpt, _ in chosen:
            definition = candidate.definition
            snippets.append(Snippet(
                path=candidate.path,
                start_line=excerpt.start_line,
                end_line=excerpt.end_line,
                symbol=definition.name if definition else None,
                qualname=definition.qualname if definition else None,
                kind=definition.kind if definition else "code",
                language=candidate.language,
                source=candidate.source,
                score=round(candidate.score, 4),
                why=tuple(candidate.why),
                content=excerpt.content,
                tokens=estimate_tokens(excerpt.content),
            ))
            blocks.append(f"{self._header(candidate)}\n{excerpt.content}\n")
        prompt = "\n".join(blocks)
        return CompletionAnswer(str(self.index.root), tuple(snippets), prompt, estimate_tokens(prompt),
                                self.request.budget_tokens, omitted, self.timed_out or cut_short)


def _overlaps(candidate: _Candidate, excerpt: Excerpt, other: _Candidate, shown: Excerpt) -> bool:
    return (candidate.path == other.path and excerpt.start_line <= shown.end_line
            and shown.start_line <= excerpt.end_line)


def _rank_key(candidate: _Candidate) -> tuple:
    start = candidate.definition.start_line if candidate.definition else candidate.window[0]
    return (-round(candidate.score, 6), candidate.path, start)


def _import_why(binding: Binding, target: Target) -> str:
    alias = f" as {binding.local}" if binding.local != binding.imported and not binding.is_module else ""
    name = binding.imported if not binding.is_module else binding.local
    via = f", re-exported through {', '.join(target.via)}" if target.via else ""
    return f"imported: `{name}`{alias} from {binding.module}{via}"


@lru_cache(maxsize=4096)
def _snippet_cost(header: str, content: str) -> int:
    """Tokens a snippet takes in the prompt: its header comment, its content and the blank line after it."""
    return estimate_tokens(f"{header}\n{content}\n\n")


@lru_cache(maxsize=4096)
def _language(path: str) -> str:
    return languages.language_for_path(path)


def _kind_weight(definition: Definition) -> float:
    return weights.DECLARATION_WEIGHT if definition.kind in ("constant", "type") else 1.0
