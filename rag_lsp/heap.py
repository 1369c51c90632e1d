"""Give memory back to the system: the C heap's free pages after a large, short-lived allocation, and the
pages of mapped files a process has read.

A snapshot save merges the BM25 postings through columns of tens of megabytes that live for a second.
glibc serves such blocks with ``mmap`` and unmaps them when freed, but every such free raises its
threshold for using ``mmap`` (up to 32 MB), so the next merge's columns come from the heap instead, and
freeing them leaves the pages resident: on Django's cold index the main process kept 40–100 MB it no
longer used after each save, on top of the next save's peak. ``malloc_trim`` returns free heap pages to
the system; elsewhere than glibc there is nothing to call and nothing is done. ``map_large_blocks`` fixes
the threshold instead, so such blocks are always mapped and unmapped: the heap no longer takes them in between.

A process's resident size also counts every page of a mapped file it has read, though the page cache holds
them and the kernel may take them back at any time: questions at 100,000 files read 0.3-0.7 GB of the
index's files through. ``drop_mapped_pages`` unmaps such pages (the next read maps them again from the page
cache, a minor fault) without holding the interpreter's lock, so another thread answers meanwhile.
"""

from __future__ import annotations

import mmap
import os
from functools import cache

import numpy as np

# Blocks from this size up are mapped of their own and unmapped when freed (``map_large_blocks``).
MMAP_THRESHOLD = 256 << 10
# glibc's ``mallopt`` parameter for it (malloc.h).
_M_MMAP_THRESHOLD = -3


def map_large_blocks() -> None:
    """Fix glibc's threshold for mapping a block at ``MMAP_THRESHOLD``, which turns off its raising it after
    each such block is freed (nothing elsewhere than glibc). For a process that holds an index and answers
    questions: at 100,000 files, a cold index asked a question every 2 s ended with 1,442 MB anonymous against
    1,571 (the highest seen after a question: 1,442 against 1,794); score arrays and a spill's columns
    otherwise came from the heap, whose freed pages stay resident."""
    mallopt = _libc("mallopt")
    if mallopt is not None:
        mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)


def release_free_memory() -> None:
    """Return the C heap's free pages to the system where the C library can (glibc's ``malloc_trim``)."""
    trim = _libc("malloc_trim")
    if trim is not None:
        trim(0)


@cache
def _libc(name: str):
    """A function of the C library, or None without it (ctypes is imported here, when first needed)."""
    import ctypes

    try:
        return getattr(ctypes.CDLL(None), name)
    except (AttributeError, OSError):
        return None


def resident_file_bytes() -> int:
    """The process's resident pages of mapped files and shared memory (``/proc/self/statm``'s third field),
    0 where there is no such file."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[2]) * mmap.PAGESIZE
    except (OSError, ValueError, IndexError):
        return 0


def drop_mapped_pages(mapping: mmap.mmap) -> None:
    """Drop this process's resident pages of a read-only file mapping (``MADV_DONTNEED``; what is read next
    is mapped again from the page cache), with the interpreter's lock released; nothing where the system
    has no such advice."""
    madvise = _madvise()
    if madvise is None or len(mapping) == 0:
        return
    # The view holds an export of the mapping, so that it cannot be closed (and its address reused) meanwhile.
    view = np.frombuffer(mapping, dtype=np.uint8)
    madvise(view.ctypes.data, len(view), mmap.MADV_DONTNEED)


@cache
def _madvise():
    """libc's ``madvise`` taking an address, a length and an advice (ctypes releases the interpreter's lock
    around the call, which ``mmap.madvise`` holds), or None without it."""
    if not hasattr(mmap, "MADV_DONTNEED") or os.name != "posix":
        return None
    import ctypes

    try:
        function = ctypes.CDLL(None, use_errno=True).madvise
    except (AttributeError, OSError):
        return None
    function.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    function.restype = ctypes.c_int
    return function
