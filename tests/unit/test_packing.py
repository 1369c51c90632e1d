"""The one packer: greedy in rank order, never over budget, the first piece cut rather than dropped."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from rag_lsp.retrieval.packing import PackRules, pack
from rag_lsp.retrieval.token_count import estimate_tokens

# A piece is its text; costing a piece counts its text plus a fixed header of two tokens.
HEADER = 2
RULES: PackRules[str, str] = PackRules(
    show=lambda text: text,
    text=lambda text: text,
    cut=lambda _, shorter: shorter,
    cost=lambda _, text: HEADER + estimate_tokens(text),
    min_cut_tokens=4,
)


def lines(count: int, word: str = "alpha") -> str:
    return "\n".join(f"{word} {n}" for n in range(count))


def test_pieces_are_taken_in_rank_order_while_they_fit_and_smaller_ones_fill_in():
    big, small = lines(40), lines(1, "beta")
    packing = pack([small, big, small + "!"], budget=HEADER * 2 + 2 * estimate_tokens(small) + 2, limit=10, rules=RULES)
    assert [p.item for p in packing.packed] == [small, small + "!"]
    assert packing.over_budget == 1 and not packing.cut


def test_the_first_piece_is_cut_to_whole_lines_when_enough_of_it_fits():
    packing = pack([lines(100)], budget=30, limit=10, rules=RULES)
    (first,) = packing.packed
    assert packing.cut and first.shown == lines(len(first.shown.splitlines()))
    assert first.cost <= 30


def test_nothing_is_cut_below_the_minimum_and_later_pieces_are_never_cut():
    assert pack([lines(100)], budget=HEADER + 3, limit=10, rules=RULES).packed == ()
    packing = pack([lines(1), lines(100)], budget=40, limit=10, rules=RULES)
    assert [p.item for p in packing.packed] == [lines(1)] and not packing.cut and packing.over_budget == 1


def test_the_limit_counts_what_it_leaves_out_apart_from_the_budget():
    packing = pack([lines(1)] * 5, budget=1000, limit=2, rules=RULES)
    assert len(packing.packed) == 2 and packing.over_limit == 3 and packing.over_budget == 0


def test_redundant_pieces_are_dropped_silently():
    rules = PackRules(**{**{f: getattr(RULES, f) for f in ("show", "text", "cut", "cost", "min_cut_tokens")},
                         "redundant": lambda item, shown, packed: any(p.item == item for p in packed)})
    packing = pack(["a", "a", "b"], budget=100, limit=10, rules=rules)
    assert [p.item for p in packing.packed] == ["a", "b"] and packing.over_budget == packing.over_limit == 0


@given(st.lists(st.text(alphabet="ab \n", max_size=200), max_size=12), st.integers(0, 120), st.integers(1, 6))
def test_a_packing_never_exceeds_its_budget_or_its_limit(pieces, budget, limit):
    packing = pack(pieces, budget, limit, RULES)
    assert packing.used == sum(p.cost for p in packing.packed) <= budget
    assert len(packing.packed) <= limit
    assert len(packing.packed) + packing.over_budget + packing.over_limit == len(pieces)
