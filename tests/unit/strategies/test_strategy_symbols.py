"""The symbols strategy: definitions of the names a message uses, uses weighing little."""

from __future__ import annotations

import pytest
from strategy_helpers import chunk_name, context_for, heaviest

from rag_lsp.retrieval.query import parse_query
from rag_lsp.retrieval.strategies import symbols
from rag_lsp.retrieval.strategies.base import Skipped, StrategyContext

REPO = {
    "shop/ledger.py": '''class Ledger:
    """Keeps one account per currency."""

    def post(self, entry):
        """Post an entry; the account must exist for its currency."""
        account = self.accounts[entry.currency]
        account.append(entry.amount)
        return account


def load(path):
    return path
''',
    "shop/schema.py": '''class Schema:
    def load(self, data):
        return data
''',
    "shop/fields.py": '''class Field:
    def load(self, data):
        return data
''',
    "shop/api.py": '''from shop.ledger import Ledger


def checkout(entry):
    return Ledger().post(entry)
''',
    "shop/valuerep.py": '''class PersonName3:
    def __init__(self, value):
        self.value = value
''',
}


def test_a_member_is_found_inside_its_class(tmp_path):
    ctx = context_for(tmp_path, REPO, "why does `Ledger.post` raise KeyError")
    found = [f for f in symbols.run(ctx) if f.anchor == "Ledger.post"]
    definition = next(f for f in found if f.reason.startswith("symbol:"))
    assert definition.path == "shop/ledger.py" and chunk_name(ctx, definition) == "Ledger.post"
    assert definition.reason == "symbol: `Ledger.post` is defined here"
    assert definition.weight == pytest.approx(0.8)
    use = next(f for f in found if f.path == "shop/api.py")
    assert use.reason == "uses `Ledger.post`" and use.weight == pytest.approx(0.25)


def test_a_qualifier_that_names_a_file_picks_that_files_member(tmp_path):
    ctx = context_for(tmp_path, REPO, "after the update `schema.load` returns None")
    found = heaviest(f for f in symbols.run(ctx) if f.reason.startswith("symbol:"))
    assert found == {"shop/schema.py": pytest.approx(0.8)}


def test_an_unknown_qualifier_falls_back_to_every_member_loosely(tmp_path):
    ctx = context_for(tmp_path, REPO, "`sch.load(data)` crashes")
    found = heaviest(f for f in symbols.run(ctx) if f.reason.startswith("symbol:"))
    assert set(found) == {"shop/ledger.py", "shop/schema.py", "shop/fields.py"}
    assert max(found.values()) < 0.4


def test_camel_case_names_and_plain_words(tmp_path):
    ctx = context_for(tmp_path, REPO, "Make PersonName3 iterable so that checkout works on a ledger")
    found = heaviest(symbols.run(ctx))
    assert found["shop/valuerep.py"] == pytest.approx(0.8)
    # "checkout" is a plain word naming one function: it counts, but less than a code-like name.
    assert found["shop/api.py"] == pytest.approx(0.4)


def test_names_seen_only_in_pasted_code_count_less(tmp_path):
    text = "Saving fails.\n```python\nfrom shop.valuerep import PersonName3\nPersonName3('x')\n```\n"
    found = heaviest(symbols.run(context_for(tmp_path, REPO, text)))
    assert found["shop/valuerep.py"] == pytest.approx(0.4)


def test_unknown_names_find_nothing_and_no_names_is_a_skip(tmp_path):
    assert symbols.run(context_for(tmp_path, REPO, "`Cart.total` is broken")) == []
    with pytest.raises(Skipped):
        symbols.run(context_for(tmp_path / "b", REPO, "is it ok?"))


class LanguageServer:
    """A stand-in for a real language server answering through the provider interface."""

    def __init__(self, definition):
        self.definition = definition

    def definitions(self, name):
        return [self.definition] if name == "Ledger.post" else []

    def definitions_in(self, path):
        return [self.definition] if path == self.definition.path else []

    def uses(self, name):
        return {}

    def source_of(self, definition):
        return "stand-in"


def test_a_symbol_provider_can_answer_instead_of_the_index(tmp_path):
    index = context_for(tmp_path, REPO, "").index
    (ledger_post,) = [d for d in index.symbols.in_file("shop/ledger.py") if d.qualname == "Ledger.post"]
    # The server knows better: the method moved to api.py (the index has not seen the edit yet).
    provider = LanguageServer(ledger_post._replace(path="shop/api.py", start_line=4, end_line=5))
    ctx = StrategyContext(index, parse_query("why does `Ledger.post` fail"), provider=provider)
    found = [f for f in symbols.run(ctx) if f.anchor == "Ledger.post"]
    assert {f.path for f in found} == {"shop/api.py"}
    # A server's definition counts more than a pattern's (0.85 against 0.8), and says where it came from.
    assert [(f.weight, f.source, f.reason) for f in found] == [
        (pytest.approx(0.85), "stand-in", "symbol: `Ledger.post` is defined here (stand-in)")]
