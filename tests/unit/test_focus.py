"""What a cursor's identifier means by the file's own imports, definitions and annotations (core/focus.py)."""

from __future__ import annotations

import pytest
from conftest import write_tree

from rag_lsp.features.focus import focus_name, resolve_chain, word_at
from rag_lsp.index.root_index import Index

FILES = {
    "shop/__init__.py": "",
    "shop/ledger.py": (
        "class Ledger:\n"
        "    def post(self, entry):\n"
        "        return self.check(entry)\n"
        "\n"
        "    def check(self, entry):\n"
        "        return entry\n"
    ),
    "shop/audit.py": "class Ledger:\n    def post(self, entry):\n        return None\n",
    "shop/jobs.py": (
        "from shop.ledger import Ledger\n"
        "from shop import audit\n"
        "\n"
        "\n"
        "def nightly(book: Ledger, entries):\n"
        "    for entry in entries:\n"
        "        book.post(entry)\n"
        "    other = audit.Ledger()\n"
        "    other.post(None)\n"
        "    unknown.post(None)\n"
        "    return summary(entries)\n"
        "\n"
        "\n"
        "def summary(entries):\n"
        "    return len(entries)\n"
    ),
    "shop/runner.py": (
        "from dataclasses import dataclass\n"
        "\n"
        "from shop.ledger import Ledger\n"
        "from shop import audit\n"
        "\n"
        "\n"
        "class Runner:\n"
        "    def __init__(self):\n"
        "        self.book = Ledger()\n"
        "        self.trail: audit.Ledger = make_trail()\n"
        "\n"
        "    def run(self, entry):\n"
        "        self.book.post(entry)\n"
        "        return self.trail.post(entry)\n"
        "\n"
        "\n"
        "@dataclass\n"
        "class Plan:\n"
        "    book: Ledger\n"
    ),
    # Uses a Runner from another file: its attributes are typed by runner.py's imports, not this file's.
    "shop/cron.py": (
        "from shop.runner import Plan, Runner\n"
        "\n"
        "\n"
        "def tick(runner: Runner, plan: Plan):\n"
        "    runner.book.post(None)\n"
        "    plan.book.post(None)\n"
    ),
    "web/ledger.ts": "export class Ledger {\n  post(entry: string): void {}\n}\n",
    "web/shop.ts": (
        "import { Ledger } from './ledger';\n"
        "\n"
        "export class Shop {\n"
        "  private book: Ledger;\n"
        "  constructor() {\n"
        "    this.book = new Ledger();\n"
        "  }\n"
        "  sell() {\n"
        "    this.book.post('x');\n"
        "  }\n"
        "}\n"
    ),
    "web/page.ts": (
        "import { Ledger } from './ledger';\n"
        "\n"
        "export function render(book?: Ledger) {\n"
        "  const fresh = new Ledger();\n"
        "  fresh.post('x');\n"
        "  return book;\n"
        "}\n"
    ),
}


@pytest.fixture
def index(tmp_path) -> Index:
    built = Index(write_tree(tmp_path, FILES), use_cache=False)
    built.refresh()
    yield built
    built.close()


def resolved(index: Index, rel: str, chain: str, line: int) -> tuple[str, str] | None:
    lines = (index.root / rel).read_text().splitlines()
    found = resolve_chain(index, rel, chain, lines, line)
    return (found.path, found.qualname) if found else None


@pytest.mark.parametrize(("rel", "chain", "line", "expected"), [
    # A parameter annotated with an imported class, and a member of it.
    ("shop/jobs.py", "book.post", 7, ("shop/ledger.py", "Ledger.post")),
    # A local constructed from a module's class: the other `Ledger`, not the imported one.
    ("shop/jobs.py", "other.post", 9, ("shop/audit.py", "Ledger.post")),
    # A module attribute, and a top-level definition of the file itself.
    ("shop/jobs.py", "audit.Ledger", 8, ("shop/audit.py", "Ledger")),
    ("shop/jobs.py", "summary", 11, ("shop/jobs.py", "summary")),
    # `self` is the enclosing class.
    ("shop/ledger.py", "self.check", 3, ("shop/ledger.py", "Ledger.check")),
    # Attributes a class types: assigned a constructor call, annotated, or a dataclass field; from this file
    # and from another, whose imports say what the types are.
    ("shop/runner.py", "self.book.post", 13, ("shop/ledger.py", "Ledger.post")),
    ("shop/runner.py", "self.trail.post", 14, ("shop/audit.py", "Ledger.post")),
    ("shop/cron.py", "runner.book.post", 5, ("shop/ledger.py", "Ledger.post")),
    ("shop/cron.py", "plan.book.post", 6, ("shop/ledger.py", "Ledger.post")),
    ("web/shop.ts", "this.book.post", 9, ("web/ledger.ts", "Ledger.post")),
    # TypeScript: an optional annotated parameter (a variable resolves to its type), and `new`.
    ("web/page.ts", "book", 6, ("web/ledger.ts", "Ledger")),
    ("web/page.ts", "fresh.post", 5, ("web/ledger.ts", "Ledger.post")),
])
def test_a_chain_resolves_through_what_the_file_says(index, rel, chain, line, expected):
    assert resolved(index, rel, chain, line) == expected


def test_what_the_file_does_not_say_is_not_guessed(index):
    # `unknown` is bound nowhere; a receiver annotated after the cursor line does not count either.
    assert resolved(index, "shop/jobs.py", "unknown.post", 10) is None
    assert resolved(index, "shop/jobs.py", "entry.post", 7) is None


def test_the_name_is_the_shortest_the_index_finds_as_exactly_that_definition(index):
    post = index.symbols.lookup("ledger.Ledger.post")[0]
    check = index.symbols.lookup("Ledger.check")[0]
    # `Ledger.post` is also audit's and TypeScript's, whose file is called `ledger` too: the path leads it.
    assert focus_name(index, post, "book.post") == "shop.ledger.Ledger.post"
    audit = index.symbols.lookup("audit.Ledger.post")[0]
    assert focus_name(index, audit, "other.post") == "audit.Ledger.post"
    assert focus_name(index, check, "self.check") == "Ledger.check"
    # A name that reads as a word of prose is written with its module: the ranking discounts common words.
    summary = index.symbols.lookup("summary")[0]
    assert focus_name(index, summary, "summary") == "jobs.summary"
    # A definition that is not what the word names leaves the word as it is.
    assert focus_name(index, check, "book.post") == "book.post"
    assert focus_name(index, None, "book.post") == "book.post"


def test_the_word_under_the_cursor_includes_its_receivers():
    assert word_at("        book.post(entry)", 14) == "book.post"
    assert word_at("        book.post(entry)", 8) == "book.post"
    assert word_at("        book.post(entry)", 3) is None
