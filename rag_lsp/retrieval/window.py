"""Context-window optimisation: the ranked places of one file reshaped so the answer spends tokens well.

After ranking, a file can hold places that are next to each other (a class
header and its first method), places that say the same thing (two overloads
that differ in a type), and more places than a reader needs. Three steps,
each switchable (``RankingConfig``) and each leaving a mark on the place it
changed:

- **merge**: places of one file closer than ``merge_gap`` lines become one place
  spanning both (``merged_from`` lists the places it absorbed);
- **dedupe**: a place whose words overlap an earlier place of the same file by
  more than ``duplicate_jaccard`` is dropped (``deduped_from`` on the kept one);
- **cap**: at most ``max_per_file`` places per file, the best ones
  (``file_capped`` on the file's last kept place).

Dependencies are left alone: they are shown after the ranked places.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from rag_lsp.index.outline import FileText
from rag_lsp.index.root_index import Index
from rag_lsp.model import Chunk
from rag_lsp.retrieval.rank import Candidate
from rag_lsp.retrieval.ranking.config import RankingConfig

_WORDS = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class Placed:
    """A ranked place as the answer shows it: the candidate, its chunk's description, its lines and text, read
    while the index was locked, and what context-window optimisation did to it."""

    candidate: Candidate
    chunk: Chunk
    root: str
    start_line: int
    end_line: int
    content: str
    merged_from: tuple[tuple[int, int], ...] = ()
    deduped_from: tuple[tuple[int, int], ...] = ()
    file_capped: bool = False


def placed(index: Index, candidate: Candidate) -> Placed:
    chunk = index.chunks[candidate.chunk_id]
    return Placed(candidate, chunk, str(index.root), chunk.start_line, chunk.end_line, chunk.content)


def optimise(index: Index, places: list[Placed], config: RankingConfig) -> list[Placed]:
    """Merge, dedupe and cap the places of each file, keeping the ranked order of what remains; call under the
    index's lock."""
    ranked = [p for p in places if p.candidate.role == "ranked"]
    others = [p for p in places if p.candidate.role != "ranked"]
    if config.window:
        ranked = _cap(_dedupe(_merge(index, ranked, config), config), config)
    return ranked + others


def _merge(index: Index, places: list[Placed], config: RankingConfig) -> list[Placed]:
    """Places of a file whose lines come within ``merge_gap`` of each other become one, at the rank of the best
    of them (chains too: a class header, its first method and its second)."""
    by_file: dict[str, list[int]] = {}
    for position, place in enumerate(places):
        by_file.setdefault(place.chunk.path, []).append(position)
    groups: list[list[int]] = []
    for positions in by_file.values():
        # Sorted by line, runs of places that touch (within the gap) are one group.
        ordered = sorted(positions, key=lambda p: (places[p].start_line, places[p].end_line))
        run = [ordered[0]]
        end = places[ordered[0]].end_line
        for position in ordered[1:]:
            if places[position].start_line <= end + config.merge_gap + 1:
                run.append(position)
                end = max(end, places[position].end_line)
            else:
                groups.append(sorted(run))
                run, end = [position], places[position].end_line
        groups.append(sorted(run))
    texts: dict[str, FileText] = {}
    merged: list[tuple[int, Placed]] = []
    for group in groups:
        best = places[group[0]]
        if len(group) > 1:
            members = [places[member] for member in group[1:]]
            start = min(p.start_line for p in (best, *members))
            end = max(p.end_line for p in (best, *members))
            text = texts.setdefault(best.chunk.path, FileText.from_chunks(
                [chunk for _, chunk in index.chunks_of(best.chunk.path)]))
            candidate = best.candidate
            for member in members:
                candidate = _joined(candidate, member)
            best = replace(best, candidate=candidate, start_line=start, end_line=end,
                           content="\n".join(text.slice(start, end)).rstrip("\n"),
                           merged_from=tuple(sorted((m.start_line, m.end_line) for m in members)))
        merged.append((group[0], best))
    return [place for _, place in sorted(merged, key=lambda item: item[0])]


def _joined(kept: Candidate, absorbed: Placed) -> Candidate:
    """The kept place's candidate with the absorbed place's reasons, strategies and sources added: a merge must
    not hide why the absorbed place was chosen."""
    name = absorbed.chunk.qualname or absorbed.chunk.path
    return replace(kept, why=[*kept.why, *(f"{name}: {reason}" for reason in absorbed.candidate.why
                                          if reason not in kept.why)],
                   strategies=list(dict.fromkeys(kept.strategies + absorbed.candidate.strategies)),
                   sources=sorted(set(kept.sources) | set(absorbed.candidate.sources)))


def _dedupe(places: list[Placed], config: RankingConfig) -> list[Placed]:
    kept: list[Placed] = []
    # Per file: the positions in ``kept`` of its places, with their words.
    seen: dict[str, list[tuple[int, set[str]]]] = {}
    for place in places:
        mine = set(_WORDS.findall(place.content.lower()))
        earlier = seen.setdefault(place.chunk.path, [])
        for position, theirs in earlier:
            if mine and theirs and len(mine & theirs) / len(mine | theirs) > config.duplicate_jaccard:
                other = kept[position]
                kept[position] = replace(other, deduped_from=(*other.deduped_from, (place.start_line, place.end_line)))
                break
        else:
            earlier.append((len(kept), mine))
            kept.append(place)
    return kept


def _cap(places: list[Placed], config: RankingConfig) -> list[Placed]:
    counts: dict[str, int] = {}
    kept: list[Placed] = []
    last: dict[str, int] = {}
    for place in places:
        path = place.chunk.path
        if counts.get(path, 0) >= config.max_per_file:
            kept[last[path]] = replace(kept[last[path]], file_capped=True)
            continue
        counts[path] = counts.get(path, 0) + 1
        last[path] = len(kept)
        kept.append(place)
    return kept
