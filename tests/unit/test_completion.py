"""Completion context: what the code at a cursor needs from other files, within a token and a time budget.

Each case is a small workspace whose file under the cursor holds one ``‸``
marking the cursor; ``ask`` writes it without the marker, indexes it and asks.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from answers import completion_of
from conftest import write_tree

from rag_lsp.completion.engine import CompletionEngine, CompletionRequest, PositionError
from rag_lsp.retrieval.token_count import estimate_tokens
from rag_lsp.workspace.session import Session

CURSOR = "‸"

PYTHON = {
    "shop/__init__.py": "from .pricing import total_price as price_of\nfrom .models import *\n",
    "shop/pricing.py": '''"""Prices."""


def total_price(items, discount=0.0):
    """Sum the items' prices, minus a discount between 0 and 1."""
    subtotal = sum(item.price for item in items)
    return subtotal * (1 - discount)


def unrelated_helper(value):
    """Not used anywhere near the cursor."""
    return value
''',
    "shop/models.py": '''class Item:
    """Something to sell."""

    def __init__(self, name: str, price: float) -> None:
        self.name = name
        self.price = price

    def label(self) -> str:
        return f"{self.name}: {self.price}"
''',
    "shop/text.py": '''def slugify(title):
    """Lowercase words joined by dashes."""
    return "-".join(title.lower().split())
''',
}


def ask(root: Path, files: dict[str, str], target: str, **options) -> dict:
    """Write ``files`` (one holds the cursor marker), index them, and ask for the context at the marker."""
    text = files[target]
    offset = text.index(CURSOR)
    line = text.count("\n", 0, offset)
    character = offset - (text.rfind("\n", 0, offset) + 1)
    write_tree(root, {**files, target: text.replace(CURSOR, "")})
    session = Session(use_cache=False)
    session.add_root(root)
    session.index_roots()
    engine = CompletionEngine(session)
    options.setdefault("time_budget_ms", 5000)
    return completion_of(engine, CompletionRequest(root / target, line, character, **options))


def first(answer: dict) -> tuple[str, str | None]:
    snippet = answer["snippets"][0]
    return snippet["path"], snippet["qualname"]


def places(answer: dict) -> list[tuple[str, str | None]]:
    return [(s["path"], s["qualname"]) for s in answer["snippets"]]


@pytest.mark.parametrize(("cursor_file", "expected"), [
    # A call being typed, imported by name.
    ("from shop.pricing import total_price\n\n\ndef checkout(cart):\n    return total_pr‸\n",
     ("shop/pricing.py", "total_price")),
    # from a import b as c
    ("from shop.pricing import total_price as cost\n\n\ndef checkout(cart):\n    return cost(‸\n",
     ("shop/pricing.py", "total_price")),
    # import x as y, then y.member
    ("import shop.text as text_utils\n\n\ndef page(title):\n    return text_utils.slugify(‸\n",
     ("shop/text.py", "slugify")),
    # A re-export with an alias through __init__.py.
    ("from shop import price_of\n\n\ndef checkout(cart):\n    return price_of(‸\n",
     ("shop/pricing.py", "total_price")),
    # A wildcard re-export through __init__.py.
    ("from shop import Item\n\n\ndef restock():\n    return Item(‸\n",
     ("shop/models.py", "Item")),
    # The call whose arguments the cursor is in wins over other calls on the line.
    ("from shop.pricing import total_price\nfrom shop.text import slugify\n\n\ndef f(cart):\n    "
     + "return slugify(‸total_price(cart))\n", ("shop/text.py", "slugify")),
    # A package's submodule imported by name.
    ("from shop import text\n\n\ndef page(title):\n    return text.slu‸\n",
     ("shop/text.py", "slugify")),
])
def test_the_definition_of_the_name_being_used_comes_first(tmp_path, cursor_file, expected):
    answer = ask(tmp_path, {**PYTHON, "app/views.py": cursor_file}, "app/views.py")
    assert first(answer) == expected
    assert answer["truncated"] is False


def test_relative_imports_are_anchored_at_the_importing_file(tmp_path):
    files = {**PYTHON, "shop/checkout.py": "from .pricing import total_price\n\n\ndef pay(cart):\n    return total_price(‸\n"}
    assert first(ask(tmp_path, files, "shop/checkout.py")) == ("shop/pricing.py", "total_price")
    files = {**PYTHON, "shop/sub/deep.py": "from ..text import slugify\n\n\ndef name(x):\n    return slugify(‸\n"}
    assert first(ask(tmp_path, files, "shop/sub/deep.py")) == ("shop/text.py", "slugify")


def test_a_function_shows_its_signature_and_docstring_and_its_body_when_the_budget_allows(tmp_path):
    files = {**PYTHON, "app/views.py": "from shop.pricing import total_price\n\n\ndef checkout(cart):\n    return total_price(‸\n"}
    roomy = ask(tmp_path / "a", files, "app/views.py")["snippets"][0]
    assert roomy["content"].splitlines() == PYTHON["shop/pricing.py"].splitlines()[3:7]
    # The signature first: the budget fits the head only.
    tight = ask(tmp_path / "b", files, "app/views.py", budget_tokens=50)["snippets"][0]
    assert tight["content"].startswith("def total_price(items, discount=0.0):\n    \"\"\"Sum the items'")
    assert "subtotal" not in tight["content"]
    assert tight["content"].endswith("    # ...")


def test_a_class_shows_its_docstring_and_constructor_signature(tmp_path):
    files = {**PYTHON, "app/views.py": "from shop.models import Item\n\n\ndef restock():\n    return Item(‸\n"}
    snippet = ask(tmp_path, files, "app/views.py", budget_tokens=60)["snippets"][0]
    assert snippet["content"].splitlines()[:5] == [
        "class Item:", '    """Something to sell."""', "", "    def __init__(self, name: str, price: float) -> None:",
        "        # ...",
    ]


def test_the_budget_and_the_snippet_limit_are_respected(tmp_path):
    files = {**PYTHON, "app/views.py": (
        "from shop.pricing import total_price, unrelated_helper\nfrom shop.models import Item\n"
        "from shop.text import slugify\n\n\ndef checkout(cart):\n    slugify(cart.name)\n    Item('x', 1)\n"
        "    return total_price(‸\n")}
    for budget in (30, 80, 150, 512):
        answer = ask(tmp_path / str(budget), files, "app/views.py", budget_tokens=budget)
        assert answer["tokens"] <= budget
        assert estimate_tokens(answer["prompt"]) <= budget
        assert sum(s["tokens"] for s in answer["snippets"]) <= budget
    limited = ask(tmp_path / "limited", files, "app/views.py", max_snippets=2)
    assert len(limited["snippets"]) == 2 and limited["omitted"] >= 1


def test_a_first_snippet_larger_than_the_budget_is_cut_to_whole_lines(tmp_path):
    long_doc = "\n".join(f"    line {i} of a long docstring" for i in range(40))
    files = {"lib/big.py": f'def big(a, b):\n    """\n{long_doc}\n    """\n    return a\n',
             "app/use.py": "from lib.big import big\n\n\nbig(‸\n"}
    answer = ask(tmp_path, files, "app/use.py", budget_tokens=30)
    assert answer["tokens"] <= 30
    assert answer["snippets"][0]["content"].startswith("def big(a, b):")
    assert answer["truncated"] is True


def test_the_prompt_heads_each_snippet_with_its_path_as_a_comment(tmp_path):
    files = {**PYTHON, "app/views.py": "from shop.pricing import total_price\n\n\ndef checkout(cart):\n    return total_price(‸\n"}
    answer = ask(tmp_path, files, "app/views.py", max_snippets=1)
    snippet = answer["snippets"][0]
    assert answer["prompt"] == f"# shop/pricing.py\n{snippet['content']}\n"
    assert snippet["uri"] == (tmp_path / "shop/pricing.py").as_uri()


def test_the_cursors_own_file_gives_only_definitions_far_from_the_cursor(tmp_path):
    filler = "".join(f"VALUE_{i} = {i}\n" for i in range(60))
    cursor_file = (
        "def far_helper(x):\n    return x\n\n\n" + filler +
        "\n\ndef near_helper(x):\n    return x\n\n\ndef main():\n    far_helper(1)\n    near_helper(2)\n    ‸\n"
    )
    answer = ask(tmp_path, {"app/main.py": cursor_file}, "app/main.py")
    assert ("app/main.py", "far_helper") in places(answer)
    assert ("app/main.py", "near_helper") not in places(answer)
    assert ("app/main.py", "main") not in places(answer)


def test_the_enclosing_class_signature_is_given_when_it_is_off_screen(tmp_path):
    methods = "".join(f"    def method_{i}(self):\n        return {i}\n\n" for i in range(30))
    cursor_file = f'class Service:\n    """Does things."""\n\n{methods}    def last(self):\n        ‸\n'
    answer = ask(tmp_path, {"app/service.py": cursor_file}, "app/service.py")
    enclosing = [s for s in answer["snippets"] if s["source"] == "enclosing"]
    assert [s["qualname"] for s in enclosing] == ["Service"]
    assert enclosing[0]["content"].startswith('class Service:\n    """Does things."""')


def test_an_unused_import_is_about_to_be_used(tmp_path):
    files = {**PYTHON, "app/views.py": (
        "from shop.pricing import total_price, unrelated_helper\nfrom shop.text import slugify\n\n\n"
        "def checkout(cart):\n    slugify(cart.name)\n    unrelated_helper(cart)\n    ‸\n")}
    assert first(ask(tmp_path, files, "app/views.py")) == ("shop/pricing.py", "total_price")


def test_many_unused_imports_share_the_evidence_of_being_about_to_be_used(tmp_path):
    # A file being written: most imports are used below the cursor, which is not written yet.
    names = [f"helper_{i}" for i in range(12)]
    files = {"lib/helpers.py": "".join(f"def {n}():\n    return {i}\n\n\n" for i, n in enumerate(names)),
             "app/main.py": f"from lib.helpers import {', '.join(names)}\n\n\ndef go():\n"
                            "    value = helper_0()\n    ‸\n"}
    assert first(ask(tmp_path, files, "app/main.py")) == ("lib/helpers.py", "helper_0")


def test_the_type_a_function_returns_and_has_not_made_yet_comes_first(tmp_path):
    files = {"lib/a.py": "class Order:\n    pass\n", "lib/b.py": "class Receipt:\n    pass\n",
             "app/main.py": "from lib.a import Order\nfrom lib.b import Receipt\n\n\n"
                            "def checkout(x: Order) -> Receipt:\n    ‸\n"}
    answer = ask(tmp_path, files, "app/main.py")
    assert places(answer)[:2] == [("lib/b.py", "Receipt"), ("lib/a.py", "Order")]
    assert "the enclosing function returns it and has not made one yet" in answer["snippets"][0]["why"]


def test_names_used_together_elsewhere_come_together_again(tmp_path):
    checks = "".join(f"def {n}(f):\n    return f\n\n\n" for n in ("is_plain", "is_gen", "is_async_gen"))
    padding = "".join(f"    step_{i} = {i}\n" for i in range(50))
    files = {"lib/checks.py": checks, "app/main.py": (
        "from lib.checks import is_async_gen, is_gen, is_plain\n\n\n"
        f"def first(f):\n    if is_gen(f) or is_async_gen(f):\n        return 1\n{padding}    return is_plain(f)\n\n\n"
        f"def second(f):\n{padding}    if is_async_gen(f):\n        return 2\n    ‸\n")}
    answer = ask(tmp_path, files, "app/main.py")
    order = [qualname for _, qualname in places(answer)]
    assert order.index("is_gen") < order.index("is_plain")
    assert any(why.startswith("used with is_async_gen") for why in answer["snippets"][order.index("is_gen")]["why"])


def test_names_outside_the_workspace_resolve_to_nothing(tmp_path):
    files = {"lib/request.py": "class Request:\n    pass\n",
             "app/main.py": "from requests import Request\n\n\ndef go():\n    return Request(‸\n"}
    assert ask(tmp_path, files, "app/main.py")["snippets"] == []


def test_bad_positions_are_refused(tmp_path):
    files = {**PYTHON, "app/views.py": "x = 1\n‸"}
    ask(tmp_path, files, "app/views.py")
    session = Session(use_cache=False)
    session.add_root(tmp_path)
    engine = CompletionEngine(session)
    with pytest.raises(PositionError, match="past the end"):
        completion_of(engine, CompletionRequest(tmp_path / "app/views.py", 5, 0))
    with pytest.raises(PositionError, match="past the end of line 0"):
        completion_of(engine, CompletionRequest(tmp_path / "app/views.py", 0, 6))


def test_positions_count_utf16_units_when_asked(tmp_path):
    files = {**PYTHON, "app/views.py": "from shop.text import slugify\n\n\nlabel = '🎉' + slugify(‸\n"}
    answer = ask(tmp_path, files, "app/views.py")
    assert first(answer) == ("shop/text.py", "slugify")
    session = Session(use_cache=False)
    session.add_root(tmp_path)
    session.index_roots()
    line = "label = '🎉' + slugify("
    utf16 = len(line.encode("utf-16-le")) // 2
    request = CompletionRequest(tmp_path / "app/views.py", 3, utf16, encoding="utf-16", time_budget_ms=5000)
    assert first(completion_of(CompletionEngine(session), request)) == ("shop/text.py", "slugify")
    with pytest.raises(PositionError):
        completion_of(CompletionEngine(session), CompletionRequest(tmp_path / "app/views.py", 3, utf16 + 1,
                                                            encoding="utf-16", time_budget_ms=5000))


def open_session(root: Path, files: dict[str, str]) -> Session:
    write_tree(root, files)
    session = Session(use_cache=False)
    session.add_root(root)
    session.index_roots()
    return session


def test_unsaved_text_in_another_open_buffer_counts(tmp_path):
    session = open_session(tmp_path, {**PYTHON, "app/views.py": "from shop.text import shout\n\n\nshout(\n"})
    engine = CompletionEngine(session)
    request = CompletionRequest(tmp_path / "app/views.py", 3, 6, time_budget_ms=5000)
    assert completion_of(engine, request)["snippets"] == []
    # `shout` is typed into shop/text.py but not saved.
    text_path = tmp_path / "shop/text.py"
    session.open_document(text_path, PYTHON["shop/text.py"] + '\n\ndef shout(words):\n    """LOUD."""\n', 1)
    answer = completion_of(engine, request)
    assert first(answer) == ("shop/text.py", "shout")
    assert answer["snippets"][0]["start_line"] == 6


def test_answers_are_cached_per_version_and_line_and_invalidated_by_edits(tmp_path):
    session = open_session(tmp_path, {**PYTHON, "app/views.py": ""})
    views = tmp_path / "app/views.py"
    session.open_document(views, "from shop.pricing import total_price\n\n\ntotal_price(\n", 1)
    engine = CompletionEngine(session)
    request = CompletionRequest(views, 3, 12, time_budget_ms=5000)
    assert completion_of(engine, request)["cached"] is False
    again = completion_of(engine, request)
    assert again["cached"] is True and first(again) == ("shop/pricing.py", "total_price")
    assert completion_of(engine, CompletionRequest(views, 2, 0, time_budget_ms=5000))["cached"] is False
    # An edit of the buffer is a new version.
    session.change_document(views, 2, ["from shop.pricing import total_price\n\n\ntotal_price(1)\n"])
    assert completion_of(engine, request)["cached"] is False
    assert completion_of(engine, request)["cached"] is True
    # A change on disk to a file the answer came from.
    pricing = tmp_path / "shop/pricing.py"
    pricing.write_text("\n\n" + PYTHON["shop/pricing.py"])
    session.file_changed(pricing)
    answer = completion_of(engine, request)
    assert answer["cached"] is False and answer["snippets"][0]["start_line"] == 6
    # An edit in another open buffer (it may define what the cursor needs).
    session.open_document(tmp_path / "shop/text.py", PYTHON["shop/text.py"], 1)
    assert completion_of(engine, request)["cached"] is False


def test_similar_code_in_other_open_buffers_ranks_below_resolved_definitions(tmp_path):
    session = open_session(tmp_path, {**PYTHON, "app/views.py": "", "app/other.py": ""})
    other = (
        "def render_invoice(order, customer):\n    lines = [order.number, customer.name]\n"
        "    header = format_header(order, customer)\n    return '\\n'.join(lines)\n"
    )
    session.open_document(tmp_path / "app/other.py", other, 1)
    views = tmp_path / "app/views.py"
    session.open_document(views, (
        "from shop.pricing import total_price\n\n\ndef render_receipt(order, customer):\n"
        "    lines = [order.number, customer.name]\n    header = format_header(order, customer)\n"
        "    total = total_price(\n"), 1)
    answer = completion_of(CompletionEngine(session), CompletionRequest(views, 6, 23, time_budget_ms=5000))
    sources = [s["source"] for s in answer["snippets"]]
    assert sources[0] == "import" and "similar" in sources
    similar = answer["snippets"][sources.index("similar")]
    assert (similar["path"], similar["start_line"], similar["kind"]) == ("app/other.py", 1, "code")
    assert similar["content"].startswith("def render_invoice")


RENDER_INVOICE = (
    "def render_invoice(order, customer):\n    lines = [order.number, customer.name]\n"
    "    header = format_header(order, customer)\n    return '\\n'.join(lines)\n"
)
RENDER_RECEIPT = (
    "def render_receipt(order, customer):\n    lines = [order.number, customer.name]\n"
    "    header = format_header(order, customer)\n"
)


def edit_save_and_close(session: Session, path: Path, text: str) -> None:
    """What an editor does: open a file, type into it, save it, close it."""
    session.open_document(path, path.read_text() if path.exists() else "", 1)
    session.change_document(path, 2, [text])
    path.write_text(text)
    session.close_document(path)


def similar_snippets(answer: dict) -> list[tuple[str, int, list[str]]]:
    return [(s["path"], s["start_line"], s["why"]) for s in answer["snippets"] if s["source"] == "similar"]


def test_similar_code_comes_from_recently_edited_files_after_they_close(tmp_path):
    session = open_session(tmp_path, {**PYTHON, "app/views.py": "", "app/other.py": ""})
    edit_save_and_close(session, tmp_path / "app/other.py", RENDER_INVOICE)
    assert tmp_path / "app/other.py" not in session.documents
    views = tmp_path / "app/views.py"
    session.open_document(views, RENDER_RECEIPT, 1)
    answer = completion_of(CompletionEngine(session), CompletionRequest(views, 3, 0, time_budget_ms=5000))
    [(path, start, why)] = similar_snippets(answer)
    assert (path, start) == ("app/other.py", 1) and "recently edited file" in why[0]
    shown = answer["snippets"][[s["source"] for s in answer["snippets"]].index("similar")]
    assert shown["content"].startswith("def render_invoice")


def test_an_open_buffer_outweighs_an_equally_similar_closed_file(tmp_path):
    session = open_session(tmp_path, {**PYTHON, "app/views.py": "", "app/closed.py": "", "app/open.py": ""})
    edit_save_and_close(session, tmp_path / "app/closed.py", RENDER_INVOICE)
    session.open_document(tmp_path / "app/open.py", RENDER_INVOICE, 1)
    views = tmp_path / "app/views.py"
    session.open_document(views, RENDER_RECEIPT, 1)
    answer = completion_of(CompletionEngine(session), CompletionRequest(views, 3, 0, time_budget_ms=5000))
    found = similar_snippets(answer)
    assert [path for path, _, _ in found] == ["app/open.py", "app/closed.py"]
    scores = [s["score"] for s in answer["snippets"] if s["source"] == "similar"]
    assert scores[0] > scores[1]


def test_a_deleted_or_discarded_file_gives_no_similar_code(tmp_path):
    session = open_session(tmp_path, {**PYTHON, "app/views.py": "", "app/other.py": ""})
    other = tmp_path / "app/other.py"
    edit_save_and_close(session, other, RENDER_INVOICE)
    views = tmp_path / "app/views.py"
    session.open_document(views, RENDER_RECEIPT, 1)
    engine = CompletionEngine(session)
    request = CompletionRequest(views, 3, 0, time_budget_ms=5000)
    assert similar_snippets(completion_of(engine, request))
    other.unlink()
    session.file_deleted(other)
    answer = completion_of(engine, request)
    assert answer["cached"] is False and similar_snippets(answer) == []
    # A new buffer typed into and closed unsaved leaves nothing behind either.
    draft = tmp_path / "app/draft.py"
    session.open_document(draft, "", 1)
    session.change_document(draft, 2, [RENDER_INVOICE])
    session.close_document(draft)
    assert similar_snippets(completion_of(engine, request)) == []


def test_the_recently_edited_list_is_bounded_and_most_recent_first(tmp_path):
    from rag_lsp.workspace.session import MAX_RECENT_EDITS

    count = MAX_RECENT_EDITS + 5
    session = open_session(tmp_path, {f"m{i}.py": "" for i in range(count)})
    for i in range(count):
        path = tmp_path / f"m{i}.py"
        session.open_document(path, "", 1)
        session.change_document(path, 2, [f"x = {i}\n"])
        session.close_document(path)
    # Editing a file again moves it to the front.
    session.open_document(tmp_path / "m10.py", "", 1)
    session.change_document(tmp_path / "m10.py", 2, ["x = 10\n"])
    recent = session.recently_edited()
    expected = [10, *[i for i in range(count - 1, 4, -1) if i != 10]]
    assert recent == [tmp_path / f"m{i}.py" for i in expected][:MAX_RECENT_EDITS]
    assert len(recent) == MAX_RECENT_EDITS


def test_the_time_budget_returns_the_best_so_far_marked_truncated(tmp_path, monkeypatch):
    names = [f"helper_{i}" for i in range(40)]
    files = {"lib/helpers.py": "".join(f"def {n}():\n    return {i}\n\n\n" for i, n in enumerate(names)),
             "app/main.py": "".join(f"from lib.helpers import {n}\n" for n in names) + "\n\nhelper_3(‸\n"}
    real = time.perf_counter
    calls = {"n": 0}

    def slow_clock():
        calls["n"] += 1
        return real() + calls["n"] * 0.01  # every look at the clock costs 10 ms

    answer_fast = ask(tmp_path / "fast", files, "app/main.py")
    assert answer_fast["truncated"] is False
    monkeypatch.setattr("rag_lsp.completion.engine.time.perf_counter", slow_clock)
    answer = ask(tmp_path / "slow", files, "app/main.py", time_budget_ms=50)
    assert answer["truncated"] is True
    assert answer["snippets"], "the best found so far is returned"
    assert first(answer) == ("lib/helpers.py", "helper_3")


def test_a_file_outside_every_root_gets_an_empty_answer_with_a_warning(tmp_path):
    session = open_session(tmp_path / "ws", {"a.py": "x = 1\n"})
    outside = tmp_path / "elsewhere.py"
    outside.write_text("import os\n")
    answer = completion_of(CompletionEngine(session), CompletionRequest(outside, 0, 0))
    assert answer["snippets"] == [] and answer["warnings"] == ["the file is outside every workspace folder"]


TYPESCRIPT = {
    "web/lib/format.ts": (
        "/** Formats a price with two decimals. */\n"
        "export function formatPrice(value: number, currency: string): string {\n"
        "  return `${value.toFixed(2)} ${currency}`;\n}\n\n"
        "export interface Cart {\n  id: string;\n  total: number;\n}\n"
    ),
    "web/lib/index.ts": 'export { formatPrice as price } from "./format";\nexport * from "./format";\n',
    "web/lib/dates.ts": "export function isoDate(when: Date): string {\n  return when.toISOString();\n}\n",
}


@pytest.mark.parametrize(("cursor_file", "expected"), [
    # Named import, relative path.
    ('import { formatPrice } from "./lib/format";\n\nexport const show = (n: number) => formatPrice(‸\n',
     ("web/lib/format.ts", "formatPrice")),
    # import { a as b }
    ('import { formatPrice as fp } from "./lib/format";\n\nexport const show = (n: number) => fp(‸\n',
     ("web/lib/format.ts", "formatPrice")),
    # import * as ns, then ns.member
    ('import * as dates from "./lib/dates";\n\nexport const stamp = () => dates.iso‸\n',
     ("web/lib/dates.ts", "isoDate")),
    # A re-export with an alias through index.ts (a directory import).
    ('import { price } from "./lib";\n\nexport const show = (n: number) => price(‸\n',
     ("web/lib/format.ts", "formatPrice")),
    # `export *` through index.ts.
    ('import { Cart } from "./lib";\n\nexport function load(id: string): Cart {\n  const cart: Cart = ‸\n}\n',
     ("web/lib/format.ts", "Cart")),
])
def test_typescript_imports_aliases_and_re_exports_are_followed(tmp_path, cursor_file, expected):
    answer = ask(tmp_path, {**TYPESCRIPT, "web/app.ts": cursor_file}, "web/app.ts")
    assert first(answer) == expected
    assert answer["prompt"].startswith(f"// {expected[0]}\n")
