"""Names a file binds by importing, resolved through the import graph to definitions.

``file_bindings`` reads a file's imports (as indexed, aliases included) into
local name → ``Binding``; ``Resolver`` follows a binding to the definitions it
means: the module's files by the workspace's ``ModuleMap`` (relative imports
anchored at the importing file), then, when the name is not defined there,
re-exports (``from .x import a`` in ``__init__.py``, ``export {a} from "./a"``
and ``export * from`` in ``index.ts``) and submodules (``from pkg import mod``).
Modules outside the workspace resolve to nothing: a third-party ``Request``
must not be mistaken for a local one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath

from rag_lsp import languages
from rag_lsp.index.module_map import is_directory_module, module_key
from rag_lsp.model import Definition, Import

# How relative module references start (Python, JS/TS, Rust); see ModuleMap.resolve.
_RELATIVE = (".", "self::", "super::")
# Re-exports are followed this many files deep.
MAX_DEPTH = 5
MODULE = "*"

# How an import without names binds (Python: the module's first segment, or the
# whole dotted name; JS/TS: nothing, it runs for its side effects; C/C++/Ruby:
# everything in it becomes visible; others: the last segment, a package or class).
_BINDS_ALL = frozenset({"c", "cpp", "ruby"})
_BINDS_NOTHING = frozenset({"javascript", "typescript", "tsx"})


@dataclass(frozen=True, slots=True)
class Binding:
    """A local name bound by an import: ``imported`` is the module's name for it, or ``*`` for the module."""

    local: str
    module: str
    imported: str
    line: int

    @property
    def is_module(self) -> bool:
        return self.imported == MODULE


@dataclass(slots=True)
class FileBindings:
    names: dict[str, Binding] = field(default_factory=dict)
    # Modules whose every name is visible (``from m import *``, ``#include``).
    wildcards: list[Import] = field(default_factory=list)


def file_bindings(imports: list[Import], language: str) -> FileBindings:
    """What the imports of one file bind, by local name (the first import of a name wins)."""
    found = FileBindings()
    for item in imports:
        aliased = {name for name, local in item.aliases if name != MODULE}
        for name, local in item.aliases:
            if (name, local) == (MODULE, MODULE):
                found.wildcards.append(item)
            else:
                found.names.setdefault(local, Binding(local, item.module, name, item.line))
        for name in item.names:
            if name not in aliased:
                found.names.setdefault(name, Binding(name, item.module, name, item.line))
        if item.names or item.aliases:
            continue
        if language in _BINDS_ALL:
            found.wildcards.append(item)
        elif language == "python":
            found.names.setdefault(item.module, Binding(item.module, item.module, MODULE, item.line))
            first = item.module.split(".", 1)[0]
            found.names.setdefault(first, Binding(first, first, MODULE, item.line))
        elif language not in _BINDS_NOTHING:
            parts = [p for p in item.module.replace("::", "/").replace(".", "/").split("/") if p]
            if parts:
                found.names.setdefault(parts[-1], Binding(parts[-1], item.module, MODULE, item.line))
    return found


@dataclass(frozen=True, slots=True)
class Target:
    """What a name resolves to: definitions, or a module's files; ``via`` lists the re-exporting files."""

    definitions: tuple[Definition, ...] = ()
    modules: tuple[str, ...] = ()
    via: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.definitions or self.modules)


class Resolver:
    """Resolves names through one index's modules, symbols and imports (call under ``index.lock``)."""

    def __init__(self, index) -> None:
        self.index = index
        self.symbols = index.symbols
        self.modules = index.symbols.modules
        # Files consulted, for cache validation by the caller.
        self.consulted: set[str] = set()
        self._modules: dict[tuple[str, str | None, str | None], list[str]] = {}

    def module_files(self, module: str, from_path: str | None) -> list[str]:
        # A relative module depends on where it is imported from; any other only on the importer's language.
        importer = from_path
        if not module.startswith(_RELATIVE):
            from_path = None
        key = (module, from_path, languages.spec(languages.language_for_path(importer)).family if importer else None)
        files = self._modules.get(key)
        if files is None:
            files = self.modules.resolve(module, from_path, importer)
            if from_path is not None and module.startswith(("./", "../")):
                files = self._path_module(module, from_path, files)
            self._modules[key] = files
        self.consulted.update(files)
        return files

    def _path_module(self, module: str, from_path: str, files: list[str]) -> list[str]:
        """Repairs for a ``./x`` import: it never means the importing file itself, and ``./x`` may be a
        directory whose ``index.ts`` is the module when no file ``x.*`` exists."""
        files = [f for f in files if f != from_path]
        if not files and not module.endswith("/index"):
            files = [f for f in self.modules.resolve(module.rstrip("/") + "/index", from_path) if f != from_path]
        return files

    def binding(self, binding: Binding, from_path: str) -> Target:
        """What a binding of ``from_path`` means."""
        files = self.module_files(binding.module, from_path)
        if not files:
            return Target()
        if binding.is_module:
            return Target(modules=tuple(files))
        for path in files:
            found = self.in_file(path, binding.imported, 0, ())
            if found:
                return found
        return Target()

    def in_file(self, path: str, name: str, depth: int, via: tuple[str, ...]) -> Target:
        """``name`` as a module ``path`` defines or exports it."""
        self.consulted.add(path)
        defined = tuple(d for d in self.symbols.by_name(name) if d.path == path and d.container is None)
        if defined:
            return Target(definitions=defined, via=via)
        if depth >= MAX_DEPTH:
            return Target()
        imports = self.index.imports.get(path, ())
        for item in imports:
            for imported, local in item.aliases:
                if local == name and imported != MODULE:
                    found = self._follow(item, imported, path, depth, via)
                    if found:
                        return found
                elif local == name and imported == MODULE:
                    files = self.module_files(item.module, path)
                    if files:
                        return Target(modules=tuple(files), via=via + (path,))
            if name in item.names and not any(imported == name for imported, _ in item.aliases):
                found = self._follow(item, name, path, depth, via)
                if found:
                    return found
        for item in imports:
            if (MODULE, MODULE) in item.aliases:
                found = self._follow(item, name, path, depth, via)
                if found:
                    return found
        return self._submodule(path, name, via)

    def _follow(self, item: Import, name: str, path: str, depth: int, via: tuple[str, ...]) -> Target:
        for target in self.module_files(item.module, path):
            if target == path:
                continue
            found = self.in_file(target, name, depth + 1, via + (path,))
            if found:
                return found
        return Target()

    def _submodule(self, path: str, name: str, via: tuple[str, ...]) -> Target:
        """``from pkg import mod``: a package file (``__init__``, ``index``) names its directory's modules."""
        pure = PurePosixPath(path)
        if not is_directory_module(path):
            return Target()
        key = module_key(path)
        wanted = "/".join((*key, name)) if key != (pure.stem,) else name
        files = [f for f in self.module_files(wanted, None) if module_key(f)[-1:] == (name,)]
        return Target(modules=tuple(files), via=via) if files else Target()

    def attribute(self, target: Target, name: str) -> Target:
        """``x.name`` for a resolved ``x``: a module's member, or a class's member."""
        for path in target.modules:
            found = self.in_file(path, name, 0, target.via)
            if found:
                return found
        for owner in target.definitions:
            members = tuple(d for d in self.symbols.by_name(name)
                            if d.path == owner.path and d.container == owner.qualname)
            if members:
                return Target(definitions=members, via=target.via)
        return Target()

    def named_in_module(self, target: Target, name: str) -> Target:
        """A module bound under a name that it also defines (Java's ``import a.b.Foo``, a default export)."""
        for path in target.modules:
            defined = tuple(d for d in self.symbols.by_name(name) if d.path == path and d.container is None)
            if defined:
                return Target(definitions=defined, via=target.via)
        return Target()
