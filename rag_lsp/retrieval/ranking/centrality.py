"""The code graph the index already knows: files linked by imports and by uses of what other files define.

Three things come from it (mindnet's graph expansion, aider's repository map):

- a **centrality prior**: PageRank over files, so that among places that match
  a question equally, the file the rest of the code leans on (the central
  class, the router) comes before a leaf that happens to share a word;
- an **edge bonus**: a file linked to a strong hit is more likely relevant than
  an unlinked file with the same score;
- the **dependencies** of the top places: the definitions their code uses from
  other files, which a reader needs to follow them.

The graph's edges are the index's file links (``index/store/code_links.py``: imports
resolved through the module map, and uses of a name defined in at most
``MAX_DEFINITIONS`` files), which are kept per index, updated after edits and
loaded from the snapshot on a warm start. The graph always describes the index
as it is now — a question after an edit gets the answer a fresh index of the
same text gets — and PageRank runs again only when a link changed.
"""

from __future__ import annotations

import weakref
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from rag_lsp.index.root_index import Index
from rag_lsp.index.store.code_links import file_links
from rag_lsp.model import Definition

DAMPING = 0.85
ITERATIONS = 30
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


# The graph last built for an index, with the ``changes`` count of the links it was built from.
_CACHE: weakref.WeakKeyDictionary[Index, tuple[int, Graph]] = weakref.WeakKeyDictionary()


def graph(index: Index) -> Graph:
    """The graph of the index's files as they are now; call under ``index.lock``."""
    links = file_links(index)
    known = _CACHE.get(index)
    if known is not None and known[0] == links.changes:
        return known[1]
    built = _graph_of(tuple(sorted(index.files)), links.out)
    _CACHE[index] = links.changes, built
    return built


def question_graph(index: Index) -> Graph:
    """The graph a question uses; call under ``index.lock``. While a refresh is under way it is the graph as
    last built (none before the first): each batch of new files defines names that many indexed files use, and
    linking those files again for every question asked during indexing cost Django's questions seconds (and
    held the index's lock, so indexing waited). The refresh's end builds it anew (``Session.prepare_answers``)."""
    if index.refreshing:
        known = _CACHE.get(index)
        return known[1] if known is not None else _EMPTY
    return graph(index)


_EMPTY = Graph(frozenset(), (), {}, {})


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
        # The files defining the name, counted only up to two (a common name has thousands of definitions).
        others = index.symbols.files_defining(reference.name, 2)
        if others is None:
            continue
        others.discard(path)
        if len(others) == 1 and (other := others.pop()) not in taken:
            found.append(next(d for d in index.symbols.by_name(reference.name) if d.path == other))
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
