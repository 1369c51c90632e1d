"""The completion-context contract: docs/protocol.md's examples and options, the command line, the params."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from answers import completion_of
from pygls.exceptions import JsonRpcInvalidParams

from rag_lsp.cli import build_parser, main
from rag_lsp.completion.engine import CompletionEngine, CompletionRequest
from rag_lsp.server.params import completion_params
from rag_lsp.workspace.session import Session

DOC = (Path(__file__).parents[2] / "docs" / "protocol.md").read_text(encoding="utf-8")


def documented(marker: str) -> dict:
    match = re.search(rf"<!-- {marker} -->\s*```json\n(.*?)```", DOC, re.DOTALL)
    assert match, f"no {marker} example in docs/protocol.md"
    return json.loads(match.group(1))


def shape(value):
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return [shape(value[0])]
    return None


def ledger_answer(root: Path) -> dict:
    session = Session(use_cache=False)
    session.add_root(root)
    session.index_roots()
    return completion_of(CompletionEngine(session), CompletionRequest(root / "shop/ledger.py", 13, 35, time_budget_ms=5000))


def test_the_documented_answer_is_the_real_one(ledger_root):
    example = documented("completion-result")
    answer = ledger_answer(ledger_root)
    assert shape(example) == shape(answer)
    mine = answer["snippets"][0]
    theirs = example["snippets"][0]
    for key in ("path", "start_line", "end_line", "symbol", "kind", "source", "why", "content", "tokens"):
        assert mine[key] == theirs[key], key
    assert answer["prompt"] == example["prompt"]


def test_every_answer_field_is_described():
    example = documented("completion-result")
    for field in [*example, *example["snippets"][0]]:
        assert re.search(rf"`(snippets\[\]\.)?{field}(\[\])?`", DOC), field


def test_the_documented_params_are_accepted():
    request = completion_params(documented("completion-params"), "utf-16")
    assert (request.line, request.character, request.budget_tokens, request.max_snippets) == (13, 35, 512, 8)
    assert request.encoding == "utf-16" and request.time_budget_ms == 50


@pytest.mark.parametrize(("params", "message"), [
    (None, "needs 'textDocument' and 'position'"),
    ({"position": {"line": 0, "character": 0}}, "needs 'textDocument' and 'position'"),
    ({"textDocument": {"uri": "file:///x.py"}, "position": {"line": "1", "character": 0}}, "non-negative"),
    ({"textDocument": {"uri": "untitled:1"}, "position": {"line": 0, "character": 0}}, "only file: URIs"),
    ({"textDocument": {"uri": "file:///x.py"}, "position": {"line": 0, "character": 0}, "budgetTokens": True},
     "'budgetTokens'"),
    ({"textDocument": {"uri": "file:///x.py"}, "position": {"line": 0, "character": 0}, "maxSnippets": 101},
     "'maxSnippets' must be an integer from 1 to 100"),
])
def test_bad_params_name_the_field(params, message):
    with pytest.raises(JsonRpcInvalidParams, match=message):
        completion_params(params, "utf-16")


def test_every_command_line_option_is_documented():
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices
    for action in commands["completion-context"]._actions:
        for option in action.option_strings:
            if option.startswith("--") and option != "--help":
                assert f"`{option}`" in DOC or option in DOC, option


def test_the_command_line_prints_the_prompt_or_the_json(ledger_root, capsys):
    args = ["completion-context", "--root", str(ledger_root), "--file", str(ledger_root / "shop/ledger.py"),
            "--line", "14", "--column", "36", "--no-cache"]
    assert main(args) == 0
    printed = capsys.readouterr()
    assert printed.out.startswith("# shop/currency.py\ndef convert(amount, currency):")
    assert "1 snippets" in printed.err
    assert main([*args, "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["snippets"][0]["qualname"] == "convert"
    assert answer == {**ledger_answer(ledger_root), "elapsed_ms": answer["elapsed_ms"]}


def test_the_command_line_refuses_bad_positions_files_and_roots(ledger_root, tmp_path, capsys):
    base = ["completion-context", "--root", str(ledger_root), "--no-cache"]
    assert main([*base, "--file", str(ledger_root / "shop/ledger.py"), "--line", "99"]) == 2
    assert "past the end" in capsys.readouterr().err
    assert main([*base, "--file", str(ledger_root / "shop/ledger.py"), "--line", "14", "--column", "200"]) == 2
    assert main([*base, "--file", str(ledger_root / "missing.py"), "--line", "1"]) == 4
    assert main(["completion-context", "--root", str(tmp_path / "nope"), "--file", "x.py", "--line", "1"]) == 3
    with pytest.raises(SystemExit):
        main([*base, "--file", "x.py", "--line", "0"])
