"""Map module paths as written in code to the files of the workspace.

Every language names modules differently (``django.db.models``,
``./util/date``, ``github.com/acme/shop/cart``, ``crate::config``,
``com.acme.Orders``, ``"net/http.h"``), but all of them end in path segments
that also end a file's path once layout noise is removed. So one rule serves
all: split both into segments and find the files whose module key shares the
longest run of trailing segments with the module, preferring keys that match
completely. Language-specific parts are only how a path becomes a key and how
relative imports are anchored.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import PurePosixPath

from rag_lsp import languages

# File stems that stand for their directory (``pkg/__init__.py`` is ``pkg``), by file suffix:
# Rust's ``lib.rs``/``main.rs`` are crate roots, but ``lib.ts`` or ``main.py`` are ordinary modules.
_DIRECTORY_STEMS = frozenset({"__init__", "index", "mod"})
_RUST_ROOT_STEMS = frozenset({"lib", "main"})


def name_and_suffix(path: str) -> tuple[str, str]:
    """A relative path's file name and its suffix as ``PurePosixPath`` gives them, without building one."""
    name = path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    return name, name[dot:] if 0 < dot < len(name) - 1 else ""


def is_directory_module(path: str) -> bool:
    """Whether a file stands for its directory (``__init__.py``, ``index.ts``, ``mod.rs``, ``lib.rs``)."""
    return _stands_for_directory(*name_and_suffix(path))


def _stands_for_directory(name: str, suffix: str) -> bool:
    stem = name.split(".", 1)[0]
    return stem in _DIRECTORY_STEMS or (suffix == ".rs" and stem in _RUST_ROOT_STEMS)


# Leading directories that hold code but are not part of module names.
LAYOUT_DIRS = (
    ("src", "main", "java"), ("src", "main", "kotlin"), ("src", "main", "scala"),
    ("src", "test", "java"), ("src", "test", "kotlin"), ("src",), ("lib",), ("source",), ("app",),
)
# The first segments of ``LAYOUT_DIRS``: a key that starts with none of them has no layout directory to drop.
_LAYOUT_HEADS = frozenset(layout[0] for layout in LAYOUT_DIRS)
_SEPARATORS = re.compile(r"::|[./\\]")
_JAVA_PACKAGE = re.compile(r"^\s*package\s+([\w.]+)\s*;", re.MULTILINE)


def segments(module: str) -> list[str]:
    """``a.b::c/d`` → ``["a", "b", "c", "d"]`` with empty parts and quotes dropped."""
    return [part for part in _SEPARATORS.split(module.strip("\"'<>`")) if part]


def module_key(path: str) -> tuple[str, ...]:
    """A file's module segments: its path without extension and without a directory-module stem."""
    parts = [part for part in path.split("/")[:-1] if part and part != "."]
    name, suffix = name_and_suffix(path)
    if suffix == ".go" and parts:
        # A Go package is its directory: every file in it answers to the import path.
        return tuple(parts)
    stem = name.split(".", 1)[0] if not name.startswith(".") else name
    if not _stands_for_directory(name, suffix) or not parts:
        parts.append(stem)
    return tuple(parts)


def strip_layout(key: tuple[str, ...]) -> tuple[str, ...]:
    """Drop a leading layout directory (``src/``, ``src/main/java/``...) from a module key."""
    if not key or key[0] not in _LAYOUT_HEADS:
        return key
    for layout in LAYOUT_DIRS:
        if key[: len(layout)] == layout and len(key) > len(layout):
            return key[len(layout):]
    return key


def python_module(path: str) -> str | None:
    """The dotted module a Python file is importable as (layout directories removed)."""
    if not path.endswith((".py", ".pyi")):
        return None
    return ".".join(strip_layout(module_key(path)))


def language_family(path: str) -> str:
    """The family of a path's language: files of one family may import each other."""
    return _family_of_name(path.rsplit("/", 1)[-1])


@lru_cache(maxsize=1 << 16)
def _family_of_name(name: str) -> str:
    # A language is decided by the file name alone, and workspaces repeat names (``__init__.py``, ``models.py``).
    return languages.spec(languages.language_for_path(name)).family


# A file's module keys (the path's, then a Java package alias), each with its layout-free form.
_Entry = tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]


def _entry(path: str, text_hint: str) -> tuple[_Entry, str]:
    """A file's module keys, and the part of ``text_hint`` that gave it an alias (its Java package line)."""
    key = module_key(path)
    if path.endswith(".java") and (match := _JAVA_PACKAGE.search(text_hint)):
        alias = (*match.group(1).split("."), PurePosixPath(path).stem)
        return ((key, strip_layout(key)), (alias, strip_layout(alias))), match.group(0)
    return ((key, strip_layout(key)),), ""


class ModuleMap:
    """Module key → files, kept incrementally as files come and go.

    Everything ``resolve`` compares per candidate (the key without its layout
    directories, the language family, whether the file stands for its
    directory) is computed once when a file is added, and answers are
    remembered until the set of files or their keys change: building the code
    graph resolves every import of the workspace, most of them to the same few
    modules, and recomputing it all cost seconds on Django.
    """

    def __init__(self) -> None:
        self._by_last: dict[str, set[str]] = defaultdict(set)
        self._keys: dict[str, _Entry] = {}
        self._family: dict[str, str] = {}
        self._directory: dict[str, bool] = {}
        # The text that gave a file an alias (a Java package line), kept for the snapshot.
        self._hints: dict[str, str] = {}
        # (anchored module, importer's family) → answer, for the current files.
        self._answers: dict[tuple[tuple[str, ...], str | None], list[str]] = {}
        # Counts changes of what ``resolve`` can answer, so a caller that remembers resolutions knows when to stop.
        self.generation = 0

    def add(self, path: str, text_hint: str = "") -> None:
        """Register a file; ``text_hint`` is its leading text (read for Java packages)."""
        entry, hint = _entry(path, text_hint)
        if self._keys.get(path) == entry:
            return
        self.remove(path)
        self._answers.clear()
        self.generation += 1
        self._put(path, entry, hint)

    def load(self, paths: Iterable[str], hints: dict[str, str]) -> None:
        """Register many files not registered yet (a snapshot's), with the hints the snapshot kept for them:
        ``add`` per file, without its comparison with a previous entry and its per-file bookkeeping."""
        self._answers.clear()
        self.generation += 1
        for path in paths:
            self._put(path, *_entry(path, hints.get(path, "")))

    def _put(self, path: str, entry: _Entry, hint: str) -> None:
        if hint:
            self._hints[path] = hint
        self._keys[path] = entry
        self._family[path] = language_family(path)
        self._directory[path] = is_directory_module(path)
        by_last = self._by_last
        for key, _ in entry:
            by_last[key[-1] if key else ""].add(path)

    def remove(self, path: str) -> None:
        if path not in self._keys:
            return
        self._answers.clear()
        self.generation += 1
        self._hints.pop(path, None)
        self._family.pop(path, None)
        self._directory.pop(path, None)
        for key, _ in self._keys.pop(path, ()):
            last = key[-1] if key else ""
            bucket = self._by_last.get(last)
            if bucket is not None:
                bucket.discard(path)
                if not bucket:
                    del self._by_last[last]

    def hint(self, path: str) -> str:
        """The text that gave a file an extra module name (its Java ``package`` line), or ""."""
        return self._hints.get(path, "")

    def resolve(self, module: str, from_path: str | None = None, importer: str | None = None) -> list[str]:
        """Files that a module reference most likely means, best first (ties by path).

        Relative references (``./x``, ``../x``, Python's ``.x``, Rust's
        ``self::``/``super::``) are anchored at ``from_path``'s directory.
        With ``importer`` (a file of the language that imports), only files its
        language family can import are candidates: Python's ``from shop import
        audit`` does not mean ``web/shop.ts``.
        """
        wanted = self._anchor(module, from_path)
        if not wanted:
            return []
        family = None if importer is None else self._family.get(importer) or language_family(importer)
        known = self._answers.get((wanted, family))
        if known is None:
            known = self._answers[(wanted, family)] = self._resolve(wanted, family)
        return list(known)

    def _resolve(self, wanted: tuple[str, ...], family: str | None) -> list[str]:
        best: list[tuple[int, str]] = []
        # Try the full module, then drop trailing segments: ``pkg.mod.Class``
        # names a class inside ``pkg/mod.py``.
        for drop in range(min(len(wanted), 3)):
            target = wanted[: len(wanted) - drop]
            for path in sorted(self._candidates(target[-1])):
                if family is not None and self._family[path] != family:
                    continue
                score = self._score(target, path)
                if score:
                    best.append((score * 10 - drop, path))
            if best:
                break
        # On a tie a file beats a directory's module (``./lib`` is ``lib.ts`` before ``lib/index.ts``),
        # as in Node's resolution.
        directory = self._directory
        best.sort(key=lambda item: (-item[0], directory[item[1]], item[1]))
        top = best[0][:1] + (directory[best[0][1]],) if best else None
        return [path for score, path in best if (score, directory[path]) == top]

    def _candidates(self, last: str) -> set[str]:
        return self._by_last.get(last, set())

    def _score(self, target: tuple[str, ...], path: str) -> int:
        """Trailing segments shared by the target and the file's key or alias (0 if none)."""
        score = 0
        for key, stripped in self._keys.get(path, ()):
            shared = common_suffix(target, key)
            # A match must cover the whole target or the whole (layout-free) key.
            if shared == len(target) or shared >= len(stripped):
                score = max(score, shared)
        return score

    def _anchor(self, module: str, from_path: str | None) -> tuple[str, ...]:
        module = module.strip().strip("\"'<>`")
        if module.startswith((".", "self::", "super::")) and from_path:
            base = from_path.split("/")[:-1]
            if module.startswith(("./", "../")):
                return _join_relative(base, module.split("/"))
            if module.startswith("."):
                dots = len(module) - len(module.lstrip("."))
                anchor = base[: len(base) - (dots - 1)] if dots > 1 else base
                return tuple(anchor) + tuple(segments(module.lstrip(".")))
            parts = module.split("::")
            while parts and parts[0] in ("self", "super"):
                if parts.pop(0) == "super" and base:
                    base.pop()
            return tuple(base) + tuple(p for p in parts if p)
        parts = segments(module)
        if parts and parts[0] == "crate":
            parts = parts[1:]
        return tuple(parts)


def _join_relative(base: list[str], parts: list[str]) -> tuple[str, ...]:
    result = list(base)
    for part in parts:
        if part == "..":
            if result:
                result.pop()
        elif part and part != ".":
            result.append(part.split(".", 1)[0] if part is parts[-1] else part)
    if result and result[-1] in _DIRECTORY_STEMS:
        result.pop()
    return tuple(result)


def common_suffix(a: Sequence[str], b: Sequence[str]) -> int:
    """How many trailing segments two segment sequences share."""
    count = 0
    for x, y in zip(reversed(a), reversed(b)):
        if x != y:
            break
        count += 1
    return count
