"""rag_lsp reads and writes only inside its roots and its cache, whatever the evidence, the workspace's links,
the operator file or the client's settings say; the history strategy's git calls cannot be hijacked."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import ClassVar

import pytest
from answers import ask
from conftest import write_tree

from rag_lsp.index.root_index import Index
from rag_lsp.retrieval.answer import ContextRequest
from rag_lsp.retrieval.query import parse_query
from rag_lsp.retrieval.strategies import history
from rag_lsp.retrieval.strategies.base import StrategyContext
from rag_lsp.workspace.session import Session
from rag_lsp.workspace.settings import apply_settings

OUTSIDE = {"vault/outside_secret.py": "def outside_only_function():\n    return 'from outside the root'\n",
           "vault/notes.md": "# Outside notes\n"}
INSIDE = {"shop/ledger.py": "def post(entry):\n    return entry\n"}


class Opened:
    """Records every file and directory the process opens or lists while ``active`` (a Python audit hook:
    ``open``, ``os.listdir``, ``os.scandir``). Hooks cannot be removed, so one is installed per process."""

    active: ClassVar[bool] = False
    paths: ClassVar[list[str]] = []

    @classmethod
    def hook(cls, event: str, args: tuple) -> None:
        if cls.active and event in ("open", "os.listdir", "os.scandir") and args and \
                isinstance(args[0], (str, bytes, os.PathLike)):
            cls.paths.append(os.fsdecode(args[0]))


sys.addaudithook(Opened.hook)


def context_for(root: Path, files: dict[str, str], text: str) -> StrategyContext:
    index = Index(write_tree(root, files), use_cache=False)
    index.refresh()
    return StrategyContext(index, parse_query(text))


def outside_reads(paths: list[str], *allowed: Path) -> list[str]:
    """The recorded paths that are neither under ``allowed`` nor Python's own files (imports)."""
    places = [str(place.resolve()) for place in allowed] + [sys.prefix, sys.base_prefix, str(Path(os.__file__).parent)]
    return sorted({path for path in paths if os.path.isabs(path) and not any(
        os.path.realpath(path) == place or os.path.realpath(path).startswith(place + os.sep) for place in places)})


def test_links_inside_the_root_that_lead_outside_are_never_followed(tmp_path):
    outside = write_tree(tmp_path / "outside", OUTSIDE)
    root = write_tree(tmp_path / "ws", INSIDE)
    (root / "linked_dir").symlink_to(outside / "vault", target_is_directory=True)
    (root / "shop/linked.py").symlink_to(outside / "vault/outside_secret.py")
    session = Session(use_cache=False)
    session.add_root(root)
    (stats,) = session.index_roots()
    assert stats.files == 1 and stats.skipped["symlink"] == 2
    # Disk events through the links are refused too, whether the path names the link or goes through it.
    for path in (root / "linked_dir/outside_secret.py", root / "shop/linked.py", root / "linked_dir"):
        assert session.file_changed(path) is not None
    answer = ask(session, ContextRequest("outside_only_function from outside the root"))
    assert [item["path"] for item in answer["items"]] == [] or \
        all(item["path"] == "shop/ledger.py" for item in answer["items"])
    session.close()


def test_evidence_naming_files_outside_the_roots_makes_no_read_outside(tmp_path):
    outside = write_tree(tmp_path / "outside", OUTSIDE)
    root = write_tree(tmp_path / "ws", INSIDE)
    cache = tmp_path / "cache"
    session = Session(cache_root=cache)
    session.add_root(root)
    session.index_roots()
    secret = outside / "vault/outside_secret.py"
    evidence = (
        (f'Traceback (most recent call last):\n  File "{secret}", line 2, in outside_only_function\n'
         f"    return 'from outside the root'\nValueError: boom\n"),
        f"{secret}:1:5: error: undefined name 'outside_only_function'\n",
        "../../outside/vault/outside_secret.py:2: in outside_only_function\n",
        "see ../outside/vault/notes.md and /etc/passwd and ~/.ssh/id_rsa for details\n",
    )
    Opened.paths.clear()
    Opened.active = True
    try:
        answer = ask(session, ContextRequest("why does outside_only_function fail", evidence=evidence))
    finally:
        Opened.active = False
    assert all(item["path"] == "shop/ledger.py" for item in answer["items"])
    assert outside_reads(Opened.paths, root, cache) == []
    # The hook does see reads: one outside the root is reported.
    Opened.active = True
    try:
        secret.read_text()
    finally:
        Opened.active = False
    assert outside_reads(Opened.paths, root, cache) == [str(secret)]
    session.close()


@pytest.mark.parametrize("source, wanted, where", [
    ("client", "{tmp}/elsewhere-cache", None),
    ("client", "../../escape", None),
    ("client", "projects/shop", "cache root"),
    ("operator", "../outside-cache", None),
    ("operator", "{tmp}/elsewhere-cache", None),
    ("operator", ".rag-cache", "root"),
    ("operator", "{cache}/shared", "cache root"),
])
def test_settings_cannot_put_the_cache_outside_the_root_and_the_cache_root(tmp_path, source, wanted, where):
    cache = tmp_path / "cache"
    root = write_tree(tmp_path / "ws", INSIDE)
    wanted = wanted.format(cache=cache, tmp=tmp_path)
    client = {}
    if source == "operator":
        (root / ".rag-lsp.toml").write_text(f'cache_dir = "{wanted}"\n')
    else:
        client = {"cacheDir": wanted}
    session = Session(cache_root=cache)
    session.client_settings, _ = apply_settings(session.client_settings, client)
    warnings = session.add_root(root)
    session.index_roots()
    (_, state), = session.root_list()
    location = state.index.cache.path.resolve()
    written = {p.resolve() for p in tmp_path.rglob("*") if p.is_file()} - {p.resolve() for p in root.rglob("*")
                                                                            if p.is_file() and ".rag-cache" not in p.parts}
    if where is None:
        assert any("ignored: the cache may only go inside" in warning for warning in warnings)
        assert cache.resolve() in location.parents
    elif where == "root":
        assert warnings == [] and (root / ".rag-cache").resolve() in location.parents
    else:
        assert warnings == [] and cache.resolve() in location.parents
    assert all(cache.resolve() in path.parents or root.resolve() in path.parents for path in written)
    assert not (tmp_path / "elsewhere-cache").exists() and not (tmp_path / "outside-cache").exists()
    assert not (tmp_path.parent / "escape").exists()
    session.close()


def test_the_history_strategy_passes_only_checked_ids_after_end_of_options(tmp_path, monkeypatch):
    calls: list[tuple[list[str], dict]] = []

    def record(command, **kwargs):
        calls.append((command, kwargs["env"]))
        return subprocess.CompletedProcess(command, 0, "shop/ledger.py\n", "")

    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    monkeypatch.setattr(history.subprocess, "run", record)
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'core.pager'='touch pwned'")
    hostile = ("broke in 3f2a9c1 --output=/tmp/pwned $(touch /tmp/pwned) `id` HEAD;rm -rf ~ -c core.pager=sh "
               "--upload-pack=touch deadbeef0 ../../etc")
    ctx = context_for(root, INSIDE, hostile)
    findings = history.run(ctx)
    assert {finding.path for finding in findings} == {"shop/ledger.py"}
    assert [command[command.index("--end-of-options") + 1] for command, _ in calls] == \
        ["3f2a9c1^{commit}", "deadbeef0^{commit}"]
    for command, env in calls:
        assert command[0] == "git" and "--no-ext-diff" in command and "--no-textconv" in command
        assert command[-1] == "--" and not any(name.startswith("GIT_") for name in env)
    with pytest.raises(ValueError):
        history._changed_files(ctx, "--output=/tmp/pwned", 1.0)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_hostile_repository_config_runs_no_program(tmp_path):
    root = write_tree(tmp_path / "repo", INSIDE)
    marker = tmp_path / "pwned"
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "HOME": str(tmp_path), "PATH": os.environ["PATH"]}
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "first"]):
        subprocess.run(["git", "-C", str(root), *args], check=True, env=env, capture_output=True)
    for key in ("core.fsmonitor", "diff.external", "core.pager", "core.sshCommand"):
        subprocess.run(["git", "-C", str(root), "config", key, f"touch {marker}"], check=True, env=env)
    subprocess.run(["git", "-C", str(root), "config", "diff.python.textconv", f"touch {marker}"], check=True, env=env)
    (root / ".gitattributes").write_text("*.py diff=python\n")
    commit = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=9", "HEAD"], check=True, env=env,
                            capture_output=True, text=True).stdout.strip()
    ctx = context_for(root, {}, f"this broke in {commit}")
    assert {finding.path for finding in history.run(ctx)} == {"shop/ledger.py"}
    assert not marker.exists()
