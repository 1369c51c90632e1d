"""The history strategy: a commit id to the files it changed, with git run as a subprocess."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from strategy_helpers import context_for

from rag_lsp.retrieval.strategies import history
from rag_lsp.retrieval.strategies.base import Skipped

REPO = {"shop/ledger.py": "def post(entry):\n    return entry\n", "shop/currency.py": "RATES = {}\n"}

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(root, *args: str) -> str:
    """Runs git with fixed names and dates, so that every run makes the same commit ids."""
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_AUTHOR_DATE": "2026-01-02T03:04:05Z",
           "GIT_COMMITTER_DATE": "2026-01-02T03:04:05Z", "HOME": str(root), "PATH": "/usr/bin:/bin:/usr/local/bin"}
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True, env=env).stdout


def commit_change(root) -> None:
    context_for(root, REPO, "")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-qm", "first")
    (root / "shop/ledger.py").write_text("def post(entry):\n    return None\n")
    git(root, "add", ".")


def commit_with_a_digits_only_id(root) -> str:
    """Commits the staged change under the first message whose short id has no letter in it."""
    tree = git(root, "write-tree").strip()
    parent = git(root, "rev-parse", "HEAD").strip()
    for attempt in range(2000):
        full = git(root, "commit-tree", tree, "-p", parent, "-m", f"break posting ({attempt})").strip()
        if full[:7].isdigit():
            git(root, "update-ref", "HEAD", full)
            return full[:7]
    raise AssertionError("no digits-only id in 2000 commits")


@needs_git
def test_a_commit_id_names_the_files_it_changed(tmp_path):
    root = tmp_path / "repo"
    commit_change(root)
    git(root, "commit", "-qm", "break posting")
    commit = git(root, "rev-parse", "--short=9", "HEAD").strip()
    assert not commit.isdigit() and not commit.isalpha(), "the fixed dates make an id of letters and digits"
    ctx = context_for(root, {}, f"posting broke in {commit}, see the diff")
    found = history.run(ctx)
    assert [(f.path, f.reason, f.weight) for f in found] == [("shop/ledger.py", f"changed in commit {commit}", 0.6)]


@needs_git
def test_an_id_of_digits_only_is_a_commit_when_git_knows_it(tmp_path):
    root = tmp_path / "repo"
    commit_change(root)
    commit = commit_with_a_digits_only_id(root)
    found = history.run(context_for(root, {}, f"posting broke in {commit} (line 1234567 is not an id)"))
    assert [(f.path, f.anchor) for f in found] == [("shop/ledger.py", commit)]


@needs_git
def test_a_number_that_names_no_commit_finds_nothing(tmp_path):
    root = tmp_path / "repo"
    commit_change(root)
    git(root, "commit", "-qm", "break posting")
    assert history.run(context_for(root, {}, "it fails since version 20261130")) == []


@needs_git
def test_an_unknown_commit_finds_nothing(tmp_path):
    root = tmp_path / "repo"
    context_for(root, REPO, "")
    git(root, "init", "-q")
    assert history.run(context_for(root, {}, "broken since deadbeef12")) == []


def test_outside_a_git_checkout_it_says_why_it_did_not_run(tmp_path):
    with pytest.raises(Skipped, match="not a git checkout"):
        history.run(context_for(tmp_path, REPO, "broken since 3f2a9c1"))


def test_words_and_numbers_are_not_commit_ids(tmp_path):
    with pytest.raises(Skipped, match="no commit id"):
        history.run(context_for(tmp_path, REPO, "version 1234567 of the decade facade"))
