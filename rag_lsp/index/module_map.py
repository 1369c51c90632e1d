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
from collections.abc import Sequence
from pathlib import PurePosixPath

from rag_lsp import languages

# File stems that stand for their directory (``pkg/__init__.py`` is ``pkg``), by file suffix:
# Rust's ``lib.rs``/``main.rs`` are crate roots, but ``lib.ts`` or ``main.py`` are ordinary modules.
_DIRECTORY_STEMS = frozenset({"__init__", "index", "mod"})
_RUST_ROOT_STEMS = frozenset({"lib", "main"})


def is_directory_module(path: str) -> bool:
    """Whether a file stands for its directory (``__init__.py``, ``index.ts``, ``mod.rs``, ``lib.rs``)."""
    pure = PurePosixPath(path)
    stem = pure.name.split(".", 1)[0]
    return stem in _DIRECTORY_STEMS or (pure.suffix == ".rs" and stem in _RUST_ROOT_STEMS)
# Leading directories that hold code but are not part of module names.
LAYOUT_DIRS = (
    ("src", "main", "java"), ("src", "main", "kotlin"), ("src", "main", "scala"),
    ("src", "test", "java"), ("src", "test", "kotlin"), ("src",), ("lib",), ("source",), ("app",),
)
_SEPARATORS = re.compile(r"::|[./\\]")
_JAVA_PACKAGE = re.compile(r"^\s*package\s+([\w.]+)\s*;", re.MULTILINE)


def segments(module: str) -> list[str]:
    """``a.b::c/d`` → ``["a", "b", "c", "d"]`` with empty parts and quotes dropped."""
    return [part for part in _SEPARATORS.split(module.strip("\"'<>`")) if part]


def module_key(path: str) -> tuple[str, ...]:
    """A file's module segments: its path without extension and without a directory-module stem."""
    pure = PurePosixPath(path)
    parts = list(pure.parent.parts)
    if pure.suffix == ".go" and parts:
        # A Go package is its directory: every file in it answers to the import path.
        return tuple(parts)
    stem = pure.name.split(".", 1)[0] if not pure.name.startswith(".") else pure.name
    if not is_directory_module(path) or not parts:
        parts.append(stem)
    return tuple(parts)


def strip_layout(key: tuple[str, ...]) -> tuple[str, ...]:
    """Drop a leading layout directory (``src/``, ``src/main/java/``...) from a module key."""
    for layout in LAYOUT_DIRS:
        if key[: len(layout)] == layout and len(key) > len(layout):
            return key[len(layout):]
    return key


def python_module(path: str) -> str | None:
    """The dotted module a Python file is importable as (layout directories removed)."""
    if not path.endswith((".py", ".pyi")):
        return None
    return ".".join(strip_layout(module_key(path)))


class ModuleMap:
    """Module key → files, kept incrementally as files come and go."""

    def __init__(self) -> None:
        self._by_last: dict[str, set[str]] = defaultdict(set)
        self._keys: dict[str, tuple[str, ...]] = {}
        # Extra names a file answers to: a Java package, a Go module path.
        self._aliases: dict[str, tuple[str, ...]] = {}

    def add(self, path: str, text_hint: str = "") -> None:
        """Register a file; ``text_hint`` is its leading text (read for Java packages)."""
        self.remove(path)
        key = module_key(path)
        self._keys[path] = key
        self._by_last[key[-1] if key else ""].add(path)
        if path.endswith(".java") and (match := _JAVA_PACKAGE.search(text_hint)):
            alias = (*match.group(1).split("."), PurePosixPath(path).stem)
            self._aliases[path] = alias
            self._by_last[alias[-1]].add(path)

    def remove(self, path: str) -> None:
        for key in (self._keys.pop(path, None), self._aliases.pop(path, None)):
            if key:
                self._by_last[key[-1]].discard(path)

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
        best: list[tuple[int, str]] = []
        # Try the full module, then drop trailing segments: ``pkg.mod.Class``
        # names a class inside ``pkg/mod.py``.
        for drop in range(min(len(wanted), 3)):
            target = wanted[: len(wanted) - drop]
            for path in sorted(self._candidates(target[-1])):
                if importer is not None and not languages.same_family(path, importer):
                    continue
                score = self._score(target, path)
                if score:
                    best.append((score * 10 - drop, path))
            if best:
                break
        # On a tie a file beats a directory's module (``./lib`` is ``lib.ts`` before ``lib/index.ts``),
        # as in Node's resolution.
        best.sort(key=lambda item: (-item[0], is_directory_module(item[1]), item[1]))
        top = best[0][:1] + (is_directory_module(best[0][1]),) if best else None
        return [path for score, path in best if (score, is_directory_module(path)) == top]

    def _candidates(self, last: str) -> set[str]:
        return self._by_last.get(last, set())

    def _score(self, target: tuple[str, ...], path: str) -> int:
        """Trailing segments shared by the target and the file's key or alias (0 if none)."""
        score = 0
        for key in (self._keys.get(path), self._aliases.get(path)):
            if not key:
                continue
            shared = common_suffix(target, key)
            stripped = strip_layout(key)
            # A match must cover the whole target or the whole (layout-free) key.
            if shared == len(target) or shared >= len(stripped):
                score = max(score, shared)
        return score

    def _anchor(self, module: str, from_path: str | None) -> tuple[str, ...]:
        module = module.strip().strip("\"'<>`")
        base = list(PurePosixPath(from_path).parent.parts) if from_path else []
        if module.startswith((".", "self::", "super::")) and from_path:
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
