"""The test_to_impl strategy: failing tests (pytest, Jest, go test) to the test and the code under test."""

from __future__ import annotations

import pytest
from strategy_helpers import chunk_name, context_for, heaviest

from rag_lsp.retrieval.strategies import test_to_impl
from rag_lsp.retrieval.strategies.base import Skipped

REPO = {
    "shop/cart.py": '''class Cart:
    def __init__(self):
        self.items = []

    def total(self):
        """The sum of the item prices."""
        amount = 0
        for item in self.items:
            amount += item.price
        return amount
''',
    "shop/pricing.py": "def apply_discount(amount, rate):\n    return amount * (1 - rate)\n",
    "legacy/cart.py": "def total(items):\n    return sum(items)\n",
    "tests/shop/test_cart.py": '''from shop.cart import Cart
from shop.pricing import apply_discount


class TestCart:
    def test_total(self):
        cart = Cart()
        assert apply_discount(cart.total(), 0.5) == 0
''',
    "web/src/cart/cart.ts": "export function addItem(cart: string[], item: string): string[] {\n"
                            "  return [...cart, item];\n}\n",
    "web/src/cart/cart.test.ts": '''import { addItem } from "./cart";

describe("Cart", () => {
  it("adds items", () => {
    expect(addItem([], "a")).toEqual(["a"]);
  });
});
''',
    "inventory/stock.go": "package inventory\n\nfunc Reserve(n int) int {\n\treturn n\n}\n",
    "inventory/stock_test.go": '''package inventory

import "testing"

func TestReserve(t *testing.T) {
	if Reserve(3) != 3 {
		t.Fatal("reserve")
	}
}
''',
}

PYTEST = '''=========================== short test summary info ============================
FAILED tests/shop/test_cart.py::TestCart::test_total - AssertionError: assert 3.0 == 0
========================= 1 failed, 10 passed in 0.12s =========================
'''


def test_a_pytest_failure_leads_to_the_test_its_implementation_and_its_callees(tmp_path):
    ctx = context_for(tmp_path, REPO, PYTEST)
    found = test_to_impl.run(ctx)
    places = {(f.path, chunk_name(ctx, f), f.reason) for f in found}
    label = "tests/shop/test_cart.py::TestCart::test_total"
    assert ("tests/shop/test_cart.py", "TestCart.test_total", f"failing test {label}") in places
    # The mirrored tree (tests/shop → shop) beats the namesake in legacy/.
    assert ("shop/cart.py", None, "implementation of tests/shop/test_cart.py by naming convention") in places
    assert ("shop/pricing.py", "apply_discount", f"test {label} calls `apply_discount`") in places
    # The namesake is reached only through the ambiguous call `cart.total()`, so it weighs less.
    assert heaviest(found)["legacy/cart.py"] < heaviest(found)["shop/cart.py"]
    weights = {f.reason: f.weight for f in found}
    assert weights["implementation of tests/shop/test_cart.py by naming convention"] == pytest.approx(0.75)


JEST = '''FAIL web/src/cart/cart.test.ts
  ● Cart › adds items

    expect(received).toEqual(expected) // deep equality

Tests:       1 failed, 3 passed, 4 total
'''


def test_a_jest_failure_finds_the_test_by_its_title_and_the_module_beside_it(tmp_path):
    ctx = context_for(tmp_path, REPO, JEST)
    found = test_to_impl.run(ctx)
    test = next(f for f in found if f.path == "web/src/cart/cart.test.ts")
    assert 'it("adds items"' in ctx.index.chunks[test.chunk_id].content
    assert "web/src/cart/cart.ts" in {f.path for f in found}


GO_TEST = '''--- FAIL: TestReserve (0.00s)
    stock_test.go:6: reserve
FAIL
FAIL	github.com/acme/shop/inventory	0.004s
'''


def test_a_go_test_failure_resolves_the_package_and_the_file_under_test(tmp_path):
    ctx = context_for(tmp_path, REPO, GO_TEST)
    places = {(f.path, chunk_name(ctx, f)) for f in test_to_impl.run(ctx)}
    assert ("inventory/stock_test.go", "TestReserve") in places
    assert ("inventory/stock.go", "Reserve") in places


def test_no_test_ids_is_a_skip(tmp_path):
    with pytest.raises(Skipped, match="no test ids"):
        test_to_impl.run(context_for(tmp_path, REPO, "the cart total is wrong"))
