"""An *indexed* binary min-heap, the priority queue of the water-filling (:mod:`.fill`: resources
keyed by fair share) and of the timeline (:mod:`.timeline`: flows keyed by predicted completion).

``heap[:size]`` holds item indices ordered by (``key[item]``, item), so ties go to the lower index;
``pos[item]`` is the item's slot in ``heap`` (-1: not in it). An item is in the heap at most once,
whatever the number of updates: its key changes in place, then :func:`heap_update` moves it.

Bounds contract: no entry point here, and nothing is checked. Callers hand arrays they allocated
together: ``heap``, ``pos`` and ``key`` of one length N, items in ``[0, N)``, ``size <= N``.
"""
from __future__ import annotations

from designer.engine.solve.kernels.compiler import kernel

__all__ = ["heapify", "heap_remove", "heap_update", "sift_down"]


@kernel
def _less(key, a, b):
    return key[a] < key[b] or (key[a] == key[b] and a < b)


@kernel
def _sift_up(heap, pos, key, i):
    x = heap[i]
    while i > 0:
        parent = (i - 1) >> 1
        y = heap[parent]
        if not _less(key, x, y):
            break
        heap[i] = y
        pos[y] = i
        i = parent
    heap[i] = x
    pos[x] = i


@kernel
def sift_down(heap, pos, key, i, size):
    """Move ``heap[i]`` down to its place in ``heap[:size]``."""
    x = heap[i]
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and _less(key, heap[child + 1], heap[child]):
            child += 1
        if not _less(key, heap[child], x):
            break
        heap[i] = heap[child]
        pos[heap[i]] = i
        i = child
    heap[i] = x
    pos[x] = i


@kernel
def heap_remove(heap, pos, key, size, x):
    """Take item ``x`` out of ``heap[:size]``; returns the new size."""
    i = pos[x]
    pos[x] = -1
    size -= 1
    if i != size:
        y = heap[size]
        heap[i] = y
        pos[y] = i
        _sift_up(heap, pos, key, i)
        sift_down(heap, pos, key, pos[y], size)
    return size


@kernel
def heap_update(heap, pos, key, size, x):
    """Restore the order after ``key[x]`` changed (either way)."""
    _sift_up(heap, pos, key, pos[x])
    sift_down(heap, pos, key, pos[x], size)


@kernel
def heapify(heap, pos, key, size):
    """Order the items ``heap[:size]`` (in any order) into a heap and fill their ``pos``."""
    for i in range(size):
        pos[heap[i]] = i
    for i in range(size // 2 - 1, -1, -1):
        sift_down(heap, pos, key, i, size)
