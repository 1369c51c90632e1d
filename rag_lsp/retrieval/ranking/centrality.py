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
``MAX_DEFINITIONS`` files links them). It is rebuilt when files were added or
removed, and otherwise reused while edits only change file contents: a prior
does not need to follow every keystroke.
"""

from __future__ import annotations

import weakref
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

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


_CACHE: weakref.WeakKeyDictionary[Index, Graph] = weakref.WeakKeyDictionary()


def graph(index: Index) -> Graph:
    """The graph of the index's files; call under ``index.lock``."""
    known = _CACHE.get(index)
    if known is not None and known.files == frozenset(index.files):
        return known
    built = _build(index)
    _CACHE[index] = built
    return built


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


def _build(index: Index) -> Graph:
    paths = tuple(sorted(index.files))
    number = {path: position for position, path in enumerate(paths)}
    links: dict[int, set[int]] = defaultdict(set)
    definers: dict[str, set[str]] = defaultdict(set)
    for name in index.symbols.names():
        files = {d.path for d in index.symbols.by_name(name)}
        if len(files) <= MAX_DEFINITIONS:
            definers[name] = files
    for path in paths:
        source = number[path]
        for item in index.imports.get(path, ()):
            for target in index.symbols.modules.resolve(item.module, path, path)[:1]:
                if target in number and target != path:
                    links[source].add(number[target])
        for reference in index.references.get(path, ()):
            for target in definers.get(reference.name, ()):
                if target != path:
                    links[source].add(number[target])
    neighbours: dict[str, set[str]] = defaultdict(set)
    for source, targets in links.items():
        for target in targets:
            neighbours[paths[source]].add(paths[target])
            neighbours[paths[target]].add(paths[source])
    return Graph(frozenset(paths), paths, {path: frozenset(found) for path, found in neighbours.items()},
                 _pagerank(paths, links))


def _pagerank(paths: tuple[str, ...], links: dict[int, set[int]]) -> dict[str, float]:
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
