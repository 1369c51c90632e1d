"""The graph strategy: a rename or refactor of a named symbol leads to its references."""

from __future__ import annotations

import pytest
from strategy_helpers import context_for

from rag_lsp.retrieval.strategies import graph
from rag_lsp.retrieval.strategies.base import Skipped

REPO = {
    "shop/currency.py": "def convert(amount, currency):\n    return amount\n",
    "shop/ledger.py": "from shop.currency import convert\n\n\n"
                      "def post(entry):\n    return convert(entry.amount, 'EUR')\n",
    "shop/report.py": "from shop.currency import convert\n\n\n"
                      "def total(rows):\n    return sum(convert(r, 'EUR') for r in rows)\n",
}


def test_a_rename_lists_every_call_site(tmp_path):
    found = graph.run(context_for(tmp_path, REPO, "Rename `convert` to `to_euros` everywhere"))
    assert [(f.path, f.line) for f in found] == [("shop/ledger.py", 5), ("shop/report.py", 5)]
    assert all(f.weight == pytest.approx(0.5) and f.reason == "refers to `convert` (line 5)" for f in found)


def test_other_questions_do_not_follow_references(tmp_path):
    with pytest.raises(Skipped, match="no rename or refactor"):
        graph.run(context_for(tmp_path, REPO, "why does `convert` return the wrong amount"))
