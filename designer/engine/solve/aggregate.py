"""Aggregation of identical flows: flows that cross the same resources in the same order with the
same demand and weight are solved as one flow of the summed weight and demand (exact under
weighted max-min, see :func:`aggregate_identical`), then every member gets its own share back
(:meth:`Aggregation.expand`). :func:`designer.engine.solve.maxmin.maxmin` takes the result as its
``aggregate``.

Grouping is a hash table in compiled code (kernel ``group_identical``) when the kernels can, else
a sort of path hashes in numpy; both give the same groups, numbered by their first member.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from designer.engine.solve.kernels.constants import GOLDEN
from designer.engine.solve.splitmix import mix as _mix

__all__ = ["Aggregation", "aggregate_copies", "aggregate_identical", "first_in_order"]


@dataclass
class Aggregation:
    """Groups of identical flows, each solved as one flow (see :func:`aggregate_identical`).

    Attributes
    ----------
    group : ndarray of int64, shape (F,)
        Aggregate flow of each original flow.
    flow_ptr, flow_res : ndarray of int64
        CSR of the aggregate flows (the path of the group's first member).
    demand_gbps, weights : ndarray of float64, shape (G,)
        Summed demand (Gb/s) and weight of each group.
    copies : (ndarray, ndarray, ndarray) or None
        From :func:`aggregate_copies`: per flow the distinct flow it copies, per distinct flow
        its first copy, and per distinct flow its group; then :meth:`expand` works on the
        distinct flows and copies their answers.
    """

    group: np.ndarray
    flow_ptr: np.ndarray
    flow_res: np.ndarray
    demand_gbps: np.ndarray
    weights: np.ndarray
    copies: tuple | None = None

    def expand(self, level, bottleneck, demand, weights):
        """Per original flow: (rate Gb/s, level, bottleneck) from the aggregate solve.

        A member's level is its group's; its rate is ``weight * level`` like the kernel's (and
        exactly its own demand when the group stopped at its demand: the group's level is then
        ``k·d / k·w``, which may differ from ``d / w`` in the last bit). With ``copies``, each
        answer is computed once per distinct flow and copied: the same bits, as every copy has
        its distinct flow's demand and weight bits (checked by :func:`aggregate_copies`).
        """
        if self.copies is None:
            return _expand(self.group, level, bottleneck, demand, weights)
        copy_of, firsts, distinct_group = self.copies
        answers = _expand(distinct_group, level, bottleneck, demand[firsts], weights[firsts])
        return tuple(a[copy_of] for a in answers)


def _expand(group, level, bottleneck, demand, weights):
    """:meth:`Aggregation.expand` for the flows numbered by ``group``."""
    lev, bneck = level[group], bottleneck[group]
    at_demand = (bneck < 0) & np.isfinite(lev)
    with np.errstate(invalid="ignore"):   # inf level * weight stays inf
        rates = weights * lev
    rates[at_demand] = demand[at_demand]
    own = demand[at_demand] / weights[at_demand]
    lev = lev.copy()
    # The kernel keeps a subnormal demand's level above 0 (MIN_POSITIVE): keep the group's then.
    lev[at_demand] = np.where((own == 0.0) & (demand[at_demand] > 0.0), lev[at_demand], own)
    return rates, lev, bneck


def _count_distinct(values: np.ndarray) -> int:
    """Number of distinct values, by sorting: ``len(np.unique(x))`` takes numpy 2.4's hash path,
    far slower on random 64-bit keys than one sort and a comparison of neighbours."""
    if len(values) == 0:
        return 0
    s = np.sort(values)
    return 1 + int(np.count_nonzero(s[1:] != s[:-1]))


def _row_hash(ptr: np.ndarray, res: np.ndarray) -> np.ndarray:
    """A uint64 per row, equal for rows with equal resource sequences (a candidate key only:
    equal hashes are checked entry by entry before flows are merged)."""
    lens = np.diff(ptr)
    pos = np.arange(len(res), dtype=np.int64) - np.repeat(ptr[:-1], lens)
    with np.errstate(over="ignore"):
        per_entry = _mix(res.astype(np.uint64) * np.uint64(GOLDEN) ^ pos.astype(np.uint64))
        h = np.zeros(len(lens), dtype=np.uint64)
        nonempty = lens > 0
        if len(res):
            h[nonempty] = np.add.reduceat(per_entry, ptr[:-1][nonempty])
    return h


def _first_of_equal_keys(key: np.ndarray, max_distinct: float) -> np.ndarray | None:
    """Per element: the lowest index holding the same key (``first[inverse]`` of ``np.unique(key,
    return_index=True, return_inverse=True)``), or None when there are more than ``max_distinct``
    distinct keys. One unstable argsort and a minimum per run: ``np.unique`` sorts stably to
    find the first index, and a stable sort of many keys costs more than an unstable one."""
    order = np.argsort(key)
    sorted_key = key[order]
    starts_run = np.ones(len(key), dtype=bool)
    starts_run[1:] = sorted_key[1:] != sorted_key[:-1]
    runs = np.flatnonzero(starts_run)
    if len(runs) > max_distinct:
        return None
    first = np.minimum.reduceat(order, runs)
    rep = np.empty(len(key), dtype=np.int64)
    rep[order] = np.repeat(first, np.diff(np.append(runs, len(key))))
    return rep


def aggregate_identical(flow_ptr, flow_res, demand, weights, *, min_gain: float = 0.1):
    """Group flows that cross the same resources in the same order with the same demand and
    weight, or return None when that would merge fewer than ``min_gain`` of the flows.

    Why it is exact: in progressive filling two such flows see the same resources at every
    step, so they rise at ``w·x`` together and freeze at the same level on the same resource (or
    at their common demand level ``d / w``). k of them behave as one flow of weight ``k·w``
    and demand ``k·d`` on that path (the weighted solver's "a flow of weight k is k unit flows").

    Candidates are found by a hash of each path; members are merged only after their paths,
    demands and weights compare equal entry by entry, so a hash collision costs merging, never
    correctness.

    Parameters
    ----------
    flow_ptr, flow_res : ndarray of int64
        Validated CSR (see :func:`~designer.engine.solve.maxmin.prepare_inputs`).
    demand, weights : ndarray of float64
        Per-flow demand (Gb/s, ``inf`` = none) and weight.
    min_gain : float
        Smallest fraction of flows that must disappear for the aggregation to be worth its cost.

    Returns
    -------
    Aggregation or None
    """
    n = len(flow_ptr) - 1
    if n < 2:
        return None
    lens = np.diff(flow_ptr)
    # Cheap first test (an all-to-all has nothing to merge): equal flows share their first and
    # last resource and their length. Skipped when any grouping is worth it (min_gain 0): it can
    # only say "not worth it".
    if len(flow_res) and min_gain > 0:
        head = np.where(lens > 0, flow_res[np.minimum(flow_ptr[:-1], len(flow_res) - 1)], -1)
        tail = np.where(lens > 0, flow_res[np.maximum(flow_ptr[1:] - 1, 0)], -1)
        with np.errstate(over="ignore"):
            cheap = (head.astype(np.uint64) * np.uint64(0x100000001B3) ^ tail.astype(np.uint64)) \
                * np.uint64(31) + lens.astype(np.uint64)
        if _count_distinct(cheap) > n * (1 - min_gain):
            return None
    grouped = _grouped_in_kernel(flow_ptr, flow_res, demand, weights, int(n * (1 - min_gain)))
    if grouped is not None:
        return grouped if grouped is not False else None
    with np.errstate(over="ignore"):
        key = _mix(_row_hash(flow_ptr, flow_res) ^ _mix(lens.astype(np.uint64)))
        key = _mix(key ^ demand.view(np.uint64)) ^ _mix(weights.view(np.uint64) + np.uint64(1))
    rep = _first_of_equal_keys(key, max_distinct=n * (1 - min_gain))
    if rep is None:
        return None
    same = (lens == lens[rep]) & (demand == demand[rep]) & (weights == weights[rep])
    owner = np.repeat(np.arange(n, dtype=np.int64), lens)
    pos = np.arange(len(flow_res), dtype=np.int64) - flow_ptr[owner]
    at_rep = np.where(same[owner], flow_ptr[rep[owner]] + pos, np.arange(len(flow_res)))
    differs = np.zeros(n, dtype=bool)
    differs[owner[flow_res[at_rep] != flow_res]] = True
    same &= ~differs
    # A member that does not match its representative (a hash collision) stays a group of its own.
    # ``np.unique(..., return_inverse=True)`` of indices in [0, n), by a mask instead of a sort.
    chosen = np.where(same, rep, np.arange(n, dtype=np.int64))
    is_rep = np.zeros(n, dtype=bool)
    is_rep[chosen] = True
    reps = np.flatnonzero(is_rep)
    group = (np.cumsum(is_rep) - 1)[chosen]
    return _aggregation_of(group, reps, flow_ptr, flow_res, demand, weights)


def _grouped_in_kernel(flow_ptr, flow_res, demand, weights, max_groups: int):
    """:func:`aggregate_identical`'s grouping by one hash-table pass in compiled code (kernel
    ``group_identical``: one pass over the paths, where the numpy grouping sorts hashes and
    gathers every path twice). The same groups as the sort (members compared entry by entry in
    both; groups numbered by their first member), and the same "not worth it" past
    ``max_groups``. Returns the Aggregation, False for "not worth it", or None when the kernel
    declines (crowded hashes): then the sort decides."""
    from designer.engine.solve.kernels.loader import kernels  # AOT, or numba's JIT

    n = len(flow_ptr) - 1
    table = np.full(1 << (2 * n).bit_length(), -1, dtype=np.int64)   # at most half full
    group, firsts = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    bits = [np.ascontiguousarray(x, dtype=np.float64).view(np.int64) for x in (demand, weights)]
    count = kernels().group_identical(np.ascontiguousarray(flow_ptr, dtype=np.int64),
                                      np.ascontiguousarray(flow_res, dtype=np.int64), *bits, table, group,
                                      firsts, max_groups)
    if count == -1:
        return False
    if count < 0:
        return None
    return _aggregation_of(group, firsts[:count], flow_ptr, flow_res, demand, weights)


def _aggregation_of(group, reps, flow_ptr, flow_res, demand, weights) -> "Aggregation":
    """The Aggregation of flows numbered by ``group``, each group solved on the path of its
    first member (``reps``, ascending)."""
    rep_lens = flow_ptr[reps + 1] - flow_ptr[reps]
    ptr = np.zeros(len(reps) + 1, dtype=np.int64)
    np.cumsum(rep_lens, out=ptr[1:])
    pos = np.arange(int(ptr[-1]), dtype=np.int64) + np.repeat(flow_ptr[reps] - ptr[:-1], rep_lens)
    return Aggregation(group, ptr, flow_res[pos], np.bincount(group, weights=demand, minlength=len(reps)),
                       np.bincount(group, weights=weights, minlength=len(reps)))


def aggregate_copies(flow_ptr, flow_res, demand, weights, copy_of, firsts, distinct_ptr, distinct_res, *,
                     min_gain: float = 0.1):
    """:func:`aggregate_identical` of paths that are copies of fewer distinct ones, found by
    grouping the distinct paths only.

    Path ``p`` of ``flow_ptr``/``flow_res`` must cross exactly the resources of distinct path
    ``copy_of[p]`` of ``distinct_ptr``/``distinct_res`` (the caller's contract: the router lays
    out each repeated flow's route by copying it, :func:`~designer.engine.routing.routes.take_flows`).
    Why: NCCL's tree on 100,000 GPUs is 11.6 M paths copied from 1.2 M distinct ones; grouping
    the copies hashed and compared 26 M entries to find what the distinct paths already say.

    Exact, the same :class:`Aggregation` (groups, their numbering, sums and paths): two copies
    are identical exactly when their distinct paths are — the same resources by the contract,
    and the demand and weight bits are checked equal over every copy of a distinct path (else
    the copies are grouped as :func:`aggregate_identical` does). Groups are numbered by their
    first member; when each distinct path first appears in ``copy_of`` in order (as laid-out
    copies do; ``firsts``, per distinct path its first copy, when the caller knows them, else
    None: found here) the first copy of a distinct group is the first member of the copies' group,
    so the distinct numbering is the copies' own; otherwise the copies are grouped in full.
    "Worth it" is decided on the number of groups, as :func:`aggregate_identical` decides it
    (its cheap first test can only refuse what the count refuses too).

    Returns
    -------
    Aggregation or None
    """
    n, distinct = len(flow_ptr) - 1, len(distinct_ptr) - 1
    if firsts is None:
        firsts = first_in_order(copy_of, distinct)
    elif len(firsts) != distinct or not np.array_equal(copy_of[firsts], np.arange(distinct)):
        raise ValueError("firsts: not one copy of each distinct path, in order")
    if n < 2 or firsts is None:
        return aggregate_identical(flow_ptr, flow_res, demand, weights, min_gain=min_gain)
    bits = [np.ascontiguousarray(x, dtype=np.float64).view(np.int64) for x in (demand, weights)]
    if not all((b == b[firsts][copy_of]).all() for b in bits):
        return aggregate_identical(flow_ptr, flow_res, demand, weights, min_gain=min_gain)
    inner = aggregate_identical(distinct_ptr, distinct_res, demand[firsts], weights[firsts], min_gain=0.0) \
        if distinct > 1 else None
    inner_group = inner.group if inner is not None else np.zeros(distinct, dtype=np.int64)
    groups = int(inner_group.max()) + 1 if distinct else 0
    if groups > int(n * (1 - min_gain)):
        return None
    group = inner_group[copy_of]
    reps = firsts[np.flatnonzero(np.r_[True, inner_group[1:] > np.maximum.accumulate(inner_group)[:-1]])]
    agg = _aggregation_of(group, reps, flow_ptr, flow_res, demand, weights)
    agg.copies = (copy_of, firsts, inner_group)
    return agg


def first_in_order(copy_of: np.ndarray, distinct: int) -> np.ndarray | None:
    """Per distinct item its first copy's position in ``copy_of`` (each copy's distinct item),
    when every distinct item has copies and they first appear in order (0, 1, 2, …: as they are
    numbered when made); else None. Distinct paths' copies here, distinct routes' takers in
    :mod:`designer.engine.routing.routes`."""
    if len(copy_of) == 0 or distinct == 0:
        return None
    new = np.empty(len(copy_of), dtype=bool)
    new[0] = True
    np.greater(copy_of[1:], np.maximum.accumulate(copy_of)[:-1], out=new[1:])
    firsts = np.flatnonzero(new)
    if len(firsts) != distinct or not np.array_equal(copy_of[firsts], np.arange(distinct)):
        return None
    return firsts
