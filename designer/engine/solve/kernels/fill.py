"""The weighted max-min water-filling (progressive filling) of :mod:`designer.engine.solve.maxmin`;
its state and steps are also the timeline's (:mod:`.timeline`).

Entry points: ``maxmin_solve``, ``maxmin_solve_until``.

Data layout
-----------
- CSR ``ptr``/``res``: the resources of each flow; CSC ``col_ptr``/``col``: the flows of each
  resource (a flow crossing a resource twice appears twice in its column).
- ``w[f]``: the flow's weight (> 0; all 1 for plain max-min). Filling raises a *level* ``x``; an
  unfrozen flow runs at ``w[f] * x``, so it behaves exactly like ``w[f]`` unit flows on its path.
- ``rem[r]``: capacity not yet used by frozen flows; ``cnt[r]``: entries of unfrozen flows on r
  (an integer, so "no unfrozen flow left" is an exact test); ``wsum[r]``: the sum of their weights.
  ``rem / wsum`` is r's fair share: the level at which r saturates.
- ``lev[f]``: the level at which flow f was frozen (its rate over its weight; for a demand-limited
  flow ``dem / w``, while its rate is ``dem`` exactly).
- An indexed min-heap over resources (:mod:`.heap`: ``heap``, ``pos``, ``key``), ordered by
  (share, index), at most R entries. Keys are refreshed lazily, only when a resource reaches the
  top (:func:`_settle_top`): freezing at the minimum share can only raise other shares, so a stale
  key is a lower bound.
- ``dorder``: the unfrozen flows with a finite demand, sorted by ``dem / w`` (the level at which the
  demand is reached). A demand cap is a private resource whose share never changes, so a sorted
  list merged with the heap is all it needs.
- ``order``: flows in the order they were frozen; their *levels* never decrease along it (the
  timeline uses this to warm-start, see ``tl_run``).

With all weights 1 every operation is the unweighted one bit for bit (``1.0 * x == x``, and sums
of 1.0 are exact integers).

Bounds contract
---------------
Nothing is checked here: the callers validate. ``maxmin.prepare_inputs`` guarantees a CSR
(``ptr[0] == 0``, never decreasing, ``ptr[-1] == len(res)``) whose every ``res`` lies in
``[0, len(cap))``, and ``dem``, ``w`` (``prepare_weights``) and ``thr`` (``StoppedFills.levels``)
of one entry per flow; an aggregated problem (``solve.aggregate``) is built from such a CSR. Every
other array is allocated here, sized from those lengths.
"""
from __future__ import annotations

import numpy as np

from designer.engine.solve.kernels.compiler import kernel
from designer.engine.solve.kernels.constants import MIN_POSITIVE, SNAP_RTOL
from designer.engine.solve.kernels.heap import heap_remove, heapify, sift_down

# The entry points; :mod:`.timeline` also builds on initial_state, progressive_fill, build_heap and
# demand_order.
__all__ = ["maxmin_solve", "maxmin_solve_until"]


@kernel
def _csc(ptr, res, n_res):
    col_ptr = np.zeros(n_res + 1, dtype=np.int64)
    for j in range(len(res)):
        col_ptr[res[j] + 1] += 1
    for r in range(n_res):
        col_ptr[r + 1] += col_ptr[r]
    fill = col_ptr[:-1].copy()
    col = np.empty(len(res), dtype=np.int64)
    for f in range(len(ptr) - 1):
        for j in range(ptr[f], ptr[f + 1]):
            col[fill[res[j]]] = f
            fill[res[j]] += 1
    return col_ptr, col


@kernel
def _freeze(f, rate, x, ptr, res, w, rates, lev, frozen, rem, cnt, wsum, load):
    """Freeze flow f at ``rate`` (level ``x``) and take it off every resource it crosses."""
    rates[f] = rate
    lev[f] = x
    frozen[f] = 1
    wf = w[f]
    for j in range(ptr[f], ptr[f + 1]):
        r = res[j]
        rem[r] -= rate
        cnt[r] -= 1
        load[r] += rate
        # An emptied resource restarts from an exact 0 (no rounding residue of non-integer weights).
        wsum[r] = wsum[r] - wf if cnt[r] > 0 else 0.0


@kernel
def demand_order(flows, dem, w):
    """The flows with a finite demand, sorted by the level ``dem / w`` at which they reach it."""
    finite = np.empty(len(flows), dtype=np.int64)
    n = 0
    for f in flows:
        if np.isfinite(dem[f]):
            finite[n] = f
            n += 1
    finite = finite[:n]
    return finite[np.argsort(dem[finite] / w[finite], kind="mergesort")]


@kernel
def build_heap(cand, n_cand, rem, cnt, wsum, heap, pos, key):
    """Heap of the candidate resources that have a finite capacity and unfrozen flows."""
    size = 0
    for k in range(n_cand):
        r = cand[k]
        if cnt[r] > 0 and np.isfinite(rem[r]):
            key[r] = rem[r] / wsum[r]
            heap[size] = r
            size += 1
    heapify(heap, pos, key, size)
    return size


@kernel
def _settle_top(heap, pos, key, size, rem, cnt, wsum):
    """Bring the true smallest fair share to the top of the heap; returns the new heap size.

    Keys are updated lazily. Freezing flows at the current level (the smallest share) can only
    *raise* the share of the other resources they cross, so a stored key is a lower bound of the
    true share: if the top's true share is still its key, it is the minimum. Otherwise its key is
    refreshed and it sinks. This saves a heap update per touched resource (most never reach the
    top before being touched again), and resources left with no unfrozen flow drop out here.
    """
    while size > 0:
        r = heap[0]
        if cnt[r] == 0:
            size = heap_remove(heap, pos, key, size, r)
            continue
        share = rem[r] / wsum[r]
        if share <= key[r]:
            key[r] = share  # equal, or a rounding hair lower: still the minimum
            return size
        key[r] = share
        sift_down(heap, pos, key, 0, size)
    return size


# D: one loop merging two event sources (demand levels, the heap of shares), each with its stop test
@kernel
def progressive_fill(ptr, res, col_ptr, col, dem, w, rates, lev, bneck, frozen, rem, cnt, wsum, load,
                     heap, pos, key, size, dorder, order, ctr, last, thr):
    """Progressive filling from the current state until every boundable flow is frozen.

    Each round takes the smaller of the next demand level (``dem / w``) and the smallest fair
    share, and freezes the flow(s) it limits at that level: at rate ``dem`` for a demand, at
    ``w * level`` for the unfrozen flows of a saturated resource. ``ctr[0]`` (length of
    ``order``) is updated in place (an array, not an int argument, so that numba compiles one
    signature rather than one per literal). Returns the number of levels.

    ``thr`` (empty: never) stops the fill right after it freezes a flow ``f`` at a level
    ``<= thr[f]``, with ``ctr[1] = f + 1`` (``ctr`` then has two entries). Every flow frozen by
    then has the level a full fill gives it: the steps up to there are the same steps.
    """
    n_order = ctr[0]
    dp = 0
    levels = 0
    stop = len(thr) > 0
    while True:
        while dp < len(dorder) and frozen[dorder[dp]]:
            dp += 1
        size = _settle_top(heap, pos, key, size, rem, cnt, wsum)
        dkey = np.inf
        if dp < len(dorder):
            dkey = dem[dorder[dp]] / w[dorder[dp]]
            if dkey == 0.0 and dem[dorder[dp]] > 0.0:
                # A subnormal demand over a weight > 1 underflows to level 0 and would win the
                # tie with a zero-capacity resource, loading it: keep such a demand above 0.
                dkey = MIN_POSITIVE
        hkey = key[heap[0]] if size > 0 else np.inf
        if dkey == np.inf and hkey == np.inf:
            break
        if dkey <= hkey:  # ties go to the demand: the flow then runs exactly at its demand
            f = dorder[dp]
            dp += 1
            x = dkey
            _freeze(f, dem[f], x, ptr, res, w, rates, lev, frozen, rem, cnt, wsum, load)
            bneck[f] = -1
            order[n_order] = f
            n_order += 1
            if stop and x <= thr[f]:
                ctr[1] = f + 1
                break
        else:
            r = heap[0]
            size = heap_remove(heap, pos, key, size, r)
            # Never below the current level: rounding may leave a tied share a hair lower.
            x = hkey if hkey >= last * (1.0 + SNAP_RTOL) else last
            # The column also lists flows frozen earlier (skipped). A single solve scans each
            # column once; a warm re-solve of the timeline may scan it again (keeping columns partitioned
            # unfrozen|frozen was tried: the swaps cost more than the scans they save).
            k = col_ptr[r]
            while k < col_ptr[r + 1] and cnt[r] > 0:
                f = col[k]
                k += 1
                if frozen[f]:
                    continue
                _freeze(f, w[f] * x, x, ptr, res, w, rates, lev, frozen, rem, cnt, wsum, load)
                bneck[f] = r
                order[n_order] = f
                n_order += 1
                if stop and x <= thr[f]:
                    ctr[1] = f + 1
                    break
            if stop and ctr[1] > 0:
                break
        if levels == 0 or x > last:
            levels += 1
        if x > last:
            last = x
    ctr[0] = n_order
    return levels


@kernel
def initial_state(cap, ptr, res, dem, w, frozen):
    """CSC, per-resource counts and weight sums, and the initial heap for the flows not already
    frozen: (col_ptr, col, cnt, wsum, rem, heap, pos, key, size, dorder)."""
    n_res = len(cap)
    col_ptr, col = _csc(ptr, res, n_res)
    cnt = np.zeros(n_res, dtype=np.int64)
    wsum = np.zeros(n_res)
    n_live = 0
    for f in range(len(ptr) - 1):
        if not frozen[f]:
            n_live += 1
            for j in range(ptr[f], ptr[f + 1]):
                cnt[res[j]] += 1
                wsum[res[j]] += w[f]
    live = np.empty(n_live, dtype=np.int64)
    n_live = 0
    for f in range(len(ptr) - 1):
        if not frozen[f]:
            live[n_live] = f
            n_live += 1
    rem = cap.copy()
    heap = np.empty(n_res, dtype=np.int64)
    pos = np.full(n_res, -1, dtype=np.int64)
    key = np.full(n_res, np.inf)
    size = build_heap(np.arange(n_res), n_res, rem, cnt, wsum, heap, pos, key)
    return col_ptr, col, cnt, wsum, rem, heap, pos, key, size, demand_order(live, dem, w)


@kernel
def _solve_from_scratch(cap, ptr, res, dem, w, thr, ctr):
    """The fill of every flow from nothing (``thr`` and ``ctr`` as :func:`progressive_fill` takes
    them); returns (rates, lev, bneck, load, frozen, levels)."""
    n_flows, n_res = len(ptr) - 1, len(cap)
    frozen = np.zeros(n_flows, dtype=np.uint8)
    col_ptr, col, cnt, wsum, rem, heap, pos, key, size, dorder = initial_state(cap, ptr, res, dem, w, frozen)
    rates = np.zeros(n_flows)
    lev = np.zeros(n_flows)
    bneck = np.full(n_flows, -1, dtype=np.int64)
    load = np.zeros(n_res)
    order = np.empty(n_flows, dtype=np.int64)
    levels = progressive_fill(ptr, res, col_ptr, col, dem, w, rates, lev, bneck, frozen, rem, cnt, wsum, load,
                              heap, pos, key, size, dorder, order, ctr, 0.0, thr)
    return rates, lev, bneck, load, frozen, levels


@kernel
def maxmin_solve(cap, ptr, res, dem, w):
    """Weighted max-min fair rates; returns (rates, per-flow level, bottleneck, load, levels)."""
    rates, lev, bneck, load, frozen, levels = _solve_from_scratch(cap, ptr, res, dem, w, np.empty(0),
                                                                  np.zeros(1, dtype=np.int64))
    for f in range(len(ptr) - 1):
        if not frozen[f]:  # crosses only unlimited resources and has no demand
            rates[f] = np.inf
            lev[f] = np.inf
            for j in range(ptr[f], ptr[f + 1]):
                load[res[j]] = np.inf
    return rates, lev, bneck, load, levels


@kernel
def maxmin_solve_until(cap, ptr, res, dem, w, thr):
    """:func:`maxmin_solve`'s fill, stopped right after it freezes a flow ``f`` at a level
    ``<= thr[f]`` (``-inf``: never). Returns (per-flow level, NaN where not frozen yet, the
    bottleneck, the stopping flow or -1 when the fill ran to the end). A frozen flow's level and
    bottleneck are bit for bit the full solve's (the same steps led to them); a flow no resource
    bounds stays NaN."""
    ctr = np.zeros(2, dtype=np.int64)
    _, lev, bneck, _, frozen, _ = _solve_from_scratch(cap, ptr, res, dem, w, thr, ctr)
    for f in range(len(ptr) - 1):
        if not frozen[f]:
            lev[f] = np.nan
    return lev, bneck, ctr[1] - 1
