"""The C heap's free pages are handed back after a snapshot save's merge, where the C library allows it."""

from __future__ import annotations

import platform

import pytest

from rag_lsp import heap


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc_trim is glibc's; elsewhere nothing is called")
def test_glibc_malloc_trim_is_found_and_called() -> None:
    trim = heap._malloc_trim()
    assert trim is not None
    # malloc_trim returns 1 when it gave memory back and 0 when there was none to give; both are fine here.
    assert trim(0) in (0, 1)
    heap.release_free_memory()


def test_without_the_function_nothing_is_called(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heap, "_malloc_trim", lambda: None)
    heap.release_free_memory()
