"""Give the C heap's free memory back to the system after a large, short-lived allocation.

A snapshot save merges the BM25 postings through columns of tens of megabytes that live for a second.
glibc serves such blocks with ``mmap`` and unmaps them when freed, but every such free raises its
threshold for using ``mmap`` (up to 32 MB), so the next merge's columns come from the heap instead, and
freeing them leaves the pages resident: on Django's cold index the main process kept 40–100 MB it no
longer used after each save, on top of the next save's peak. ``malloc_trim`` returns free heap pages to
the system; elsewhere than glibc there is nothing to call and nothing is done.
"""

from __future__ import annotations

from functools import cache


def release_free_memory() -> None:
    """Return the C heap's free pages to the system where the C library can (glibc's ``malloc_trim``)."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@cache
def _malloc_trim():
    """glibc's ``malloc_trim``, or None without it (ctypes is imported here: a warm start that saves nothing
    never needs it)."""
    import ctypes

    try:
        return ctypes.CDLL(None).malloc_trim
    except (AttributeError, OSError):
        return None
