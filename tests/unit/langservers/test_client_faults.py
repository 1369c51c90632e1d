"""Each way a server can fail → the exception kind the caller sees, and what status() reports."""

from __future__ import annotations

import dataclasses
import os
import signal
import threading
import time

import pytest
from answers import status_of

from rag_lsp.langservers.client import Place, ServerCallError, ServerUnavailable
from rag_lsp.langservers.spec import ServerSpec

from .lsp_helpers import fake_spec, process_alive, ready, wait_until

TIMEOUT = 0.3


def call_error(call) -> ServerCallError:
    with pytest.raises(ServerCallError) as caught:
        call()
    assert "\n" not in str(caught.value)
    return caught.value


def test_a_healthy_server_answers_every_typed_request(make_client, tmp_path):
    (tmp_path / "disk.txt").write_text("abcd\n")
    client = ready(make_client("ok"))
    client.sync("shapes.py", "class Shape:\n    def area(self):\n        pass\n", "python")
    here = Place("shapes.py", 2, 8, 2, 9)
    assert client.definition("shapes.py", 2, 8, TIMEOUT) == [here]
    assert client.references("shapes.py", 2, 8, TIMEOUT) == [here, Place("disk.txt", 1, 4, 1, 5)]
    assert client.implementation("shapes.py", 2, 8, TIMEOUT) == [here]
    assert client.document_symbols("shapes.py", TIMEOUT) == [
        Place("shapes.py", 1, 0, 4, 0, "Shape", "class"),
        Place("shapes.py", 2, 4, 3, 8, "area", "method", "Shape"),
    ]
    assert client.hover("shapes.py", 2, 8, TIMEOUT) == "**hover** text"
    assert client.workspace_symbols("Shape", TIMEOUT) == [Place("disk.txt", 1, 0, 1, 4, "Shape", "function", "mod")]
    status = status_of(client)
    assert status["state"] == "ready" and status["version"] == "9.9" and process_alive(status["pid"])
    assert (status["server"], status["languages"], status["restarts"], status["last_error"]) == (
        "fake", ["python"], 0, None
    )


def test_capabilities_and_initialize_params(make_client, tmp_path):
    client = make_client(spec=dataclasses.replace(fake_spec("ok"), initialization_options={"x": [1]}))
    assert client.capabilities == {} and not client.supports("textDocument/definition")
    ready(client)
    assert client.supports("textDocument/definition")
    assert client.supports("textDocument/references")  # announced as an options object, {}
    assert not client.supports("textDocument/implementation")
    assert not client.supports("textDocument/unknown")
    log = client.request("fake/log", None, 2.0)
    assert log["encoding"] == "utf-16"
    assert [n["method"] for n in log["notifications"]] == ["initialized"]
    params = log["initialize"]
    assert params["processId"] == os.getpid() and params["clientInfo"]["name"] == "rag-lsp"
    assert params["rootUri"] == tmp_path.as_uri()
    assert params["workspaceFolders"] == [{"uri": tmp_path.as_uri(), "name": tmp_path.name}]
    assert params["initializationOptions"] == {"x": [1]}
    capabilities = params["capabilities"]
    assert capabilities["general"]["positionEncodings"] == ["utf-16", "utf-8"]
    assert capabilities["textDocument"]["documentSymbol"]["hierarchicalDocumentSymbolSupport"] is True
    assert capabilities["textDocument"]["hover"]["contentFormat"] == ["plaintext", "markdown"]
    assert capabilities["workspace"]["configuration"] and capabilities["workspace"]["workspaceFolders"]


def test_server_requests_get_the_documented_answers(make_client, tmp_path):
    client = ready(make_client("ok"))
    assert wait_until(lambda: len(client.request("fake/log", None, 2.0)["responses"]) == 4)
    answers = {r["id"]: r for r in client.request("fake/log", None, 2.0)["responses"]}
    assert answers["s1"]["result"] == [None, None]
    assert answers["s2"]["result"] == [{"uri": tmp_path.as_uri(), "name": tmp_path.name}]
    assert answers["s3"]["result"] is None
    assert answers["s4"]["error"]["code"] == -32601


def test_the_first_request_starts_the_server_lazily(make_client):
    client = make_client("ok")
    assert client.state == "idle"
    with pytest.raises(ServerUnavailable, match="starting"):
        client.definition("a.py", 1, 0, TIMEOUT)
    assert client.wait_ready(5.0)
    assert client.definition("a.py", 1, 0, TIMEOUT) == [Place("a.py", 1, 0, 1, 1)]


def test_an_error_response_is_an_error_and_the_server_stays_ready(make_client):
    client = ready(make_client("error"))
    error = call_error(lambda: client.definition("a.py", 1, 0, TIMEOUT))
    assert error.kind == "error"
    assert "textDocument/definition" in str(error) and "fake failure" in str(error)
    assert client.state == "ready"


def test_a_malformed_result_is_reported_and_the_server_stays_ready(make_client):
    client = ready(make_client("malformed"))
    error = call_error(lambda: client.definition("a.py", 1, 0, TIMEOUT))
    assert error.kind == "malformed" and str(error).startswith("textDocument/definition")
    assert status_of(client)["last_error"] == str(error)
    assert call_error(lambda: client.references("a.py", 1, 0, TIMEOUT)).kind == "malformed"
    assert client.state == "ready"
    assert client.hover("a.py", 1, 0, TIMEOUT) == "**hover** text"


def test_a_request_that_gets_no_answer_times_out_and_is_cancelled(make_client):
    client = ready(make_client("hang-requests"))
    error = call_error(lambda: client.definition("a.py", 1, 0, TIMEOUT))
    assert error.kind == "timeout" and "textDocument/definition" in str(error)
    assert client.state == "ready"
    log = client.request("fake/log", None, 2.0)
    cancels = [n["params"]["id"] for n in log["notifications"] if n["method"] == "$/cancelRequest"]
    assert len(cancels) == 1


def test_three_timeouts_in_a_row_mean_a_hung_server(make_client):
    client = ready(make_client("hang-requests", hung_silence=0.3), 5.0)
    pid = status_of(client)["pid"]
    for _ in range(3):
        assert call_error(lambda: client.hover("a.py", 1, 0, 0.2)).kind == "timeout"
    assert client.state == "restarting"
    assert "hung" in status_of(client)["last_error"]
    assert wait_until(lambda: not process_alive(pid))


def test_a_server_that_answers_late_is_busy_not_hung(make_client):
    # hang-requests still answers fake/log: a server that says anything within the silence is not hung.
    client = ready(make_client("hang-requests", hung_silence=30.0), 5.0)
    for _ in range(4):
        assert call_error(lambda: client.hover("a.py", 1, 0, 0.2)).kind == "timeout"
    assert client.state == "ready"


def test_an_answer_resets_the_timeout_count(make_client):
    client = ready(make_client("hang-requests"))
    for _ in range(2):
        call_error(lambda: client.hover("a.py", 1, 0, 0.2))
    client.request("fake/log", None, 2.0)
    for _ in range(2):
        call_error(lambda: client.hover("a.py", 1, 0, 0.2))
    assert client.state == "ready"


def test_an_initialize_without_answer_counts_as_a_crash(make_client):
    client = make_client("hang", start_timeout=0.3)
    client.ensure_started()
    assert not client.wait_ready(5.0)
    status = status_of(client)
    assert status["state"] == "restarting" and "initialize got no answer within 0.3 s" in status["last_error"]
    assert status["pid"] is None
    with pytest.raises(ServerUnavailable, match=r"restarting after a crash \(next try in \d\.\d s\)"):
        client.hover("a.py", 1, 0, TIMEOUT)


def test_a_crash_during_a_call_fails_it_and_keeps_the_stderr_tail(make_client):
    client = ready(make_client("crash-on-request"))
    error = call_error(lambda: client.definition("a.py", 1, 0, 2.0))
    assert error.kind == "crashed" and "textDocument/definition" in str(error)
    assert wait_until(lambda: client.state == "restarting")
    last_error = status_of(client)["last_error"]
    assert "fake: boom on textDocument/definition" in last_error and "\n" not in last_error


def test_a_server_killed_mid_request_fails_the_call_at_once(make_client):
    client = ready(make_client("hang-requests"))
    pid = status_of(client)["pid"]
    started = time.monotonic()
    # The call waits for an answer that never comes; the kill, not the 10 s timeout, must end it.
    threading.Timer(0.3, os.kill, (pid, signal.SIGKILL)).start()
    error = call_error(lambda: client.hover("a.py", 1, 0, 10.0))
    assert error.kind == "crashed" and time.monotonic() - started < 5.0
    assert wait_until(lambda: client.state == "restarting")
    assert "killed by signal 9" in status_of(client)["last_error"]


def test_unparseable_output_is_a_crash(make_client):
    client = ready(make_client("garbage"))
    error = call_error(lambda: client.definition("a.py", 1, 0, 2.0))
    assert error.kind == "crashed" and "unparseable output" in str(error)
    assert wait_until(lambda: client.state == "restarting")
    assert "unparseable output" in status_of(client)["last_error"]


def test_a_missing_binary_is_down_at_once(make_client, tmp_path):
    client = make_client(spec=ServerSpec("ghost", str(tmp_path / "no-such-server")))
    client.ensure_started()
    assert not client.wait_ready(5.0)
    assert client.state == "down"
    assert status_of(client)["last_error"].startswith(f"cannot execute {tmp_path / 'no-such-server'}")
    with pytest.raises(ServerUnavailable, match="^down: cannot execute"):
        client.definition("a.py", 1, 0, TIMEOUT)


def test_a_file_that_is_not_executable_is_down_at_once(make_client, tmp_path):
    script = tmp_path / "server.sh"
    script.write_text("#!/bin/sh\n")
    client = make_client(spec=ServerSpec("script", str(script)))
    client.ensure_started()
    assert not client.wait_ready(5.0)
    assert client.state == "down" and "Permission denied" in status_of(client)["last_error"]


def test_a_program_that_is_not_a_server_goes_down_after_three_crashes(make_client):
    client = make_client(spec=ServerSpec("true", "/bin/true"), backoff_base=0.01)
    # Each ensure_started after a backoff restarts it; it exits at once every time.
    assert wait_until(lambda: client.ensure_started() or client.state == "down")
    status = status_of(client)
    assert status["restarts"] == 2
    with pytest.raises(ServerUnavailable, match="^down after 3 crashes: "):
        client.hover("a.py", 1, 0, TIMEOUT)


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def crash_once(client) -> None:
    ready(client)
    assert call_error(lambda: client.hover("a.py", 1, 0, 2.0)).kind == "crashed"
    assert wait_until(lambda: client.state in ("restarting", "down"))


def test_restarts_back_off_exponentially_then_give_up(make_client):
    clock = Clock()
    client = make_client("crash-on-request", clock=clock)
    crash_once(client)
    with pytest.raises(ServerUnavailable, match=r"next try in 1\.0 s"):
        client.hover("a.py", 1, 0, TIMEOUT)
    clock.now += 0.9
    client.ensure_started()
    assert client.state == "restarting"
    clock.now += 0.1
    crash_once(client)
    with pytest.raises(ServerUnavailable, match=r"next try in 2\.0 s"):
        client.hover("a.py", 1, 0, TIMEOUT)
    clock.now += 2.0
    crash_once(client)
    assert client.state == "down"
    clock.now += 1000
    client.ensure_started()
    assert client.state == "down" and status_of(client)["restarts"] == 2
    assert "boom" in status_of(client)["last_error"]


def test_crashes_older_than_the_window_are_forgotten(make_client):
    clock = Clock()
    client = make_client("crash-on-request", clock=clock)
    for _ in range(4):
        crash_once(client)
        with pytest.raises(ServerUnavailable, match=r"next try in 1\.0 s"):
            client.hover("a.py", 1, 0, TIMEOUT)
        clock.now += 301
    assert client.state == "restarting" and status_of(client)["restarts"] == 3


def test_a_restarted_server_is_usable_again(make_client, tmp_path):
    client = ready(make_client("hang-requests", backoff_base=0.01, hung_silence=0.1))
    first_pid = status_of(client)["pid"]
    for _ in range(3):
        call_error(lambda: client.hover("a.py", 1, 0, 0.2))
    assert wait_until(lambda: client.ensure_started() or client.state == "ready")
    assert status_of(client)["pid"] != first_pid and status_of(client)["restarts"] == 1
    assert client.request("fake/log", None, 2.0)["requests"] == [{"method": "fake/log", "params": None}]


def test_requests_fail_fast_in_every_unavailable_state(make_client):
    client = make_client(spec=fake_spec("ok"))
    client.stop()
    assert client.state == "stopped"
    client.ensure_started()
    assert client.state == "stopped"
    with pytest.raises(ServerUnavailable, match="^stopped$"):
        client.workspace_symbols("x", TIMEOUT)
    with pytest.raises(ServerUnavailable, match="^stopped$"):
        client.sync("a.py", "x", "python")
