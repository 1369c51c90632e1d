"""The metrics of the development sets, as ``/work/shared/bench/README.md`` and ``semble/README.md`` define them.

Localisation scores a ranking's distinct files against the files a fix
changed: acc@k needs all of them in the first k, hit@k any of them, MRR uses
the first one found within the first ``MRR_DEPTH``. Code search (Semble's
metric) scores places (path, start_line, end_line) against targets that are a
path or a path with a line span, with NDCG@10.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

KS = (1, 5, 10)
MRR_DEPTH = 20
NDCG_K = 10


def distinct_files(paths: Iterable[str]) -> list[str]:
    """The paths in the order they first appear."""
    return list(dict.fromkeys(paths))


def all_gold_rank(files: Sequence[str], gold: set[str]) -> int | None:
    """The rank at which every gold file has been seen (acc@k counts a case when this is ≤ k)."""
    seen: set[str] = set()
    for rank, path in enumerate(files, 1):
        if path in gold:
            seen.add(path)
            if seen == gold:
                return rank
    return None


def first_gold_rank(files: Sequence[str], gold: set[str]) -> int | None:
    """The rank of the first gold file (hit@k counts a case when this is ≤ k; MRR is its inverse)."""
    return next((rank for rank, path in enumerate(files, 1) if path in gold), None)


def share_within(ranks: Sequence[int | None], k: int) -> float:
    """The share of cases whose rank is at most ``k`` (acc@k or hit@k, depending on the ranks given)."""
    return sum(1 for rank in ranks if rank is not None and rank <= k) / len(ranks)


def mean_reciprocal_rank(first_ranks: Sequence[int | None], depth: int = MRR_DEPTH) -> float:
    """1 / rank of the first gold file within the first ``depth`` files, 0 when absent, averaged."""
    return sum(1 / rank for rank in first_ranks if rank is not None and rank <= depth) / len(first_ranks)


@dataclass(frozen=True, slots=True)
class Target:
    """What answers a code-search question: a file, or lines of it (1-based, inclusive)."""

    path: str
    start_line: int | None = None
    end_line: int | None = None

    @classmethod
    def parse(cls, raw: str | dict) -> Target:
        if isinstance(raw, str):
            return cls(raw)
        start, end = raw.get("start_line"), raw.get("end_line")
        return cls(str(raw["path"]), None if start is None else int(start), None if end is None else int(end))


def path_matches(path: str, target: str) -> bool:
    """Either path is the other or a suffix of it at a ``/`` boundary (targets are relative to the
    repository root, a few to the indexed folder)."""
    return path == target or path.endswith(f"/{target}") or target.endswith(f"/{path}")


def place_matches(path: str, start_line: int, end_line: int, target: Target) -> bool:
    """The place is in the target's file and, when the target has a span, overlaps its lines."""
    if not path_matches(path, target.path):
        return False
    if target.start_line is None or target.end_line is None:
        return True
    return not (end_line < target.start_line or start_line > target.end_line)


def target_rank(places: Sequence[tuple[str, int, int]], target: Target) -> int | None:
    """The 1-based rank of the first place that matches the target."""
    return next((rank for rank, (path, start, end) in enumerate(places, 1) if place_matches(path, start, end, target)),
                None)


def dcg(relevances: Sequence[int]) -> float:
    return sum(relevance / math.log2(position + 2) for position, relevance in enumerate(relevances))


def ndcg(places: Sequence[tuple[str, int, int]], targets: Sequence[Target], existing: int, k: int = NDCG_K) -> float:
    """Semble's NDCG@k: each target counts once, at the rank of the first place matching it (a place
    matching several targets counts once); the ideal ranking has min(k, ``existing``) relevant places,
    ``existing`` being the number of targets whose file exists in the checkout. 0 when none exists."""
    if existing == 0:
        return 0.0
    relevances = [0] * k
    for target in targets:
        rank = target_rank(places[:k], target)
        if rank is not None:
            relevances[rank - 1] = 1
    return dcg(relevances) / dcg([1] * min(k, existing))
