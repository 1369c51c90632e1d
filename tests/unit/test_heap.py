"""The C heap's free pages are handed back after a snapshot save's merge, where the C library allows it, and the
pages a process read of a mapped file are dropped from its resident size."""

from __future__ import annotations

import mmap
import platform

import pytest
from conftest import mapped_resident_kb

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


@pytest.mark.skipif(platform.system() != "Linux", reason="reads /proc/self/smaps")
def test_a_mapped_files_pages_are_dropped_and_read_again(tmp_path) -> None:
    path = tmp_path / "data"
    content = bytes(range(256)) * (4 << 12)
    path.write_bytes(content)
    with open(path, "rb") as handle:
        mapping = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    assert bytes(mapping) == content
    read = heap.resident_file_bytes()
    assert mapped_resident_kb(path) == len(content) // 1024
    heap.drop_mapped_pages(mapping)
    assert mapped_resident_kb(path) == 0
    # The process's count of mapped files' pages falls by as much (less whatever code the calls paged in).
    assert read - heap.resident_file_bytes() >= len(content) * 3 // 4
    # What is read next is mapped again, unchanged.
    assert bytes(mapping) == content
    assert mapped_resident_kb(path) == len(content) // 1024


def test_without_madvise_no_page_is_dropped(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heap, "_madvise", lambda: None)
    path = tmp_path / "data"
    path.write_bytes(b"x" * 8192)
    with open(path, "rb") as handle:
        mapping = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    assert bytes(mapping) == b"x" * 8192
    heap.drop_mapped_pages(mapping)
    if platform.system() == "Linux":
        assert mapped_resident_kb(path) == 8
