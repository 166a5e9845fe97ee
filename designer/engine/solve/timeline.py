"""Timeline (fluid) mode: flows start together, and the max-min rates are re-solved at every completion.

Every flow starts at ``start_s`` with ``bytes_`` to send and runs at its max-min fair rate until the
next flow finishes; the remaining flows are then re-solved, and so on until all are done. The
re-solve is *warm-started* from the previous allocation (see :func:`timeline`), so an event costs
time in proportion to the flows whose rate can change, not to the number of flows.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from designer.engine.errors import InvalidWorkload, Problem
from designer.engine.solve.kernels.constants import BYTES_PER_GBPS_S, TIME_RTOL
from designer.engine.solve.maxmin import _as_1d, _problems_at, maxmin_reference, prepare_inputs, prepare_weights

__all__ = ["TimelineResult", "timeline", "timeline_reference"]


@dataclass
class TimelineResult:
    """Outcome of a fluid simulation.

    Attributes
    ----------
    completion_s : ndarray of float64, shape (F,)
        Time each flow finishes, in seconds. ``np.inf`` for a flow that never finishes (rate 0:
        it crosses a zero-capacity resource or has demand 0); NaN when ``max_events`` stopped the
        simulation first. Flows with 0 bytes, and unbounded flows (no finite resource, no demand),
        finish at ``start_s``.
    events_s : ndarray of float64, shape (E,)
        Times at which rates were (re-)solved: ``start_s``, then each completion event.
    levels : int
        Water-filling levels summed over all solves.
    flows_resolved : int
        Flows whose rate was (re-)computed, summed over all solves (F x E without warm start).
    truncated : bool
        True when ``max_events`` stopped the simulation with flows still running.
    """

    completion_s: np.ndarray
    events_s: np.ndarray
    levels: int
    flows_resolved: int
    truncated: bool


def _prepare(capacity_gbps, flow_ptr, flow_res, bytes_, demand_gbps, weights):
    cap, ptr, res, dem = prepare_inputs(capacity_gbps, flow_ptr, flow_res, demand_gbps)
    w = prepare_weights(weights, len(ptr) - 1)
    size = _as_1d("bytes", bytes_, np.float64)
    problems = []
    if len(size) != len(ptr) - 1:
        problems.append(Problem("bytes", f"length {len(size)} != number of flows {len(ptr) - 1}"))
    else:
        problems += _problems_at("bytes", ~((size >= 0) & np.isfinite(size)), size,
                                 "bytes must be a finite number >= 0")
    if problems:
        raise InvalidWorkload("invalid timeline input", problems)
    # An unbounded flow (no finite resource, no demand) sends any size in no time.
    owner = np.repeat(np.arange(len(ptr) - 1), np.diff(ptr))
    bounded = np.bincount(owner, weights=np.isfinite(cap[res]), minlength=len(ptr) - 1) > 0
    done_at_start = (size == 0) | ~(bounded | np.isfinite(dem))
    return cap, ptr, res, dem, w, size, done_at_start


def timeline(capacity_gbps, flow_ptr, flow_res, bytes_, demand_gbps=None, *, weights=None,
             start_s: float | None = None, on_event: Callable | None = None,
             max_events: int | None = None) -> TimelineResult:
    """Fluid simulation: (weighted) max-min rates re-solved at every flow completion.

    Parameters
    ----------
    capacity_gbps, flow_ptr, flow_res, demand_gbps, weights
        As for :func:`designer.engine.solve.solver.maxmin` (a flow keeps its weight until it finishes).
    bytes_ : array_like of float, shape (F,)
        Bytes each flow sends (finite, >= 0).
    start_s : float, optional
        Start time of every flow, in seconds (default 0).
    on_event : callable, optional
        ``on_event(t_s, active, rates_gbps, load_gbps)``, called after the initial solve and after
        each re-solve: from ``t_s`` until the next event, flows where the bool mask ``active`` is set
        run at ``rates_gbps`` (0 for the others), putting ``load_gbps`` on the resources. The arrays
        are read-only views of live buffers, valid during the call only (copy what you keep); use
        it to aggregate utilization over time without storing R x E numbers.
    max_events : int, optional
        Stop after this many completion events (flows still running get NaN).

    Returns
    -------
    TimelineResult

    Raises
    ------
    InvalidWorkload
        On invalid solver input or a negative/non-finite size.

    Notes
    -----
    Completions within 1e-9 (relative) of the earliest one are one event, all at that time. The
    warm start is exact: when flows finish, every flow frozen at a level (rate / weight) below the
    smallest finishing level keeps its rate (the finishing flows' resources all saturate at or
    above it), so only the flows at or above that level are re-solved, from the saved solver state.
    """
    cap, ptr, res, dem, w, size, done_at_start = _prepare(capacity_gbps, flow_ptr, flow_res, bytes_,
                                                          demand_gbps, weights)
    from designer.engine.solve.kernels.loader import kernels as _kernels  # AOT, or numba's JIT
    kernels = _kernels()
    t0 = 0.0 if start_s is None else float(start_s)
    n_flows = len(ptr) - 1
    frozen = done_at_start.astype(np.uint8)
    left = size.copy()
    (col_ptr, col, cnt, wsum, rem, load, rates, lev, bneck, heap, pos, key, order, mark, touched,
     ckey, cheap, cpos, ints) = kernels.tl_start(cap, ptr, res, dem, w, frozen, left, t0)
    active = (~done_at_start).astype(np.uint8)
    completion = np.where(done_at_start, t0, np.nan)
    events = np.empty(n_flows + 1)
    events[0] = t0
    ints[4] = 1
    t_upd = np.full(n_flows, t0)
    batch, unfrozen = np.empty(n_flows, dtype=np.int64), np.empty(n_flows, dtype=np.int64)
    prev = np.empty(n_flows)
    views = [a.view() for a in (active.view(bool), rates, load)]
    for v in views:
        v.flags.writeable = False
    if on_event is not None:
        on_event(t0, *views)
    budget = n_flows + 1 if max_events is None else int(max_events)
    step = 1 if on_event is not None else budget
    while budget > 0:
        done = kernels.tl_run(min(step, budget), ptr, res, col_ptr, col, dem, w, rates, lev, bneck,
                              frozen, active, rem, cnt, wsum, load, heap, pos, key, order, mark,
                              touched, left, t_upd, ckey, cheap, cpos, completion, events, batch,
                              unfrozen, prev, ints)
        if done == 0:
            break
        budget -= done
        if on_event is not None:
            on_event(float(events[ints[4] - 1]), *views)
    running = active.astype(bool)
    never = running & np.isinf(ckey)
    completion[never] = np.inf
    truncated = bool((running & ~never).any())
    return TimelineResult(completion, events[:ints[4]].copy(), int(ints[3]), int(ints[5]), truncated)


def timeline_reference(capacity_gbps, flow_ptr, flow_res, bytes_, demand_gbps=None, *, weights=None,
                       start_s: float | None = None) -> TimelineResult:
    """The timeline by brute force: re-solve every active flow from scratch with
    :func:`~designer.engine.solve.solver.maxmin_reference` at each completion. Slow; for tests."""
    cap, ptr, res, dem, w, size, done_at_start = _prepare(capacity_gbps, flow_ptr, flow_res, bytes_,
                                                          demand_gbps, weights)
    t = 0.0 if start_s is None else float(start_s)
    completion = np.where(done_at_start, t, np.inf)
    left, active = size.copy(), ~done_at_start
    events, levels, resolved = [t], 0, 0
    while active.any():
        flows = np.flatnonzero(active)
        sub_ptr = np.concatenate([[0], np.cumsum(np.diff(ptr)[flows])])
        sub_res = np.concatenate([res[ptr[f]:ptr[f + 1]] for f in flows] + [np.empty(0, np.int64)])
        alloc = maxmin_reference(cap, sub_ptr, sub_res, dem[flows], weights=w[flows])
        levels, resolved = levels + alloc.levels, resolved + len(flows)
        with np.errstate(divide="ignore"):
            finish = t + np.where(alloc.rates_gbps > 0, left[flows] / (alloc.rates_gbps * BYTES_PER_GBPS_S),
                                  np.inf)
        t_next = finish.min()
        if t_next == np.inf:
            break
        ending = finish <= t_next + abs(t_next) * TIME_RTOL
        left[flows] -= alloc.rates_gbps * (t_next - t) * BYTES_PER_GBPS_S
        completion[flows[ending]] = t_next
        active[flows[ending]] = False
        t = t_next
        events.append(t)
    return TimelineResult(completion, np.array(events), levels, resolved, False)
