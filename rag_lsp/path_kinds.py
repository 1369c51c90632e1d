"""What kind of file a workspace path is: a test, an example, prose, or code.

Ranking demotes tests, examples and prose unless the question is about them,
and lens counts tell tests apart, so every part of the core asks the same
functions here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import NamedTuple

from rag_lsp.languages import PROSE_LANGUAGES, language_for_path

TEST_DIRS = frozenset({"test", "tests", "testing", "__tests__", "spec", "specs", "testdata", "test_data",
                        "fixtures", "__mocks__", "e2e"})
_TEST_NAME = re.compile(
    r"^(test_.*\.py|.*_test\.(py|go|rs|cc|cpp|c)|conftest\.py|.*\.(test|spec)\.[cm]?[jt]sx?"
    r"|.*(Test|Tests|Spec|IT)\.(java|kt|scala|cs|swift|php)|.*_spec\.rb|.*_test\.exs?)$"
)
_EXAMPLE_DIRS = frozenset({"example", "examples", "sample", "samples", "demo", "demos", "bench", "benchmark",
                           "benchmarks", "benches", "asv_bench"})
# Code under these directories illustrates the product (Sphinx configuration, doc snippets) rather than being it.
_DOC_DIRS = frozenset({"doc", "docs", "documentation"})
# Languages that hold data, settings or markup rather than code that raises messages.
_NON_CODE_LANGUAGES = PROSE_LANGUAGES | {"yaml", "toml", "json", "ini", "html", "css", "sql", "build"}


def _folders(path: str) -> list[str]:
    """A path's folders in lower case (a ranking asks what a few hundred new paths are, question after
    question: one split of the lowered path, looked up in sets)."""
    return path.lower().split("/")[:-1]


@lru_cache(maxsize=65536)
def is_test_path(path: str) -> bool:
    """Tests and test data, by directory or by the naming conventions of the common test runners."""
    return _is_test(path.rpartition("/")[2], _folders(path))


def _is_test(name: str, folders: list[str]) -> bool:
    return _TEST_NAME.match(name) is not None or not TEST_DIRS.isdisjoint(folders)


@lru_cache(maxsize=65536)
def is_example_path(path: str) -> bool:
    """Examples, samples and benchmarks, and code inside documentation directories."""
    return _is_example(_folders(path), is_prose_path(path))


def _is_example(folders: list[str], prose: bool) -> bool:
    return not _EXAMPLE_DIRS.isdisjoint(folders) or (not _DOC_DIRS.isdisjoint(folders) and not prose)


@lru_cache(maxsize=65536)
def is_prose_path(path: str) -> bool:
    return language_for_path(path) in PROSE_LANGUAGES


# JavaScript and TypeScript that configure a tool (``karma.conf.js``, ``vite.config.ts``, ``.eslintrc.js``,
# ``Gruntfile.js``): settings written as code, which name every browser, plugin and option a report mentions.
_TOOL_CONFIG = re.compile(r"(^[\w.-]+\.(conf|config)|^\.\w+rc|^gulpfile|^gruntfile)\.[cm]?[jt]s$", re.IGNORECASE)


@lru_cache(maxsize=65536)
def is_code_path(path: str) -> bool:
    """Source code in any language, as opposed to prose, settings (tool configuration written as code
    included), data and markup; a file of a type the language table does not know may be either
    (``is_unknown_path``)."""
    return _is_code(language_for_path(path), path.rpartition("/")[2])


def _is_code(language: str, name: str) -> bool:
    return language not in _NON_CODE_LANGUAGES and _TOOL_CONFIG.search(name) is None


@lru_cache(maxsize=65536)
def is_unknown_path(path: str) -> bool:
    """A file whose type the language table does not know: a grammar, a template, a script in a small
    language, or data. Where it lives tells which (ranking: beside the source, it is part of it)."""
    return language_for_path(path) == "other"


# Copies of the source made for distribution or by a generator: they absorb the evidence their originals should get.
_COMPAT_DIRS = frozenset({"compat", "_compat", "legacy"})
_SECONDARY_DIRS = frozenset({"vendor", "vendored", "third_party", "thirdparty", "external", "extern", "dist",
                             "single_include", "amalgamation", "generated", "gen", "compat", "_compat", "legacy"})
_SECONDARY_NAME = re.compile(
    r"(\.d\.ts|\.d\.mts|_pb2(_grpc)?\.pyi?|\.pb\.go|\.pb\.(cc|h)|\.g\.dart|\.generated\.\w+|\.designer\.cs"
    r"|[-_.]amalgamat\w*\.\w+|\.min\.\w+)$", re.IGNORECASE)
# Files that only re-export what other files of their package define.
_BARREL_NAMES = frozenset({"__init__.py", "index.js", "index.ts", "index.mjs", "mod.rs", "package-info.java"})


@lru_cache(maxsize=65536)
def secondary_kind(path: str) -> str | None:
    """Why a file is a copy or a stand-in for source defined elsewhere, or None: ``declaration`` (``.d.ts``
    type stubs), ``generated`` (protobuf, designer and other generated code), ``vendored`` (a copy under
    ``vendor/``, ``third_party/``, an amalgamated single header, ``dist/``) or ``compat`` (a compatibility
    shim or legacy copy). Ranking demotes these so the original wins."""
    return _secondary(path.rpartition("/")[2].lower(), _folders(path))


def _secondary(lowered_name: str, folders: list[str]) -> str | None:
    if lowered_name.endswith((".d.ts", ".d.mts")):
        return "declaration"
    if _SECONDARY_NAME.search(lowered_name):
        return "generated"
    if not _COMPAT_DIRS.isdisjoint(folders):
        return "compat"
    if not _SECONDARY_DIRS.isdisjoint(folders):
        return "vendored"
    return None


# The folders and file-name words that mark code written for Windows alone: ``src/win/fs.c`` beside
# ``src/unix/fs.c``, Go's ``exec_windows.go``, ``fs-win32.c``.
_WINDOWS_WORDS = frozenset({"win", "win32", "win64", "windows"})
_NAME_WORDS = re.compile(r"[-_.]")


@lru_cache(maxsize=65536)
def is_windows_path(path: str) -> bool:
    """Code for Windows alone, by a folder named for it or a word of the file's name (not its extension):
    cross-platform code keeps a second implementation of the same behaviour there."""
    return _is_windows(path.rpartition("/")[2].lower(), _folders(path))


def _is_windows(lowered_name: str, folders: list[str]) -> bool:
    return not (_WINDOWS_WORDS.isdisjoint(folders)
                and _WINDOWS_WORDS.isdisjoint(_NAME_WORDS.split(lowered_name.rsplit(".", 1)[0])))


_NOT_SOURCE_DIRS = TEST_DIRS | _EXAMPLE_DIRS | _DOC_DIRS
# A licence file: ``LICENSE``, ``COPYING``, ``LICENSE-MIT``, ``ICU-license.html`` (not ``license-checks.sh``).
_LICENCE_NAME = re.compile(r"(?:[\w-]+[-_.])?(?:licen[cs]e|copying)(?:[-_.][\w-]+)?(?:\.(?:txt|md|rst|html?))?",
                           re.IGNORECASE)


def vendored_folders(paths: Iterable[str], code_folders: set[str] | frozenset[str]) -> frozenset[str]:
    """Folders that carry their own licence inside a folder of the project's own code (``code_folders``, the
    folders holding its source files): ``src/decNumber/`` beside ``src/execute.c``, a third-party library copied
    in, whatever its name. A package of a monorepo (``packages/zod/LICENSE``) sits in a folder without code of
    its own, and a licence in the documentation, the tests or the root says nothing of the kind."""
    found = set()
    for path in paths:
        folder, _, name = path.rpartition("/")
        if not _LICENCE_NAME.fullmatch(name):
            continue
        parent = folder.rpartition("/")[0]
        if parent and parent in code_folders and not _NOT_SOURCE_DIRS.intersection(folder.lower().split("/")):
            found.add(folder)
    return frozenset(found)


# A folder named for a major version of the code it holds.
_MAJOR_DIR = re.compile(r"v(\d+)", re.IGNORECASE)


def older_version_folders(paths: Iterable[str]) -> frozenset[str]:
    """Folders holding a major version of some code beside a folder with a later one (zod's ``src/v3/`` beside
    ``src/v4/``): the older is kept for compatibility, and a question that names no version means the current
    one. A lone version folder (Go's ``v2/`` module) has no sibling to be older than."""
    folders = set()
    for path in paths:
        folder = path.rpartition("/")[0]
        while folder and folder not in folders:
            folders.add(folder)
            folder = folder.rpartition("/")[0]
    versions: dict[str, list[tuple[int, str]]] = {}
    for folder in folders:
        parent, _, name = folder.rpartition("/")
        if match := _MAJOR_DIR.fullmatch(name):
            versions.setdefault(parent, []).append((int(match.group(1)), folder))
    return frozenset(folder for siblings in versions.values() for number, folder in siblings
                     if number < max(siblings)[0])


# A folder that names a version of what it holds (``v1.6``, ``2.x``, ``latest``), and, among documents, a folder
# that names a translation (``en``, ``pt-br``, ``zh_CN``).
_VERSION_DIR = re.compile(r"v?\d+(?:[._]\d+|[._]x)*|latest|stable|next|dev", re.IGNORECASE)
_LOCALE_DIR = re.compile(r"[a-z]{2}(?:[-_][a-zA-Z]{2,4})?")


@lru_cache(maxsize=65536)
def copy_family(path: str) -> str | None:
    """The family of parallel copies a file belongs to, or None: the path with its version folders (and, for
    a document, its translation folders) written as ``*``, so ``docs/v1.5/manual.yml`` and
    ``docs/v1.6/manual.yml`` are one family, as are ``docs/en/api.md`` and ``docs/ko/api.md``. Ranking lets
    the best of a family through and lowers the rest, so that versions of one text do not fill an answer."""
    parts = path.split("/")
    prose = is_prose_path(path)
    folders = ["*" if _VERSION_DIR.fullmatch(part) or (prose and _LOCALE_DIR.fullmatch(part)) else part
               for part in parts[:-1]]
    if "*" not in folders:
        return None
    return "/".join([*folders, parts[-1]])


def is_barrel_path(path: str) -> bool:
    """A package's re-export file (``__init__.py``, ``index.ts``, ``mod.rs``): its names live elsewhere."""
    return path.rsplit("/", 1)[-1] in _BARREL_NAMES


def is_primary_path(path: str) -> bool:
    """Source proper: not a test, an example or prose, which often repeat what the source defines."""
    return not (is_test_path(path) or is_example_path(path) or is_prose_path(path))


class PathKind(NamedTuple):
    """What a path alone says, every test of this module at once: a ranking asks it of a few hundred new paths
    a question, and one by one the tests lowered and split each path six times (9.0 against 5.8 µs a path)."""

    prose: bool
    unknown: bool
    code: bool
    test: bool
    example: bool
    windows: bool
    # A secondary copy's kind (``secondary_kind``), or "barrel" for a re-export file, or None.
    copy: str | None

    @classmethod
    def of(cls, path: str) -> PathKind:
        name = path.rpartition("/")[2]
        *folders, lowered_name = path.lower().split("/")
        language = language_for_path(path)
        prose = language in PROSE_LANGUAGES
        unknown = not prose and language == "other"
        test = _is_test(name, folders)
        copy = _secondary(lowered_name, folders) or ("barrel" if name in _BARREL_NAMES else None)
        return cls(prose, unknown, not prose and not unknown and _is_code(language, name), test,
                   not test and _is_example(folders, prose), _is_windows(lowered_name, folders), copy)
