"""``rag-lsp mcp`` end to end: the MCP SDK's own client over stdio on the polyglot workspace.

The server is the installed ``rag-lsp`` command run as a subprocess; the client is ``mcp.Client``, the
official SDK's, as an agent's host would use it. Language servers on the test setup's PATH (pyright,
typescript-language-server) are there for the server to start, as a user's would be.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from langservers_env import alive, copy_polyglot, descendants, langserver_env, require
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_harness import RAG_LSP, call, connected, server_parameters, text_of, wait_indexed

QUESTION = "why does `RateLimiter.allow` let every request through"


@pytest.fixture
def polyglot(tmp_path: Path) -> Path:
    return copy_polyglot(tmp_path / "polyglot")


def _run(scenario) -> None:
    anyio.run(scenario)


def test_the_four_tools_are_listed_with_when_to_call_them_and_their_bounds(polyglot, tmp_path):
    async def scenario() -> None:
        async with connected(server_parameters([polyglot], tmp_path)) as client:
            assert client.server_info is not None and client.server_info.name == "rag-lsp"
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert sorted(tools) == ["completion_context", "context", "lookup", "status"]
            for tool in tools.values():
                assert tool.description and "Call it" in tool.description, tool.name
                assert tool.input_schema["type"] == "object" and tool.input_schema["additionalProperties"] is False
                assert tool.annotations is not None and tool.annotations.read_only_hint is True
            context = tools["context"].input_schema["properties"]
            assert set(context) == {"question", "evidence", "topK", "budgetTokens", "format", "taskType", "mode",
                                    "verbosity", "tokenizer", "known", "enhancements"}
            assert (context["topK"]["minimum"], context["topK"]["maximum"]) == (1, 100)
            assert context["budgetTokens"]["maximum"] == 200_000
            assert tools["lookup"].input_schema["properties"]["what"]["enum"] == [
                "definitions", "references", "implementations", "hover", "outline"]
            assert tools["completion_context"].input_schema["required"] == ["file", "line"]
    _run(scenario)


def test_each_tool_answers_with_the_documented_json_and_readable_text(polyglot, tmp_path):
    async def scenario() -> None:
        async with connected(server_parameters([polyglot], tmp_path, extra=("--no-language-servers",))) as client:
            status = await wait_indexed(client)
            assert status["files"] == 15 and status["roots"][0]["root"] == str(polyglot.resolve())
            assert status["freshness"]["watcher"] == "inotify" and status["freshness"]["pending_events"] == 0

            context = await call(client, "context", {"question": QUESTION, "topK": 4})
            answer = context.structured_content
            assert not context.is_error and isinstance(answer, dict)
            paths = [item["path"] for item in answer["items"]]
            # topK counts the ranked places; what the task's template adds around them comes on top.
            ranked = [item for item in answer["items"] if item["source"] == "ranked"]
            assert "scripts/limits/rate_limiter.py" in paths and 1 <= len(ranked) <= 4
            first = answer["items"][0]
            assert first["uri"] == (polyglot.resolve() / first["path"]).as_uri() and first["content"]
            assert answer["freshness"]["indexing"] is False and answer["freshness"]["indexed_at"]
            text = text_of(context)
            # Places by absolute path, each with why and the code; a footer; the freshness line last.
            assert f"{polyglot.resolve() / 'scripts/limits/rate_limiter.py'}:" in text
            assert "def allow(self, key: str" in text and text.splitlines()[-1].startswith("[rag-lsp: index updated")

            located = await call(client, "context", {"question": QUESTION, "topK": 4, "format": "locations"})
            assert all("content" not in item for item in located.structured_content["items"])
            as_json = await call(client, "context", {"question": QUESTION, "topK": 2, "format": "json"})
            assert '"items": [' in text_of(as_json) and '"freshness": {' in text_of(as_json)

            definitions = (await call(client, "lookup", {"symbol": "RateLimiter.allow"})).structured_content
            # One per language, each from the patterns (language servers are off here).
            assert [(i["path"], i["source"]) for i in definitions["items"]] == [
                ("client/src/rateLimiter.ts", "tree-sitter"), ("crate/src/limiter.rs", "tree-sitter"),
                ("scripts/limits/rate_limiter.py", "tree-sitter")]
            references = await call(client, "lookup", {"symbol": "RateLimiter.allow", "what": "references"})
            assert ("scripts/run_jobs.py", 22) in [(i["path"], i["start_line"])
                                                   for i in references.structured_content["items"]]
            outline = await call(client, "lookup", {"what": "outline", "file": "scripts/limits/rate_limiter.py"})
            names = [item["qualname"] for item in outline.structured_content["items"]]
            assert outline.structured_content["what"] == "documentSymbols"
            assert {"Limiter", "FixedWindow", "RateLimiter", "RateLimiter.allow"} <= set(names)
            assert f"{polyglot.resolve() / 'scripts/limits/rate_limiter.py'}:" in text_of(outline)

            completion = await call(client, "completion_context",
                                    {"file": str(polyglot / "scripts/run_jobs.py"), "line": 22, "column": 20})
            snippets = completion.structured_content["snippets"]
            # The classes the enclosing function's signature names, imported from other files.
            assert {"RateLimiter", "Firewall"} <= {s["qualname"] for s in snippets}, snippets
            assert completion.structured_content["prompt"] in text_of(completion)
    _run(scenario)


def test_a_file_changed_on_disk_is_reflected_in_the_next_answer(polyglot, tmp_path):
    async def scenario() -> None:
        async with connected(server_parameters([polyglot], tmp_path, extra=("--no-language-servers",))) as client:
            await wait_indexed(client)
            question = {"question": "where is `quota_for_tenant` computed", "topK": 3}
            before = (await call(client, "context", question)).structured_content
            assert "scripts/limits/quota.py" not in [item["path"] for item in before["items"]]

            created = polyglot / "scripts/limits/quota.py"
            created.write_text('def quota_for_tenant(tenant):\n    """Requests per minute."""\n    return 42\n')
            # An answer reflects every change the watcher has received before the call; the kernel reports a
            # write within milliseconds, but on a loaded machine the watcher's thread may not have run yet
            # when the next call arrives: wait until the server says it saw the change (never more than 10 s).
            await _until_applied(client, before["freshness"]["events_applied"])
            after = (await call(client, "context", question)).structured_content
            assert after["items"][0]["path"] == "scripts/limits/quota.py"
            assert "return 42" in after["items"][0]["content"]
            assert after["freshness"]["events_applied"] > before["freshness"]["events_applied"]
            assert after["freshness"]["pending_events"] == 0

            created.write_text('def quota_for_tenant(tenant):\n    """Requests per minute."""\n    return 7\n')
            await _until_applied(client, after["freshness"]["events_applied"])
            changed = (await call(client, "lookup", {"symbol": "quota_for_tenant", "what": "hover"}))
            assert "return 7" not in text_of(changed)  # hover is the signature, not the body...
            again = (await call(client, "context", question)).structured_content
            assert "return 7" in again["items"][0]["content"]  # ...and the body is the new one.

            applied = again["freshness"]["events_applied"]
            created.unlink()
            await _until_applied(client, applied)
            gone = (await call(client, "lookup", {"symbol": "quota_for_tenant"})).structured_content
            assert gone["items"] == []
            # Directories the walk prunes are not followed: nothing is indexed from them.
            (polyglot / "node_modules/quota").mkdir(parents=True)
            (polyglot / "node_modules/quota/index.js").write_text("function quota_for_tenant() {}\n")
            (polyglot / ".gitignore").write_text("generated/\n")
            (polyglot / "generated").mkdir()
            (polyglot / "generated/quota.py").write_text("def quota_for_tenant():\n    return 1\n")
            # A change after them that is followed: once it is in, the ones before it were seen too.
            (polyglot / "scripts/limits/marker.py").write_text("def marker_after_the_ignored_files():\n    pass\n")
            await _until_applied(client, gone["freshness"]["events_applied"], "marker_after_the_ignored_files")
            ignored = (await call(client, "lookup", {"symbol": "quota_for_tenant"})).structured_content
            assert ignored["items"] == []
    _run(scenario)


async def _until_applied(client: Client, applied: int, symbol: str | None = None, seconds: float = 10) -> None:
    """Until the server has applied more disk events than ``applied`` (and, if given, ``symbol`` is defined)."""
    deadline = time.monotonic() + seconds
    while True:
        if symbol is None:
            answer = (await call(client, "status")).structured_content
        else:
            answer = (await call(client, "lookup", {"symbol": symbol})).structured_content
        if answer["freshness"]["events_applied"] > applied and (symbol is None or answer["items"]):
            return
        assert time.monotonic() < deadline, f"no disk event applied within {seconds} s: {answer['freshness']}"
        await anyio.sleep(0.05)


BAD_CALLS = [
    ("context", {}, "context: give a 'question'"),
    ("context", {"question": "x", "topK": 0}, "context: 'topK' must be an integer from 1 to 100, got 0"),
    ("context", {"question": "x", "topK": True}, "'topK' must be an integer from 1 to 100, got True"),
    ("context", {"question": "x", "budgetTokens": "many"}, "'budgetTokens' must be an integer from 1 to 200000"),
    ("context", {"question": 42}, "'question' must be a string, got int"),
    ("context", {"question": "x", "evidence": "trace"}, "'evidence' must be a list of strings"),
    ("context", {"question": "x" * 200_001}, "question and evidence exceed 200000 characters"),
    ("context", {"question": "x", "format": "yaml"}, "'format' must be one of text, json, locations, prompt, got 'yaml'"),
    ("context", {"query": "x"}, "unknown argument 'query'; context takes question, evidence, topK, budgetTokens"),
    ("lookup", {}, "'symbol' must be a non-empty name of at most 500 characters"),
    ("lookup", {"symbol": "x", "what": "callers"}, "'what' must be one of definitions, references,"),
    ("lookup", {"what": "outline"}, "what='outline' needs 'file'"),
    ("lookup", {"what": "outline", "file": "/etc/hostname"}, "'file' is not a file inside the workspace"),
    ("completion_context", {"file": "scripts/run_jobs.py"}, "completion_context needs 'file' and 'line'"),
    ("completion_context", {"file": "scripts/nope.py", "line": 1}, "'file' is not a file inside the workspace"),
    ("completion_context", {"file": "scripts/run_jobs.py", "line": 0}, "'line' must be an integer from 1"),
    ("completion_context", {"file": "scripts/run_jobs.py", "line": 500}, "'line'/'column':"),
    ("completion_context", {"file": ".env", "line": 1}, "'file' names a secret file, which rag_lsp never reads"),
    ("status", {"verbose": True}, "unknown argument 'verbose'; status takes format"),
    ("context", {"question": "x", "taskType": "fix"}, "'taskType' must be one of explain, debug, extend, review, locate"),
    ("context", {"question": "x", "enhancements": {"expand": "two"}}, "expand"),
]


def test_bad_arguments_get_tool_errors_that_name_the_field_and_the_server_goes_on(polyglot, tmp_path):
    (polyglot / ".env").write_text("TOKEN=secret\n")

    async def scenario() -> None:
        async with connected(server_parameters([polyglot], tmp_path, extra=("--no-language-servers",))) as client:
            await wait_indexed(client)
            for tool, arguments, message in BAD_CALLS:
                result = await call(client, tool, arguments)
                assert result.is_error, (tool, arguments)
                assert message in text_of(result), (tool, arguments, text_of(result))
                assert result.structured_content is None
            with pytest.raises(MCPError, match="unknown tool 'search'"):
                await client.call_tool("search", {"question": "x"})
            # Still answering.
            assert not (await call(client, "context", {"question": QUESTION})).is_error
    _run(scenario)


def test_closing_stdin_stops_the_server_and_every_language_server_it_started(polyglot, tmp_path):
    require("pyright-langserver")
    exit_code = tmp_path / "exit-code"
    env = {"PATH": langserver_env()["PATH"]}

    async def scenario() -> set[int]:
        async with connected(server_parameters([polyglot], tmp_path, env=env, exit_code_file=exit_code)) as client:
            await wait_indexed(client)
            # The first lookup starts pyright (answers never wait for a server to start); ask until it answers.
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline:
                answer = (await call(client, "lookup", {"symbol": "RateLimiter.allow", "what": "references"}))
                if any(item["source"] == "pyright" for item in answer.structured_content["items"]):
                    break
                await anyio.sleep(0.5)
            status = (await call(client, "status")).structured_content
            servers = {server["server"]: server for server in status["language_servers"]}
            assert servers["pyright"]["state"] == "ready" and servers["pyright"]["pid"]
            # The server's own tree: the sh that runs it, rag-lsp, and what rag-lsp started.
            (shell,) = [pid for pid in descendants(os.getpid()) if str(exit_code) in _command_line(pid)]
            started = {shell, *descendants(shell)}
            assert servers["pyright"]["pid"] in started
        return started

    started = anyio.run(scenario)
    # The client closed stdin and waited for the server: it ended by itself, with exit code 0 ...
    assert exit_code.read_text().strip() == "0"
    # ... and took every process it started with it (pyright, and whatever else ran below it).
    deadline = time.monotonic() + 5
    while {pid for pid in started if alive(pid)} and time.monotonic() < deadline:
        time.sleep(0.05)
    assert {pid for pid in started if alive(pid)} == set()


def _command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_streamable_http_on_a_loopback_port(polyglot, tmp_path):
    port = _free_port()
    server = subprocess.Popen([RAG_LSP, "mcp", "--root", str(polyglot), "--cache-dir", str(tmp_path),
                               "--no-language-servers", "--http", f"127.0.0.1:{port}"],
                              stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        async def scenario() -> None:
            deadline = time.monotonic() + 60
            while True:
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=1):
                        break
                except OSError:
                    assert time.monotonic() < deadline and server.poll() is None, server.stderr
                    await anyio.sleep(0.1)
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                assert len((await client.list_tools()).tools) == 4
                await wait_indexed(client)
                answer = (await call(client, "lookup", {"symbol": "Firewall"})).structured_content
                assert [item["path"] for item in answer["items"]] == ["scripts/firewall.py"]
        _run(scenario)
    finally:
        # The way to stop a server that has no stdin: it shuts down and exits with 0.
        server.terminate()
        assert server.wait(timeout=20) == 0


def test_a_non_loopback_host_is_refused(tmp_path):
    done = subprocess.run([RAG_LSP, "mcp", "--root", str(tmp_path), "--http", "0.0.0.0:8000"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and "loopback" in done.stderr


def test_the_home_directory_is_not_indexed_by_accident(tmp_path):
    done = subprocess.run([sys.executable, "-m", "rag_lsp.cli", "mcp"], capture_output=True, text=True,
                          cwd=Path.home(), timeout=60, check=False)
    assert done.returncode == 2 and "--root" in done.stderr
