"""Language server processes: started in their own process group, stopped as a group, never outliving us.

Servers spawn children of their own (tsserver, pyright's workers), so a server
is started in a new session and killed as a whole group; on Linux the kernel
also sends it SIGTERM when rag_lsp dies (``PR_SET_PDEATHSIG``). What a dying
server printed is condensed into the line worth reporting.
"""

from __future__ import annotations

import ctypes
import logging
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path

log = logging.getLogger("rag_lsp.langservers")

PR_SET_PDEATHSIG = 1
# Seconds a killed process group gets to be reaped.
STOP_GRACE = 1.0


@cache
def death_signal_hook() -> Callable[[], None] | None:
    """A ``preexec_fn`` asking Linux to SIGTERM the child when its parent dies; None elsewhere.

    ``prctl`` is looked up here, in the parent, so the forked child only makes
    the call and loads nothing.
    """
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None

    def hook() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGTERM)

    return hook


@cache
def spawner() -> ThreadPoolExecutor:
    """The one long-lived thread that forks every server.

    Linux sends the parent-death signal when the *thread* that forked the child
    ends, not the process. Starting servers from short-lived start threads
    would kill them as soon as those threads finished, so all forks happen on
    this thread, which lives as long as rag_lsp.
    """
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="rag-lsp-spawn")


def popen(argv: list[str], cwd: Path) -> subprocess.Popen:
    return subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        start_new_session=True,
        # Safe with threads here: the child makes one prctl call resolved before the fork.
        preexec_fn=death_signal_hook(),  # noqa: PLW1509
    )


def kill_group(process: subprocess.Popen) -> None:
    """SIGKILL the server's whole process group (it leads its own session) and reap the server."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        # The group is already empty.
        pass
    try:
        process.wait(timeout=STOP_GRACE)
    except subprocess.TimeoutExpired:
        log.warning("server process %d did not exit after SIGKILL", process.pid)


_TELLING = re.compile(r"error|panic|fatal|exception|not found|unknown|cannot|failed", re.IGNORECASE)


def telling(lines: list[str], keep: int = 5) -> list[str]:
    """The stderr lines worth reporting: the first that names a failure, then the last few.

    A crashing server often ends with a backtrace whose last lines say
    nothing (``__libc_start_main``); the line that says what went wrong
    (``error: Unknown binary 'rust-analyzer'``) comes earlier.
    """
    first = next((line for line in lines if _TELLING.search(line)), None)
    last = lines[-(keep - 1):] if first is not None else lines[-keep:]
    return ([first] if first is not None and first not in last else []) + last


def exit_status(returncode: int) -> str:
    if returncode < 0:
        return f"killed by signal {-returncode}"
    return f"exit code {returncode}"
