"""``LiveWorkspace`` in-process: the index follows the disk through each kind of change, with native events
and with the polling fallback, and says how fresh it is."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from conftest import write_tree

from rag_lsp.mcp_server.live_workspace import LiveWorkspace

SETTLE_SECONDS = 15


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "root", {
        "app/billing.py": "def charge(amount):\n    return amount\n",
        "app/refunds.py": "def refund(amount):\n    return -amount\n",
    })


def _started(root: Path, polling: bool = False) -> LiveWorkspace:
    workspace = LiveWorkspace([root], use_cache=False, language_servers=False, polling=polling)
    workspace.start()
    assert workspace.wait_indexed(60)
    return workspace


def _defined(workspace: LiveWorkspace, name: str) -> list[str]:
    return [item["path"] for item in workspace.call("lookup", {"symbol": name}).result["items"]]


def _until(condition, seconds: float = SETTLE_SECONDS) -> bool:
    """Whether ``condition()`` holds within ``seconds`` (the watcher's events arrive on its own thread)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_moves_deletions_and_new_directories_reach_the_index(tree, tmp_path):
    workspace = _started(tree)
    try:
        assert workspace.freshness()["watcher"] == "inotify"
        # A directory moved in from outside every root: its files are indexed.
        outside = write_tree(tmp_path / "outside", {"tax/rates.py": "def vat(amount):\n    return amount * 0.2\n"})
        shutil.move(str(outside / "tax"), str(tree / "tax"))
        assert _until(lambda: _defined(workspace, "vat") == ["tax/rates.py"])
        # A file moved in from outside (no writer closes it here).
        write_tree(outside, {"fees.py": "def fee(amount):\n    return 1\n"})
        shutil.move(str(outside / "fees.py"), str(tree / "tax/fees.py"))
        assert _until(lambda: _defined(workspace, "fee") == ["tax/fees.py"])
        # A file renamed (an editor's atomic save is one): the old path leaves, the new one comes.
        (tree / "app/billing.py").rename(tree / "app/charges.py")
        assert _until(lambda: _defined(workspace, "charge") == ["app/charges.py"])
        # A directory deleted: every file under it leaves.
        shutil.rmtree(tree / "app")
        assert _until(lambda: _defined(workspace, "refund") == [] and _defined(workspace, "charge") == [])
        # The files are gone once their events are applied; the directory's own events may still be on their way.
        assert _until(lambda: workspace.freshness()["pending_events"] == 0 and not workspace.freshness()["indexing"])
        assert workspace.freshness()["events_applied"] >= 3
    finally:
        workspace.close()


def test_a_file_that_becomes_ignored_or_too_large_leaves_the_index(tree):
    workspace = _started(tree)
    try:
        (tree / ".gitignore").write_text("app/refunds.py\n")
        # The ignore file itself changes nothing until the file it names changes: then the walk's rule applies.
        (tree / "app/refunds.py").write_text("def refund(amount):\n    return 0\n")
        assert _until(lambda: _defined(workspace, "refund") == [])
        (tree / "app/billing.py").write_text("def charge(amount):\n    return amount\n" + "#" * (1 << 21))
        assert _until(lambda: _defined(workspace, "charge") == [])
    finally:
        workspace.close()


def test_the_polling_fallback_follows_the_disk_too(tree):
    workspace = _started(tree, polling=True)
    try:
        assert workspace.freshness()["watcher"] == "polling"
        (tree / "app/ledger.py").write_text("def post(entry):\n    return entry\n")
        # A poll every 2 s: the change arrives within a few polls.
        assert _until(lambda: _defined(workspace, "post") == ["app/ledger.py"])
        (tree / "app/ledger.py").unlink()
        assert _until(lambda: _defined(workspace, "post") == [])
    finally:
        workspace.close()


def test_answers_during_the_first_indexing_say_so(tmp_path):
    root = write_tree(tmp_path / "big", {f"pkg/m{i:04}.py": f"def f{i}():\n    return {i}\n" for i in range(400)})
    workspace = LiveWorkspace([root], use_cache=False, language_servers=False)
    try:
        fresh = workspace.freshness()
        # Not started: nothing indexed, and the answer says the first indexing has not finished.
        assert fresh["indexing"] and fresh["indexed_at"] is None
        answer = workspace.call("context", {"question": "f1"})
        assert answer.result["freshness"]["indexing"] and "still indexing" in answer.text
        workspace.start()
        assert workspace.wait_indexed(60)
        assert _defined(workspace, "f399") == ["pkg/m0399.py"]
        assert workspace.freshness()["indexed_at"] is not None
    finally:
        workspace.close()


def test_the_prompt_format_is_the_block_alone_and_the_same_for_the_same_answer(tree):
    workspace = _started(tree)
    try:
        asked = {"question": "why does charge fail", "format": "prompt", "known": {}}
        first, second = workspace.call("context", asked), workspace.call("context", asked)
        assert first.text == second.text == first.result["prompt"]
        assert first.text.startswith("Likely relevant places, ranked (found by ") and "[rag-lsp:" not in first.text
        assert first.result["task"]["type"] == "debug" and "freshness" in first.result
    finally:
        workspace.close()
