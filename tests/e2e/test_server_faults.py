"""Faults around the server process: permissions, an unwritable cache, two servers on one cache, and a client
that vanishes (its pipe closed, or the process killed) — each ending cleanly, with no process left behind."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import LEDGER_WORKSPACE, write_tree
from lsp_harness import RAG_LSP
from raw_client import RawServer
from test_server_robustness import descendants, running

FAKE_SERVER = Path(__file__).resolve().parents[1] / "fixtures" / "fake_lsp" / "fake_server.py"
FAKE_PYTHON_SERVER = {"languageServers": {"python": {"command": sys.executable,
                                                     "args": [str(FAKE_SERVER), "--mode", "ok"]}}}


def unprivileged() -> tuple[str, ...]:
    """A command prefix under which file permissions apply: none for a normal user; for root, ``setpriv``
    without the capabilities that let root read and write anything."""
    if os.geteuid() != 0:
        return ()
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: permissions cannot be made to apply")
    caps = "-dac_override,-dac_read_search"
    return ("setpriv", f"--inh-caps={caps}", f"--bounding-set={caps}")


def generated(root: Path, count: int) -> Path:
    """The ledger workspace and ``count`` generated modules, walked after it (``zgen/``)."""
    return write_tree(root, {**LEDGER_WORKSPACE, **{f"zgen/module_{i:04}.py": (
        f"def handler_{i}(request):\n    return request.value * {i}\n\n\nclass Widget{i}:\n    pass\n")
        for i in range(count)}})


def gone_within(pids: set[int], seconds: float) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        alive = [pid for pid in pids if running(pid)]
        if not alive:
            return []
        time.sleep(0.05)
    return [pid for pid in pids if running(pid)]


def test_unreadable_files_and_directories_are_skipped_and_said(ledger_root, tmp_path):
    prefix = unprivileged()
    (ledger_root / "shop/locked.py").write_text("def locked_away():\n    pass\n")
    (ledger_root / "private").mkdir()
    (ledger_root / "private/hidden.py").write_text("def hidden_away():\n    pass\n")
    os.chmod(ledger_root / "shop/locked.py", 0)
    os.chmod(ledger_root / "private", 0)
    try:
        index = subprocess.run([*prefix, RAG_LSP, "index", str(ledger_root), "--json", "--no-cache"],
                               check=False, capture_output=True, text=True, timeout=120)
        assert index.returncode == 0, index.stderr
        stats = json.loads(index.stdout)
        assert stats["files"] == 6 and stats["skipped"]["unreadable"] == 2
        assert sorted(stats["skip_examples"]["unreadable"]) == ["private", "shop/locked.py"]
        with RawServer(tmp_path, prefix=prefix) as server:
            server.initialize([ledger_root])
            status = server.wait_indexed()
            assert status["roots"][0]["skipped"]["unreadable"] == 2 and status["files"] == 6
            # A disk event for the unreadable file, and a question: skipped and said, never a failure.
            server.notify("workspace/didChangeWatchedFiles", {"changes": [
                {"uri": (ledger_root / "shop/locked.py").as_uri(), "type": 2}]})
            answer = server.result("ragLsp/context", {"query": "locked_away hidden_away ledger"})
            assert answer["items"] and all(item["path"] not in ("shop/locked.py", "private/hidden.py")
                                           for item in answer["items"])
            assert server.stop() == 0
        assert "unreadable: Permission denied" in server.log_file.read_text()
    finally:
        os.chmod(ledger_root / "private", 0o755)
        os.chmod(ledger_root / "shop/locked.py", 0o644)


def test_an_unwritable_cache_directory_disables_the_cache_and_nothing_else(ledger_root, tmp_path):
    prefix = unprivileged()
    cache = tmp_path / "readonly-cache"
    cache.mkdir()
    os.chmod(cache, 0o555)
    try:
        with RawServer(tmp_path, cache=cache, prefix=prefix) as server:
            server.initialize([ledger_root])
            status = server.wait_indexed()
            assert status["files"] == 6
            assert any("cache disabled" in warning for warning in status["roots"][0]["warnings"])
            assert server.result("ragLsp/lookup", {"symbol": "Ledger.post"})["items"]
            assert server.stop() == 0
        assert list(cache.iterdir()) == []
    finally:
        os.chmod(cache, 0o755)


def test_two_servers_on_one_workspace_cache_at_once(tmp_path):
    root = generated(tmp_path / "ws", 600)
    cache = tmp_path / "shared-cache"
    first = RawServer(tmp_path, cache=cache, log_name="first.log")
    second = RawServer(tmp_path, cache=cache, log_name="second.log")
    with first, second:
        first.initialize([root])
        second.initialize([root])
        statuses = [first.wait_indexed(120), second.wait_indexed(120)]
        assert [status["files"] for status in statuses] == [606, 606]
        questions = [{"query": "handler_42 request value"}, {"query": "Ledger.post account currency"}]
        for question in questions:
            assert first.result("ragLsp/context", question)["items"] == second.result("ragLsp/context", question)["items"]
        assert first.stop() == 0 and second.stop() == 0
    # A third start reads everything the two wrote.
    with RawServer(tmp_path, cache=cache, log_name="third.log") as third:
        third.initialize([root])
        status = third.wait_indexed(120)
        assert status["files"] == 606 and status["roots"][0]["reused"] == 606
        assert third.stop() == 0


def test_the_client_closing_its_pipe_ends_the_server_and_everything_it_started(tmp_path):
    root = generated(tmp_path / "ws", 4000)
    with RawServer(tmp_path) as server:
        server.initialize([root], options={**FAKE_PYTHON_SERVER, "firstIndexWaitMs": 0})
        # A question on a Python name starts the (fake) Python language server once the name is indexed;
        # indexing is still running.
        deadline = time.monotonic() + 30
        while not any("fake_server.py" in _command(pid) for pid in descendants(server.process.pid)):
            assert time.monotonic() < deadline, "the fake language server did not start"
            server.result("ragLsp/lookup", {"symbol": "Ledger.post", "what": "references"})
            time.sleep(0.1)
        assert server.result("ragLsp/status")["indexing"]["state"] != "done", "the pipe closes while indexing"
        children = descendants(server.process.pid)
        assert server.process.stdin is not None
        server.process.stdin.close()
        assert server.process.wait(15) == 0
        assert gone_within(children, 10) == []
        assert "Traceback" not in server.log_file.read_text()


EDITOR = '''
import json, os, subprocess, sys, time
rag_lsp, root, log, options = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
server = subprocess.Popen([rag_lsp, "serve", "--log-file", log], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
# A helper that keeps both pipes open after this editor dies, so the server never reads end-of-file.
holder = subprocess.Popen(["sleep", "600"], pass_fds=(server.stdin.fileno(), server.stdout.fileno()),
                          start_new_session=True)

def send(message):
    body = json.dumps(message).encode()
    server.stdin.write(b"Content-Length: %d\\r\\n\\r\\n" % len(body) + body)
    server.stdin.flush()

def receive(wanted):
    while True:
        length = None
        while True:
            line = server.stdout.readline()
            if line in (b"\\r\\n", b""):
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        message = json.loads(server.stdout.read(length))
        if message.get("id") == wanted and "method" not in message:
            return message

send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": os.getpid(), "capabilities": {},
      "initializationOptions": options, "workspaceFolders": [{"uri": "file://" + root, "name": "ws"}]}})
receive(1)
send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
send({"jsonrpc": "2.0", "id": 2, "method": "ragLsp/lookup", "params": {"symbol": "Ledger.post", "what": "references"}})
receive(2)
print(json.dumps({"server": server.pid, "holder": holder.pid}), flush=True)
time.sleep(600)
'''


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def test_the_client_process_killed_ends_the_server_and_everything_it_started(ledger_root, tmp_path):
    editor = subprocess.Popen([sys.executable, "-c", EDITOR, RAG_LSP, str(ledger_root), str(tmp_path / "server.log"),
                               json.dumps(FAKE_PYTHON_SERVER)], stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "RAG_LSP_CACHE_DIR": str(tmp_path / "cache")})
    holder = None
    try:
        assert editor.stdout is not None
        pids = json.loads(editor.stdout.readline())
        holder = pids["holder"]
        server = pids["server"]
        deadline = time.monotonic() + 30
        while not any("fake_server.py" in _command(pid) for pid in descendants(server)):
            assert time.monotonic() < deadline, "the fake language server did not start"
            time.sleep(0.1)
        children = descendants(server)
        editor.send_signal(signal.SIGKILL)
        editor.wait(10)
        # The pipe stays open (the holder has it): only the processId watch can notice the editor is gone.
        assert gone_within({server, *children}, 15) == []
        assert "the client process" in (tmp_path / "server.log").read_text()
    finally:
        if editor.poll() is None:
            editor.kill()
        if holder is not None:
            try:
                os.killpg(holder, signal.SIGKILL)
            except ProcessLookupError:
                pass
