"""Which files lean on which: a file links to what its imports resolve to and to the files defining the names
it uses (a name defined in more than ``MAX_DEFINITIONS`` files links nothing: ``get``, ``run``).

The links are the code graph's edges (``retrieval/ranking/centrality.py``). Computing them resolves every
import of the workspace and looks up every name used, about a second of a warm start on Django, so they are
kept per index and saved in the snapshot beside the files they were computed from: a warm start loads them.
They always describe the index as it is now: after edits that change file contents only, the links of the
changed files and of the files using a name whose definers changed are recomputed. Files added or removed, or
module names that changed, recompute them all.

To update, the names each file defines and uses (and the reverse maps) are needed, with the names the changed
files had *before*. Links loaded from a snapshot keep the snapshot's definitions and references of each file
(the lists the index held then, not copies) and derive those names from them only when a first update needs
them: a warm start with nothing changed never does.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rag_lsp.gc_pause import paused_gc
from rag_lsp.index.symbol_table import discard
from rag_lsp.model import Definition, Reference

if TYPE_CHECKING:
    from rag_lsp.index.root_index import Index

# A name defined in more files than this links nothing: it says nothing about which file.
MAX_DEFINITIONS = 3


@dataclass(slots=True)
class _Names:
    """The names each file defines and uses, and the files defining and using each name."""

    defined: dict[str, frozenset[str]] = field(default_factory=dict)
    definers: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    used: dict[str, frozenset[str]] = field(default_factory=dict)
    users: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))

    def set_file(self, path: str, defined: frozenset[str], used: frozenset[str]) -> frozenset[str]:
        """Record a file's names; returns the names it started or stopped defining."""
        old = self.defined.get(path, frozenset())
        for name in old - defined:
            discard(self.definers, name, path)
        for name in defined - old:
            self.definers[name].add(path)
        for name in self.used.get(path, frozenset()) - used:
            discard(self.users, name, path)
        for name in used:
            self.users[name].add(path)
        self.defined[path], self.used[path] = defined, used
        return old ^ defined


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
    names: _Names | None
    # The definitions and references the links were computed from, while ``names`` is not built yet.
    basis: tuple[Mapping[str, Sequence[Definition]], Mapping[str, Sequence[Reference]]] | None = None
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
        known = CodeLinks(version, index.symbols.modules.generation, {}, {}, _Names(),
                          changes=known.changes + 1 if known else 0)
    with paused_gc(keep=first):
        _update(index, known)
    known.version = version
    index.links = known
    return known


def loaded_links(index: Index, out: dict[str, frozenset[str]], definitions: Mapping[str, Sequence[Definition]],
                 references: Mapping[str, Sequence[Reference]]) -> CodeLinks:
    """Links read from a snapshot just installed in ``index``, with the definitions and references (as the
    snapshot held them) they were computed from."""
    blobs = {path: entry.blob_id for path, entry in index.files.items()}
    return CodeLinks(index.version, index.symbols.modules.generation, blobs, out, None, (definitions, references))


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
    names = _names(links)
    renamed: set[str] = set()
    for path in changed:
        defined = frozenset(d.name for d in index.symbols.in_file(path))
        used = frozenset(r.name for r in index.references.get(path, ()))
        renamed |= names.set_file(path, defined, used)
        links.blobs[path] = index.files[path].blob_id
    affected = set(changed).union(*(names.users.get(name, ()) for name in renamed))
    moved = False
    for path in affected:
        out = _links_of(index, path, names.used.get(path, frozenset()), names.definers)
        if links.out.get(path) != out:
            links.out[path] = out
            moved = True
    # Most edits change a file's text but none of its links (a keystroke in a body): the graph derived from the
    # links stays as it is, where counting every update cost the next question on Django a PageRank (50 ms).
    if moved:
        links.changes += 1


def _names(links: CodeLinks) -> _Names:
    """The names of the files the links were computed from, derived from the basis the first time."""
    if links.names is None:
        links.names = _Names()
        definitions, references = links.basis or ({}, {})
        for path in links.blobs:
            links.names.set_file(path, frozenset(d.name for d in definitions.get(path, ())),
                                 frozenset(r.name for r in references.get(path, ())))
        links.basis = None
    return links.names




def _links_of(index: Index, path: str, used: frozenset[str], definers: dict[str, set[str]]) -> frozenset[str]:
    """The files ``path`` leans on: what its imports resolve to, and the files that define the names it uses
    (a name defined in more than ``MAX_DEFINITIONS`` files links nothing)."""
    found: set[str] = set()
    for item in index.imports.get(path, ()):
        for target in index.symbols.modules.resolve(item.module, path, path)[:1]:
            if target in index.files:
                found.add(target)
    for name in used:
        targets = definers.get(name)
        if targets is not None and len(targets) <= MAX_DEFINITIONS:
            found |= targets
    found.discard(path)
    return frozenset(found)
