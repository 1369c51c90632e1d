"""Shared test helpers: small workspaces written into a temporary directory."""

from __future__ import annotations

from pathlib import Path

import pytest


def write_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    """Create ``files`` (relative path → content) under ``root`` and return ``root``."""
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


def mapped_resident_kb(path) -> int:
    """This process's resident kilobytes of the mappings of ``path`` (``/proc/self/smaps``)."""
    total, inside = 0, False
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            fields = line.split()
            if not line[0].isupper() or not fields[0].endswith(":"):
                inside = len(fields) > 5 and fields[5] == str(path)
            elif inside and fields[0] == "Rss:":
                total += int(fields[1])
    return total


LEDGER_WORKSPACE = {
    "shop/ledger.py": '''"""Double-entry ledger."""
from shop.currency import convert


class Ledger:
    """Keeps one account per currency."""

    def __init__(self):
        self.accounts = {}

    def post(self, entry):
        """Post an entry; the account must exist for its currency."""
        account = self.accounts[entry.currency]
        account.append(convert(entry.amount, entry.currency))
''',
    "shop/currency.py": '''RATES = {"EUR": 1.0, "USD": 0.9}


def convert(amount, currency):
    """Convert an amount to euros using RATES."""
    return amount * RATES[currency]
''',
    "shop/limits.py": '''import os

RATE_LIMIT = int(os.environ.get("SHOP_RATE_LIMIT", "100"))


def allow(requests_per_minute):
    """Rate limiting: refuse clients above the configured limit."""
    return requests_per_minute <= RATE_LIMIT
''',
    "web/client.ts": '''import { formatPrice } from "./format";

export class CartClient {
  async checkout(cartId: string): Promise<number> {
    const total = await fetchTotal(cartId);
    return formatPrice(total);
  }
}
''',
    "web/format.ts": '''export function formatPrice(value: number): string {
  return value.toFixed(2);
}
''',
    "README.md": "# Shop\n\nA tiny shop.\n\n## Rate limiting\n\nSet SHOP_RATE_LIMIT to change the limit.\n",
}


@pytest.fixture
def ledger_root(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "ws", LEDGER_WORKSPACE)


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own cache directory, never the user's."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("RAG_LSP_CACHE_DIR", str(cache))
    return cache
