"""Which files lean on which: a file links to what its imports resolve to and to the files defining the names
it uses (a name defined in more than ``MAX_DEFINITIONS`` files links nothing: ``get``, ``run``).

The links are the code graph's edges (``retrieval/ranking/centrality.py``). Computing them resolves every
import of the workspace and looks up every name used, about a second of a warm start on Django, so they are
kept per index and saved in the snapshot beside the files they were computed from: a warm start loads them.
They always describe the index as it is now: after edits that change file contents only, the links of the
changed files and of the files using a name whose definers changed are recomputed. Files added or removed, or
module names that changed, recompute them all.

To update, the names a changed file defined before and defines now tell which names changed their definers,
and the files using those names are linked again. The names each file used or defined when the links were
made are not kept for every file: a file not changed since then defined what the definitions the links were
computed from say (a snapshot's, kept as the lists the index held then), and the users of a name are read
from the snapshot's reference columns plus the files changed since. Only the files changed since are
recorded here. (Until 2026-12-03 the first edit after a warm start derived every file's names and the
reverse maps at once: the first question after it took 200 ms instead of 30 on Django.)
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rag_lsp.gc_pause import paused_gc
from rag_lsp.index.symbol_table import discard
from rag_lsp.model import Definition

if TYPE_CHECKING:
    from rag_lsp.index.root_index import Index

# A name defined in more files than this links nothing: it says nothing about which file.
MAX_DEFINITIONS = 3


@dataclass(slots=True)
class _Names:
    """The names each file changed since the links were made defines and uses, and which of those files use
    each name."""

    defined: dict[str, frozenset[str]] = field(default_factory=dict)
    used: dict[str, frozenset[str]] = field(default_factory=dict)
    users: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))

    def set_file(self, path: str, before: frozenset[str], defined: frozenset[str],
                 used: frozenset[str]) -> frozenset[str]:
        """Record a file's names (``before`` is what it defined until now); returns the names it started or
        stopped defining."""
        for name in self.used.get(path, frozenset()) - used:
            discard(self.users, name, path)
        for name in used:
            self.users[name].add(path)
        self.defined[path], self.used[path] = defined, used
        return before ^ defined


@dataclass(slots=True)
class CodeLinks:
    """Each file's outgoing links, the blob ids they were computed from, and what it takes to update them.

    ``changes`` counts updates that changed any link, so a caller deriving something from the links (the
    graph's centrality) knows when to derive it again.
    """

    version: tuple[int, int]
    modules: int
    blobs: dict[str, str]
    out: dict[str, frozenset[str]]
    names: _Names = field(default_factory=_Names)
    # The definitions the links were computed from (a snapshot's), for what the files not changed since define.
    basis: Mapping[str, Sequence[Definition]] | None = None
    changes: int = 0


def file_links(index: Index) -> CodeLinks:
    """The links of the index's files as they are now; call under ``index.lock``."""
    known = index.links
    version = index.version
    if known is not None and known.version == version:
        return known
    # The first links of an index are built once and live as long as the index.
    first = known is None
    if known is None or known.modules != index.symbols.modules.generation or known.blobs.keys() != index.files.keys():
        known = CodeLinks(version, index.symbols.modules.generation, {}, {},
                          changes=known.changes + 1 if known else 0)
    with paused_gc(keep=first):
        _update(index, known)
    known.version = version
    index.links = known
    return known


def loaded_links(index: Index, out: dict[str, frozenset[str]], definitions: Mapping[str, Sequence[Definition]]) \
        -> CodeLinks:
    """Links read from a snapshot just installed in ``index``, with the definitions (as the snapshot held them)
    they were computed from."""
    blobs = {path: entry.blob_id for path, entry in index.files.items()}
    return CodeLinks(index.version, index.symbols.modules.generation, blobs, out, basis=definitions)


def _update(index: Index, links: CodeLinks) -> None:
    """Bring ``links`` to the index's current files: the names of the changed files, then the links of every
    file whose links can have changed."""
    files = index.files
    # After an edit, the files the index's journal names; links made afresh (no blobs yet) compare them all.
    journal = index.changed_since(links.version) if links.blobs else None
    candidates = files.keys() if journal is None else [path for path in dict.fromkeys(journal) if path in files]
    changed = sorted(path for path in candidates if links.blobs.get(path) != files[path].blob_id)
    if not changed:
        return
    names, basis = links.names, links.basis
    renamed: set[str] = set()
    for path in changed:
        before = names.defined.get(path)
        if before is None:
            before = frozenset(d.name for d in basis.get(path, ())) if basis is not None else frozenset()
        defined = frozenset(d.name for d in index.symbols.in_file(path))
        used = frozenset(r.name for r in index.references.get(path, ()))
        renamed |= names.set_file(path, before, defined, used)
        links.blobs[path] = files[path].blob_id
    affected = set(changed)
    if renamed and len(affected) < len(files):
        # Each changed file adds or removes one definer of a name at most, so a name defined in more than
        # ``MAX_DEFINITIONS + len(changed)`` files now was defined in more than ``MAX_DEFINITIONS`` before too:
        # it linked nothing and links nothing, and its users (``get``: most files) need no new links.
        most = MAX_DEFINITIONS + len(changed)
        affected |= _users(index, names, {name for name in renamed
                                          if index.symbols.files_defining(name, most) is not None})
    moved = False
    for path in affected:
        used = names.used.get(path)
        if used is None:
            used = frozenset(r.name for r in index.references.get(path, ()))
        out = _links_of(index, path, used)
        if links.out.get(path) != out:
            links.out[path] = out
            moved = True
    # Most edits change a file's text but none of its links (a keystroke in a body): the graph derived from the
    # links stays as it is, where counting every update cost the next question on Django a PageRank (50 ms).
    if moved:
        links.changes += 1


def _users(index: Index, names: _Names, renamed: set[str]) -> set[str]:
    """The files using any of ``renamed`` now: the files changed since the links were made, by their names,
    and the others by the snapshot's reference columns."""
    found: set[str] = set()
    for name in renamed:
        found |= names.users.get(name, set())
    references = index.references
    if references.stored is not None:
        found.update(path for path in references.stored.files_using(renamed) if references.is_stored(path))
    return found


def _links_of(index: Index, path: str, used: frozenset[str]) -> frozenset[str]:
    """The files ``path`` leans on: what its imports resolve to, and the files that define the names it uses
    (a name defined in more than ``MAX_DEFINITIONS`` files links nothing)."""
    found: set[str] = set()
    for item in index.imports.get(path, ()):
        for target in index.symbols.modules.resolve(item.module, path, path)[:1]:
            if target in index.files:
                found.add(target)
    for name in used:
        targets = index.symbols.files_defining(name, MAX_DEFINITIONS)
        if targets:
            found |= targets
    found.discard(path)
    return frozenset(found)
