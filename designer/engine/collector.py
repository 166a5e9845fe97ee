"""Python's cyclic garbage collector paused around work that builds millions of containers.

One pause for the engine, its CLI and the web app (``designer.bridge.common.collector_paused``):
nested and concurrent blocks share one count, so one request's thread cannot switch the
collector back on under another's.
"""
from __future__ import annotations

import gc
import threading
from contextlib import contextmanager

__all__ = ["gc_paused"]


_gc_lock = threading.Lock()
_gc_pauses = [0, False]   # active gc_paused() blocks (any thread), whether gc was on at the first


@contextmanager
def gc_paused():
    """Run a block with Python's cyclic garbage collector off, then restore it.

    A simulation builds millions of small lists, dicts and tuples that stay alive (the topology
    document, paths, result records) and creates almost no reference cycles, so every
    collection walks a large heap and frees nothing: a fifth of a 16,384-GPU ring's CPU, for
    the same peak RSS without it (docs/PERFORMANCE.md). Objects are still freed by
    reference counting; cycles made inside are collected after. Nested and concurrent blocks
    (threads of one process) share one count: the collector comes back on when the last ends,
    if it was on when the first began.
    """
    with _gc_lock:
        if _gc_pauses[0] == 0:
            _gc_pauses[1] = gc.isenabled()
            gc.disable()
        _gc_pauses[0] += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pauses[0] -= 1
            if _gc_pauses[0] == 0 and _gc_pauses[1]:
                _age_survivors()
                gc.enable()


def _age_survivors() -> None:
    """Move every object the collector tracks into its oldest generation, without a scan.

    Why: with the collector off, the millions of containers a simulation keeps (its result, the
    cached topology) all stay in generation 0, so the first allocation after ``gc.enable()``
    starts a young collection that walks every one of them. ``freeze`` + ``unfreeze`` merges the generation lists into the oldest one (O(1))
    and resets the young count; cycles made inside the block are still freed, by the next full
    collection. Skipped when someone else has frozen objects (``unfreeze`` would release theirs).
    """
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()
