"""Fixtures for the language-server client tests: clients that stop themselves, and a check for leftovers."""

from __future__ import annotations

import sys

import pytest

from rag_lsp.langservers.client import LanguageServerClient
from rag_lsp.langservers.spec import ServerSpec

from .lsp_helpers import child_pids, fake_spec, process_alive, wait_until


@pytest.fixture
def bin_dir(tmp_path, monkeypatch):
    """An empty PATH of our own, and a Python whose directory holds nothing either."""
    path_dir = tmp_path / "path"
    path_dir.mkdir()
    monkeypatch.setenv("PATH", str(path_dir))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "venv" / "bin" / "python"))
    return path_dir


@pytest.fixture
def make_client(tmp_path):
    """``make_client(mode, *extra_args, **client_options)``; every client made is stopped after the test."""
    made: list[LanguageServerClient] = []

    def make(mode: str = "ok", *extra: str, spec: ServerSpec | None = None, **options) -> LanguageServerClient:
        options.setdefault("start_timeout", 5.0)
        client = LanguageServerClient(spec or fake_spec(mode, *extra), tmp_path, **options)
        made.append(client)
        return client

    yield make
    for client in made:
        client.stop()


@pytest.fixture(autouse=True)
def _no_leftover_servers():
    """Every test must leave no child process behind (the architecture's "no orphan" invariant).

    Children that were there before the test (the index's worker pool and the multiprocessing forkserver,
    which earlier tests of a full run start) are not this test's.
    """
    before = set(child_pids())
    yield
    assert wait_until(lambda: not [pid for pid in set(child_pids()) - before if process_alive(pid)], 3.0)
