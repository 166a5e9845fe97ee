"""The max-min fair solver itself: inputs, the compiled and reference progressive fillings, and the
allocation invariants (:mod:`designer.engine.solve.solver` documents the model and re-exports it all).
The grouping of identical flows it can solve as one lives in :mod:`designer.engine.solve.aggregate`
(re-exported here).

It is its own module so that :mod:`designer.engine.solve.timeline`, which builds on these kernels, and
the :mod:`designer.engine.solve.solver` facade both import it without importing each other.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from designer.engine.errors import InvalidWorkload, Problem
from designer.engine.solve.aggregate import Aggregation, aggregate_identical
from designer.engine.solve.kernels.constants import MIN_POSITIVE, SNAP_RTOL

__all__ = ["Allocation", "maxmin", "maxmin_levels_until", "StoppedFills", "maxmin_reference", "assert_valid_allocation",
           "prepare_inputs", "prepare_weights", "Aggregation", "aggregate_identical"]

# Validation reports at most this many located problems (a 1M-flow input can be wrong everywhere).
_MAX_PROBLEMS = 20


@dataclass
class Allocation:
    """A max-min fair allocation.

    Attributes
    ----------
    rates_gbps : ndarray of float64, shape (F,)
        Rate of each flow in Gb/s. ``np.inf`` for an *unbounded* flow: one with no demand cap whose
        resources all have infinite capacity (or that crosses none).
    bottleneck : ndarray of int64, shape (F,)
        Resource index that froze the flow (a saturated resource on which the flow has the largest
        rate / weight), or -1 when the flow is limited by its own demand (or unbounded).
    load_gbps : ndarray of float64, shape (R,)
        Sum of the rates crossing each resource (a flow crossing it twice counts twice).
    utilization : ndarray of float64, shape (R,)
        ``load / capacity``; 0 where the capacity is 0 (no load can cross it) or infinite.
    levels : int
        Number of water-filling rounds of the solve (a diagnostic; a grouped solve counts the
        rounds of its grouped instance, which may differ by one from the plain solve's).
    flow_level : ndarray of float64, shape (F,), optional
        Water level at which each flow was frozen, in Gb/s per unit of weight: ``rate / weight``
        (``demand / weight`` for a demand-limited flow, whose rate is its demand exactly). Equal
        to ``rates_gbps`` when unweighted. With share weights it is the rate the whole striped flow
        would run at if every stripe froze at this level, computed without dividing the rate back
        (which rounds). None when
        built by hand (then use ``rates_gbps / weights``).
    """

    rates_gbps: np.ndarray
    bottleneck: np.ndarray
    load_gbps: np.ndarray
    utilization: np.ndarray
    levels: int
    flow_level: np.ndarray | None = None


# --------------------------------------------------------------------------- input checks

def _problems_at(name: str, bad: np.ndarray, values: np.ndarray, message: str) -> list[Problem]:
    idx = np.flatnonzero(bad)[:_MAX_PROBLEMS]
    return [Problem(f"{name}[{i}]", f"{message} (got {values[i]!r})") for i in idx]


def _as_1d(name: str, values, dtype) -> np.ndarray:
    try:
        arr = np.ascontiguousarray(values, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise InvalidWorkload(f"{name} is not numeric", [Problem(name, f"not numeric: {exc}")]) from None
    if arr.ndim != 1:
        raise InvalidWorkload(f"{name} must be one-dimensional", [Problem(name, f"shape {arr.shape}")])
    return arr


def _capacity(capacity_gbps) -> tuple[np.ndarray, list[Problem]]:
    """Capacities as a contiguous float64 array, and a located problem per one that is not >= 0."""
    cap = _as_1d("capacity_gbps", capacity_gbps, np.float64)
    return cap, _problems_at("capacity_gbps", ~(cap >= 0), cap, "capacity must be a number >= 0")


def prepare_inputs(capacity_gbps, flow_ptr, flow_res, demand_gbps=None):
    """Validate and convert solver inputs to contiguous float64/int64 arrays.

    Returns
    -------
    capacity, flow_ptr, flow_res, demand : ndarray
        ``demand`` is all ``np.inf`` when ``demand_gbps`` is None.

    Raises
    ------
    InvalidWorkload
        With one located :class:`Problem` per bad entry (``capacity_gbps[3]``, ``flow_res[17]``…).
    """
    cap, problems = _capacity(capacity_gbps)
    ptr = _as_1d("flow_ptr", flow_ptr, np.int64)
    res = _as_1d("flow_res", flow_res, np.int64)
    if len(ptr) == 0 or ptr[0] != 0 or ptr[-1] != len(res) or np.any(np.diff(ptr) < 0):
        problems.append(Problem("flow_ptr", "must start at 0, never decrease and end at len(flow_res)"))
    # Two reductions first: the per-entry masks (8M entries at 1,024 GPUs) only when one is off.
    if len(res) and (int(res.min()) < 0 or int(res.max()) >= len(cap)):
        problems += _problems_at("flow_res", (res < 0) | (res >= len(cap)), res,
                                 f"resource index must be in [0, {len(cap)})")
    n_flows = max(len(ptr) - 1, 0)
    if demand_gbps is None:
        dem = np.full(n_flows, np.inf)
    else:
        dem = _as_1d("demand_gbps", demand_gbps, np.float64)
        if len(dem) != n_flows:
            problems.append(Problem("demand_gbps", f"length {len(dem)} != number of flows {n_flows}"))
        problems += _problems_at("demand_gbps", ~(dem >= 0), dem, "demand must be a number >= 0")
    if problems:
        raise InvalidWorkload("invalid solver input", problems[:_MAX_PROBLEMS])
    return cap, ptr, res, dem


def prepare_weights(weights, n_flows: int) -> np.ndarray:
    """Validate per-flow weights; returns a contiguous float64 array (all 1 when None).

    Raises
    ------
    InvalidWorkload
        A weight that is not a finite number > 0 (``weights[4]``), or a wrong length.
    """
    if weights is None:
        return np.ones(n_flows)
    w = _as_1d("weights", weights, np.float64)
    if len(w) != n_flows:
        raise InvalidWorkload("invalid solver input", [
            Problem("weights", f"length {len(w)} != number of flows {n_flows}")])
    problems = _problems_at("weights", ~((w > 0) & np.isfinite(w)), w, "weight must be a finite number > 0")
    if problems:
        raise InvalidWorkload("invalid solver input", problems)
    return w


def _utilization(cap: np.ndarray, load: np.ndarray) -> np.ndarray:
    util = np.zeros_like(load)
    finite = np.isfinite(cap) & (cap > 0)
    util[finite] = load[finite] / cap[finite]
    return util


# --------------------------------------------------------------------------- public API

def maxmin(capacity_gbps, flow_ptr, flow_res, demand_gbps=None, *, weights=None,
           method: str = "auto", aggregate=False) -> Allocation:
    """(Weighted) max-min fair rates of flows over shared resources, with optional demand caps.

    Parameters
    ----------
    capacity_gbps : array_like of float, shape (R,)
        Capacity of each resource in Gb/s; ``>= 0`` (0 = failed resource), ``np.inf`` = unlimited.
    flow_ptr : array_like of int, shape (F + 1,)
        CSR row pointer: flow ``f`` crosses ``flow_res[flow_ptr[f]:flow_ptr[f + 1]]``.
    flow_res : array_like of int, shape (nnz,)
        Resource indices of every path, concatenated. A resource listed twice in one path counts
        twice (the flow consumes its rate there twice).
    demand_gbps : array_like of float, shape (F,), optional
        Per-flow cap in Gb/s (``np.inf`` = none). None means no caps.
    weights : array_like of float, shape (F,), optional
        Per-flow weight (dimensionless, finite, > 0; None = all 1): at water level ``x`` an
        unfrozen flow runs at ``weight * x`` Gb/s, so a flow of weight k gets what k unit flows on
        its path would get together. Demand caps stay per flow (reached at level
        ``demand / weight``).
    method : {"auto", "reference"}
        ``"auto"``: the compiled heap water-filling, O(nnz log R). ``"reference"``: the simple numpy
        progressive filling of :func:`maxmin_reference` (for tests; slow on large inputs).
    aggregate : bool or Aggregation
        Solve each group of provably identical flows (same resources in the same order, same
        demand, same weight; :func:`aggregate_identical`) as one flow of the summed weight and
        demand, then hand every member its own share. Exact under weighted max-min: members rise
        together and freeze together, so the group is k flows on one path. Same result as
        without, up to rounding of the summed weights (relative ~1e-15); ``"auto"`` only. Pass
        the :class:`Aggregation` of these flows, demands and weights to re-solve under other
        capacities without grouping again (it does not depend on capacities).

    Returns
    -------
    Allocation
        Rates, bottlenecks, per-resource load and utilization. A flow with no finite resource and
        no demand gets ``np.inf`` with bottleneck -1.

    Raises
    ------
    InvalidWorkload
        Negative or NaN capacity/demand, a resource index out of range, a malformed ``flow_ptr``,
        a weight that is not finite and > 0.

    Examples
    --------
    Two flows share a 100 Gb/s link; the second also crosses a 30 Gb/s link::

        >>> a = maxmin([100.0, 30.0], [0, 1, 3], [0, 0, 1])
        >>> a.rates_gbps.tolist(), a.bottleneck.tolist()
        ([70.0, 30.0], [0, 1])

    With weights 3 and 1 on one 100 Gb/s link the split is 75/25::

        >>> maxmin([100.0], [0, 1, 2], [0, 0], weights=[3.0, 1.0]).rates_gbps.tolist()
        [75.0, 25.0]
    """
    if method == "reference":
        return maxmin_reference(capacity_gbps, flow_ptr, flow_res, demand_gbps, weights=weights)
    if method != "auto":
        raise ValueError(f"unknown method {method!r} (choose 'auto' or 'reference')")
    cap, ptr, res, dem = prepare_inputs(capacity_gbps, flow_ptr, flow_res, demand_gbps)
    w = prepare_weights(weights, len(ptr) - 1)
    from designer.engine.solve.kernels.loader import kernels as _kernels  # AOT, or numba's JIT
    kernels = _kernels()
    agg = aggregate if isinstance(aggregate, Aggregation) else (
        aggregate_identical(ptr, res, dem, w) if aggregate else None)
    if agg is not None and len(agg.group) != len(ptr) - 1:
        raise ValueError(f"aggregation of {len(agg.group)} flows given for {len(ptr) - 1} flows")
    if agg is None:
        rates, lev, bneck, load, levels = kernels.maxmin_solve(cap, ptr, res, dem, w)
        return Allocation(rates, bneck, load, _utilization(cap, load), int(levels), lev)
    _, lev, bneck, load, levels = kernels.maxmin_solve(cap, agg.flow_ptr, agg.flow_res, agg.demand_gbps,
                                                       agg.weights)
    rates, lev, bneck = agg.expand(lev, bneck, dem, w)
    return Allocation(rates, bneck, load, _utilization(cap, load), int(levels), lev)


def maxmin_levels_until(capacity_gbps, flow_ptr, flow_res, demand_gbps, stop_level, *, weights=None,
                        aggregate=None) -> tuple[np.ndarray, bool]:
    """The levels of :func:`maxmin` (``Allocation.flow_level``), filled only until some flow
    ``f`` freezes at a level ``<= stop_level[f]``.

    Why: a what-if that only asks "does some flow still end at least this late?" (the bottleneck
    relief re-solves) is answered by the first such flow, usually in the first level of a
    symmetric collective; the rest of the fill would not change the answer.

    Parameters
    ----------
    capacity_gbps, flow_ptr, flow_res, demand_gbps, weights
        As :func:`maxmin`.
    stop_level : array_like of float, shape (F,)
        Per flow: stop once it freezes at this level or lower (``-inf``: never stop for it).
    aggregate : Aggregation, optional
        As :func:`maxmin` (a group stops when one of its members would).

    Returns
    -------
    (levels, stopped)
        ``levels``: per flow, its level in the full solve, bit for bit, where it is known, NaN
        where the fill had not reached it yet (``np.inf``, as in :func:`maxmin`, for a flow no
        resource bounds once the fill ran to the end). Levels never decrease in freezing order,
        so a flow still NaN will freeze at or above every known level. ``stopped``: whether
        the fill stopped early (False: ``levels`` is the full solve's).
    """
    cap = _as_1d("capacity_gbps", capacity_gbps, np.float64)
    fills = StoppedFills(flow_ptr, flow_res, demand_gbps, len(cap), weights=weights, aggregate=aggregate)
    return fills.levels(cap, stop_level)


class StoppedFills:
    """:func:`maxmin_levels_until` of one problem (paths, demands, weights, aggregation) under
    many capacities and stop levels: the paths, demands and weights checked once.

    Why: the bottleneck relief re-solves a 16,384-GPU ring under 7 capacities; checking its
    475k-path CSR again each time was a sizeable share of those re-solves.
    """

    def __init__(self, flow_ptr, flow_res, demand_gbps, n_resources: int, *, weights=None, aggregate=None):
        _, self.ptr, self.res, self.dem = prepare_inputs(np.zeros(n_resources), flow_ptr, flow_res, demand_gbps)
        self.n_resources = n_resources
        self.w = prepare_weights(weights, len(self.ptr) - 1)
        self.aggregate = aggregate

    def levels(self, capacity_gbps, stop_level) -> tuple[np.ndarray, bool]:
        """``(levels, stopped)`` of :func:`maxmin_levels_until` under these capacities and stops."""
        cap, problems = _capacity(capacity_gbps)
        if len(cap) != self.n_resources:
            problems.append(Problem("capacity_gbps", f"length {len(cap)} != number of resources {self.n_resources}"))
        if problems:
            raise InvalidWorkload("invalid solver input", problems)
        thr = _as_1d("stop_level", stop_level, np.float64)
        if len(thr) != len(self.ptr) - 1:
            raise ValueError(f"stop_level has {len(thr)} entries for {len(self.ptr) - 1} flows")
        from designer.engine.solve.kernels.loader import kernels as _kernels  # AOT, or numba's JIT
        kernels, agg = _kernels(), self.aggregate
        if agg is None:
            lev, _, stop = kernels.maxmin_solve_until(cap, self.ptr, self.res, self.dem, self.w,
                                                      np.ascontiguousarray(thr))
        else:   # a group stops when one of its members would: the largest stop over its members
            group_thr = np.full(len(agg.weights), -np.inf)
            np.maximum.at(group_thr, agg.group, thr)
            lev, bneck, stop = kernels.maxmin_solve_until(cap, agg.flow_ptr, agg.flow_res, agg.demand_gbps,
                                                          agg.weights, np.ascontiguousarray(group_thr))
            _, lev, _ = agg.expand(lev, bneck, self.dem, self.w)
        stopped = int(stop) >= 0
        if not stopped:
            lev[np.isnan(lev)] = np.inf   # never bounded: maxmin's level for such a flow
        return lev, stopped


def maxmin_reference(capacity_gbps, flow_ptr, flow_res, demand_gbps=None, *, weights=None,
                     method: str = "reference") -> Allocation:
    """(Weighted) max-min fair rates by plain progressive filling (slow, obviously correct).

    A level ``x`` starts at 0; every unfrozen flow runs at ``weight * x``. Every round raises
    ``x`` by the largest increment that saturates no resource (``free capacity / weights of its
    unfrozen flows``) and exceeds no demand (``(demand - rate) / weight``), then freezes the flows
    that reached their demand (bottleneck -1) and the flows crossing a resource that saturated
    (bottleneck = the lowest-index such resource on the path). Each round costs O(nnz) numpy work,
    and there is one round per level. Same parameters and result as :func:`maxmin`; ``method`` is
    accepted and ignored.
    """
    cap, ptr, res, dem = prepare_inputs(capacity_gbps, flow_ptr, flow_res, demand_gbps)
    n_flows, n_res = len(ptr) - 1, len(cap)
    w = prepare_weights(weights, n_flows)
    owner = np.repeat(np.arange(n_flows), np.diff(ptr))
    rates, flow_level = np.zeros(n_flows), np.zeros(n_flows)
    bneck = np.full(n_flows, -1, dtype=np.int64)
    active = np.ones(n_flows, dtype=bool)
    levels, level = 0, 0.0
    while active.any():
        on = active[owner]
        wsum = np.bincount(res[on], weights=w[owner[on]], minlength=n_res)
        load = np.bincount(res, weights=rates[owner], minlength=n_res)
        with np.errstate(divide="ignore", invalid="ignore"):
            inc_res = np.where(wsum > 0, np.maximum(cap - load, 0.0) / wsum, np.inf)
        inc_dem = np.where(active, (dem - rates) / w, np.inf)
        # A subnormal remaining demand over a weight > 1 underflows to 0: keep it above 0 so it
        # never ties with (and beats) a zero-capacity resource.
        inc_dem = np.where((inc_dem == 0.0) & (dem > rates), MIN_POSITIVE, inc_dem)
        step = min(inc_res.min(initial=np.inf), inc_dem.min(initial=np.inf))
        if step == np.inf:  # only unlimited resources left: these flows are unbounded
            rates[active] = flow_level[active] = np.inf
            break
        levels += 1
        level += step
        rates[active] = w[active] * level
        flow_level[active] = level
        at_demand = active & (inc_dem <= step * (1 + SNAP_RTOL))
        rates[at_demand] = dem[at_demand]
        flow_level[at_demand] = dem[at_demand] / w[at_demand]
        active &= ~at_demand
        saturated = inc_res <= step * (1 + SNAP_RTOL)
        hit = active[owner] & saturated[res]
        first = np.full(n_flows, n_res, dtype=np.int64)
        np.minimum.at(first, owner[hit], res[hit])
        frozen = first < n_res
        bneck[frozen] = first[frozen]
        active &= ~frozen
    load = np.bincount(res, weights=rates[owner], minlength=n_res)
    return Allocation(rates, bneck, load, _utilization(cap, load), levels, flow_level)


# --------------------------------------------------------------------------- invariants

def _fail(message: str) -> None:
    raise AssertionError(message)


def assert_valid_allocation(capacity_gbps, flow_ptr, flow_res, demand_gbps, allocation: Allocation,
                            rtol: float = 1e-9, *, weights=None) -> None:
    """Raise AssertionError unless ``allocation`` is a valid (weighted) max-min fair allocation.

    Checks, each to ``rtol`` relative:

    - shapes; no NaN; ``0 <= rate <= demand``;
    - ``load_gbps`` is the sum of the rates crossing each resource, and never exceeds capacity;
    - ``utilization == load / capacity`` (0 for zero or infinite capacity);
    - every flow below its demand crosses a *saturated* resource on which no other flow has a
      larger ``rate / weight`` (this is what makes the allocation max-min fair; weights default to
      1), and its reported ``bottleneck`` is such a resource on its path; a flow reported
      demand-limited (-1) runs at its demand or is unbounded.
    """
    cap, ptr, res, dem = prepare_inputs(capacity_gbps, flow_ptr, flow_res, demand_gbps)
    n_flows, n_res = len(ptr) - 1, len(cap)
    w = prepare_weights(weights, n_flows)
    rates, bneck = allocation.rates_gbps, allocation.bottleneck
    if rates.shape != (n_flows,) or bneck.shape != (n_flows,) or allocation.load_gbps.shape != (n_res,):
        _fail(f"shapes: rates {rates.shape}, bottleneck {bneck.shape}, load "
              f"{allocation.load_gbps.shape}; expected F={n_flows}, R={n_res}")
    if np.isnan(rates).any() or (rates < 0).any():
        _fail(f"negative or NaN rate at flows {np.flatnonzero(~(rates >= 0))[:10].tolist()}")
    over = rates > dem * (1 + rtol)
    if over.any():
        f = int(np.argmax(over))
        _fail(f"flow {f} rate {rates[f]!r} exceeds its demand {dem[f]!r}")
    owner = np.repeat(np.arange(n_flows), np.diff(ptr))
    load = np.bincount(res, weights=rates[owner], minlength=n_res)
    _check_load(cap, load, allocation, rtol)
    _check_bottlenecks(cap, ptr, res, dem, owner, load, rates, bneck, rtol, w)


def _check_load(cap, load, allocation, rtol) -> None:
    reported = allocation.load_gbps
    with np.errstate(invalid="ignore"):  # inf - inf on unlimited resources crossed by unbounded flows
        same = (load == reported) | (np.abs(load - reported) <= rtol * np.maximum(np.abs(load), cap))
    if not same.all():
        r = int(np.argmin(same))
        _fail(f"resource {r}: reported load {reported[r]!r} != sum of rates {load[r]!r}")
    over = load > cap * (1 + rtol)
    if over.any():
        r = int(np.argmax(over))
        _fail(f"resource {r}: load {load[r]!r} exceeds capacity {cap[r]!r}")
    util = _utilization(cap, reported)
    if not np.allclose(util, allocation.utilization, rtol=rtol, atol=rtol):
        r = int(np.argmax(~np.isclose(util, allocation.utilization, rtol=rtol, atol=rtol)))
        _fail(f"resource {r}: utilization {allocation.utilization[r]!r} != load/capacity {util[r]!r}")


def _check_bottlenecks(cap, ptr, res, dem, owner, load, rates, bneck, rtol, w) -> None:
    n_flows, n_res = len(rates), len(cap)
    level = rates / w   # rate per unit of weight: what weighted max-min equalizes
    max_level = np.zeros(n_res)
    np.maximum.at(max_level, res, level[owner])
    saturated = load >= cap * (1 - rtol)
    # An entry (f, r) "explains" f's rate when r is saturated and f is among its largest flows
    # (by rate / weight).
    explains = saturated[res] & (level[owner] >= max_level[res] * (1 - rtol))
    explained = np.zeros(n_flows, dtype=bool)
    explained[owner[explains]] = True
    at_demand = rates >= dem * (1 - rtol)
    unbounded = np.isinf(rates)
    bad = ~(explained | at_demand | unbounded)
    if bad.any():
        f = int(np.argmax(bad))
        _fail(f"flow {f} (rate {rates[f]!r} < demand {dem[f]!r}) crosses no saturated resource "
              f"on which it has the largest rate / weight: path {res[ptr[f]:ptr[f + 1]].tolist()}")
    _check_reported_bottlenecks(ptr, res, owner, explains, rates, bneck, at_demand | unbounded)


def _check_reported_bottlenecks(ptr, res, owner, explains, rates, bneck, demand_ok) -> None:
    limited = bneck < 0
    if (limited & ~demand_ok).any():
        f = int(np.argmax(limited & ~demand_ok))
        _fail(f"flow {f} reported demand-limited but runs at {rates[f]!r} below its demand")
    named = bneck[owner]
    good_entry = (res == named) & explains
    ok = np.zeros(len(rates), dtype=bool)
    ok[owner[good_entry]] = True
    wrong = ~limited & ~ok
    if wrong.any():
        f = int(np.argmax(wrong))
        _fail(f"flow {f}: reported bottleneck {int(bneck[f])} is not a saturated resource of its path "
              f"{res[ptr[f]:ptr[f + 1]].tolist()} on which it has the largest rate / weight")
