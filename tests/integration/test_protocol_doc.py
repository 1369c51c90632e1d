"""docs/protocol.md and the code agree: documented JSON shapes and options are the real ones."""

from __future__ import annotations

import json
import re
from pathlib import Path

from answers import context_of, lookup_of, status_of

from rag_lsp.cli import build_parser
from rag_lsp.index.admission import SKIP_REASONS
from rag_lsp.index.root_index import Index
from rag_lsp.retrieval.answer import ContextRequest
from rag_lsp.server import wire

DOC = (Path(__file__).parents[2] / "docs" / "protocol.md").read_text(encoding="utf-8")


def documented(marker: str) -> dict:
    match = re.search(rf"<!-- {marker} -->\s*```json\n(.*?)```", DOC, re.DOTALL)
    assert match, f"no {marker} example in docs/protocol.md"
    return json.loads(match.group(1))


# Objects keyed by data (language names, skip reasons), not by field names.
DATA_MAPS = frozenset({"languages", "skipped", "skip_examples"})


def shape(value):
    """Keys of a JSON value, recursively through objects and the first list element."""
    if isinstance(value, dict):
        return {key: None if key in DATA_MAPS else shape(item) for key, item in value.items()}
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return [shape(value[0])]
    return None


def test_context_example_has_the_real_shape(ledger_root):
    index = Index(ledger_root, use_cache=False)
    stats = index.refresh()
    result = context_of(index, ContextRequest("why does Ledger.post raise KeyError", top_k=2))
    # The command line adds the walk's statistics to "index" (cli._context).
    result["index"].update(skipped={}, parse_errors=stats.parse_errors, indexing_ms=stats.elapsed_ms)
    assert shape(documented("context-result")) == shape(result)


def test_vectors_status_example_has_the_real_shape(ledger_root, tmp_path):
    from rag_lsp.index.vectors.embedders import DenseConfig
    from rag_lsp.index.vectors.embedding import VectorIndex

    index = Index(ledger_root, use_cache=False)
    index.refresh()
    vectors = VectorIndex(index, DenseConfig(backend="wordllama"))
    vectors.sync()
    assert set(documented("vectors-status")) == set(wire.vector_status_json(vectors.status()))


def test_index_example_has_the_real_shape(ledger_root):
    stats = wire.index_stats_json(Index(ledger_root, use_cache=False).refresh())
    assert set(documented("index-result")) == set(stats)


def test_every_item_field_is_described():
    fields = shape(documented("context-result"))["items"][0]
    for field in fields:
        assert re.search(rf"`items\[\]\.{field}`|`{field}`", DOC), field


def test_every_command_line_option_is_documented():
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices
    for name in ("context", "index", "lookup", "mcp"):
        for action in commands[name]._actions:
            for option in action.option_strings:
                if option.startswith("--") and option != "--help":
                    assert f"`{option}`" in DOC or option in DOC, f"{name} {option}"


def test_every_skip_reason_is_documented():
    for reason in SKIP_REASONS:
        assert f"`{reason}`" in DOC, reason


def documented_table(marker: str) -> set[str]:
    """The backticked names in the first column of the table after a marker."""
    match = re.search(rf"<!-- {marker} -->\n(.*?)\n\n", DOC, re.DOTALL)
    assert match, f"no {marker} table in docs/protocol.md"
    names = set()
    for row in match.group(1).splitlines()[2:]:
        names.update(re.findall(r"`([^`]+)`", row.split("|")[1]))
    return names


def test_server_methods_and_commands_match_the_document():
    from rag_lsp.server.app import build_server

    server = build_server(use_cache=False)
    assert documented_table("server-methods") == set(server.protocol.fm.features)
    assert documented_table("server-commands") == set(server.protocol.fm.commands)


def test_custom_requests_and_commands_are_the_ext_module():
    from rag_lsp.server import ext
    from rag_lsp.server.app import build_server

    server = build_server(use_cache=False)
    custom = {name for name in server.protocol.fm.features if name.startswith("ragLsp/")}
    assert custom == set(ext.CUSTOM_REQUESTS)
    assert set(server.protocol.fm.commands) == set(ext.COMMANDS)


def test_settings_table_matches_the_settings():
    from rag_lsp.workspace.settings import KNOWN_KEYS, Settings

    documented = documented_table("settings")
    assert documented == set(wire.settings_json(Settings()))
    for key in KNOWN_KEYS:
        assert f"`{key}`" in DOC, key


def test_context_params_example_is_accepted():
    from rag_lsp.server.params import context_params
    from rag_lsp.workspace.settings import Settings

    decoded = context_params(documented("context-params"), Settings())
    assert decoded.request.top_k == 10 and decoded.verbosity == "full" and decoded.focus.line == 12


def test_status_example_has_the_real_shape(ledger_root):
    from rag_lsp.workspace.session import Session

    # Language servers are planned (and listed) without being started: they start on first need.
    session = Session(use_cache=False, language_servers=True)
    session.add_root(ledger_root)
    session.index_roots()
    status = status_of(session)
    assert shape(documented("status-result")) == shape(status)
    assert {server["state"] for server in status["language_servers"]} <= {"idle", "missing"}
    session.close()


def test_lookup_examples_have_the_real_shape(ledger_root):
    from rag_lsp.features.lookup import LOOKUPS
    from rag_lsp.server.params import lookup_params
    from rag_lsp.workspace.session import Session

    decoded = lookup_params(documented("lookup-params"), LOOKUPS)
    assert (decoded.symbol, decoded.what) == ("RateLimiter.allow", "references")
    session = Session(use_cache=False)
    session.add_root(ledger_root)
    session.index_roots()
    answer = lookup_of(session, "convert", "references")
    # The server adds each item's URI (app._register_requests); the patterns answer without servers.
    for item in answer["items"]:
        item["uri"] = "file:///x"
    answer["language_servers"] = [{"server": "pyright", "languages": [], "state": "ready", "calls": 1,
                                   "answered": 1, "remembered": 0, "skipped": None}]
    assert shape(documented("lookup-result")) == shape(answer)
    assert {item["source"] for item in answer["items"]} == {"tree-sitter"}


def test_mcp_tools_and_their_arguments_match_the_document():
    from rag_lsp.mcp_server.tools import TOOLS

    assert documented_table("mcp-tools") == {tool.name for tool in TOOLS}
    table = re.search(r"<!-- mcp-tools -->\n(.*?)\n\n", DOC, re.DOTALL)
    assert table
    rows = {row.split("|")[1].strip().strip("`"): row for row in table.group(1).splitlines()[2:]}
    for tool in TOOLS:
        for argument in tool.input_schema["properties"]:
            assert f"`{argument}`" in rows[tool.name].split("|")[2], (tool.name, argument)


def test_mcp_freshness_example_has_the_real_shape(ledger_root):
    from rag_lsp.mcp_server.live_workspace import LiveWorkspace

    workspace = LiveWorkspace([ledger_root], use_cache=False, language_servers=False)
    try:
        assert shape(documented("mcp-freshness")) == shape({"freshness": workspace.freshness()})
    finally:
        workspace.close()
