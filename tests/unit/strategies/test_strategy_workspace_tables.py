"""The per-index lookup tables strategies share, kept in step with single-file updates."""

from __future__ import annotations

from strategy_helpers import context_for

from rag_lsp.index.tables import workspace_tables

REPO = {
    "shop/ledger.py": "from shop.currency import convert\n\n\ndef post(entry):\n    return convert(entry, 'EUR')\n",
    "shop/currency.py": "def convert(amount, currency):\n    return amount\n",
}


def test_tables_follow_single_file_updates(tmp_path):
    index = context_for(tmp_path, REPO, "").index
    tables = workspace_tables(index)
    assert tables.files_named("ledger.py") == ["shop/ledger.py"]
    assert sorted(tables.uses("convert")) == ["shop/ledger.py"]
    assert tables.files_with_path_word("currency") == ["shop/currency.py"]
    assert tables.files_under("shop") == 2

    report = "from shop.currency import convert\n\n\ndef total(x):\n    return convert(x, 'EUR')\n"
    index.set_file("web/report.py", report)
    index.remove_file("shop/ledger.py")
    index.set_file(".env", "TOKEN=1\n")
    tables = workspace_tables(index)
    assert tables.files_named("ledger.py") == []
    assert sorted(tables.uses("convert")) == ["web/report.py"]
    assert tables.directories_named("web") == ["web"] and tables.files_under("shop") == 1
    assert tables.is_secret(".env") and not tables.is_secret("web/report.py")
    assert tables.paths == [".env", "shop/currency.py", "web/report.py"]
