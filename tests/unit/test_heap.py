"""The C heap's free pages are handed back after a snapshot save's merge, where the C library allows it, and the
pages a process read of a mapped file are dropped from its resident size."""

from __future__ import annotations

import mmap
import platform
import subprocess
import sys

import pytest
from conftest import mapped_resident_kb

from rag_lsp import heap


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc_trim is glibc's; elsewhere nothing is called")
def test_glibc_malloc_trim_is_found_and_called() -> None:
    trim = heap._libc("malloc_trim")
    assert trim is not None
    # malloc_trim returns 1 when it gave memory back and 0 when there was none to give; both are fine here.
    assert trim(0) in (0, 1)
    heap.release_free_memory()


def test_without_the_functions_nothing_is_called(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heap, "_libc", lambda name: None)
    heap.release_free_memory()
    heap.map_large_blocks()


WHERE_A_BLOCK_LIVES = """
import sys
import numpy as np
from rag_lsp import heap
if sys.argv[1] == "fixed":
    heap.map_large_blocks()
# Freeing mapped blocks of 4 MB raises glibc's threshold to 4 MB, unless it is fixed.
for _ in range(3):
    block = np.ones(4 << 20, dtype=np.uint8)
    del block
block = np.ones(1 << 20, dtype=np.uint8)
address = block.ctypes.data
for line in open("/proc/self/maps"):
    low, high = (int(bound, 16) for bound in line.split()[0].split("-"))
    if low <= address < high:
        print("heap" if line.rstrip().endswith("[heap]") else "mapped")
"""


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc" or platform.system() != "Linux",
                    reason="the threshold is glibc's, and where a block lives is read from /proc/self/maps")
@pytest.mark.parametrize(("mode", "expected"), [("fixed", "mapped"), ("default", "heap")])
def test_with_the_threshold_fixed_a_large_block_is_mapped_of_its_own(mode, expected) -> None:
    # In a fresh process: 1 MB asked after 4 MB blocks were freed comes from the heap (whose freed pages stay
    # resident) unless the threshold is fixed.
    found = subprocess.run([sys.executable, "-c", WHERE_A_BLOCK_LIVES, mode], capture_output=True, text=True,
                           check=True, timeout=60)
    assert found.stdout.split() == [expected]


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
