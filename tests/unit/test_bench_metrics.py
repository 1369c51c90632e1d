"""The development-set metrics of bench/metrics.py: a wrong metric would make every benchmark number wrong."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import pytest

# Loaded from its file under a private name: putting bench/ on sys.path would let its ``common`` module
# shadow other modules for the rest of the test session.
_SPEC = importlib.util.spec_from_file_location("bench_metrics", Path(__file__).parents[2] / "bench" / "metrics.py")
metrics = importlib.util.module_from_spec(_SPEC)
sys.modules[_SPEC.name] = metrics
_SPEC.loader.exec_module(metrics)
Target = metrics.Target


def test_ndcg_counts_a_span_target_only_where_a_place_overlaps_it() -> None:
    targets = [Target("pkg/a.py"), Target("pkg/b.py", 10, 20)]
    places = [
        ("b.py", 1, 9),  # the right file (a suffix at a `/`), but ends before the span
        ("pkg/b.py", 15, 30),  # overlaps the span: the span target counts at rank 2
        ("src/pkg/a.py", 1, 5),  # the file target counts at rank 3, whatever the lines
    ]
    expected = (1 / math.log2(3) + 1 / math.log2(4)) / (1 + 1 / math.log2(3))
    assert metrics.ndcg(places, targets, existing=2) == pytest.approx(expected)
    assert metrics.ndcg([("pkg/b.py", 20, 21)], [Target("pkg/b.py", 10, 20)], existing=1) == pytest.approx(1.0)


def test_ndcg_counts_each_target_once_and_a_place_once() -> None:
    targets = [Target("a.py"), Target("a.py", 1, 5)]
    # One place matching both targets: one relevant position, against an ideal of two.
    assert metrics.ndcg([("a.py", 1, 3)], targets, existing=2) == pytest.approx(1 / (1 + 1 / math.log2(3)))
    # A second place in the same file adds nothing: each target counts at its first match only.
    assert metrics.ndcg([("a.py", 1, 3), ("a.py", 4, 9)], [Target("a.py")], existing=1) == pytest.approx(1.0)


def test_ndcg_ideal_uses_the_targets_whose_file_exists() -> None:
    targets = [Target("a.py"), Target("gone.py")]
    assert metrics.ndcg([("a.py", 1, 2)], targets, existing=1) == pytest.approx(1.0)
    assert metrics.ndcg([("a.py", 1, 2)], targets, existing=2) == pytest.approx(1 / (1 + 1 / math.log2(3)))
    assert metrics.ndcg([("a.py", 1, 2)], targets, existing=0) == 0.0


def test_ndcg_looks_at_the_first_ten_places_only() -> None:
    places = [(f"other{i}.py", 1, 2) for i in range(10)] + [("a.py", 1, 2)]
    assert metrics.ndcg(places, [Target("a.py")], existing=1) == 0.0
    assert metrics.ndcg(places[1:], [Target("a.py")], existing=1) == pytest.approx(1 / math.log2(11))


def test_paths_match_as_suffixes_at_a_slash_only() -> None:
    assert metrics.path_matches("src/pkg/a.py", "pkg/a.py")
    assert metrics.path_matches("a.py", "pkg/a.py")
    assert not metrics.path_matches("pkg/xa.py", "a.py")
    assert not metrics.path_matches("a.py", "pkg/xa.py")


def test_acc_needs_every_gold_file_and_hit_any() -> None:
    files = ["x.c", "gold1.c", "y.c", "z.c", "w.c", "gold2.c"]
    gold = {"gold1.c", "gold2.c"}
    every, first = metrics.all_gold_rank(files, gold), metrics.first_gold_rank(files, gold)
    assert (every, first) == (6, 2)
    assert [metrics.share_within([every], k) for k in (1, 5, 10)] == [0.0, 0.0, 1.0]
    assert [metrics.share_within([first], k) for k in (1, 5, 10)] == [0.0, 1.0, 1.0]
    assert metrics.all_gold_rank(files[:5], gold) is None


def test_mrr_uses_the_first_gold_file_within_twenty() -> None:
    assert metrics.mean_reciprocal_rank([2, None, 1, 21]) == pytest.approx((0.5 + 1) / 4)


def test_semble_targets_parse_from_paths_and_spans() -> None:
    assert Target.parse("a/b.py") == Target("a/b.py")
    assert Target.parse({"path": "a/b.py", "start_line": "3", "end_line": 7}) == Target("a/b.py", 3, 7)
