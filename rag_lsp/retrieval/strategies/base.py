"""What every evidence strategy shares: the finding it reports, the context it reads, and the rules of weighting.

Each strategy is one idea ("a stack frame points at a file", "a named method
is defined somewhere"). Everything else they have in common lives here, so a
strategy module holds only its idea: reading the message (prose apart from
pasted code, parsed evidence), mapping another machine's paths onto the
checkout, finding the chunk at a line or of a definition, scanning chunk text
within the budgets, and the reliability table that the weights start from.
"""

from __future__ import annotations

import bisect
import math
import posixpath
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import InitVar, dataclass, field
from functools import cached_property
from pathlib import PurePosixPath

from rag_lsp.index.module_map import common_suffix
from rag_lsp.index.root_index import Index
from rag_lsp.index.symbol_provider import IndexSymbolProvider, SymbolProvider
from rag_lsp.index.tables import WorkspaceTables, workspace_tables
from rag_lsp.index.terms import tokenize
from rag_lsp.model import Chunk, Definition
from rag_lsp.retrieval.evidence import Frame, Location, TestId, parse_frames, parse_locations, parse_test_ids
from rag_lsp.retrieval.query import Query, parse_query

# How far each kind of evidence is trusted, before its anchor's specificity: the
# issue's starting points, plus bm25 (BM25's measured top-1 precision) and plain
# words naming a definition (half a code-like name). bench/localize_results.md
# records the measurements and what was changed instead of these numbers.
RELIABILITY = {
    "stack_frame": 0.95,
    "compiler_location": 0.9,
    "named_path": 0.9,
    "raised_message": 0.85,
    # A definition a language server confirmed counts a little more than one the patterns found.
    "server_definition": 0.85,
    "definition": 0.8,
    # Only a language server answers implementations (core/strategies/implementations.py).
    "implementation": 0.85,
    "naming_convention": 0.75,
    # A module path is worth 0.7 when one segment matched, up to 0.85 for four or more.
    "module_path": 0.7,
    "module_path_max": 0.85,
    "route": 0.7,
    "test": 0.6,
    "config_key": 0.6,
    "history": 0.6,
    "reference": 0.5,
    "bm25": 0.5,
    "word_definition": 0.4,
    "path_word": 0.35,
    "use": 0.25,
}

# Specificity is matches ** -SPECIFICITY_EXPONENT: 1 file → 1.0, 2 → 0.81, 10 → 0.50, 40 → 0.33.
SPECIFICITY_EXPONENT = 0.3
# A name or path seen only inside pasted code (a reproducer, a log) counts this much.
CODE_SAMPLE_FACTOR = 0.5
# A path that matched only by its file name although more of it was written.
PARTIAL_PATH_FACTOR = 0.4
# A message with more words than this is a report (an issue, a bug report), not a search question.
REPORT_WORDS = 30
_LETTERS = re.compile(r"[A-Za-z]+")

_FENCE = re.compile(r"^\s*(```|~~~)")
# Lines that are pasted code or program output even outside a fence.
_CODE_LINE = re.compile(r"^(?: {4}|\t|>>> |\.\.\. |In \[\d+\]:|Out\[\d+\]:|\$ |\s+File \"|Traceback |\s+at )")
# Lines that report the environment (issue templates' "Versions" sections: ``pvlib.__version__: 0.9.1``,
# ``python -c "... print(__pkginfo__.version)"``) name modules without being about them.
_ENVIRONMENT_LINE = re.compile(r"\bversions?\b|__version__|\b\d+\.\d+\.\d+", re.IGNORECASE)
# Inline code with spaces in it is a snippet (`pylint src/project`, `x = self[key]`), not a name.
_INLINE_SNIPPET = re.compile(r"`[^`\n]*\s[^`\n]*`")
# The line that states a failure (``TypeError: 'X' object ...``, ``panic: ...``, ``error[E0308]: ...``) is what
# went wrong in words, so it counts as prose even inside a pasted trace.
_FAILURE_LINE = re.compile(
    r"^\s*(?:[\w.]*(?:Error|Exception|Warning|Failure)|error(?:\[\w+\])?|panic|fatal)\s*:\s", re.IGNORECASE)
_QUESTION_START = re.compile(
    r"^\s*(how|why|what|where|which|who|when|can|could|does|do|is|are|should|would)\b", re.IGNORECASE)
_ABOUT_TESTS = re.compile(
    r"\b(tests?|testing|unittest|pytest|jest|vitest|rspec|junit|specs?|test_\w+|\w+_test|\w+\.(test|spec)\.\w+)\b",
    re.IGNORECASE)
_ABOUT_CONFIG = re.compile(
    r"\b(config|configs|configuration|configure[ds]?|settings?|environment variables?|env vars?)\b", re.IGNORECASE)


class Skipped(Exception):
    """Raised by a strategy that did not run; the message says why (reported as ``strategies_skipped``)."""


@dataclass(frozen=True, slots=True)
class Finding:
    """One place a strategy found, and why.

    ``weight`` is the strategy's reliability times the anchor's specificity.
    ``anchor`` is the text of the message that pointed here; one anchor is
    counted once per file however many strategies or lines repeat it.
    ``chunk_id`` (or ``line``) locates the finding inside the file when known.
    ``in_prose`` marks anchors the prose itself names, whose best place is
    kept even below the relative cut. ``source`` says what answered: a
    language server's name, ``tree-sitter`` for the pattern symbol provider,
    or ``index`` for rag_lsp's own tables (paths, BM25, parsed evidence).
    """

    path: str
    strategy: str
    anchor: str
    weight: float
    reason: str
    line: int | None = None
    chunk_id: int | None = None
    in_prose: bool = False
    source: str = "index"


@dataclass(frozen=True, slots=True)
class Budget:
    """Limits of one ranking; within them the answer is deterministic."""

    seconds: float = 3.0
    files_listed: int = 200_000
    bytes_read: int = 256 << 20
    occurrences_per_name: int = 200


def specificity(matches: int) -> float:
    """How much an anchor that matches ``matches`` files says about each (1.0 for one file)."""
    return max(matches, 1) ** -SPECIFICITY_EXPONENT


@dataclass(frozen=True, slots=True)
class Message:
    """The question and its pasted evidence, read once for every strategy."""

    text: str
    # The first line: an issue's title, a chat question; what the message is about.
    title: str
    # The text outside fenced blocks, indented code, shell and REPL lines, trace lines, environment reports
    # and inline snippets (failure lines stay: they say what went wrong).
    prose: str
    prose_query: Query
    is_question: bool
    about_tests: bool
    about_config: bool
    # ``is_report(text)``: an issue or a bug report, not a question one asks a search box.
    is_report: bool
    # A single line, as typed into a search box (an issue has a title and a body, however short).
    one_line: bool

    def in_prose(self, name: str) -> bool:
        return name in self.prose_query.names or name in self.prose_query.words


def read_message(text: str) -> Message:
    prose_lines: list[str] = []
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        elif _FAILURE_LINE.match(line) or not (fenced or _CODE_LINE.match(line) or _ENVIRONMENT_LINE.search(line)):
            prose_lines.append(_INLINE_SNIPPET.sub(" ", line))
    prose = "\n".join(prose_lines)
    title = next((line for line in text.splitlines() if line.strip()), "")
    return Message(
        text=text,
        title=title,
        prose=prose,
        prose_query=parse_query(prose),
        is_question=title.rstrip().endswith("?") or _QUESTION_START.match(title) is not None,
        about_tests=_ABOUT_TESTS.search(title) is not None,
        about_config=_ABOUT_CONFIG.search(title) is not None,
        is_report=is_report(text),
        one_line=len(text.strip().splitlines()) <= 1,
    )


def is_report(text: str) -> bool:
    """More than ``REPORT_WORDS`` words, prose and pasted evidence alike: an issue or a bug report, not a
    question one asks a search box."""
    return len(_LETTERS.findall(text)) > REPORT_WORDS


@dataclass(frozen=True, slots=True)
class PathMatch:
    """Workspace files a written path may mean, with how well it matched."""

    paths: tuple[str, ...]
    # False when only the file name matched although more of the path was written.
    complete: bool

    @property
    def specificity(self) -> float:
        return specificity(len(self.paths)) * (1.0 if self.complete else PARTIAL_PATH_FACTOR)


@dataclass
class StrategyContext:
    """Everything a strategy may read: the index, the message, shared tables and the budgets."""

    index: Index
    query: Query
    budget: Budget = field(default_factory=Budget)
    # Answers symbol questions (language servers composed with the patterns); the patterns when None.
    provider: InitVar[SymbolProvider | None] = None
    clock: Callable[[], float] = time.perf_counter
    # Findings of the strategies that ran before (the fallback strategy reads them).
    findings: list[Finding] = field(default_factory=list)
    truncated: bool = False

    def __post_init__(self, provider: SymbolProvider | None) -> None:
        self.deadline = self.clock() + self.budget.seconds
        self.tables: WorkspaceTables = workspace_tables(self.index)
        # The tree-sitter patterns alone, for lookups not worth a server call (plain words of the prose).
        self.patterns: SymbolProvider = IndexSymbolProvider(self.index, self.tables)
        self.symbols: SymbolProvider = provider or self.patterns
        self._bytes_read = 0
        self._files_listed = 0

    @cached_property
    def message(self) -> Message:
        return read_message(self.query.text)

    # Budgets: each check marks the ranking truncated when a limit is reached.

    def out_of_time(self) -> bool:
        if self.clock() > self.deadline:
            self.truncated = True
            return True
        return False

    def read(self, text: str) -> bool:
        """Account for reading ``text``; False once the byte budget is spent."""
        self._bytes_read += len(text)
        if self._bytes_read > self.budget.bytes_read:
            self.truncated = True
            return False
        return True

    def list_files(self, count: int) -> bool:
        """Account for listing ``count`` paths; False once the budget is spent."""
        self._files_listed += count
        if self._files_listed > self.budget.files_listed:
            self.truncated = True
            return False
        return True

    def capped(self, items: list) -> list:
        """At most ``occurrences_per_name`` of the (already ordered) items found for one name."""
        if len(items) > self.budget.occurrences_per_name:
            self.truncated = True
            return items[: self.budget.occurrences_per_name]
        return items

    # Parsed evidence (frames, tool locations, test ids), read once and only by the strategies that need it.

    @cached_property
    def frames(self) -> list[Frame]:
        return parse_frames(self.query.text)

    @cached_property
    def locations(self) -> list[Location]:
        return parse_locations(self.query.text)

    @cached_property
    def test_ids(self) -> list[TestId]:
        return parse_test_ids(self.query.text)

    def evidence_paths(self) -> set[str]:
        """The paths written in stack frames and tool locations, which their own strategies read."""
        return {f.path for f in self.frames if f.path} | {location.path for location in self.locations}

    # Mapping what the message says onto the workspace.

    def resolve_path(self, written: str) -> PathMatch:
        """Workspace files a written path means: exact when under the root, else by the longest path suffix.

        Evidence is untrusted: a relative path that climbs out of the root
        resolves to nothing, and secret files are never candidates.
        """
        parts = _path_parts(written, str(self.index.root))
        if not parts:
            return PathMatch((), False)
        exact = "/".join(parts)
        if exact in self.index.files and not self.tables.is_secret(exact):
            return PathMatch((exact,), True)
        best, shared = [], 0
        for path in self.tables.files_named(parts[-1]):
            common = common_suffix(parts, path.split("/"))
            if common > shared:
                best, shared = [path], common
            elif common == shared:
                best.append(path)
        best = [path for path in best if not self.tables.is_secret(path)]
        complete = shared >= 2 or shared == len(parts) or any(shared == path.count("/") + 1 for path in best)
        return PathMatch(tuple(sorted(best)), complete)

    def resolve_directory(self, written: str) -> list[str]:
        """Workspace directories a written directory path means, by the longest path suffix.

        As for files (``resolve_path``'s ``complete``), a path of several folders of which only the last is
        here names the reporter's own directory (``/home/user/.cache/bat``, ``/etc/app``), not a namesake
        folder of the workspace: the suffix must reach two folders, the whole written path, or the whole
        workspace directory."""
        parts = _path_parts(written, str(self.index.root))
        if not parts:
            return []
        scored = [(common_suffix(parts, d.split("/")), d) for d in self.tables.directories_named(parts[-1])]
        best = max((score for score, _ in scored), default=0)
        return [d for score, d in scored if score == best and score
                and (score >= 2 or score == len(parts) or score == d.count("/") + 1)]

    def rarity(self, word: str) -> float:
        """How rare a word is in the code: 1.0 in one chunk, falling to 0 for a word in every chunk.

        "element" or "type" may name a single definition and still be said about
        everything; a word the code rarely uses ("reindl") means its definition.
        """
        terms = tokenize(word)
        total = len(self.index.chunks)
        containing = self.index.bm25.df(terms[0]) if terms else 0
        if total <= 1 or containing <= 1:
            return 1.0
        return max(0.0, math.log(total / containing) / math.log(total))

    def files_under(self, directory: str) -> list[str]:
        """Indexed files under a directory, in path order, within the listing budget."""
        paths = self.tables.paths
        prefix = directory + "/"
        start = bisect.bisect_left(paths, prefix)
        end = bisect.bisect_left(paths, directory + "0")  # "0" sorts right after "/".
        if not self.list_files(end - start):
            return []
        return paths[start:end]

    def chunk_at(self, path: str, line: int | None, function: str | None = None) -> int | None:
        """The chunk a location points at: the one at ``line``, or ``function``'s definition near it.

        Traces come from other versions of the code, so when the chunk at the
        line is not ``function`` but the file defines it, the definition wins.
        """
        found = self.index.chunk_at(path, line) if line else None
        name = last_segment(function) if function else None
        if name and not (found and found[1].symbol == name):
            defined = [d for d in self.symbols.definitions_in(path) if d.name == name]
            if defined:
                nearest = min(defined, key=lambda d: (abs(d.start_line - (line or 0)), d.start_line))
                return self.definition_chunk(nearest)
        return found[0] if found else None

    def definition_chunk(self, definition: Definition) -> int | None:
        """The chunk that starts a definition (its signature and docstring), else the one holding its first line."""
        return self.index.definition_chunk(definition)

    def chunks(self) -> Iterator[tuple[int, Chunk]]:
        """Every chunk in path and line order, within the byte budget and the time budget."""
        for path in self.tables.paths:
            if self.out_of_time():
                return
            for chunk_id, chunk in self.index.chunks_of(path):
                if not self.read(chunk.content):
                    return
                yield chunk_id, chunk

    def chunks_containing(self, text: str) -> list[tuple[int, Chunk]]:
        """Chunks whose content contains ``text`` from word boundary to word boundary, in path and line order.

        Only chunks holding the rarest word of ``text`` are read (the BM25
        postings say which), within the byte and time budgets; a text of stop
        words alone is looked for in every chunk.
        """
        terms = {term for word in _WORD.findall(text) for term in tokenize(word)[:1]}
        postings = [self.index.bm25.postings(term)[0] for term in sorted(terms)]
        if not postings:
            return [(chunk_id, chunk) for chunk_id, chunk in self.chunks() if text in chunk.content]
        fewest = min(postings, key=len).tolist()
        candidates = sorted(fewest, key=lambda chunk_id: (self.index.chunks[chunk_id].path,
                                                          self.index.chunks[chunk_id].start_line))
        found = []
        for chunk_id in candidates:
            chunk = self.index.chunks[chunk_id]
            if self.out_of_time() or not self.read(chunk.content):
                break
            if text in chunk.content:
                found.append((chunk_id, chunk))
        return found


_WORD = re.compile(r"\w+")
_URL_PREFIX = re.compile(r"^[a-z][a-z0-9+.-]*://[^/]*", re.IGNORECASE)
_DRIVE = re.compile(r"^[A-Za-z]:")


def _path_parts(written: str, root: str) -> list[str]:
    """Segments of a written path relative to the workspace, or [] when it climbs out of it."""
    text = _URL_PREFIX.sub("", written.strip().strip("\"'`()[]<>,"))
    text = _DRIVE.sub("", text.replace("\\", "/")).split("#", 1)[0].split("?", 1)[0]
    if not text:
        return []
    inside = root.rstrip("/") + "/"
    text = text.removeprefix(inside)
    if not text.startswith(("/", "~")):
        # Relative to the root (or made so): it must stay inside. Another machine's absolute paths are
        # only ever matched against indexed files, so they cannot reach outside either.
        text = posixpath.normpath(text)
        if text == ".." or text.startswith("../"):
            return []
    return [part for part in text.split("/") if part not in ("", ".", "..", "~")]


def last_segment(name: str) -> str:
    """The member a qualified name ends with: ``post`` of ``Ledger.post``, ``Ledger::post``, ``pkg/Ledger#post``."""
    return re.split(r"::|\.|#|/", name.strip())[-1].strip("<>()")


def file_stem(path: str) -> str:
    """A file's name without any extension (``cart.test.ts`` → ``cart``)."""
    name = PurePosixPath(path).name
    return name.split(".", 1)[0] if not name.startswith(".") else name
