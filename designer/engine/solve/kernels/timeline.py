"""The fluid timeline of :mod:`designer.engine.solve.timeline`: the water-filling of :mod:`.fill`,
re-run from its saved state at every completion, warm-started (see :func:`tl_run`).

Entry points: ``tl_start``, ``tl_run``.

Bounds contract
---------------
Nothing is checked here. ``solve/timeline.py`` validates the problem as :mod:`.fill` requires
(``maxmin.prepare_inputs``, ``prepare_weights``; ``frozen`` and ``left`` of one entry per flow)
and hands :func:`tl_run` the state :func:`tl_start` returned, with ``active``, ``t_upd``,
``completion``, ``batch``, ``unfrozen`` and ``prev`` of one entry per flow and ``events`` of one
more (each event completes at least one flow), and ``ints`` as :func:`tl_start` made it.
"""
from __future__ import annotations

import numpy as np

from designer.engine.solve.kernels.compiler import kernel
from designer.engine.solve.kernels.constants import BYTES_PER_GBPS_S, TIME_RTOL
from designer.engine.solve.kernels.fill import build_heap, demand_order, initial_state, progressive_fill
from designer.engine.solve.kernels.heap import heap_remove, heap_update, heapify

__all__ = ["tl_start", "tl_run"]


@kernel
def tl_start(cap, ptr, res, dem, w, frozen, left, t0):
    """Initial solve of the timeline. ``frozen`` marks flows that take no part (already done).

    Returns the solver state, the completion heap over active flows keyed by predicted completion
    time (s), and the level count.
    """
    n_flows, n_res = len(ptr) - 1, len(cap)
    col_ptr, col, cnt, wsum, rem, heap, pos, key, size, dorder = initial_state(cap, ptr, res, dem, w, frozen)
    rates = np.zeros(n_flows)
    lev = np.zeros(n_flows)
    bneck = np.full(n_flows, -1, dtype=np.int64)
    load = np.zeros(n_res)
    order = np.empty(n_flows, dtype=np.int64)
    mark = np.zeros(n_res, dtype=np.int64)
    touched = np.empty(n_res, dtype=np.int64)
    ctr = np.zeros(1, dtype=np.int64)
    levels = progressive_fill(ptr, res, col_ptr, col, dem, w, rates, lev, bneck, frozen, rem, cnt, wsum,
                              load, heap, pos, key, size, dorder, order, ctr, 0.0, np.empty(0))
    n_order, stamp = ctr[0], 0
    ckey = np.full(n_flows, np.inf)
    cheap = np.empty(n_flows, dtype=np.int64)
    cpos = np.full(n_flows, -1, dtype=np.int64)
    csize = 0
    for i in range(n_order):
        f = order[i]
        ckey[f] = _predict(t0, left[f], rates[f])
        cheap[csize] = f
        csize += 1
    heapify(cheap, cpos, ckey, csize)
    ints = np.array([n_order, stamp, csize, levels, 0, n_order])
    return (col_ptr, col, cnt, wsum, rem, load, rates, lev, bneck, heap, pos, key, order, mark,
            touched, ckey, cheap, cpos, ints)


@kernel
def _predict(t, left, rate):
    if rate <= 0.0:
        return np.inf
    return t + max(left, 0.0) / (rate * BYTES_PER_GBPS_S)


@kernel
def _pop_completions(cheap, cpos, ckey, csize, lev, active, completion, batch):
    """Pop every flow finishing within TIME_RTOL of the earliest; returns (t, n, csize, min level)."""
    t = ckey[cheap[0]]
    cutoff = t + abs(t) * TIME_RTOL
    n = 0
    ell = np.inf
    while csize > 0 and ckey[cheap[0]] <= cutoff:
        g = cheap[0]
        csize = heap_remove(cheap, cpos, ckey, csize, g)
        completion[g] = t
        active[g] = 0
        batch[n] = g
        n += 1
        ell = min(ell, lev[g])
    return t, n, csize, ell


@kernel
def _unfreeze_suffix(p, n_order, order, ptr, res, w, rates, frozen, active, rem, cnt, wsum, load,
                     mark, touched, stamp, unfrozen, prev):
    """Undo the freezing of order[p:n_order]: finished flows leave, the others become unfrozen."""
    n_touched = 0
    n_unfrozen = 0
    for i in range(p, n_order):
        f = order[i]
        x = rates[f]
        alive = active[f] != 0
        for j in range(ptr[f], ptr[f + 1]):
            r = res[j]
            rem[r] += x
            load[r] -= x
            if alive:
                cnt[r] += 1
                wsum[r] += w[f]
                if mark[r] != stamp:
                    mark[r] = stamp
                    touched[n_touched] = r
                    n_touched += 1
        if alive:
            frozen[f] = 0
            unfrozen[n_unfrozen] = f
            prev[n_unfrozen] = x
            n_unfrozen += 1
        else:
            rates[f] = 0.0
    return n_touched, n_unfrozen


@kernel
def tl_run(max_steps, ptr, res, col_ptr, col, dem, w, rates, lev, bneck, frozen, active, rem, cnt,
           wsum, load, heap, pos, key, order, mark, touched, left, t_upd, ckey, cheap, cpos,
           completion, events, batch, unfrozen, prev, ints):
    """Advance the fluid simulation by up to ``max_steps`` completion events.

    Warm start, exact: when the flows of a batch finish, let ``ell`` be the smallest of their
    levels (rate / weight). Every resource they cross saturated at a level >= ell (else they would
    have been frozen below ell); removing them only delays those saturations, so progressive
    filling below ell never looked at them: every flow frozen below ell keeps its rate. Only the
    suffix of ``order`` with levels >= ell is unfrozen, and filling resumes from
    there with the heap rebuilt over the resources those flows cross. The cost of an event is thus
    proportional to the flows whose rate may change (plus the columns of the resources popped),
    not to F. Remaining bytes are brought up to date only for the flows re-solved.

    ``ints`` = [n_order, stamp, csize, levels, n_events, flows re-solved]; returns steps done.
    """
    n_order, stamp, csize = ints[0], ints[1], ints[2]
    ctr = np.zeros(1, dtype=np.int64)
    steps = 0
    while steps < max_steps and csize > 0 and ckey[cheap[0]] < np.inf:
        t, n_batch, csize, ell = _pop_completions(cheap, cpos, ckey, csize, lev, active, completion,
                                                  batch)
        p = n_order
        while p > 0 and lev[order[p - 1]] >= ell:
            p -= 1
        last = lev[order[p - 1]] if p > 0 else 0.0
        stamp += 1
        n_touched, n_unfrozen = _unfreeze_suffix(p, n_order, order, ptr, res, w, rates, frozen,
                                                 active, rem, cnt, wsum, load, mark, touched, stamp,
                                                 unfrozen, prev)
        size = build_heap(touched, n_touched, rem, cnt, wsum, heap, pos, key)
        dorder = demand_order(unfrozen[:n_unfrozen], dem, w)
        ctr[0] = p
        levels = progressive_fill(ptr, res, col_ptr, col, dem, w, rates, lev, bneck, frozen, rem,
                                  cnt, wsum, load, heap, pos, key, size, dorder, order, ctr, last, np.empty(0))
        n_order = ctr[0]
        for i in range(n_unfrozen):
            f = unfrozen[i]
            if rates[f] == prev[i]:
                continue  # same rate: its predicted completion stands (most re-solved flows)
            left[f] -= prev[i] * (t - t_upd[f]) * BYTES_PER_GBPS_S
            t_upd[f] = t
            ckey[f] = _predict(t, left[f], rates[f])
            heap_update(cheap, cpos, ckey, csize, f)
        events[ints[4]] = t
        ints[3] += levels
        ints[4] += 1
        ints[5] += n_unfrozen
        steps += 1
    ints[0], ints[1], ints[2] = n_order, stamp, csize
    return steps
