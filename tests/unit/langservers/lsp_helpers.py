"""Helpers for the language-server client tests: the fake server as a spec, process checks, waiting."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from answers import status_of

from rag_lsp.langservers.client import LanguageServerClient
from rag_lsp.langservers.spec import ServerSpec

FAKE_SERVER = Path(__file__).parents[2] / "fixtures" / "fake_lsp" / "fake_server.py"


def fake_spec(mode: str = "ok", *extra: str, languages: tuple[str, ...] = ("python",)) -> ServerSpec:
    return ServerSpec("fake", sys.executable, (str(FAKE_SERVER), "--mode", mode, *extra), None, languages)


def executable(directory: Path, name: str) -> str:
    """A program ``name`` in ``directory`` that does nothing: enough for a lookup on PATH to find it."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return str(path)


def process_alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped by its parent, counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def child_pids() -> list[int]:
    """This process's children, forked by any of its threads (Linux lists them per thread)."""
    pids = []
    for children in Path(f"/proc/{os.getpid()}/task").glob("*/children"):
        try:
            pids.extend(int(pid) for pid in children.read_text().split())
        except OSError:
            # The thread ended while we looked.
            continue
    return pids


def wait_until(predicate, timeout: float = 3.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return bool(predicate())


def ready(client: LanguageServerClient, timeout: float = 5.0) -> LanguageServerClient:
    client.ensure_started()
    assert client.wait_ready(timeout), status_of(client)
    return client
