"""Running git on a workspace safely: for the few answers only git has (a commit's files, last week's changes).

Workspaces and messages are untrusted, so git runs from an argument vector (no shell), with the
repository's filesystem monitor switched off (it would run a program the repository names) and without the
environment's ``GIT_*`` variables, so that nothing outside the workspace picks the repository or its
configuration. Callers add ``--no-ext-diff --no-textconv`` where git would otherwise run a configured program.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def is_checkout(root: Path) -> bool:
    """Whether ``root`` is the top of a git checkout (its ``.git`` a folder, or a file for a worktree)."""
    return (root / ".git").exists()


def git_dir(root: Path) -> Path:
    """The checkout's git folder: ``.git`` itself, or for a worktree the folder its ``.git`` file names
    (``gitdir: ...``, relative to the checkout or absolute)."""
    marker = root / ".git"
    if marker.is_file():
        text = marker.read_text(encoding="utf-8", errors="replace").strip()
        if text.startswith("gitdir:"):
            return root / text.removeprefix("gitdir:").strip()
    return marker


def run_git(root: Path, arguments: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    """``git -C root ARGUMENTS``; raises ``FileNotFoundError`` without git and ``subprocess.TimeoutExpired``."""
    command = ["git", "-c", "core.fsmonitor=false", "-C", str(root), *arguments]
    environment = {name: value for name, value in os.environ.items() if not name.startswith("GIT_")}
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False,
                          stdin=subprocess.DEVNULL, env=environment)
