"""The code graph the index already knows: files linked by imports and by uses of what other files define.

Three things come from it (mindnet's graph expansion, aider's repository map):

- a **centrality prior**: PageRank over files, so that among places that match
  a question equally, the file the rest of the code leans on (the central
  class, the router) comes before a leaf that happens to share a word;
- an **edge bonus**: a file linked to a strong hit is more likely relevant than
  an unlinked file with the same score;
- the **dependencies** of the top places: the definitions their code uses from
  other files, which a reader needs to follow them.

The graph is built from the index's imports (resolved through the module map)
and references (a name used in one file and defined in at most
``MAX_DEFINITIONS`` files links them). It always describes the index as it is
now — a question after an edit gets the answer a fresh index of the same text
gets — but it is not rebuilt per keystroke: after edits that change file
contents only, the links of the changed files and of the files using a name
whose definers changed are recomputed, then PageRank runs again (after an edit
of Django's ``db/models/query.py``, 34 ms where the first build took 0.8 s, on
a loaded 2-core machine). Files added or removed, or module names that changed,
rebuild it.
"""

from __future__ import annotations

import weakref
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from rag_lsp.index.gc_pause import paused_gc
from rag_lsp.index.root_index import Index
from rag_lsp.model import Definition

DAMPING = 0.85
ITERATIONS = 30
# A name defined in more files than this links nothing (``get``, ``run``): it says nothing about which file.
MAX_DEFINITIONS = 3
# Dependencies of one place, and the names of a place looked at for them.
DEPENDENCIES_PER_PLACE = 2
NAMES_PER_PLACE = 40


@dataclass(frozen=True, slots=True)
class Graph:
    """Files by number, their links, and each file's centrality scaled so the most central is 1."""

    files: frozenset[str]
    paths: tuple[str, ...]
    neighbours: dict[str, frozenset[str]]
    centrality: dict[str, float]


@dataclass(slots=True)
class _Links:
    """What a graph was computed from, kept to update it after edits: the text of each file (its blob id), the
    names each file defines and uses with their reverse maps, and each file's outgoing links."""

    version: tuple[int, int]
    modules: int
    blobs: dict[str, str]
    defined: dict[str, frozenset[str]]
    definers: dict[str, set[str]]
    used: dict[str, frozenset[str]]
    users: dict[str, set[str]]
    out: dict[str, frozenset[str]]
    graph: Graph


_CACHE: weakref.WeakKeyDictionary[Index, _Links] = weakref.WeakKeyDictionary()


def graph(index: Index) -> Graph:
    """The graph of the index's files as they are now; call under ``index.lock``."""
    known = _CACHE.get(index)
    version = index.version
    if known is not None and known.version == version:
        return known.graph
    # The first graph of an index is built once and lives as long as the index.
    first = known is None
    if known is None or known.modules != index.symbols.modules.generation or known.blobs.keys() != index.files.keys():
        known = _Links(version, index.symbols.modules.generation, {}, {}, defaultdict(set), {}, defaultdict(set), {},
                       Graph(frozenset(), (), {}, {}))
    with paused_gc(keep=first):
        _update(index, known)
    known.version = version
    _CACHE[index] = known
    return known.graph


def _update(index: Index, links: _Links) -> None:
    """Bring ``links`` to the index's current files: the names of the changed files, then the links of every
    file whose links can have changed, then the graph."""
    changed = sorted(path for path, entry in index.files.items() if links.blobs.get(path) != entry.blob_id)
    renamed: set[str] = set()
    for path in changed:
        defined = frozenset(d.name for d in index.symbols.in_file(path))
        old = links.defined.get(path, frozenset())
        for name in old - defined:
            _drop(links.definers, name, path)
        for name in defined - old:
            links.definers[name].add(path)
        renamed |= old ^ defined
        used = frozenset(r.name for r in index.references.get(path, ()))
        for name in links.used.get(path, frozenset()) - used:
            _drop(links.users, name, path)
        for name in used:
            links.users[name].add(path)
        links.defined[path], links.used[path] = defined, used
        links.blobs[path] = index.files[path].blob_id
    affected = set(changed).union(*(links.users.get(name, ()) for name in renamed))
    for path in affected:
        links.out[path] = _links_of(index, path, links.used.get(path, frozenset()), links.definers)
    if affected or not links.graph.paths:
        links.graph = _graph_of(tuple(sorted(index.files)), links.out)


def _drop(table: dict[str, set[str]], name: str, path: str) -> None:
    found = table.get(name)
    if found is not None:
        found.discard(path)
        if not found:
            del table[name]


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


def dependencies(index: Index, path: str, start_line: int, end_line: int, taken: set[str]) -> list[Definition]:
    """Definitions in other files that the code of ``path`` between the lines uses, at most
    ``DEPENDENCIES_PER_PLACE``, in the order it first uses them; names defined in more than one file and
    files in ``taken`` are left out."""
    found: list[Definition] = []
    seen: set[str] = set()
    for reference in index.references.get(path, ()):
        if not start_line <= reference.line <= end_line or reference.name in seen:
            continue
        seen.add(reference.name)
        if len(seen) > NAMES_PER_PLACE:
            break
        defined = [d for d in index.symbols.by_name(reference.name) if d.path != path]
        if len({d.path for d in defined}) == 1 and defined[0].path not in taken:
            found.append(defined[0])
            if len(found) == DEPENDENCIES_PER_PLACE:
                break
    return found


def _graph_of(paths: tuple[str, ...], out: dict[str, frozenset[str]]) -> Graph:
    """Neighbours and centrality from the outgoing links, in path order (the same links give the same floats)."""
    number = {path: position for position, path in enumerate(paths)}
    links = {number[path]: sorted(number[target] for target in out.get(path, ()) if target in number)
             for path in paths}
    neighbours: dict[str, set[str]] = defaultdict(set)
    for path in paths:
        for target in out.get(path, ()):
            if target in number:
                neighbours[path].add(target)
                neighbours[target].add(path)
    return Graph(frozenset(paths), paths, {path: frozenset(found) for path, found in neighbours.items()},
                 _pagerank(paths, {source: targets for source, targets in links.items() if targets}))


def _pagerank(paths: tuple[str, ...], links: dict[int, list[int]]) -> dict[str, float]:
    """PageRank by power iteration; a file's rank flows along the links it makes (what it uses)."""
    count = len(paths)
    if not count:
        return {}
    sources = np.array([s for s, targets in links.items() for _ in targets], dtype=np.int64)
    targets = np.array([t for _, found in links.items() for t in found], dtype=np.int64)
    out_degree = np.bincount(sources, minlength=count).astype(float) if len(sources) else np.zeros(count)
    rank = np.full(count, 1.0 / count)
    for _ in range(ITERATIONS):
        share = np.divide(rank, out_degree, out=np.zeros(count), where=out_degree > 0)
        flowing = np.bincount(targets, weights=share[sources], minlength=count) if len(sources) else np.zeros(count)
        dangling = rank[out_degree == 0].sum()
        rank = (1 - DAMPING) / count + DAMPING * (flowing + dangling / count)
    top = rank.max()
    return {path: float(value / top) for path, value in zip(paths, rank)}
