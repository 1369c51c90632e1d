"""Deterministic rerank signals: small named multipliers that say what kind of place a reader wants.

Retrieval scores measure how much a place shares with the question; these
signals measure what the place is. Each is one rule with its factor and the
reason it exists, and each that applies names itself in the place's ``why``:

- a definition of a name the question writes (×1.3) over the places that
  only use or import it; a definition with a docstring (×1.2) explains itself; a file changed in the
  last week (×1.1; by git's commits and unstaged edits in a checkout, else by its modification time:
  ``recency.py``) is what the user works on; the whole question written
  verbatim in the place (×1.5) is as specific as evidence gets (not when the
  question is one code name: its definition never holds it written out, its
  uses do); the kind of
  definition the question asks for (``the Ledger class``) matching the
  place's kind (×2.0);
- code over non-code (prose ×0.5, settings and data ×0.6) unless the question
  is about documentation or configuration (a long report's title says so, not a
  word in passing); a file of a type the language table does not know (×0.5,
  as prose was) unless it sits in a folder with the workspace's main code (a
  grammar ``parser.y`` beside ``parser.c``, a ``builtin.jq`` beside ``builtin.c``);
- the repository's main languages over incidental ones (×0.7): a Rust
  project's Python tooling rarely holds the answer;
- a file's definitions over its header (×0.6 for the leading imports of a file
  that has definitions): a small file's first lines win on path words alone;
- copies below originals: declaration stubs, generated code, vendored and
  amalgamated copies (a vendored library known by its folder's name or by its
  own licence inside the source), compatibility shims and older major versions
  kept beside the current one (``v3/`` beside ``v4/``, unless the question
  names ``v3``) (×0.5), and re-export
  files (×0.7);
- code for Windows alone (×0.7: ``src/win/fs.c`` beside ``src/unix/fs.c``,
  ``exec_windows.go``) unless the question names Windows or windows: the
  second implementation of a cross-platform behaviour, whose API names match
  a question's words as well as the first's;
- tests (×0.6, unless the question is about tests) and examples, benchmarks and
  code in documentation folders (×0.7, unless the question is about those or
  the docs) below the source: the evidence strategies demote them by the same
  factors, and the candidate lists must not bring them back.
"""

from __future__ import annotations

import re
import weakref
from collections import Counter
from dataclasses import dataclass

from rag_lsp.index.module_map import language_family
from rag_lsp.index.root_index import Index
from rag_lsp.languages import spec
from rag_lsp.model import Chunk
from rag_lsp.path_kinds import (
    PathKind,
    is_code_path,
    is_unknown_path,
    older_version_folders,
    vendored_folders,
)
from rag_lsp.retrieval.query import Query
from rag_lsp.retrieval.ranking.recency import Recency, recency_of
from rag_lsp.retrieval.strategies.base import Message

# A language family with less than this share of a workspace's code files is incidental to it.
MINOR_SHARE = 0.1
# A family with at least this share (or the largest) is where the source proper lives.
MAJOR_SHARE = 0.3
# Only a question of at most this many words of prose asks for a kind of definition.
KIND_MAX_WORDS = 30
# The whole question must be at least this long to count as quoted verbatim.
VERBATIM_MIN_CHARS = 6
# A question that is one code name (``Ledger.post``, ``fmt::format``): its definition cannot hold it verbatim,
# so finding it written somewhere says "uses it", which the lists already weigh, not "is the answer".
_BARE_NAME = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::|#|->)[A-Za-z_$][\w$]*)*")

_KIND_WORDS = {
    "class": ("class",), "classes": ("class",), "struct": ("struct",), "structs": ("struct",),
    "interface": ("interface",), "interfaces": ("interface",), "trait": ("trait", "interface"),
    "enum": ("enum",), "function": ("function", "method"), "functions": ("function", "method"),
    "method": ("method", "function"), "methods": ("method", "function"), "macro": ("macro",),
    "module": ("module", "namespace"), "type": ("type", "struct", "class", "interface"),
    "constructor": ("constructor",), "constant": ("constant",), "constants": ("constant",),
}
_DOCSTRING = re.compile(r'^\s*(?:"""|\'\'\'|///|//!|/\*\*|##|#\'|--\[\[|@doc\b|"[^"\n]{20,})', re.MULTILINE)
_ABOUT_DOCS = re.compile(r"\b(docs?|documentation|readme|guide|tutorial|changelog)\b", re.IGNORECASE)
_ABOUT_EXAMPLES = re.compile(r"\b(examples?|samples?|demos?|benchmarks?)\b", re.IGNORECASE)
# A question that names Windows, its APIs or its toolchains, or windows at all (a window manager's files are
# named for its windows).
_ABOUT_WINDOWS = re.compile(r"\b(windows?|win(32|64)?|winapi|winsock|msvc|mingw|cygwin|msys2?|wsl|iocp|dll)\b",
                            re.IGNORECASE)
_VERSION_WORDS = re.compile(r"\b(?:v|version\s*)(\d+)\b", re.IGNORECASE)
_ABOUT_CONFIG = re.compile(r"\b(config\w*|settings?|yaml|toml|json|manifest|ci|workflow|dockerfile|build)\b",
                           re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Workspace:
    """What a workspace's files say about its code: the language families holding at least ``MINOR_SHARE`` of
    its code files, the folders holding code of the largest family or of one holding ``MAJOR_SHARE``, and the
    folders of libraries copied in."""

    main_languages: frozenset[str]
    code_folders: frozenset[str]
    # Third-party libraries copied in, known by their own licence (``path_kinds.vendored_folders``).
    vendored: frozenset[str]
    # Older major versions of code beside a newer one (``path_kinds.older_version_folders``).
    older_versions: frozenset[str]


_WORKSPACES: weakref.WeakKeyDictionary[Index, tuple[int, Workspace]] = weakref.WeakKeyDictionary()


@dataclass(frozen=True, slots=True)
class Signals:
    """What the question asks for, read once per question."""

    about_docs: bool
    about_config: bool
    about_tests: bool
    about_examples: bool
    about_windows: bool
    kinds: frozenset[str]
    verbatim: str | None
    workspace: Workspace
    # Which files changed in the last week (git's commits and unstaged edits, else modification times).
    recency: Recency
    # The names the question writes as code, or as a single word, that a definition can have.
    names: frozenset[str]
    # The major versions the question names (``v3``, ``version 3``), as ``v3``.
    versions: frozenset[str]


def read_signals(index: Index, query: Query, message: Message, about_config: bool, about_tests: bool) -> Signals:
    """What the question asks for; ``message`` is the question read once by the strategies' context, and the
    ``about_*`` flags are what the evidence decided (the title, or the strategy that led)."""
    # A question asks for a kind of definition in its own words ("the Ledger class"); in a long report, or in
    # pasted code, "class" and "type" are just words.
    words = re.findall(r"[A-Za-z]+", message.prose)
    short = len(words) <= KIND_MAX_WORDS
    asked = {word.lower() for word in words} if short else set()
    # Likewise a long report mentions a build, a JSON file or the docs in passing (a quarter of the multi-language
    # issues do, and one in fifty is fixed in such a file): its title says what it is about.
    subject = query.text if short else message.title
    kinds = frozenset(kind for word in asked for kind in _KIND_WORDS.get(word, ()))
    text = query.text.strip().strip("`'\"")
    quoted = len(text) >= VERBATIM_MIN_CHARS and "\n" not in text and not _BARE_NAME.fullmatch(text)
    verbatim = text.lower() if quoted else None
    names = frozenset(part for name in query.names for part in (name, re.split(r"\.|::|#", name)[-1]))
    return Signals(bool(_ABOUT_DOCS.search(subject)), about_config or bool(_ABOUT_CONFIG.search(subject)),
                   about_tests, bool(_ABOUT_EXAMPLES.search(subject)), bool(_ABOUT_WINDOWS.search(query.text)),
                   kinds, verbatim, workspace_of(index), recency_of(index), names,
                   frozenset(f"v{number}" for number in _VERSION_WORDS.findall(query.text)))


def workspace_of(index: Index) -> Workspace:
    """What the workspace's files say about its code (remembered while no file comes, goes or is renamed: the
    module map counts those changes)."""
    generation = index.symbols.modules.generation
    known = _WORKSPACES.get(index)
    if known is not None and known[0] == generation:
        return known[1]
    code = [path for path in index.files if is_code_path(path) and not is_unknown_path(path)]
    counts = Counter(language_family(path) for path in code)
    total = sum(counts.values())
    main = frozenset(family for family, count in counts.items() if total and count / total >= MINOR_SHARE)
    # The source proper is in the leading family and any other that holds a comparable share (TypeScript beside
    # JavaScript), not in the shell scripts of the repository's root.
    largest = max(counts.values(), default=0)
    major = frozenset(family for family, count in counts.items() if count == largest or count / total >= MAJOR_SHARE)
    folders = frozenset(path.rpartition("/")[0] for path in code if language_family(path) in major)
    found = Workspace(main, folders, vendored_folders(index.files, {path.rpartition("/")[0] for path in code}),
                      older_version_folders(code))
    _WORKSPACES[index] = (generation, found)
    return found


@dataclass(frozen=True, slots=True)
class PathTraits:
    """The signals that depend on a place's file alone, read once per file and question (a ranking weighs
    several places of most files), each as (signal, reason) in ``factors``'s order, or None."""

    recent: bool
    # Prose, a file of unknown type away from the source, or settings and data; None for code, whose
    # language decides instead (``code`` says whether it is code).
    kind: tuple[str, str] | None
    code: bool
    # A test, or an example or benchmark.
    role: tuple[str, str] | None
    # A secondary copy, or a re-export file.
    copy: tuple[str, str] | None
    # Code for one platform that the question does not name.
    platform: tuple[str, str] | None


def path_traits(index: Index, path: str, kind_of_path: PathKind, signals: Signals) -> PathTraits:
    """What a file's path (``kind_of_path``, ``PathKind.of``) and entry say, for ``factors``."""
    entry = index.files.get(path)
    recent = entry is not None and signals.recency.is_recent(path, entry.mtime_ns)
    kind: tuple[str, str] | None = None
    if kind_of_path.prose:
        if not signals.about_docs:
            kind = ("prose", "prose")
    elif kind_of_path.unknown:
        if path.rpartition("/")[0] not in signals.workspace.code_folders and not signals.about_config:
            kind = ("unknown", "a file of unknown type away from the source")
    elif not kind_of_path.code and not signals.about_config:
        kind = ("non_code", "settings or data")
    role: tuple[str, str] | None = None
    if kind_of_path.test:
        if not signals.about_tests:
            role = ("test", "a test, and the question is not about tests")
    elif kind_of_path.example and not (signals.about_docs or signals.about_examples):
        role = ("example", "an example or a benchmark")
    copy: tuple[str, str] | None = None
    if kind_of_path.copy == "barrel":
        copy = ("barrel", "re-exports")
    elif kind_of_path.copy is not None:
        copy = ("secondary", f"{kind_of_path.copy} copy")
    elif signals.workspace.vendored and _folder_of(path, signals.workspace.vendored):
        copy = ("secondary", "vendored copy (its folder has its own licence)")
    elif signals.workspace.older_versions and (older := _folder_of(path, signals.workspace.older_versions)):
        version = older.rpartition("/")[2]
        if version.lower() not in signals.versions:
            copy = ("secondary", f"an older version's copy (`{version}/` beside a later one)")
    platform = ("platform", "code for Windows alone, and the question does not name Windows") \
        if kind_of_path.windows and not signals.about_windows else None
    return PathTraits(recent, kind, kind_of_path.code, role, copy, platform)


def _folder_of(path: str, folders: frozenset[str]) -> str | None:
    """The one of ``folders`` that ``path`` lies under (the innermost), or None."""
    folder = path.rpartition("/")[0]
    while folder:
        if folder in folders:
            return folder
        folder = folder.rpartition("/")[0]
    return None


def factors(chunk: Chunk, signals: Signals, traits: PathTraits, defines_more: bool,
            weights: dict[str, float]) -> list[tuple[float, str]]:
    """The signals that apply to one place, as (factor, reason), with the factors of ``weights``
    (``RankingConfig.signals``; a factor of 1 is a signal switched off); ``traits`` are its file's
    (``path_traits``) and ``defines_more`` says its file has definitions besides this chunk (read only when the
    header signal is on)."""
    found: list[tuple[str, str]] = []
    # A signal switched off is not read: the docstring pattern would search every definition's text.
    if chunk.symbol is not None and weights.get("documented", 1.0) != 1.0 and _DOCSTRING.search(chunk.content):
        found.append(("documented", "documented"))
    if chunk.symbol is not None and (chunk.symbol in signals.names or chunk.qualname in signals.names):
        found.append(("definition", f"defines {chunk.symbol}, which the question names"))
    if traits.recent:
        found.append(("recent", "changed this week"))
    if signals.verbatim and signals.verbatim in chunk.content.lower():
        found.append(("verbatim", "holds the question verbatim"))
    if signals.kinds and chunk.kind in signals.kinds:
        found.append(("kind", f"the {chunk.kind} the question asks for"))
    main_languages = signals.workspace.main_languages
    if traits.kind is not None:
        found.append(traits.kind)
    elif traits.code and main_languages and spec(chunk.language).family not in main_languages:
        found.append(("minor_language", "not one of the workspace's main languages"))
    if traits.role is not None:
        found.append(traits.role)
    if chunk.symbol is None and chunk.start_line == 1 and defines_more:
        found.append(("header", "a file's header, not its definitions"))
    if traits.copy is not None:
        found.append(traits.copy)
    if traits.platform is not None:
        found.append(traits.platform)
    return [(weights.get(name, 1.0), reason) for name, reason in found if weights.get(name, 1.0) != 1.0]
