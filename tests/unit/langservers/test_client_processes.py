"""Processes: stop() leaves nothing behind, children included, and a dead rag_lsp takes its servers along."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading

import pytest
from answers import status_of

from rag_lsp.langservers.client import ServerUnavailable

from .lsp_helpers import FAKE_SERVER, process_alive, ready, wait_until


def test_stop_shuts_the_server_down_and_is_idempotent(make_client):
    client = ready(make_client("ok"))
    pid = status_of(client)["pid"]
    client.stop()
    assert client.state == "stopped" and status_of(client)["pid"] is None
    assert not process_alive(pid)
    client.stop()
    assert client.state == "stopped"
    with pytest.raises(ServerUnavailable, match="stopped"):
        client.definition("a.py", 1, 0, 0.3)


def test_stop_kills_the_servers_children_too(make_client):
    client = ready(make_client("spawn-child"))
    pid = status_of(client)["pid"]
    child = client.request("fake/log", None, 2.0)["child_pid"]
    assert process_alive(child)
    client.stop()
    assert not process_alive(pid)
    assert wait_until(lambda: not process_alive(child), 2.0)


def test_stop_of_a_server_that_ignores_shutdown_is_bounded(make_client):
    client = ready(make_client("hang-requests"))
    pid = status_of(client)["pid"]
    # hang-requests answers shutdown; a server stuck in initialize gets no polite shutdown at all.
    stuck = make_client("hang", start_timeout=5.0)
    stuck.ensure_started()
    assert wait_until(lambda: status_of(stuck)["pid"] is not None)
    stuck_pid = status_of(stuck)["pid"]
    threads = [threading.Thread(target=c.stop) for c in (client, stuck)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(3.0)
        assert not thread.is_alive()
    assert not process_alive(pid) and not process_alive(stuck_pid)
    assert not stuck.wait_ready(0.1) and stuck.state == "stopped"


def test_a_server_exit_is_noticed_even_when_a_child_keeps_its_output_open(make_client):
    client = ready(make_client("spawn-child"))
    child = client.request("fake/log", None, 2.0)["child_pid"]
    os.kill(status_of(client)["pid"], signal.SIGKILL)
    assert wait_until(lambda: client.state == "restarting")
    assert "killed by signal 9" in status_of(client)["last_error"]
    assert wait_until(lambda: not process_alive(child), 2.0)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux-only")
def test_servers_die_with_a_killed_rag_lsp(tmp_path):
    # The server lingers after its input closes, so only the parent-death signal can stop it. The client
    # starts servers from a short-lived thread; the server must outlive that thread (PDEATHSIG is per
    # thread) and die with the process.
    script = textwrap.dedent(
        f"""
        import os, sys, time
        from rag_lsp.langservers.client import LanguageServerClient
        from rag_lsp.langservers.spec import ServerSpec
        spec = ServerSpec("fake", sys.executable, ({str(FAKE_SERVER)!r}, "--mode", "ok", "--linger"))
        client = LanguageServerClient(spec, {str(tmp_path)!r})
        client.ensure_started()
        assert client.wait_ready(5.0)
        time.sleep(0.3)
        print(client.status().pid, client.state, flush=True)
        os.kill(os.getpid(), 9)
        """
    )
    out = subprocess.run([sys.executable, "-c", script], check=False, capture_output=True, text=True, timeout=20)
    pid, state = out.stdout.split()
    assert state == "ready", out.stderr
    assert wait_until(lambda: not process_alive(int(pid)), 3.0)
