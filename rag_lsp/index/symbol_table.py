"""The symbol index: names and qualified names to definitions, modules to files.

Kept per file so one file's definitions can be replaced without touching the
rest, which is what the language server needs on every edit.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from rag_lsp.index.module_map import ModuleMap, python_module, segments
from rag_lsp.model import Definition, ParsedFile


def _definition_order(definition: Definition) -> tuple[str, int, str]:
    return definition.path, definition.start_line, definition.qualname


# A name's definitions: the one definition most names have, else a set of them. A set for every name cost a
# warm start of Django 65,000 sets (0.05 s, 14 MB), for 27,000 names and 38,000 qualified names.
_Bucket = Definition | set[Definition]


def _put(table: dict[str, _Bucket], key: str, definition: Definition) -> None:
    found = table.get(key)
    if found is None:
        table[key] = definition
    elif isinstance(found, set):
        found.add(definition)
    elif found != definition:
        table[key] = {found, definition}


def _take(table: dict[str, _Bucket], key: str, definition: Definition) -> None:
    found = table.get(key)
    if isinstance(found, set):
        found.discard(definition)
        if not found:
            del table[key]
    elif found is not None and found == definition:
        del table[key]


def _members(found: _Bucket | None) -> Iterable[Definition]:
    if found is None:
        return ()
    return found if isinstance(found, set) else (found,)


class SymbolIndex:
    """Definitions by name and by qualified name, plus the workspace's module map."""

    def __init__(self) -> None:
        self._by_file: dict[str, list[Definition]] = {}
        self._by_name: dict[str, _Bucket] = {}
        self._by_qualname: dict[str, _Bucket] = {}
        self.modules = ModuleMap()

    def __len__(self) -> int:
        return sum(len(defs) for defs in self._by_file.values())

    def add_file(self, parsed: ParsedFile, text_hint: str = "") -> None:
        """Index (or re-index) one file's definitions and module names.

        Re-indexing touches only the definitions that differ from the file's
        previous ones: after a keystroke most are equal, and those above the
        edit are the very same objects (``parsing/per_node.py``), which are
        told apart without hashing them.
        """
        old = self._by_file.get(parsed.path)
        if old is None:
            self._add(parsed.path, list(parsed.definitions), text_hint)
            return
        new = list(parsed.definitions)
        same = {id(definition) for definition in old} & {id(definition) for definition in new}
        removed = [definition for definition in old if id(definition) not in same]
        added = [definition for definition in new if id(definition) not in same]
        kept = set(removed) & set(added)
        for definition in removed:
            if definition not in kept:
                _take(self._by_name, definition.name, definition)
                _take(self._by_qualname, definition.qualname, definition)
        self._by_file[parsed.path] = new
        for definition in added:
            if definition not in kept:
                _put(self._by_name, definition.name, definition)
                _put(self._by_qualname, definition.qualname, definition)
        self.modules.add(parsed.path, text_hint)

    def load(self, paths: Iterable[str], definitions: dict[str, list[Definition]], hints: dict[str, str]) -> None:
        """Add files not indexed yet in bulk (a snapshot's): each path's definitions and module-name hint."""
        paths = list(paths)
        for path in paths:
            self._add_definitions(path, definitions.get(path, []))
        self.modules.load(paths, hints)

    def _add(self, path: str, definitions: list[Definition], text_hint: str) -> None:
        self._add_definitions(path, definitions)
        self.modules.add(path, text_hint)

    def _add_definitions(self, path: str, definitions: list[Definition]) -> None:
        self._by_file[path] = definitions
        by_name, by_qualname = self._by_name, self._by_qualname
        for definition in definitions:
            _put(by_name, definition.name, definition)
            _put(by_qualname, definition.qualname, definition)

    def remove_file(self, path: str) -> None:
        for definition in self._by_file.pop(path, ()):
            _take(self._by_name, definition.name, definition)
            _take(self._by_qualname, definition.qualname, definition)
        self.modules.remove(path)


    def in_file(self, path: str) -> list[Definition]:
        return list(self._by_file.get(path, ()))

    def by_name(self, name: str) -> list[Definition]:
        return sorted(_members(self._by_name.get(name)), key=_definition_order)

    def count(self, name: str) -> int:
        """How many definitions ``name`` has, without sorting them as ``by_name`` does: rankings that take a
        name's definitions only when they are few ask this first (at 100,000 files a common name has
        thousands)."""
        found = self._by_name.get(name)
        return 0 if found is None else len(found) if isinstance(found, set) else 1

    def files_defining(self, name: str, most: int) -> set[str] | None:
        """The files defining ``name`` (none: empty), or None when more than ``most`` do."""
        found = self._by_name.get(name)
        if found is None:
            return set()
        if not isinstance(found, set):
            return {found.path}
        paths: set[str] = set()
        for definition in found:
            paths.add(definition.path)
            if len(paths) > most:
                return None
        return paths

    def lookup(self, text: str) -> list[Definition]:
        """Definitions a name as written in prose or code refers to, most specific first.

        Accepts ``post``, ``Ledger.post``, ``Ledger::post``, ``Ledger#post`` and
        fully qualified ``pkg.ledger.Ledger.post``: the longest trailing run
        of segments that is a known qualified name wins, narrowed to the files
        of the leading module segments when those resolve.
        """
        parts = segments(text.replace("#", "."))
        for start in range(len(parts)):
            qualname = ".".join(parts[start:])
            found = self._by_qualname.get(qualname)
            if found is None:
                continue
            found_sorted = sorted(_members(found), key=_definition_order)
            if start == 0:
                return found_sorted
            narrowed = self._narrow_by_module(found_sorted, ".".join(parts[:start]))
            return narrowed or found_sorted
        return []

    def _narrow_by_module(self, definitions: list[Definition], module: str) -> list[Definition]:
        files = set(self.modules.resolve(module))
        return [d for d in definitions if d.path in files]

    def names(self) -> Iterable[str]:
        return self._by_name.keys()

    def module_name(self, path: str) -> str | None:
        """A display name for a file's module (Python dotted form where it applies)."""
        return python_module(path)


V = TypeVar("V")


def discard(table: dict[str, set[V]], key: str, value: V) -> None:
    """Take ``value`` out of ``table[key]``, and the key out of the table once its set is empty (the lookup
    tables and the code graph's links keep no empty sets; the symbol index's own tables use ``_take``)."""
    bucket = table.get(key)
    if bucket is not None:
        bucket.discard(value)
        if not bucket:
            del table[key]
