"""Hashing with splitmix64's finalizer: routing's per-flow pick of a fabric row
(:mod:`designer.engine.routing.hashing`, through the AOT module only) and the grouping of
identical flows of :mod:`designer.engine.solve.aggregate` (a hash table of flows).

Entry points: ``group_identical``, ``hashed_rows``.

Bounds contract
---------------
Both check the lengths of their arrays against each other before any access; ``group_identical``
also checks that ``ptr`` cuts ``res`` (from 0, never decreasing, to its end) and that the table is
a power of two above the number of flows, and bounds its probes (``MAX_PROBES``). Values of
``res``, ``src``, ``dst``... are hashed or compared, never used as indices; ``count`` only divides.
"""
from __future__ import annotations

import numpy as np

from designer.engine.solve.kernels.compiler import kernel
from designer.engine.solve.kernels.constants import GOLDEN, MAX_PROBES

__all__ = ["group_identical", "hashed_rows"]


@kernel
def _splitmix(x):
    """splitmix64's finalizer of a uint64 (:func:`designer.engine.solve.splitmix.mix`, the same bits)."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@kernel
def _same_flow(ptr, res, dem_bits, w_bits, i, j):
    if dem_bits[i] != dem_bits[j] or w_bits[i] != w_bits[j]:
        return False
    a, b = ptr[i], ptr[j]
    n = ptr[i + 1] - a
    if ptr[j + 1] - b != n:
        return False
    for k in range(n):
        if res[a + k] != res[b + k]:
            return False
    return True


@kernel
def group_identical(ptr, res, dem_bits, w_bits, table, group, firsts, max_groups):
    """Number the flows of the CSR ``ptr``/``res`` that cross the same resources in the same
    order with the same demand and weight (their float64 bits, ``dem_bits``/``w_bits``): each
    flow's ``group`` is that of the first flow equal to it, groups numbered in the order of
    their first flows, whose indices go to ``firsts``. ``table``: a power-of-two length above
    the number of flows, all -1 (open addressing on a hash of the flow; members are compared
    entry by entry, so a hash collision costs a probe, never a wrong group).

    Returns the number of groups; -1 when there are more than ``max_groups`` (not worth
    merging), -2 when the inputs do not fit (lengths, a table too small) or flows crowd one
    place (paths chosen to collide: the caller's sort-based grouping answers instead)."""
    n = len(ptr) - 1
    mask = len(table) - 1
    if (n < 0 or len(table) <= n or len(table) & mask or len(dem_bits) != n or len(w_bits) != n
            or len(group) != n or len(firsts) != n or ptr[0] != 0 or ptr[n] != len(res)):
        return -2
    for i in range(n):
        if ptr[i + 1] < ptr[i]:
            return -2
    groups = 0
    for i in range(n):
        h = _splitmix(np.uint64(dem_bits[i]) ^ (np.uint64(w_bits[i]) * np.uint64(GOLDEN)))
        h = _splitmix(h ^ np.uint64(ptr[i + 1] - ptr[i]))
        for k in range(ptr[i], ptr[i + 1]):   # order-dependent, mixed once at the end
            h = (h ^ np.uint64(res[k])) * np.uint64(0x100000001B3)
        slot = np.int64(_splitmix(h) & np.uint64(mask))
        probes = 0
        while True:
            j = table[slot]
            if j < 0:
                if groups >= max_groups:
                    return -1
                table[slot] = i
                group[i] = groups
                firsts[groups] = i
                groups += 1
                break
            if _same_flow(ptr, res, dem_bits, w_bits, i, j):
                group[i] = group[j]
                break
            probes += 1
            if probes > MAX_PROBES:
                return -2
            slot = (slot + 1) & mask
    return groups


@kernel
def hashed_rows(src, dst, pattern, index, seed, salt, first, count, rows):
    """Per flow: ``first + flow_hash % max(count, 1)`` into ``rows`` (``first`` where it is < 0),
    with routing/hashing.py's flow hash of (src, dst, pattern, index) under ``seed`` (already
    masked to 63 bits) and ``salt``. Returns 0, -1 when the lengths differ."""
    n = len(first)
    if len(src) != n or len(dst) != n or len(pattern) != n or len(index) != n or len(count) != n or len(rows) != n:
        return -1
    golden = np.uint64(GOLDEN)
    useed, usalt = np.uint64(seed), np.uint64(salt)
    for i in range(n):
        if first[i] < 0:
            rows[i] = first[i]
            continue
        h = _splitmix(np.uint64(src[i]) * golden ^ useed)
        h = _splitmix(h ^ np.uint64(dst[i]))
        h = _splitmix(h ^ (np.uint64(pattern[i]) << np.uint64(40)) ^ np.uint64(index[i]))
        h = _splitmix(h ^ usalt)
        c = count[i]
        rows[i] = first[i] + np.int64(h % np.uint64(c if c > 1 else 1))
    return 0
