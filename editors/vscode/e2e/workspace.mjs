// The fixture workspace of the end-to-end test: a small shop in Python, TypeScript and Go, with a test and notes.
import fs from "node:fs";
import path from "node:path";

export const FILES = {
  "shop/__init__.py": "",
  "shop/ledger.py": `"""Double-entry ledger."""
from shop.currency import convert


class Ledger:
    """Keeps one account per currency."""

    def __init__(self):
        self.accounts = {}

    def post(self, entry):
        """Post an entry; the account must exist for its currency."""
        account = self.accounts[entry.currency]
        account.append(convert(entry.amount, entry.currency))

    def balance(self, currency):
        """The sum of one currency's account."""
        return sum(self.accounts.get(currency, []))
`,
  "shop/currency.py": `RATES = {"EUR": 1.0, "USD": 0.9}


def convert(amount, currency):
    """Convert an amount to euros using RATES."""
    return amount * RATES[currency]
`,
  "tests/test_ledger.py": `import pytest

from shop.ledger import Ledger


def test_post_unknown_currency_raises():
    ledger = Ledger()
    with pytest.raises(KeyError):
        ledger.post(type("Entry", (), {"currency": "GBP", "amount": 1})())
`,
  "web/cart.ts": `export interface Line {
  sku: string;
  price: number;
  quantity: number;
}

/** The total of a cart, in cents. */
export function cartTotal(lines: Line[]): number {
  return lines.reduce((sum, line) => sum + line.price * line.quantity, 0);
}
`,
  "tools/report.go": `package tools

import "fmt"

// Report prints the daily sales summary.
func Report(total int) string {
	return fmt.Sprintf("sales: %d", total)
}
`,
  "README.md": `# Shop

A tiny shop: a ledger (Python), a cart (TypeScript) and a sales report (Go).
`,
};

/** Writes the fixture files under `root` and returns `root`. */
export function writeWorkspace(root) {
  for (const [relative, content] of Object.entries(FILES)) {
    const file = path.join(root, relative);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, content);
  }
  return root;
}
