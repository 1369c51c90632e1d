"""Pause Python's cyclic garbage collector while a bulk build allocates objects that all live on.

A warm start builds a few hundred thousand long-lived objects in a row (the
snapshot's definitions and references, the symbol, lookup and graph tables).
The collector is triggered by allocation counts, not by garbage, so during such
a build it ran over and over, its older generations traversing everything built
so far: on Django that cost about as much as the building itself. Reference
counting still frees whatever is dropped meanwhile; only reference cycles wait
for the pause to end, and the builds wrapped here make none.
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
