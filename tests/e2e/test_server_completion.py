"""ragLsp/completionContext end to end: a real stdio server, a real client, Python and TypeScript fixtures."""

from __future__ import annotations

import pytest
from conftest import write_tree
from lsp_harness import Harness, run
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from rag_lsp.retrieval.token_count import estimate_tokens

WORKSPACE = {
    # Python: a package re-exporting (with an alias) through __init__.py.
    "shop/__init__.py": "from .pricing import total_price as price_of\n",
    "shop/pricing.py": (
        "def total_price(items, discount=0.0):\n"
        '    """Sum the items\' prices, minus a discount between 0 and 1."""\n'
        "    return sum(item.price for item in items) * (1 - discount)\n"
    ),
    "shop/text.py": 'def slugify(title):\n    """Lowercase words joined by dashes."""\n    return "-".join(title.split())\n',
    "shop/views.py": "",
    # TypeScript: a directory re-exporting through index.ts.
    "web/lib/format.ts": (
        "/** Formats a price with two decimals. */\n"
        "export function formatPrice(value: number, currency: string): string {\n"
        "  return `${value.toFixed(2)} ${currency}`;\n}\n"
    ),
    "web/lib/index.ts": 'export { formatPrice as price } from "./format";\n',
    "web/app.ts": "",
}


def snippet_places(answer) -> list[tuple[str, str]]:
    return [(s.path, s.symbol) for s in answer.snippets]


def position(line: int, character: int) -> dict:
    return {"line": line, "character": character}


# A busy test machine must not turn an answer into a partial one.
SLACK = {"timeBudgetMs": 5000}
# These tests are about what names and imports give; a real server's part (and that an answer made while it
# starts is not cached) is tested in test_server_langservers.py.
NO_LANGUAGE_SERVERS = {"languageServers": {language: {"enabled": False}
                                           for language in ("python", "javascript", "typescript", "tsx")}}


def test_completion_context_over_stdio(tmp_path):
    root = write_tree(tmp_path / "ws", WORKSPACE)

    async def scenario() -> None:
        harness = Harness(tmp_path / "cache", tmp_path / "server.log")
        await harness.start([root], options=NO_LANGUAGE_SERVERS)
        await harness.wait_indexed()

        # A call being typed in an unsaved buffer, through a relative import with an alias.
        views = root / "shop/views.py"
        uri = harness.open(views, text="from .pricing import total_price as cost\n\n\ndef checkout(cart):\n    return \n")
        harness.change(uri, 2, [types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(4, 11), types.Position(4, 11)), text="cost(")])
        answer = await harness.request("ragLsp/completionContext",
                                       {"textDocument": {"uri": uri}, "position": position(4, 16), **SLACK})
        assert snippet_places(answer)[0] == ("shop/pricing.py", "total_price")
        first = answer.snippets[0]
        assert first.uri == (root / "shop/pricing.py").as_uri()
        assert first.content.startswith("def total_price(items, discount=0.0):")
        assert first.kind == "function" and first.start_line == 1 and first.why
        assert answer.prompt.startswith("# shop/pricing.py\ndef total_price(")
        assert answer.truncated is False and answer.elapsed_ms >= 0

        # The same position and version again: answered from the cache.
        again = await harness.request("ragLsp/completionContext",
                                      {"textDocument": {"uri": uri}, "position": position(4, 16), **SLACK})
        assert again.cached is True and snippet_places(again) == snippet_places(answer)

        # A re-export through __init__.py with an alias, and a function typed a moment ago in another buffer.
        text_uri = harness.open(root / "shop/text.py")
        harness.change(text_uri, 2, [types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(3, 0), types.Position(3, 0)),
            text='\n\ndef shout(words):\n    """Upper case, with feeling."""\n    return words.upper() + "!"\n')])
        harness.change(uri, 3, [types.TextDocumentContentChangeWholeDocument(
            text="from shop import price_of\nfrom shop.text import shout\n\n\ndef checkout(cart):\n"
                 "    shout(price_of(cart))\n")])
        answer = await harness.request("ragLsp/completionContext",
                                       {"textDocument": {"uri": uri}, "position": position(5, 10), **SLACK})
        places = snippet_places(answer)
        assert places[0] == ("shop/text.py", "shout")
        assert ("shop/pricing.py", "total_price") in places
        assert answer.cached is False

        # TypeScript: an aliased re-export through a directory's index.ts.
        app = root / "web/app.ts"
        app_uri = harness.open(app, language="typescript",
                               text='import { price } from "./lib";\n\nexport const show = (n: number) => price(n, "EUR");\n')
        answer = await harness.request("ragLsp/completionContext",
                                       {"textDocument": {"uri": app_uri}, "position": position(2, 42), **SLACK})
        assert snippet_places(answer)[0] == ("web/lib/format.ts", "formatPrice")
        assert answer.prompt.startswith("// web/lib/format.ts\n/** Formats a price with two decimals. */")

        # The budget and the snippet limit.
        for budget in (20, 60, 200):
            limited = await harness.request("ragLsp/completionContext", {
                "textDocument": {"uri": uri}, "position": position(5, 10), "budgetTokens": budget, **SLACK})
            assert limited.tokens <= budget and estimate_tokens(limited.prompt) <= budget
            assert sum(s.tokens for s in limited.snippets) <= budget
        one = await harness.request("ragLsp/completionContext", {
            "textDocument": {"uri": uri}, "position": position(5, 10), "maxSnippets": 1, **SLACK})
        assert len(one.snippets) == 1

        # Bad positions and params: a JSON-RPC error naming what is wrong; the server carries on.
        for params, message in [
            ({"textDocument": {"uri": uri}, "position": position(40, 0)}, "'position': position 40:0 is past the end"),
            ({"textDocument": {"uri": uri}, "position": position(5, 99)}, "past the end of line 5"),
            ({"textDocument": {"uri": uri}, "position": {"line": -1, "character": 0}}, "non-negative"),
            ({"textDocument": {"uri": uri}}, "needs 'textDocument' and 'position'"),
            ({"textDocument": {"uri": uri}, "position": position(0, 0), "budgetTokens": 0}, "'budgetTokens'"),
            ({"textDocument": {"uri": uri}, "position": position(0, 0), "maxSnippets": "2"}, "'maxSnippets'"),
            ({"textDocument": {"uri": (root / "missing.py").as_uri()}, "position": position(0, 0)}, "cannot read"),
        ]:
            with pytest.raises(JsonRpcInvalidParams, match=message):
                await harness.request("ragLsp/completionContext", params)
        status = await harness.request("ragLsp/status", None)
        assert status.open_documents == 3

        assert await harness.stop() == 0

    run(scenario())


def test_a_file_edited_then_closed_still_gives_similar_code_until_it_is_deleted(tmp_path):
    root = write_tree(tmp_path / "ws", {**WORKSPACE, "shop/invoice.py": "", "shop/receipt.py": ""})
    invoice = (
        "def render_invoice(order, customer):\n    lines = [order.number, customer.name]\n"
        "    header = format_header(order, customer)\n    return '\\n'.join(lines)\n"
    )

    async def scenario() -> None:
        harness = Harness(tmp_path / "cache", tmp_path / "server.log")
        await harness.start([root])
        await harness.wait_indexed()

        # A function typed into a buffer, saved, and the buffer closed.
        path = root / "shop/invoice.py"
        invoice_uri = harness.open(path)
        harness.change(invoice_uri, 2, [types.TextDocumentContentChangeWholeDocument(text=invoice)])
        path.write_text(invoice, encoding="utf-8")
        harness.client.text_document_did_close(types.DidCloseTextDocumentParams(
            types.TextDocumentIdentifier(uri=invoice_uri)))

        receipt_uri = harness.open(root / "shop/receipt.py", text=(
            "def render_receipt(order, customer):\n    lines = [order.number, customer.name]\n"
            "    header = format_header(order, customer)\n"))
        params = {"textDocument": {"uri": receipt_uri}, "position": position(3, 0), **SLACK}
        answer = await harness.request("ragLsp/completionContext", params)
        similar = [s for s in answer.snippets if s.source == "similar"]
        assert [(s.path, s.start_line) for s in similar] == [("shop/invoice.py", 1)]
        assert similar[0].content.startswith("def render_invoice") and "recently edited" in similar[0].why[0]
        status = await harness.request("ragLsp/status", None)
        assert status.open_documents == 1

        # Deleted on disk: nothing of it is left to show.
        path.unlink()
        harness.client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
            types.FileEvent(uri=invoice_uri, type=types.FileChangeType.Deleted)]))
        answer = await harness.request("ragLsp/completionContext", params)
        assert [s.path for s in answer.snippets if s.source == "similar"] == []

        assert await harness.stop() == 0

    run(scenario())
