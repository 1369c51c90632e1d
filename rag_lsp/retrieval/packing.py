"""Filling a token budget with ranked pieces: the one packer that context and completion share.

Both answers are a ranked list cut to a budget, and both must say the same
things about what did not fit: the budget is never exceeded, pieces are taken
greedily in rank order (a smaller piece further down may still fit after a
large one did not), and the very first piece is cut down to the room left
rather than dropped when enough of it fits, so an answer is never empty only
because its best place is long.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from rag_lsp.retrieval.token_count import truncate_to_tokens

Item = TypeVar("Item")
Shown = TypeVar("Shown")


@dataclass(frozen=True, slots=True)
class Packed(Generic[Item, Shown]):
    """A piece that made it in: the ranked item, what is shown of it, and the tokens that costs."""

    item: Item
    shown: Shown
    cost: int


@dataclass(frozen=True, slots=True)
class Packing(Generic[Item, Shown]):
    """The pieces taken, in rank order, and what was left out or cut short.

    ``over_budget`` counts ranked pieces left out because they did not fit
    the budget; ``over_limit`` those left out because the answer had as many
    pieces as asked (or too little budget remained for any piece); ``cut``
    says the first piece was cut down to fit.
    """

    packed: tuple[Packed[Item, Shown], ...]
    used: int
    over_budget: int
    over_limit: int
    cut: bool


@dataclass(frozen=True, slots=True)
class PackRules(Generic[Item, Shown]):
    """How to show, count and cut one kind of piece.

    ``show`` renders an item (computed only for items that are considered);
    ``text`` is the part of it that may be cut and ``cut`` rebuilds it from a
    shorter text; ``cost`` counts the tokens of an item shown with a given
    text, its overhead (a header, a separator) included, so ``cost(item, "")``
    is the overhead. The first piece is cut when at least ``min_cut_tokens``
    of text fit beside its overhead, by ``truncate`` (whole lines, counted as
    ``cost`` counts). ``redundant`` drops an item silently when what is
    already packed shows it (an overlapping excerpt of the same file).
    """

    show: Callable[[Item], Shown]
    text: Callable[[Shown], str]
    cut: Callable[[Shown, str], Shown]
    cost: Callable[[Item, str], int]
    min_cut_tokens: int
    # Below this many tokens of room, no further piece is considered (none would fit).
    min_room: int = 0
    redundant: Callable[[Item, Shown, Sequence[Packed[Item, Shown]]], bool] | None = None
    truncate: Callable[[str, int], str] = truncate_to_tokens


def pack(ranked: Iterable[Item], budget: int, limit: int, rules: PackRules[Item, Shown]) -> Packing[Item, Shown]:
    """Greedy packing of ``ranked`` into ``budget`` tokens, at most ``limit`` pieces."""
    packed: list[Packed[Item, Shown]] = []
    used = over_budget = over_limit = 0
    cut = False
    for item in ranked:
        if len(packed) >= limit or budget - used < rules.min_room:
            over_limit += 1
            continue
        shown = rules.show(item)
        if rules.redundant is not None and rules.redundant(item, shown, packed):
            continue
        cost = rules.cost(item, rules.text(shown))
        if used + cost > budget:
            room = budget - used - rules.cost(item, "")
            shorter = rules.truncate(rules.text(shown), room) if not packed and room >= rules.min_cut_tokens else ""
            if not shorter:
                over_budget += 1
                continue
            shown = rules.cut(shown, shorter)
            cost = rules.cost(item, shorter)
            cut = True
        packed.append(Packed(item, shown, cost))
        used += cost
    return Packing(tuple(packed), used, over_budget, over_limit, cut)
