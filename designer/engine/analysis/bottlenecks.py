"""Bottlenecks by consequence: which resource sets each pattern's completion time, which one sets
the job's, and what relieving each would buy.

Utilization alone misleads: in a ring all-reduce beside a storage read, dozens of NVLink
directions run at 100 % while the job waits on one storage-leaf uplink. So:

- a pattern's **bottleneck** is the resource that limits its slowest flow (the solver's
  bottleneck of that flow: where it has the largest rate among the flows of a saturated
  resource); none when that flow runs at its demand cap;
- the job's **critical bottleneck** is the bottleneck of its slowest (completing) pattern;
- **relief**: each candidate (every pattern's bottleneck, plus the most-loaded saturated
  resources) is re-solved with twice its capacity, and the job completion time gained is its
  rank. Max-min re-solves are cheap with the compiled solver (milliseconds for a 1,024-GPU ring),
  and the answer is exact for the steady state, not a heuristic;
- a saturated resource that limits no pattern's slowest flow is **saturated, not critical**.
"""
from __future__ import annotations

from functools import partial
from typing import Callable

import numpy as np

from designer.engine.numbers import json_float as _finite

__all__ = ["RELIEF_FACTOR", "rank_bottlenecks"]

RELIEF_FACTOR = 2.0          # "if this resource had twice its capacity"
_EXTRA_CANDIDATES = 6        # saturated resources re-solved beyond the patterns' own bottlenecks
_MAX_ENTRIES = 4_000_000     # (flow, resource) entries above which relief is not re-solved
_SATURATED = 1e-6
_LISTED = 20



def _job_time(done: dict, completion: np.ndarray, members: dict, time_model: dict) -> float | None:
    """Slowest completing pattern's completion under per-flow data times ``completion`` (the
    flows of each pattern that completes in the base allocation), with each pattern's latency
    and efficiency (``time_model``, as :mod:`designer.engine.analysis.completion` applies them)."""
    def pattern_time(pid):
        lat, eff = time_model.get(pid, (0.0, 1.0))
        return lat + float(np.max(completion[members[pid]])) / eff if len(members[pid]) else 0.0

    times = [pattern_time(pid) for pid, c in done.items() if c.complete]
    return max(times) if times else None


def rank_bottlenecks(topo, solved, tiers: list[str], done: dict, resolve: Callable | None,
                     capacity: np.ndarray, routed_members: dict, entries: int,
                     time_model: dict | None = None) -> dict:
    """Bottlenecks ranked by what relieving them would buy.

    Parameters
    ----------
    topo : Topology
    solved : Solved
        ``flow_bottleneck`` (resource index per flow, -1 = demand-limited), ``utilization``.
    tiers : list of str
        Tier of every resource.
    done : dict
        Pattern id → :class:`~designer.engine.analysis.completion.PatternCompletion`.
    resolve : callable or None
        ``resolve(capacity_gbps, at_least=None) -> (per-flow completion (s), exact)``: a
        steady-state re-solve with other capacities (None: do not re-solve). With ``at_least``
        (per flow, s) it may stop once some flow is known to complete no sooner than that:
        the completions are then lower bounds (``exact`` False; a flow not reached yet: 0).
    capacity : ndarray
        Capacities (Gb/s) the allocation was solved with.
    routed_members : dict
        Pattern id → indices of its routed flows.
    entries : int
        (flow, resource) entries of the problem: large problems skip the re-solves.

    Returns
    -------
    dict
        ``critical`` (dict or None), ``relief`` (list, largest gain first), ``saturated_not_critical``
        (``{"count", "ids"}``), ``order`` (resource indices: relief order, then by flows limited).
    """
    util = solved.utilization
    per_pattern, counts, by_count = _limits(solved, done)
    limits: dict[int, list[str]] = {}
    for pid, r in per_pattern.items():
        limits.setdefault(r, []).append(pid)
    candidates = list(dict.fromkeys(list(limits) + by_count[:_EXTRA_CANDIDATES]))
    time_model = time_model or {}
    job0 = _job_time(done, solved.flow_completion_s, routed_members, time_model)
    can_resolve = resolve is not None and job0 is not None and job0 > 0 and entries <= _MAX_ENTRIES
    relieved = None
    if can_resolve:
        targets = _completion_targets(done, routed_members, time_model, job0, len(solved.flow_completion_s))
        relieved = partial(_relieved_job_time, done, resolve, routed_members, time_model, job0, targets)
    relief = [_relief_entry(topo, tiers, util, counts, limits, r, capacity, job0, relieved) for r in candidates]
    relief.sort(key=lambda e: (-(e["gain_s"] or 0.0), -len(e["limits"]), -e["flows_limited"]))
    critical = _critical(topo, tiers, util, done, per_pattern, relief)
    if critical is not None and critical.get("id"):
        critical["equally_limiting"] = _equally_limiting(solved, done[critical["pattern"]])
    limiting = set(per_pattern.values())
    saturated = (util >= 1 - _SATURATED) & (solved.load_gbps > 0)
    idle = [r for r in np.flatnonzero(saturated).tolist() if r not in limiting]
    head = [e["_r"] for e in relief if (e["gain_s"] or 0) > 0 or e["limits"]]
    for e in relief:
        e.pop("_r")
    return {"critical": critical, "relief": relief, "relief_computed": can_resolve,
            "saturated_not_critical": {"count": len(idle), "ids": [topo.resource_id(r) for r in idle[:_LISTED]]},
            "order": list(dict.fromkeys(head + by_count))}


def _limits(solved, done: dict) -> tuple[dict, np.ndarray, list[int]]:
    """Each completing pattern's bottleneck (resource of its slowest flow), flows limited per
    resource, and saturated resources by flows limited (most first)."""
    util, bneck = solved.utilization, solved.flow_bottleneck
    per_pattern = {pid: int(bneck[c.slowest]) for pid, c in done.items()
                   if c.slowest is not None and c.complete and bneck[c.slowest] >= 0}
    limited = bneck[bneck >= 0]
    counts = np.bincount(limited, minlength=len(util)) if len(limited) else np.zeros(len(util), dtype=np.int64)
    saturated = (util >= 1 - _SATURATED) & (solved.load_gbps > 0)
    order = np.argsort(-counts, kind="stable")
    by_count = order[(counts[order] > 0) & saturated[order]].tolist()   # one mask, not 383k scalar tests
    return per_pattern, counts, by_count


def _relief_entry(topo, tiers, util, counts, limits, r, capacity, job0, relieved) -> dict:
    """One candidate's relief: job time gained (s) with its capacity × :data:`RELIEF_FACTOR`
    (``relieved(capacity)``: the job time then, see :func:`_relieved_job_time`)."""
    entry = {"_r": r, "id": topo.resource_id(r), "tier": tiers[r], "utilization": _finite(util[r]),
             "flows_limited": int(counts[r]), "limits": limits.get(r, []), "gain_s": None, "gain_fraction": None}
    if relieved is not None:
        cap = capacity.copy()
        cap[r] *= RELIEF_FACTOR
        job1 = relieved(cap)
        gain = max(0.0, job0 - job1) if job1 is not None else 0.0
        entry.update({"gain_s": gain, "gain_fraction": gain / job0})
    return entry


def _completion_targets(done: dict, routed_members: dict, time_model: dict, job0: float, n_flows: int) -> np.ndarray:
    """Per flow: the data time (s) from which its pattern alone takes ``job0`` or longer
    (``(job0 - latency) × efficiency``, as :func:`_job_time` reads it); +inf for flows of
    patterns that do not complete (they take no part in the job time)."""
    targets = np.full(n_flows, np.inf)
    for pid, c in done.items():
        if c.complete:
            lat, eff = time_model.get(pid, (0.0, 1.0))
            targets[routed_members[pid]] = (job0 - lat) * eff
    return targets


def _relieved_job_time(done, resolve, routed_members, time_model, job0, targets, capacity) -> float | None:
    """The job time under ``capacity``, or a lower bound of it when that is ``>= job0`` (relief
    then gains exactly 0, whatever the exact time).

    First a re-solve that may stop at the first flow known to end at its target or later: in a
    symmetric collective the 16,383 twins of a relieved PCIe link keep the job as slow as it
    was, and the fill meets one of them in its first level. Its completions are lower bounds
    (the flows it had not reached count 0), so their job time is one too; only a bound below
    ``job0`` (a rounding hair under a target) needs the full re-solve.
    """
    completion, exact = resolve(capacity, targets)
    job1 = _job_time(done, completion, routed_members, time_model)
    if exact or job1 is None or job1 >= job0:
        return job1
    return _job_time(done, resolve(capacity)[0], routed_members, time_model)


def _equally_limiting(solved, c) -> int:
    """Distinct resources that limit a flow finishing with the slowest pattern (within 1e-9): 16
    symmetric PCIe links of a ring each limit one flow, and doubling one of them alone buys nothing."""
    t = solved.flow_completion_s
    with np.errstate(invalid="ignore"):
        late = np.flatnonzero(t >= t[c.slowest] * (1 - 1e-9))
    b = solved.flow_bottleneck[late]
    return int(len(np.unique(b[b >= 0])))


def _critical(topo, tiers, util, done, per_pattern, relief) -> dict | None:
    times = {pid: c.completion_s for pid, c in done.items() if c.complete and c.completion_s is not None}
    if not times:
        return None
    slowest = max(times, key=lambda pid: times[pid])
    c = done[slowest]
    if slowest not in per_pattern:
        return {"id": None, "pattern": slowest, "flow_index": c.slowest,
                "why": f"the slowest flow of {slowest} runs at its demand cap"}
    r = per_pattern[slowest]
    rid = topo.resource_id(r)
    gain = next((e["gain_s"] for e in relief if e["id"] == rid), None)
    return {"id": rid, "tier": tiers[r], "utilization": _finite(util[r]), "pattern": slowest,
            "flow_index": c.slowest, "gain_if_doubled_s": gain}
