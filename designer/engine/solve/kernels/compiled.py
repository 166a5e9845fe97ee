"""Compiled (numba) kernels of the max-min solver and of the timeline; private to ``solver.py`` and
``timeline.py``, which validate inputs and pass contiguous int64/float64/uint8 arrays only, so every
kernel compiles exactly once (and is cached on disk).

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
- An *indexed* binary min-heap over resources (``heap``, ``pos``, ``key``), ordered by (share,
  index), at most R entries (no duplicate entries to invalidate, whatever the number of updates).
  Keys are refreshed lazily, only when a resource reaches the top (``_settle_top``): freezing at
  the minimum share can only raise other shares, so a stale key is a lower bound.
- ``dorder``: the unfrozen flows with a finite demand, sorted by ``dem / w`` (the level at which the
  demand is reached). A demand cap is a private resource whose share never changes, so a sorted
  list merged with the heap is all it needs.
- ``order``: flows in the order they were frozen; their *levels* never decrease along it (the
  timeline uses this to warm-start, see ``tl_run``).

With all weights 1 every operation is the unweighted one bit for bit (``1.0 * x == x``, and sums
of 1.0 are exact integers).
"""
from __future__ import annotations

import numba
import numpy as np

__all__ = ["maxmin_solve", "maxmin_solve_until", "tl_start", "tl_run", "id_table_build", "scan_paths",
           "find_joined", "scan_flows", "write_object", "group_identical", "path_lengths", "path_entries",
           "hashed_rows"]

SNAP_RTOL = 1e-12       # keep equal to maxmin._SNAP_RTOL
MIN_POSITIVE = 5e-324  # smallest positive float64 (subnormal)
TIME_RTOL = 1e-9        # completions this close (relative) to the next one happen together
BYTES_PER_GBPS_S = 1e9 / 8.0


def _jit(fn):
    # cache=True needs a writable __pycache__ (or NUMBA_CACHE_DIR); numba raises at decoration time
    # when it finds none, and then compiling at every start is still correct, only slower.
    try:
        return numba.njit(cache=True, nogil=True)(fn)
    except RuntimeError:
        return numba.njit(nogil=True)(fn)


# --------------------------------------------------------------------------- indexed heap

@_jit
def _less(key, a, b):
    return key[a] < key[b] or (key[a] == key[b] and a < b)


@_jit
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


@_jit
def _sift_down(heap, pos, key, i, size):
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


@_jit
def _heap_remove(heap, pos, key, size, x):
    i = pos[x]
    pos[x] = -1
    size -= 1
    if i != size:
        y = heap[size]
        heap[i] = y
        pos[y] = i
        _sift_up(heap, pos, key, i)
        _sift_down(heap, pos, key, pos[y], size)
    return size


@_jit
def _heap_update(heap, pos, key, size, x):
    _sift_up(heap, pos, key, pos[x])
    _sift_down(heap, pos, key, pos[x], size)


@_jit
def _heapify(heap, pos, key, size):
    for i in range(size):
        pos[heap[i]] = i
    for i in range(size // 2 - 1, -1, -1):
        _sift_down(heap, pos, key, i, size)


# --------------------------------------------------------------------------- water-filling

@_jit
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


@_jit
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


@_jit
def _demand_order(flows, dem, w):
    """The flows with a finite demand, sorted by the level ``dem / w`` at which they reach it."""
    finite = np.empty(len(flows), dtype=np.int64)
    n = 0
    for f in flows:
        if np.isfinite(dem[f]):
            finite[n] = f
            n += 1
    finite = finite[:n]
    return finite[np.argsort(dem[finite] / w[finite], kind="mergesort")]


@_jit
def _build_heap(cand, n_cand, rem, cnt, wsum, heap, pos, key):
    """Heap of the candidate resources that have a finite capacity and unfrozen flows."""
    size = 0
    for k in range(n_cand):
        r = cand[k]
        if cnt[r] > 0 and np.isfinite(rem[r]):
            key[r] = rem[r] / wsum[r]
            heap[size] = r
            size += 1
    _heapify(heap, pos, key, size)
    return size


@_jit
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
            size = _heap_remove(heap, pos, key, size, r)
            continue
        share = rem[r] / wsum[r]
        if share <= key[r]:
            key[r] = share  # equal, or a rounding hair lower: still the minimum
            return size
        key[r] = share
        _sift_down(heap, pos, key, 0, size)
    return size


@_jit
def _fill(ptr, res, col_ptr, col, dem, w, rates, lev, bneck, frozen, rem, cnt, wsum, load,
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
            size = _heap_remove(heap, pos, key, size, r)
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


@_jit
def _start(cap, ptr, res, dem, w, frozen):
    """CSC, per-resource counts and weight sums, and the initial heap for the flows not already
    frozen."""
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
    size = _build_heap(np.arange(n_res), n_res, rem, cnt, wsum, heap, pos, key)
    return col_ptr, col, cnt, wsum, rem, heap, pos, key, size, _demand_order(live, dem, w)


@_jit
def _solve_from_scratch(cap, ptr, res, dem, w, thr, ctr):
    """The fill of every flow from nothing (``thr`` and ``ctr`` as :func:`_fill` takes them);
    returns (rates, lev, bneck, load, frozen, levels)."""
    n_flows, n_res = len(ptr) - 1, len(cap)
    frozen = np.zeros(n_flows, dtype=np.uint8)
    col_ptr, col, cnt, wsum, rem, heap, pos, key, size, dorder = _start(cap, ptr, res, dem, w, frozen)
    rates = np.zeros(n_flows)
    lev = np.zeros(n_flows)
    bneck = np.full(n_flows, -1, dtype=np.int64)
    load = np.zeros(n_res)
    order = np.empty(n_flows, dtype=np.int64)
    levels = _fill(ptr, res, col_ptr, col, dem, w, rates, lev, bneck, frozen, rem, cnt, wsum, load,
                   heap, pos, key, size, dorder, order, ctr, 0.0, thr)
    return rates, lev, bneck, load, frozen, levels


@_jit
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


@_jit
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


# --------------------------------------------------------------------------- timeline

@_jit
def tl_start(cap, ptr, res, dem, w, frozen, left, t0):
    """Initial solve of the timeline. ``frozen`` marks flows that take no part (already done).

    Returns the solver state, the completion heap over active flows keyed by predicted completion
    time (s), and the level count.
    """
    n_flows, n_res = len(ptr) - 1, len(cap)
    col_ptr, col, cnt, wsum, rem, heap, pos, key, size, dorder = _start(cap, ptr, res, dem, w, frozen)
    rates = np.zeros(n_flows)
    lev = np.zeros(n_flows)
    bneck = np.full(n_flows, -1, dtype=np.int64)
    load = np.zeros(n_res)
    order = np.empty(n_flows, dtype=np.int64)
    mark = np.zeros(n_res, dtype=np.int64)
    touched = np.empty(n_res, dtype=np.int64)
    ctr = np.zeros(1, dtype=np.int64)
    levels = _fill(ptr, res, col_ptr, col, dem, w, rates, lev, bneck, frozen, rem, cnt, wsum,
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
    _heapify(cheap, cpos, ckey, csize)
    ints = np.array([n_order, stamp, csize, levels, 0, n_order])
    return (col_ptr, col, cnt, wsum, rem, load, rates, lev, bneck, heap, pos, key, order, mark,
            touched, ckey, cheap, cpos, ints)


@_jit
def _predict(t, left, rate):
    if rate <= 0.0:
        return np.inf
    return t + max(left, 0.0) / (rate * BYTES_PER_GBPS_S)


@_jit
def _pop_completions(cheap, cpos, ckey, csize, lev, active, completion, batch):
    """Pop every flow finishing within TIME_RTOL of the earliest; returns (t, n, csize, min level)."""
    t = ckey[cheap[0]]
    cutoff = t + abs(t) * TIME_RTOL
    n = 0
    ell = np.inf
    while csize > 0 and ckey[cheap[0]] <= cutoff:
        g = cheap[0]
        csize = _heap_remove(cheap, cpos, ckey, csize, g)
        completion[g] = t
        active[g] = 0
        batch[n] = g
        n += 1
        ell = min(ell, lev[g])
    return t, n, csize, ell


@_jit
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


@_jit
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
        size = _build_heap(touched, n_touched, rem, cnt, wsum, heap, pos, key)
        dorder = _demand_order(unfrozen[:n_unfrozen], dem, w)
        ctr[0] = p
        levels = _fill(ptr, res, col_ptr, col, dem, w, rates, lev, bneck, frozen, rem,
                       cnt, wsum, load, heap, pos, key, size, dorder, order, ctr, last, np.empty(0))
        n_order = ctr[0]
        for i in range(n_unfrozen):
            f = unfrozen[i]
            if rates[f] == prev[i]:
                continue  # same rate: its predicted completion stands (most re-solved flows)
            left[f] -= prev[i] * (t - t_upd[f]) * BYTES_PER_GBPS_S
            t_upd[f] = t
            ckey[f] = _predict(t, left[f], rates[f])
            _heap_update(cheap, cpos, ckey, csize, f)
        events[ints[4]] = t
        ints[3] += levels
        ints[4] += 1
        ints[5] += n_unfrozen
        steps += 1
    ints[0], ints[1], ints[2] = n_order, stamp, csize
    return steps


# --------------------------------------------------------------------------- id lookups
# ``designer/engine/solve/id_index.py`` (issue #20) maps ids to positions here instead of through a
# Python dict: an open-addressing table over the ids' UTF-8 bytes, looked up from NUL-joined
# strings (a topology's link ends) or from a scan of the raw JSON bytes of a chunk of ``solve``
# flows (whose caller vouches for the bytes: orjson parsed them, no backslash; and checks every
# count the scan reports against orjson's).

SCAN_OK = 0
SCAN_NOT_AN_OBJECT = 1   # an item of the chunk is not an object
SCAN_LINKS_KEYS = 2      # a flow object with no "links" key, or with more than one
SCAN_NOT_STRINGS = 3     # a "links" value that is not an array of strings only
SCAN_UNKNOWN_ID = 4      # a link id the table does not hold
SCAN_COUNTS = 5          # a flow count or a path length that is not orjson's
SCAN_TRUNCATED = 6       # the bytes end inside a value
_FNV_OFFSET, _FNV_PRIME, _MASK32 = 2166136261, 16777619, 0xFFFFFFFF  # FNV-1a, 32 bits (no overflow)
# How far past its hash slot a key may sit. FNV-1a is not keyed: ids chosen to collide (an
# untrusted document) would make every probe walk all of them, quadratic in the ids; a table
# whose keys do not all fit this close is refused and the caller's dict (keyed SipHash) answers.
MAX_PROBES = 64
# How many bytes of other keys a lookup of a key may compare, per byte of the key. A lookup
# walks the keys between the key's slot and its own, comparing bytes while they agree: ids
# chosen to share one slot AND a long prefix (64 ids of 1,000 bytes, 996 in common) made each
# hop of a crafted `solve` input compare ~64k bytes — linear, but 3x the dict path's time
# (found in review). A table where some key would cost more is refused: the dict answers.
MAX_COMPARED_PER_BYTE = 4


@_jit
def _fnv1a(data, start, end):
    h = _FNV_OFFSET
    for i in range(start, end):
        h = ((h ^ data[i]) * _FNV_PRIME) & _MASK32
    return h


@_jit
def _same_bytes(data, start, end, key_bytes, key_start, key_end):
    if end - start != key_end - key_start:
        return False
    for i in range(end - start):
        if data[start + i] != key_bytes[key_start + i]:
            return False
    return True


@_jit
def _find_until(data, start, stop, key_bytes, key_ptr, table):
    """(the key index of ``data[start:end]``, or -1; ``end``): the bytes from ``start`` up to the
    first byte ``stop`` (or the end of ``data``), hashed on the way and looked up in ``table``."""
    n, end, h = len(data), start, _FNV_OFFSET
    while end < n and data[end] != stop:
        h = ((h ^ data[end]) * _FNV_PRIME) & _MASK32
        end += 1
    mask = len(table) - 1
    slot = h & mask
    for _ in range(MAX_PROBES + 1):   # every key sits at most MAX_PROBES past its slot
        k = table[slot]
        if k < 0 or _same_bytes(data, start, end, key_bytes, key_ptr[k], key_ptr[k + 1]):
            return k, end
        slot = (slot + 1) & mask
    return -1, end


@_jit
def id_table_build(key_bytes, key_ptr, table):
    """Fill ``table`` (a power-of-two length above the number of keys, all -1) with the index of
    each key ``key_bytes[key_ptr[k]:key_ptr[k + 1]]`` at its FNV-1a slot (linear probing, each
    key at most :data:`MAX_PROBES` slots past its own). Returns the number of keys, or -1 if the
    table cannot hold them, ``key_ptr`` does not cut ``key_bytes`` (no bounds checks in compiled
    code), a key is there twice, or keys crowd one place — more than :data:`MAX_PROBES` slots,
    or more than :data:`MAX_COMPARED_PER_BYTE` bytes of other keys compared per byte of a key on
    the way to it (the caller then uses its dict)."""
    n = len(key_ptr) - 1
    mask = len(table) - 1
    if n < 0 or len(table) <= n or len(table) & mask or key_ptr[0] != 0 or key_ptr[n] != len(key_bytes):
        return -1
    for k in range(n):
        if key_ptr[k + 1] < key_ptr[k]:
            return -1
    for k in range(n):
        start, end = key_ptr[k], key_ptr[k + 1]
        slot = _fnv1a(key_bytes, start, end) & mask
        probes = 0
        compared = 0   # bytes a lookup of this key compares before reaching it
        while table[slot] >= 0:
            other = table[slot]
            same = _common_prefix(key_bytes, start, end, key_bytes, key_ptr[other], key_ptr[other + 1])
            if same == end - start and key_ptr[other + 1] - key_ptr[other] == same:
                return -1   # a duplicate
            compared += same
            probes += 1
            if probes > MAX_PROBES or compared > MAX_COMPARED_PER_BYTE * (end - start) + MAX_PROBES:
                return -1   # crowded (ids chosen to collide?): no table, the caller's dict answers
            slot = (slot + 1) & mask
        table[slot] = k
    return n



@_jit
def _common_prefix(data, start, end, key_bytes, key_start, key_end):
    """How many leading bytes ``data[start:end]`` and the key agree on, as a lookup's
    comparison reads them (:func:`_same_bytes`: nothing when the lengths differ)."""
    if end - start != key_end - key_start:
        return 0
    for i in range(end - start):
        if data[start + i] != key_bytes[key_start + i]:
            return i
    return end - start


@_jit
def _skip_ws(piece, i):
    n = len(piece)
    while i < n and (piece[i] == 32 or piece[i] == 10 or piece[i] == 13 or piece[i] == 9):
        i += 1
    return i


@_jit
def _string_end(piece, i):
    """The index of the quote closing the string opened at ``piece[i]`` (no escapes), or -1."""
    n = len(piece)
    i += 1
    while i < n and piece[i] != 34:
        i += 1
    return i if i < n else -1


@_jit
def _is_links(piece, start, end):
    # the key "links": l i n k s
    return (end - start == 5 and piece[start] == 108 and piece[start + 1] == 105
            and piece[start + 2] == 110 and piece[start + 3] == 107 and piece[start + 4] == 115)


@_jit
def _scan_path(piece, i, key_bytes, key_ptr, table, limit, out, at):
    """Read the "links" array whose value starts at ``piece[i]``: write its ids' indices to
    ``out[at:]`` (at most ``limit``). Returns (status, index after the array, ids read)."""
    n = len(piece)
    if i >= n or piece[i] != 91:  # '['
        return SCAN_NOT_STRINGS, i, 0
    i = _skip_ws(piece, i + 1)
    if i < n and piece[i] == 93:  # ']': an empty path
        return SCAN_OK, i + 1, 0
    count = 0
    while True:
        if i >= n or piece[i] != 34:  # '"'
            return SCAN_NOT_STRINGS, i, count
        k, end = _find_until(piece, i + 1, 34, key_bytes, key_ptr, table)   # to the closing quote
        if end >= n:
            return SCAN_TRUNCATED, i, count
        if k < 0:
            return SCAN_UNKNOWN_ID, i, count
        if count >= limit or at + count >= len(out):
            return SCAN_COUNTS, i, count
        out[at + count] = k
        count += 1
        i = _skip_ws(piece, end + 1)
        if i < n and piece[i] == 93:  # ']'
            return SCAN_OK, i + 1, count
        if i >= n or piece[i] != 44:  # ','
            return SCAN_NOT_STRINGS, i, count
        i = _skip_ws(piece, i + 1)


@_jit
def scan_paths(piece, key_bytes, key_ptr, table, lens, out):
    """Write into ``out`` the link indices of the "links" array of every flow object of
    ``piece``, the raw bytes of a JSON array's items (``[`` + piece + ``]`` is valid JSON without a
    backslash, so every quote opens or closes a string). ``lens`` holds orjson's path length of
    each flow, ``out`` their sum. Returns SCAN_OK when the objects are ``len(lens)``, each with
    exactly one key "links" (a string followed by ':' directly inside the flow object) whose
    value is an array of known ids only, as many as ``lens`` says; else the failure's SCAN_* code
    (``out`` then holds nothing of use). ``table``: as :func:`id_table_build` filled it."""
    n = len(piece)
    n_flows = len(lens)
    flow, depth, at, links_keys = -1, 0, 0, 0
    i = 0
    while i < n:
        c = piece[i]
        if c == 34:  # '"': a string; directly inside a flow object, maybe a key
            start, end = i + 1, _string_end(piece, i)
            if end < 0:
                return SCAN_TRUNCATED
            if depth == 0:
                return SCAN_NOT_AN_OBJECT
            i = end + 1
            if depth != 1:
                continue
            j = _skip_ws(piece, i)
            if j >= n:
                return SCAN_TRUNCATED
            if piece[j] != 58:  # ':' makes it a key; a value is followed by ',' or '}'
                if piece[j] != 44 and piece[j] != 125:
                    return SCAN_NOT_STRINGS
                continue
            if not _is_links(piece, start, end):
                continue
            links_keys += 1
            if links_keys > 1:
                return SCAN_LINKS_KEYS
            status, i, count = _scan_path(piece, _skip_ws(piece, j + 1), key_bytes, key_ptr, table,
                                          lens[flow], out, at)
            if status != SCAN_OK:
                return status
            if count != lens[flow]:
                return SCAN_COUNTS
            at += count
            continue
        if c == 123 or c == 91:  # '{' '['
            if depth == 0:
                if c != 123:
                    return SCAN_NOT_AN_OBJECT
                flow += 1
                if flow >= n_flows:
                    return SCAN_COUNTS
                links_keys = 0
            depth += 1
        elif c == 125 or c == 93:  # '}' ']'
            depth -= 1
            if depth < 0:
                return SCAN_TRUNCATED
            if depth == 0 and links_keys != 1:
                return SCAN_LINKS_KEYS
        elif depth == 0 and c != 44 and c != 32 and c != 10 and c != 13 and c != 9:
            return SCAN_NOT_AN_OBJECT  # a number or a literal among the items
        i += 1
    if depth != 0:
        return SCAN_TRUNCATED
    if flow + 1 != n_flows or at != len(out):
        return SCAN_COUNTS
    return SCAN_OK


@_jit
def find_joined(joined, key_bytes, key_ptr, table, out):
    """Write into ``out`` the key index of each piece of ``joined`` cut at its 0 bytes (the
    strings of a list joined by NUL). Returns ``len(out)`` when there are exactly that many
    pieces and the table holds every one, else -1 (an unknown piece, or another number of
    pieces: a string held a NUL). ``table``: as :func:`id_table_build` filled it."""
    n, count = len(joined), len(out)
    if count == 0:
        return 0 if n == 0 else -1
    start, found = 0, 0
    while True:
        k, end = _find_until(joined, start, 0, key_bytes, key_ptr, table)
        if found >= count or k < 0:
            return -1
        out[found] = k
        found += 1
        if end >= n:
            return found if found == count else -1
        start = end + 1


# --------------------------------------------------------------------------- solve flows, one pass
# ``scan_flows`` reads the whole "flows" array of a ``solve`` document in place of orjson and
# ``scan_paths`` (issue #20): the caller (``designer/engine/commands/solve.py``) found the array by
# ``array_region`` (no backslash anywhere, the frame valid JSON) and converts the number tokens
# and the ids; anything outside the subset below is declined and the caller reads the document
# as before (orjson, then its own checks and located errors).

FLOWS_OK = 0
FLOWS_OUTSIDE = 7    # bytes outside the accepted subset of JSON (or not JSON at all)
FLOWS_FULL = 8       # an output buffer is too small
FLOWS_NO_CAP = 9     # a flow with no link and no demand: the located path reports it
FLOW_ID, FLOW_LINKS, FLOW_DEMAND, FLOW_BYTES = 1, 2, 4, 8   # keys; in ``flags``: a number given


@_jit
def _plain_string_end(piece, i):
    """The index of the quote closing the string opened at ``piece[i]``, or -1 when the bytes
    end first or the string holds a control byte (invalid JSON) or a backslash (an escape)."""
    n = len(piece)
    i += 1
    while i < n:
        c = piece[i]
        if c == 34:
            return i
        if c < 32 or c == 92:
            return -1
        i += 1
    return -1


@_jit
def _flow_key(piece, start, end):
    """Which key of a flow ``piece[start:end]`` is (FLOW_*), or 0 for any other."""
    size, p = end - start, start
    if size == 2 and piece[p] == 105 and piece[p + 1] == 100:  # id
        return FLOW_ID
    if _is_links(piece, start, end):
        return FLOW_LINKS
    if (size == 5 and piece[p] == 98 and piece[p + 1] == 121 and piece[p + 2] == 116
            and piece[p + 3] == 101 and piece[p + 4] == 115):  # bytes
        return FLOW_BYTES
    if (size == 11 and piece[p] == 100 and piece[p + 1] == 101 and piece[p + 2] == 109
            and piece[p + 3] == 97 and piece[p + 4] == 110 and piece[p + 5] == 100
            and piece[p + 6] == 95 and piece[p + 7] == 103 and piece[p + 8] == 98
            and piece[p + 9] == 112 and piece[p + 10] == 115):  # demand_gbps
        return FLOW_DEMAND
    return 0


@_jit
def _is_number_byte(c):
    # 0-9 + - . e E: every byte a JSON number can hold (orjson checks the grammar afterwards)
    return (48 <= c <= 57) or c == 43 or c == 45 or c == 46 or c == 101 or c == 69


@_jit
def _number_or_null(piece, i, nums, at):
    """Read the value at ``piece[i]``: ``null`` (returns (index after, at, False)) or a number
    token, copied to ``nums[at:]`` followed by a comma (returns (index after, new at, True)).
    The index is -1 for anything else, -2 when ``nums`` is full."""
    n = len(piece)
    if (i + 4 <= n and piece[i] == 110 and piece[i + 1] == 117 and piece[i + 2] == 108
            and piece[i + 3] == 108):  # null
        return i + 4, at, False
    j = i
    while j < n and _is_number_byte(piece[j]):
        j += 1
    if j == i:
        return -1, at, False
    if at + (j - i) + 1 > len(nums):
        return -2, at, False
    for k in range(i, j):
        nums[at] = piece[k]
        at += 1
    nums[at] = 44  # ','
    return j, at + 1, True


@_jit
def scan_flows(piece, key_bytes, key_ptr, table, lens, out, ids, id_ptr, dem_nums, size_nums, flags, counts):
    """Read ``piece``, the bytes between the brackets of a ``solve`` document's "flows" array,
    against this subset of JSON (ws: space, tab, newline, carriage return only)::

        content := ws | ws flow (ws ',' ws flow)* ws
        flow    := '{' ws member (ws ',' ws member)* ws '}'     each key at most once
        member  := '"id"' ws ':' ws string                      non-empty; required
                 | '"links"' ws ':' ws '[' ws (id (ws ',' ws id)*)? ws ']'     required
                 | ('"demand_gbps"' | '"bytes"') ws ':' ws (number | 'null')

    where a string holds no byte below 0x20 and no backslash, an ``id`` is a string whose bytes
    are a key of ``table`` (as :func:`id_table_build` filled it) and a number is a non-empty run
    of the bytes ``0-9 + - . e E`` (the caller has orjson check its grammar). Writes, for flow f:
    ``lens[f]`` its path length, its link indices to ``out`` (end to end), its id's bytes and a
    NUL to ``ids`` from ``id_ptr[f]`` (``id_ptr[n_flows]``: the bytes written), FLOW_DEMAND /
    FLOW_BYTES in ``flags[f]`` where it gives that number (the tokens, each followed by a comma,
    in ``dem_nums`` / ``size_nums``). ``counts`` gets (flows, hops, demand bytes, size bytes).
    Returns FLOWS_OK, or the reason it declined (outputs then of no use): FLOWS_OUTSIDE,
    FLOWS_FULL, FLOWS_NO_CAP, or scan_paths' SCAN_* code for a "links" value."""
    n = len(piece)
    if len(flags) < len(lens) or len(id_ptr) <= len(lens) or len(counts) < 4:
        return FLOWS_FULL   # no bounds checks in compiled code: the writes below stay in these
    flow, hops, id_at, dem_at, size_at = 0, 0, 0, 0, 0
    i = _skip_ws(piece, 0)
    while i < n:
        if piece[i] != 123:  # '{'
            return FLOWS_OUTSIDE
        if flow >= len(lens):
            return FLOWS_FULL
        seen, given, path_len = 0, 0, 0
        i = _skip_ws(piece, i + 1)
        while True:  # one member
            if i >= n or piece[i] != 34:
                return FLOWS_OUTSIDE
            end = _plain_string_end(piece, i)
            if end < 0:
                return FLOWS_OUTSIDE
            key = _flow_key(piece, i + 1, end)
            if key == 0 or seen & key:
                return FLOWS_OUTSIDE  # a key this does not read, or one given twice
            seen |= key
            i = _skip_ws(piece, end + 1)
            if i >= n or piece[i] != 58:  # ':'
                return FLOWS_OUTSIDE
            i = _skip_ws(piece, i + 1)
            if i >= n:
                return FLOWS_OUTSIDE
            if key == FLOW_ID:
                end = _plain_string_end(piece, i) if piece[i] == 34 else -1
                if end <= i + 1:
                    return FLOWS_OUTSIDE  # not a string, or the empty id
                if id_at + (end - i) > len(ids):
                    return FLOWS_FULL
                id_ptr[flow] = id_at
                for k in range(i + 1, end):
                    ids[id_at] = piece[k]
                    id_at += 1
                ids[id_at] = 0
                id_at += 1
                i = end + 1
            elif key == FLOW_LINKS:
                status, i, path_len = _scan_path(piece, i, key_bytes, key_ptr, table, len(out) - hops,
                                                 out, hops)
                if status != SCAN_OK:
                    return status
                hops += path_len
            else:
                if key == FLOW_DEMAND:
                    i, dem_at, number = _number_or_null(piece, i, dem_nums, dem_at)
                else:
                    i, size_at, number = _number_or_null(piece, i, size_nums, size_at)
                if i < 0:
                    return FLOWS_FULL if i == -2 else FLOWS_OUTSIDE
                if number:
                    given |= key
            i = _skip_ws(piece, i)
            if i < n and piece[i] == 44:  # ','
                i = _skip_ws(piece, i + 1)
                continue
            if i < n and piece[i] == 125:  # '}'
                break
            return FLOWS_OUTSIDE
        if seen & (FLOW_ID | FLOW_LINKS) != FLOW_ID | FLOW_LINKS:
            return FLOWS_OUTSIDE
        if path_len == 0 and not given & FLOW_DEMAND:
            return FLOWS_NO_CAP
        lens[flow] = path_len
        flags[flow] = given
        flow += 1
        i = _skip_ws(piece, i + 1)
        if i < n:
            if piece[i] != 44:  # ','
                return FLOWS_OUTSIDE
            i = _skip_ws(piece, i + 1)
            if i >= n:
                return FLOWS_OUTSIDE  # a trailing comma
    id_ptr[flow] = id_at
    counts[0], counts[1], counts[2], counts[3] = flow, hops, dem_at, size_at
    return FLOWS_OK


# --------------------------------------------------------------------------- solve answer, one pass
# ``write_object`` writes one object of the ``solve`` answer (issue #20) from orjson's encodings
# of its keys and of its values (designer/engine/commands/_scenario_io.py, ``ObjectWriter``), in
# place of cutting them into a Python bytes object per key and per value and joining those.

@_jit
def _put(text, at, source, start, end):
    """Copy ``source[start:end]`` to ``text[at:]``; the index after it, or -1 when it does not fit."""
    if at < 0 or at + (end - start) > len(text):
        return -1
    for k in range(start, end):
        text[at] = source[k]
        at += 1
    return at


@_jit
def _cuts(ptr, size):
    """Do the offsets ``ptr`` (at least one) rise from 0 or more to at most ``size``?"""
    if len(ptr) == 0 or ptr[0] < 0 or ptr[len(ptr) - 1] > size:
        return False
    for k in range(len(ptr) - 1):
        if ptr[k + 1] < ptr[k]:
            return False
    return True


@_jit
def write_object(keys, values, value_ptr, pick, layout, layout_ptr, text):
    """Write to ``text`` the JSON object whose keys are the encoded strings of ``keys`` (the bytes
    between the outer ``["`` and ``"]`` of an encoded list of strings, cut at each ``","``,
    leftmost first: the caller vouches that no ``\\",`` occurs, so each is a separator) and
    whose values are: with an empty ``pick``, the pieces of ``values`` cut at its commas (an
    encoded array of numbers between its brackets); else ``values[value_ptr[p]:value_ptr[p + 1]]``
    for each ``p`` of ``pick`` (-1: the last one). ``layout[layout_ptr[j]:layout_ptr[j + 1]]``,
    j = 0..3: what opens the object, ends a key (its quote and the colon), separates two members
    (up to the next key's quote) and closes it. Returns the bytes written, or -1 when ``text`` is
    too small, a ``pick`` is out of range, the keys and the values are not as many, or an offset
    array does not cut its bytes (no bounds checks in compiled code)."""
    n_keys, n_values, n_picks, n_choices = len(keys), len(values), len(pick), len(value_ptr) - 1
    if (n_picks == 0 and n_values == 0) or not _cuts(layout_ptr, len(layout)) or len(layout_ptr) != 5:
        return -1
    if n_picks and not _cuts(value_ptr, n_values):
        return -1
    at = _put(text, 0, layout, layout_ptr[0], layout_ptr[1])
    ki, vi, member = 0, 0, 0
    while True:
        start = ki
        while ki < n_keys and not (keys[ki] == 34 and ki + 2 < n_keys and keys[ki + 1] == 44
                                   and keys[ki + 2] == 34):  # '","'
            ki += 1
        if n_picks == 0:
            v_start = vi
            while vi < n_values and values[vi] != 44:  # ','
                vi += 1
            v_end, last_value = vi, vi >= n_values
        else:
            p = pick[member]
            if p < 0:
                p += n_choices
            if p < 0 or p >= n_choices:
                return -1
            v_start, v_end, last_value = value_ptr[p], value_ptr[p + 1], member + 1 == n_picks
        at = _put(text, at, keys, start, ki)
        at = _put(text, at, layout, layout_ptr[1], layout_ptr[2])
        at = _put(text, at, values, v_start, v_end)
        member += 1
        if (ki >= n_keys) != last_value:
            return -1  # not as many keys as values
        if last_value:
            break
        at = _put(text, at, layout, layout_ptr[2], layout_ptr[3])
        ki += 3
        vi += 1
    return _put(text, at, layout, layout_ptr[3], layout_ptr[4])


# --------------------------------------------------------------------------- identical flows

_GOLDEN = 0x9E3779B97F4A7C15


@_jit
def _splitmix(x):
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@_jit
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


@_jit
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
        h = _splitmix(np.uint64(dem_bits[i]) ^ (np.uint64(w_bits[i]) * np.uint64(_GOLDEN)))
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


# --------------------------------------------------------------------------- routing: path entries
# Used by designer/engine/routing/assemble.py through the AOT module only (routing never imports
# numba). A path is the concatenation, in piece order, of one row per present piece; ``pieces``
# holds PIECE_FIELDS int64 per present piece: its kind, the column of its first row per flow in
# ``firsts`` (n_flows each), of its host per flow in ``hosts`` (intra; -1 otherwise), of its
# choice per path in ``choices`` (len(owner) each; -1: none), and where its rows start in
# ``tab_ptr`` and how many it has. Every index is checked: -1 when one is out of range (the
# caller then assembles with numpy, which gives its own answer or error).

PIECE_SINGLE, PIECE_INTRA, PIECE_ROWS = 0, 1, 2   # keep equal to routing/assemble.py
PIECE_FIELDS = 6


@_jit
def _layout_ok(pieces, firsts, hosts, choices, n_flows, n_paths, tab_ptr):
    """Do the columns and row ranges ``pieces`` names lie inside the arrays?"""
    n_pieces = len(pieces) // PIECE_FIELDS
    if n_flows < 0 or len(pieces) != n_pieces * PIECE_FIELDS:
        return False
    for q in range(n_pieces):
        at = q * PIECE_FIELDS
        kind, col, host_col, choice_col = pieces[at], pieces[at + 1], pieces[at + 2], pieces[at + 3]
        # Divisions, not products: (col + 1) * n_flows could wrap int64 and pass (found in review).
        if kind < 0 or kind > PIECE_ROWS or col < 0 or (n_flows > 0 and col >= len(firsts) // n_flows):
            return False
        if kind == PIECE_SINGLE:
            if choice_col >= 0:
                return False
            continue
        if kind == PIECE_INTRA and (host_col < 0 or (n_flows > 0 and host_col >= len(hosts) // n_flows)):
            return False
        if choice_col >= 0 and n_paths > 0 and choice_col >= len(choices) // n_paths:
            return False
        base, rows = pieces[at + 4], pieces[at + 5]
        if base < 0 or rows < 0 or base >= len(tab_ptr) or rows >= len(tab_ptr) - base:
            return False
    return True


@_jit
def path_lengths(pieces, firsts, hosts, choices, owner, n_flows, tab_ptr, tab_data, flow_ptr):
    """Fill ``flow_ptr`` (len(owner) + 1) with the CSR pointers of the paths ``owner`` (flow of
    each path); returns the number of entries, -1 when an index is out of range."""
    n_pieces = len(pieces) // PIECE_FIELDS
    n_paths = len(owner)
    if len(flow_ptr) != n_paths + 1 or not _layout_ok(pieces, firsts, hosts, choices, n_flows, n_paths, tab_ptr):
        return -1
    flow_ptr[0] = 0
    total = 0
    for p in range(n_paths):
        f = owner[p]
        if f < 0 or f >= n_flows:
            return -1
        for q in range(n_pieces):   # the row lookup is written out: as a function, 15x slower
            at = q * PIECE_FIELDS
            row = firsts[pieces[at + 1] * n_flows + f]
            if row < 0:
                continue   # piece absent
            if pieces[at] == PIECE_SINGLE:
                total += 1
                continue
            if pieces[at + 3] >= 0:
                row += choices[pieces[at + 3] * n_paths + p]
            if row < 0 or row >= pieces[at + 5]:
                return -1
            lo, hi = tab_ptr[pieces[at + 4] + row], tab_ptr[pieces[at + 4] + row + 1]
            if lo < 0 or lo > hi or hi > len(tab_data):
                return -1
            total += hi - lo
        flow_ptr[p + 1] = total
    return total


@_jit
def path_entries(pieces, firsts, hosts, choices, owner, n_flows, tab_ptr, tab_data, host_base,
                 host_flat, flow_ptr, flow_res):
    """Write the entries of the paths :func:`path_lengths` measured into ``flow_res``: a single
    piece's resource, a table row's entries (an intra row's local tokens mapped through the
    flow's host: ``host_flat[host_base[host] + token]``). Call only after :func:`path_lengths`
    returned ``len(flow_res)`` for the same arguments. Returns 0, -1 when an index is out of range
    or a path would not end where ``flow_ptr`` says (nothing is written outside ``flow_res``)."""
    n_pieces = len(pieces) // PIECE_FIELDS
    n_paths = len(owner)
    if (len(flow_ptr) != n_paths + 1 or flow_ptr[0] != 0 or flow_ptr[n_paths] != len(flow_res)
            or not _layout_ok(pieces, firsts, hosts, choices, n_flows, n_paths, tab_ptr)):
        return -1
    at_entry = 0
    for p in range(n_paths):
        f = owner[p]
        end = flow_ptr[p + 1]
        if f < 0 or f >= n_flows or at_entry != flow_ptr[p] or end > len(flow_res):
            return -1
        for q in range(n_pieces):   # written out as in path_lengths
            at = q * PIECE_FIELDS
            row = firsts[pieces[at + 1] * n_flows + f]
            if row < 0:
                continue
            kind = pieces[at]
            if kind == PIECE_SINGLE:
                if at_entry >= end:
                    return -1
                flow_res[at_entry] = row
                at_entry += 1
                continue
            if pieces[at + 3] >= 0:
                row += choices[pieces[at + 3] * n_paths + p]
            if row < 0 or row >= pieces[at + 5]:
                return -1
            lo, hi = tab_ptr[pieces[at + 4] + row], tab_ptr[pieces[at + 4] + row + 1]
            if lo < 0 or lo > hi or hi > len(tab_data) or at_entry + (hi - lo) > end:
                return -1
            if kind == PIECE_ROWS:
                for j in range(lo, hi):
                    flow_res[at_entry] = tab_data[j]
                    at_entry += 1
                continue
            host = hosts[pieces[at + 2] * n_flows + f]
            if host < 0 or host >= len(host_base):
                return -1
            base = host_base[host]
            for j in range(lo, hi):
                k = base + tab_data[j]
                if k < 0 or k >= len(host_flat):
                    return -1
                flow_res[at_entry] = host_flat[k]
                at_entry += 1
    return 0 if at_entry == len(flow_res) else -1


# --------------------------------------------------------------------------- routing: hashed fabric rows

@_jit
def hashed_rows(src, dst, pattern, index, seed, salt, first, count, rows):
    """Per flow: ``first + flow_hash % max(count, 1)`` into ``rows`` (``first`` where it is < 0),
    with routing/hashing.py's flow hash of (src, dst, pattern, index) under ``seed`` (already
    masked to 63 bits) and ``salt``. Returns 0, -1 when the lengths differ."""
    n = len(first)
    if len(src) != n or len(dst) != n or len(pattern) != n or len(index) != n or len(count) != n or len(rows) != n:
        return -1
    golden = np.uint64(0x9E3779B97F4A7C15)
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
