"""The build_error strategy: compiler and linter locations (tsc, cargo, mypy) mapped onto the checkout."""

from __future__ import annotations

import pytest
from strategy_helpers import chunk_name, context_for

from rag_lsp.retrieval.strategies import build_error
from rag_lsp.retrieval.strategies.base import Skipped

REPO = {
    "web/src/cart/total.ts": '''export function total(prices: number[]): number {
  let sum = 0;
  for (const price of prices) {
    sum += price;
  }
  return sum;
}

export function label(amount: number): string {
  const text: number = amount.toFixed(2);
  return text;
}
''',
    "crates/ledger/src/post.rs": '''pub struct Entry { pub amount: i64 }

pub fn post(entry: &Entry) -> u64 {
    let amount: u64 = entry.amount;
    amount
}
''',
    "crates/ledger/src/currency.rs": "pub fn convert(amount: u64) -> u64 {\n    let rate = 2;\n    amount\n}\n",
}

TSC = '''web/src/cart/total.ts(10,9): error TS2322: Type 'string' is not assignable to type 'number'.
Found 1 error in web/src/cart/total.ts:10
'''

CARGO = '''   Compiling ledger v0.1.0 (/home/ci/shop/crates/ledger)
error[E0308]: mismatched types
 --> src/post.rs:4:23
  |
4 |     let amount: u64 = entry.amount;
  |                 ---   ^^^^^^^^^^^^ expected `u64`, found `i64`
  |                 |
  |                 expected due to this

warning: unused variable: `rate`
 --> src/currency.rs:2:9
  |
2 |     let rate = 2;
  |         ^^^^ help: if this is intentional, prefix it with an underscore: `_rate`
'''


def test_tsc_output_points_at_the_line_and_its_definition(tmp_path):
    ctx = context_for(tmp_path, REPO, TSC)
    found = build_error.run(ctx)
    assert {(f.path, f.line, chunk_name(ctx, f)) for f in found} == {("web/src/cart/total.ts", 10, "label")}
    assert found[0].weight == pytest.approx(0.9)
    assert found[0].reason.startswith("tsc error web/src/cart/total.ts:10: Type 'string' is not assignable")


def test_cargo_paths_relative_to_the_crate_resolve_by_suffix_and_warnings_weigh_less(tmp_path):
    ctx = context_for(tmp_path, REPO, CARGO)
    found = {f.path: f for f in build_error.run(ctx)}
    assert set(found) == {"crates/ledger/src/post.rs", "crates/ledger/src/currency.rs"}
    assert chunk_name(ctx, found["crates/ledger/src/post.rs"]) == "post"
    assert found["crates/ledger/src/post.rs"].weight == pytest.approx(0.9)
    assert found["crates/ledger/src/currency.rs"].weight == pytest.approx(0.9 * 0.8)


def test_no_locations_is_a_skip(tmp_path):
    with pytest.raises(Skipped, match="no compiler or linter locations"):
        build_error.run(context_for(tmp_path, REPO, "the total is wrong"))
