"""Hundreds of random didChange edits leave the server answering exactly like a fresh index."""

from __future__ import annotations

import random

from answers import context_of
from edit_oracle import apply, random_edit
from lsp_harness import Harness, run
from lsprotocol import types

from rag_lsp.index.root_index import Index
from rag_lsp.retrieval.answer import ContextRequest

QUERIES = ["ledger post account currency", "def class return", "convert rate", "reconcile balance"]


def comparable(answer) -> list[tuple]:
    items = answer["items"] if isinstance(answer, dict) else answer.items
    get = (lambda item, key: item[key]) if isinstance(answer, dict) else getattr
    return [(get(i, "path"), get(i, "start_line"), get(i, "end_line"), get(i, "qualname"),
             get(i, "content"), round(get(i, "score"), 9)) for i in items]


def test_random_edits_through_did_change_equal_a_fresh_index(ledger_root, tmp_path):
    rng = random.Random(20261130)
    ledger = ledger_root / "shop/ledger.py"
    start = ledger.read_text() + "\nNOTE = 'crème brûlée 🎉'\r\n\r\ndef balance(ledger):\r\n    return 0\r\n"
    ledger.write_text(start, newline="")

    async def scenario() -> list[list[tuple]]:
        harness = Harness(tmp_path / "cache", tmp_path / "server.log")
        await harness.start([ledger_root])
        await harness.wait_indexed()
        uri = harness.open(ledger, text=start)
        text = start
        for version in range(2, 302):
            changes = []
            for _ in range(rng.randrange(1, 3)):
                edit = random_edit(rng, text)
                text = apply(text, edit)
                sl, sc, el, ec, new = edit
                changes.append(types.TextDocumentContentChangePartial(
                    range=types.Range(types.Position(sl, sc), types.Position(el, ec)), text=new))
            harness.change(uri, version, changes)
        answers = [comparable(await harness.request("ragLsp/context", {"query": q, "topK": 20}))
                   for q in QUERIES]
        assert await harness.stop() == 0
        return answers, text

    served, final_text = run(scenario())
    ledger.write_text(final_text, newline="")
    fresh = Index(ledger_root, use_cache=False)
    fresh.refresh()
    expected = [comparable(context_of(fresh, ContextRequest(q, top_k=20))) for q in QUERIES]
    assert served == expected
    assert any(served)
