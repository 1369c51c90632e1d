"""The docs_config strategy: an environment variable to where it is read, set and documented."""

from __future__ import annotations

import pytest
from strategy_helpers import context_for

from rag_lsp.retrieval.strategies import docs_config
from rag_lsp.retrieval.strategies.base import Skipped

REPO = {
    "shop/limits.py": '''import os

RATE_LIMIT = int(os.environ.get("SHOP_RATE_LIMIT", "100"))
DEFAULT_CURRENCY = "EUR"
''',
    "deploy/docker-compose.yml": "services:\n  shop:\n    environment:\n      SHOP_RATE_LIMIT: 50\n",
    "README.md": "# Shop\n\n## Rate limiting\n\nSet SHOP_RATE_LIMIT to change the limit.\n",
    "shop/money.py": "from shop.limits import DEFAULT_CURRENCY\n\n\ndef parse(x):\n    return x or DEFAULT_CURRENCY\n",
}


def test_an_environment_variable_is_read_set_and_documented(tmp_path):
    found = docs_config.run(context_for(tmp_path, REPO, "SHOP_RATE_LIMIT=10 is ignored in production"))
    assert sorted((f.path, f.reason) for f in found) == [
        ("README.md", "documents the environment variable SHOP_RATE_LIMIT"),
        ("deploy/docker-compose.yml", "sets the environment variable SHOP_RATE_LIMIT"),
        ("shop/limits.py", "reads the environment variable SHOP_RATE_LIMIT"),
    ]
    weights = {f.path: f.weight for f in found}
    assert weights["shop/limits.py"] > weights["deploy/docker-compose.yml"] > weights["README.md"]


def test_a_constant_is_left_to_the_symbols(tmp_path):
    ctx = context_for(tmp_path, REPO, "DEFAULT_CURRENCY should be USD in the US shop")
    assert docs_config.run(ctx) == []


def test_no_variable_is_a_skip(tmp_path):
    with pytest.raises(Skipped):
        docs_config.run(context_for(tmp_path, REPO, "rate limiting is ignored"))
