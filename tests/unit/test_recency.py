"""Which files changed in the last week: git's commits and unstaged edits in a checkout, else modification times."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

from conftest import write_tree

from rag_lsp.git import run_git
from rag_lsp.index.root_index import Index
from rag_lsp.retrieval.answer import ContextRequest
from rag_lsp.retrieval.ranking import recency
from rag_lsp.retrieval.ranking.recency import CHECK_SECONDS, read_recency, recency_of, settled
from rag_lsp.retrieval.retrieve import retrieve

DAY = 24 * 3600
FILES = {"app/ledger.py": "def post(entry):\n    return entry\n", "app/audit.py": "def audit(entry):\n    return entry\n"}


def git(root, *arguments, days_ago=0):
    """Run git in ``root`` as a user would, committing ``days_ago`` days in the past."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(time.time() - days_ago * DAY)) + "+0000"
    environment = {**os.environ, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp,
                   "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
                   "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    subprocess.run(["git", "-C", str(root), *arguments], check=True, capture_output=True, env=environment)


def touch(path, seconds):
    os.utime(path, (seconds, seconds))


def test_outside_a_checkout_the_modification_time_decides(tmp_path):
    root = write_tree(tmp_path / "ws", FILES)
    touch(root / "app/audit.py", time.time() - 30 * DAY)
    recency = read_recency(root, time.time())
    assert recency.committed is None
    assert recency.is_recent("app/ledger.py", (root / "app/ledger.py").stat().st_mtime_ns)
    assert not recency.is_recent("app/audit.py", (root / "app/audit.py").stat().st_mtime_ns)
    # An editor buffer has no time: it changed just now.
    assert recency.is_recent("app/audit.py", 0)


def test_in_a_checkout_last_weeks_commits_and_unstaged_edits_are_recent_not_a_fresh_clones_files(tmp_path):
    root = write_tree(tmp_path / "ws", FILES)
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "old", days_ago=30)
    staged = (root / ".git" / "index").stat().st_mtime
    # Written just before git wrote its index, as a clone or a checkout writes them: not recent, though new.
    for name in FILES:
        touch(root / name, staged - 5)
    recency = read_recency(root, time.time())
    assert recency.committed == frozenset()
    assert not any(recency.is_recent(name, (root / name).stat().st_mtime_ns) for name in FILES)
    # A file a commit of this week touched is recent, however old its time on disk; an edit written after git
    # last wrote its index is recent too.
    (root / "app/audit.py").write_text("def audit(entry):\n    return None\n")
    git(root, "commit", "-q", "-am", "this week", days_ago=2)
    touch(root / "app/audit.py", time.time() - 30 * DAY)
    touch(root / "app/ledger.py", (root / ".git" / "index").stat().st_mtime + 5)
    recency = read_recency(root, time.time())
    assert recency.committed == {"app/audit.py"}
    assert all(recency.is_recent(name, (root / name).stat().st_mtime_ns) for name in FILES)


def test_a_worktree_reads_its_own_git_index(tmp_path):
    root = write_tree(tmp_path / "ws", FILES)
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "old", days_ago=30)
    git(root, "worktree", "add", "-q", str(tmp_path / "tree"))
    tree = tmp_path / "tree"
    assert (tree / ".git").is_file()
    (tree / "app/audit.py").write_text("def audit(entry):\n    return None\n")
    git(tree, "commit", "-q", "-am", "this week", days_ago=2)
    recency = read_recency(tree, time.time())
    assert recency.committed == {"app/audit.py"} and recency.staged_ns is not None


def month_old_checkout(root: Path) -> Index:
    """An index of a checkout whose one commit is a month old."""
    write_tree(root, FILES)
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "old", days_ago=30)
    index = Index(root, use_cache=False)
    index.refresh()
    return index


def test_git_is_asked_again_only_after_a_while(tmp_path):
    root = tmp_path / "ws"
    index = month_old_checkout(root)
    start = time.time()
    assert recency_of(index, start).committed == frozenset()
    (root / "app/audit.py").write_text("def audit(entry):\n    return 1\n")
    git(root, "commit", "-q", "-am", "now")
    assert recency_of(index, start + CHECK_SECONDS / 2).committed == frozenset()
    # Once due, git is asked again in the background: that question is answered from the last answer, the
    # next from git's new one.
    assert recency_of(index, start + CHECK_SECONDS + 1).committed == frozenset()
    settled(index)
    assert recency_of(index, start + CHECK_SECONDS + 2).committed == {"app/audit.py"}


def test_a_question_does_not_wait_for_git_once_it_has_answered(tmp_path, monkeypatch):
    index = month_old_checkout(tmp_path / "ws")
    start = time.time()
    assert recency_of(index, start).committed == frozenset()
    # Git, asked again, does not answer until the question has: a question that waited for it would see it done.
    release, done = threading.Event(), threading.Event()

    def held_git(*arguments):
        release.wait(5)
        done.set()
        return run_git(*arguments)

    monkeypatch.setattr(recency, "run_git", held_git)
    assert recency_of(index, start + CHECK_SECONDS + 1).committed == frozenset()
    assert not done.is_set()
    release.set()
    settled(index)
    assert done.is_set()


def test_a_fresh_clones_places_do_not_say_they_changed_this_week(tmp_path):
    source = write_tree(tmp_path / "source", FILES)
    git(source, "init", "-q")
    git(source, "add", ".")
    git(source, "commit", "-q", "-m", "old", days_ago=30)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(source), str(clone)], check=True, capture_output=True)
    index = Index(clone, use_cache=False)
    index.refresh()

    def changed_this_week() -> set[str]:
        answer = retrieve(index, ContextRequest("post an entry to the ledger", top_k=5))
        return {item.path for item in answer.items if any("changed this week" in reason for reason in item.why)}

    assert changed_this_week() == set()
    (clone / "app/ledger.py").write_text("def post(entry):\n    return [entry]\n")
    touch(clone / "app/ledger.py", time.time() + 5)
    index.refresh()
    recency_of(index, time.time() + CHECK_SECONDS + 1)
    settled(index)
    assert changed_this_week() == {"app/ledger.py"}


def test_after_git_failed_it_is_asked_again_only_much_later(tmp_path, monkeypatch):
    root = write_tree(tmp_path / "ws", FILES)
    (root / ".git").mkdir()  # A checkout git cannot read: it fails, as a slow one times out.
    index = Index(root, use_cache=False)
    index.refresh()
    calls = []
    monkeypatch.setattr(recency, "run_git", lambda *arguments: calls.append(arguments) or run_git(*arguments))
    start = time.time()
    assert recency.recency_of(index, start).committed is None
    assert recency.recency_of(index, start + recency.CHECK_SECONDS + 1).committed is None
    assert len(calls) == 1
    recency.recency_of(index, start + recency.RETRY_SECONDS + 1)
    recency.settled(index)
    assert len(calls) == 2
