"""Python's cyclic garbage collector, set for a process that holds a large index: paused while a bulk build
allocates objects that all live on, and run less often while questions are answered.

A warm start builds a few hundred thousand long-lived objects in a row (the
snapshot's definitions and references, the symbol, lookup and graph tables).
The collector is triggered by allocation counts, not by garbage, so during such
a build it ran over and over, its older generations traversing everything built
so far: on Django that cost about as much as the building itself. Reference
counting still frees whatever is dropped meanwhile; only reference cycles wait
for the pause to end, and the builds wrapped here make none.

Answering is the same in small: a Django question allocates tens of thousands of objects, nearly all freed by
reference counting, and keeps a few thousand in per-index caches (built chunks, file texts, painted lines). With
CPython's default first threshold (700) the collector ran about ten times per question, and every so often a
full collection traversed those caches again: up to 30 ms of a 70 ms question, a tenth of all the questions'
time (``tune_for_answers``).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc(keep: bool = False) -> Iterator[None]:
    """Disable the collector for the block, unless it is already off (nested or by the host); always restore.

    ``keep`` moves every object alive at the end into the collector's permanent generation (``gc.freeze``),
    so later collections no longer traverse them: for a build done once per index (a snapshot loaded, the
    tables and the graph built from nothing), whose objects live as long as the index. They are still freed
    by reference counting when dropped; a reference cycle alive at that moment and dropped later is not.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if keep:
            gc.freeze()
        gc.enable()


# The collector's first threshold (tracked objects allocated, net of those freed, between two collections of the
# youngest generation) in a process that answers questions. Over 24 Django questions (warm, in-process, a loaded
# machine) the collector took about 100 ms at CPython's 700 and about 20 ms at this threshold, with the p95
# question's CPU time 143 → 99 and 127 → 90 ms in two runs; the older generations' ratios are left as they are.
YOUNG_THRESHOLD = 20_000


def tune_for_answers() -> None:
    """Raise the collector's first threshold to ``YOUNG_THRESHOLD``; a host that set a higher one (or 0, which
    turns collection off) keeps its own."""
    young, middle, old = gc.get_threshold()
    if 0 < young < YOUNG_THRESHOLD:
        gc.set_threshold(YOUNG_THRESHOLD, middle, old)
