"""Where completion candidates come from, each source scoring what it finds, until the time budget is spent.

The sources run in order of how sure their candidates are, so that running
out of time drops the least likely ones: definitions of imported names and
their modules' members, what a warm language server resolves at the cursor,
the cursor file's own definitions off screen, names no import binds (the
symbol index's guess, in languages that need no import), the enclosing class
and function when off screen, and similar code from the files the user works
in. A definition found by two sources keeps its best score and both reasons.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import lru_cache

from rag_lsp import languages
from rag_lsp.completion import similar, weights
from rag_lsp.completion.caches import Caches
from rag_lsp.completion.cursor import RECEIVERS
from rag_lsp.completion.scoring import Evidence, kind_weight, proximity, where
from rag_lsp.completion.server_hints import cursor_hints
from rag_lsp.index.bindings import Binding, Resolver, Target
from rag_lsp.index.root_index import Index
from rag_lsp.langservers.pool import ServerPool
from rag_lsp.model import Definition
from rag_lsp.path_kinds import is_test_path

# Languages where a name from another file is visible only through an import: no guessing by name.
IMPORT_ONLY_LANGUAGES = frozenset({"python", "javascript", "typescript", "tsx"})


@dataclass(slots=True)
class Candidate:
    """A definition (or, with no definition, a window of similar code) that may go into the answer."""

    definition: Definition | None
    path: str
    score: float
    source: str
    why: list[str]
    language: str
    # The lines it spans: the definition's, or the window's.
    lines: tuple[int, int]

    def rank_key(self) -> tuple:
        """Best score first; ties broken by path and line, so that equal inputs give equal answers."""
        return (-round(self.score, 6), self.path, self.lines[0])


class Gathering:
    """The candidates of one answer, from every source in turn (call under ``index.lock``)."""

    def __init__(self, caches: Caches, index: Index, evidence: Evidence, text: str,
                 servers: ServerPool | None, deadline: float) -> None:
        self.caches = caches
        self.index = index
        self.evidence = evidence
        self.cursor = evidence.cursor
        self.analysis = evidence.analysis
        self.signals = evidence.signals
        # The buffer's text, sent to a warm language server, and the root's servers (None without any).
        self.text = text
        self.servers = servers
        self.deadline = deadline
        self.resolver = Resolver(index)
        self.candidates: dict[tuple, Candidate] = {}
        # Closed files whose windows were searched for similar code: the answer depends on them too.
        self.neighbours: set[str] = set()
        self.timed_out = False
        # False when a language server could still add to this answer (it was starting, loading or slow).
        self.server_final = True

    def out_of_time(self) -> bool:
        if time.perf_counter() > self.deadline:
            self.timed_out = True
        return self.timed_out

    def run(self) -> list[Candidate]:
        """Every source in turn while there is time; the candidates, best first."""
        for source in (self._imports, self._server, self._own_file, self._unbound, self._enclosing, self._similar):
            if self.out_of_time():
                break
            source()
        return sorted(self.candidates.values(), key=Candidate.rank_key)

    def _add(self, definition: Definition, score: float, source: str, why: list[str]) -> None:
        key = (definition.path, definition.start_line, definition.qualname)
        known = self.candidates.get(key)
        if known is None:
            self.candidates[key] = Candidate(definition, definition.path, score, source, why,
                                             _language(definition.path), (definition.start_line, definition.end_line))
        elif score > known.score:
            known.score, known.source, known.why = score, source, why + [w for w in known.why if w not in why]

    def _imports(self) -> None:
        """Definitions of the imported names, most promising first."""
        analysis, cursor = self.analysis, self.cursor
        typed_owner = cursor.typed.rsplit(".", 1)[0] if "." in cursor.typed else None
        # Most promising first, so that running out of time drops the least likely names.
        order = sorted(analysis.bindings.names.items(),
                       key=lambda item: (-self.evidence.prior(item[0]), item[0]))
        for position, (local, binding) in enumerate(order):
            if position >= weights.MIN_RESOLVED and self.out_of_time():
                return
            target = self.caches.resolve(self.index, self.resolver, binding, cursor.rel)
            if not target:
                continue
            uses = analysis.uses.get(local, [])
            if target.modules and not target.definitions:
                self._module_members(local, binding, target, typed_owner == local)
                if (found := self.resolver.named_in_module(target, local)) and uses:
                    target = found
                else:
                    continue
            score, why = self.evidence.score(local, uses)
            if not typed_owner and cursor.completes(local):
                score += weights.TYPED_PREFIX
                why.append(f"matches '{cursor.typed}' at the cursor")
            why.insert(0, _import_why(binding, target))
            for definition in target.definitions[:2]:
                self._add(definition, score * kind_weight(definition), "import", why)

    def _module_members(self, local: str, binding: Binding, target: Target, typed_here: bool) -> None:
        """``module.name`` uses of an imported module: the members used near the cursor (or being typed)."""
        prefix = local + "."
        members = {key[len(prefix):].split(".", 1)[0] for key in self.analysis.uses if key.startswith(prefix)}
        typed = self.cursor.typed.rsplit(".", 1)[-1]
        # Members never used yet: the one being typed, or one named like the code nearby (a name that
        # an import binds is that import's, not this module's).
        function = self.signals.function
        near = (self.signals.names_near - self.analysis.bindings.names.keys()) | (
            {function.name} if function else set())
        for path in target.modules:
            members.update(d.name for d in self.index.symbols.in_file(path) if d.container is None
                           and (d.name in near or (typed_here and d.name.startswith(typed))))
        for member in sorted(members):
            uses = self.analysis.uses.get(prefix + member, [])
            score, why = self.evidence.score(member, uses, unused_counts=False)
            if typed_here and member.startswith(typed):
                score += weights.TYPED_PREFIX
            if score < 0.01:
                continue
            found = self.resolver.attribute(target, member)
            why.insert(0, f"`{local}.{member}`: `{local}` is the module {binding.module}")
            for definition in found.definitions[:2]:
                self._add(definition, score * kind_weight(definition), "import", why)

    def _server(self) -> None:
        """What a warm language server resolves at the cursor, in the time left (``server_hints.py``)."""
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
            self._add(definition, weights.SERVER_SCORE * kind_weight(definition), "server",
                      [f"{hint.why} ({hint.server})"])

    def _own_file(self) -> None:
        """Definitions of the cursor's file used near the cursor but defined off screen."""
        cursor, analysis = self.cursor, self.analysis
        low, high = max(cursor.line - weights.NEAR_LINES, 1), cursor.line + weights.NEAR_LINES
        names = self.signals.names_near
        owner = self.signals.owner.qualname if self.signals.owner else None
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
            score, why = self.evidence.score(definition.name, uses, unused_counts=False, words=False)
            if cursor.completes(definition.name):
                score += weights.TYPED_PREFIX
            why.insert(0, f"defined in this file, {abs(definition.start_line - cursor.line)} lines away")
            self._add(definition, weights.LOCAL_WEIGHT * score * kind_weight(definition), "local", why)

    def _unbound(self) -> None:
        """Names used near the cursor that no import or local definition binds: the symbol index's guess."""
        analysis, cursor = self.analysis, self.cursor
        if cursor.language in IMPORT_ONLY_LANGUAGES:
            return
        local = {d.name for d in analysis.definitions}
        wildcard_files = {path for item in analysis.bindings.wildcards
                          for path in self.resolver.module_files(item.module, cursor.rel)}
        for name in sorted(self.signals.names_near):
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
            near, nearest = proximity(lines, cursor.line)
            for definition in found:
                count = f"{len(found)} definition{'s' if len(found) > 1 else ''} in the workspace"
                self._add(definition, weights.UNBOUND_WEIGHT * near / len(found), "symbol",
                          [f"`{name}` is defined here ({count})", f"used {where(nearest)}"])

    def _enclosing(self) -> None:
        """The enclosing class's and function's signatures, when they are off screen."""
        cursor = self.cursor
        for definition, what in ((self.signals.owner, "class"), (self.signals.function, "function")):
            if definition is None or cursor.line - definition.start_line <= weights.NEAR_LINES:
                continue
            self._add(definition, weights.ENCLOSING_SCORE, "enclosing",
                      [f"the enclosing {what}, {cursor.line - definition.start_line} lines above"])

    def _similar(self) -> None:
        """Windows of the open and recently edited files that look like the lines above the cursor."""
        query = similar.query_terms(self.analysis.lines, self.cursor.line - 1)
        pool = []
        kinds = {}
        for kind, rel, windows in self.caches.neighbour_windows(self.index, self.cursor.path):
            if self.out_of_time():
                return
            kinds[rel] = kind
            pool.extend(windows)
        # A closed file's text comes from the index: the answer depends on it staying the same.
        self.neighbours = {rel for rel, kind in kinds.items() if kind == "recent"}
        for score, window in similar.rank(query, pool, weights.SIMILAR_LIMIT):
            weight, origin = ((weights.SIMILAR_WEIGHT, "an open file") if kinds[window.path] == "open"
                              else (weights.RECENT_WEIGHT, "a recently edited file"))
            key = (window.path, window.start_line, None)
            self.candidates[key] = Candidate(None, window.path, weight * score, "similar",
                                             [f"similar code in {origin} (Jaccard {score:.2f})"],
                                             languages.language_for_path(window.path),
                                             (window.start_line, window.end_line))


def _import_why(binding: Binding, target: Target) -> str:
    alias = f" as {binding.local}" if binding.local != binding.imported and not binding.is_module else ""
    name = binding.imported if not binding.is_module else binding.local
    via = f", re-exported through {', '.join(target.via)}" if target.via else ""
    return f"imported: `{name}`{alias} from {binding.module}{via}"


@lru_cache(maxsize=4096)
def _language(path: str) -> str:
    return languages.language_for_path(path)
