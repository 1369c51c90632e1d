"""The initial indexing: it starts whatever the client answers about progress, and questions asked before it
is done say so truthfully (or wait for it, briefly, on a small workspace)."""

from __future__ import annotations

import time

import pytest
from conftest import write_tree
from raw_client import ACCEPT, IGNORE, REFUSE, RawServer

from rag_lsp.server.language_server import RELOADING


def files_indexed(server: RawServer, expected: int, timeout: float = 60) -> dict:
    """Ask ragLsp/status until ``expected`` files are indexed and indexing is over; the last status."""
    deadline = time.monotonic() + timeout
    while True:
        status = server.result("ragLsp/status")
        over = status["indexing"].get("state", "done") == "done"
        if (status["files"] == expected and over) or time.monotonic() > deadline:
            return status
        time.sleep(0.05)


@pytest.mark.parametrize("answer", [REFUSE, IGNORE])
def test_indexing_starts_when_the_client_refuses_or_ignores_the_progress_token(ledger_root, tmp_path, answer):
    with RawServer(tmp_path, answer=answer) as server:
        server.initialize([ledger_root], progress=True)
        status = files_indexed(server, 6)
        assert status["files"] == 6, status["indexing"]
        assert status["indexing"] == {"done": 6, "total": 6, "running": False, "state": "done"}
        assert server.result("ragLsp/context", {"query": "Ledger.post"})["items"][0]["path"] == "shop/ledger.py"
        assert any(r["method"] == "window/workDoneProgress/create" for r in server.server_requests)
        # Progress is sent only for a token the client accepted.
        assert server.progress_kinds() == []
        assert server.stop() == 0


def test_progress_is_reported_for_an_accepted_token(ledger_root, tmp_path):
    with RawServer(tmp_path, answer=ACCEPT) as server:
        server.initialize([ledger_root], progress=True)
        server.wait_for(lambda: "end" in server.progress_kinds(), what="the end of indexing progress")
        (create,) = [r for r in server.server_requests if r["method"] == "window/workDoneProgress/create"]
        tokens = {n["params"]["token"] for n in server.notifications if n["method"] == "$/progress"}
        assert tokens == {create["params"]["token"]}
        kinds = server.progress_kinds()
        assert kinds[0] == "begin" and kinds[-1] == "end" and set(kinds[1:-1]) <= {"report"}
        assert server.result("ragLsp/status")["files"] == 6
        assert server.stop() == 0


def test_the_progress_stays_open_while_a_built_index_is_replaced_by_its_snapshot(tmp_path):
    # 1,200 files parsed: past RELOAD_MIN_PARSED, so the first index is replaced by the one its snapshot loads
    # (``Session.settle``) before the progress ends, and the progress says so after the last file.
    root = write_tree(tmp_path / "big", {f"pkg/mod_{i:04}.py": f"def widget_{i}(value):\n    return value + {i}\n"
                                         for i in range(1200)})
    with RawServer(tmp_path, answer=ACCEPT) as server:
        server.initialize([root], progress=True)
        server.wait_for(lambda: "end" in server.progress_kinds(), what="the end of indexing progress", timeout=120)
        values = [n["params"]["value"] for n in server.notifications if n["method"] == "$/progress"]
        messages = [value.get("message") for value in values if value["kind"] == "report"]
        assert messages[-2:] == ["1200/1200 files", RELOADING] and values[-1]["kind"] == "end"
        assert server.result("ragLsp/context", {"query": "widget_7 value"})["items"][0]["path"] == "pkg/mod_0007.py"
        assert server.stop() == 0


def test_a_question_before_indexing_starts_says_so_instead_of_calling_the_index_empty(ledger_root, tmp_path):
    with RawServer(tmp_path) as server:
        # Between initialize and initialized the roots are known and nothing is indexed yet.
        server.result("initialize", {
            "processId": None, "capabilities": {}, "initializationOptions": {"firstIndexWaitMs": 0},
            "workspaceFolders": [{"uri": ledger_root.as_uri(), "name": "ws"}]})
        status = server.result("ragLsp/status")
        assert status["files"] == 0
        assert status["indexing"] == {"done": 0, "total": 0, "running": True, "state": "pending"}
        answer = server.result("ragLsp/context", {"query": "Ledger.post"})
        assert answer["indexing"] == {"done": 0, "total": 0}
        assert answer["warnings"] == [
            "indexing has not started yet: the answer covers only what is indexed so far (open documents)"]
        server.notify("initialized", {})
        assert files_indexed(server, 6)["indexing"]["state"] == "done"
        answer = server.result("ragLsp/context", {"query": "Ledger.post"})
        assert "indexing" not in answer and "warnings" not in answer
        assert server.stop() == 0


def test_a_question_during_indexing_answers_from_what_is_indexed_and_tells_the_truth(tmp_path):
    root = write_tree(tmp_path / "big", {f"pkg/mod_{i:04}.py": f"def widget_{i}(value):\n    return value + {i}\n"
                                         for i in range(2500)})
    with RawServer(tmp_path) as server:
        server.initialize([root], options={"firstIndexWaitMs": 0})
        answers = []
        while not answers or "indexing" in answers[-1]:
            answers.append(server.result("ragLsp/context", {"query": "widget value"}))
        partial = [a for a in answers if "indexing" in a]
        assert partial, "2,500 files are not indexed before the first question is answered"
        for answer in partial:
            done, total = answer["indexing"]["done"], answer["indexing"]["total"]
            assert 0 <= done <= total <= 2500
            (warning,) = answer["warnings"]
            assert warning.startswith("indexing ") and "the index is empty" not in warning
            if total:
                assert f"{done} of {total} files indexed so far" in warning
        assert answers[-1]["items"] and "warnings" not in answers[-1]
        assert server.stop() == 0


def test_a_small_workspace_waits_for_its_first_index_instead(tmp_path):
    root = write_tree(tmp_path / "ws", {f"pkg/mod_{i:03}.py": f"def gadget_{i}():\n    return {i}\n"
                                        for i in range(400)})
    with RawServer(tmp_path) as server:
        server.initialize([root], options={"firstIndexWaitMs": 20000})
        # Asked at once: it waits for the index, so the file the walk reaches last is found and nothing is partial.
        answer = server.result("ragLsp/context", {"query": "gadget_399"})
        assert "indexing" not in answer and "warnings" not in answer
        assert answer["items"][0]["path"] == "pkg/mod_399.py"
        assert server.stop() == 0
