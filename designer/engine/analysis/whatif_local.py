"""A what-if state's allocation re-solved only where its failure touches it
(:func:`designer.engine.solve.local.maxmin_local`), from the failure-free allocation.

The sweep (:mod:`designer.engine.analysis.whatif`) derives each candidate's routes from the nominal
ones by stable re-routing: the flows a failure does not touch keep their paths, so their
sub-flows are the nominal ones, laid out in the same flow order. This module maps the nominal
allocation onto the failed routes, frees the re-routed sub-flows (and those on a resource whose
capacity changed), and lets the certificate of :mod:`designer.engine.solve.local` decide how far the
change reaches. When it reaches too far (more than :data:`MAX_FREE_FRACTION` of the sub-flows), the
caller solves the whole problem, as before: the answer is the same max-min allocation either way
(tests compare every sweep figure of both paths).
"""
from __future__ import annotations

import numpy as np

from designer.engine.analysis.flow_rates import per_flow
from designer.engine.analysis.simulate import Prepared, Solved, prepare_failures, solve_prepared
from designer.engine.analysis.simulate import _aggregation as nominal_aggregation
from designer.engine.routing.splice import in_flow_order
from designer.engine.solve import solver
from designer.engine.solve.local import maxmin_local

__all__ = ["LocalBase", "MAX_FREE_FRACTION", "prepare_spliced"]

# Past this share of sub-flows re-solved locally, the whole solve is cheaper than the rounds.
MAX_FREE_FRACTION = 0.25


def prepare_spliced(base: Prepared, failures: list, *, derive_from=None) -> Prepared:
    """:func:`~designer.engine.analysis.simulate.prepare_failures` (derived routing context), the
    re-routed flows spliced into the nominal routes (:func:`~designer.engine.routing.splice.splice_flows`,
    the same arrays as ``replace_flows``)."""
    return prepare_failures(base, failures, derive_from=derive_from, splice=True)


def _rows(ptr: np.ndarray, data: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``data[ptr[lo[i]]:ptr[hi[i]]]`` for every i, concatenated (rows lo..hi of a CSR)."""
    starts, lens = ptr[lo], ptr[hi] - ptr[lo]
    pos = np.arange(int(lens.sum()), dtype=np.int64) + np.repeat(starts - (np.cumsum(lens) - lens), lens)
    return data[pos]


def _ranges(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    lens = hi - lo
    return np.arange(int(lens.sum()), dtype=np.int64) + np.repeat(lo - (np.cumsum(lens) - lens), lens)


class LocalBase:
    """The nominal (failure-free) allocation per sub-flow and per flow, with its resource →
    sub-flow index (CSC), reused by every failure of a sweep."""

    def __init__(self, prep0: Prepared):
        r = prep0.routes
        self.prep0 = prep0
        self.demand = np.ascontiguousarray(prep0.flows.demand_gbps[r.owner] * r.share, dtype=np.float64)
        # The nominal state's own solve (same grouping of identical sub-flows), so that the flows a
        # failure does not reach keep the nominal figures bit for bit.
        alloc = solver.maxmin(prep0.capacity_gbps, r.flow_ptr, r.flow_res, self.demand, weights=r.weight,
                              aggregate=nominal_aggregation(prep0, self.demand))
        self.rates, self.level, self.bneck, self.load = (alloc.rates_gbps, alloc.flow_level, alloc.bottleneck,
                                                         alloc.load_gbps)
        self.flow_rate, self.flow_bneck, self.flow_completion = per_flow(r, prep0.flows, self.rates, self.bneck,
                                                                         self.level)
        n_res = prep0.topology.num_resources
        counts = np.bincount(r.flow_res, minlength=n_res)
        self.col_ptr = np.zeros(n_res + 1, dtype=np.int64)
        np.cumsum(counts, out=self.col_ptr[1:])
        entry_path = np.repeat(np.arange(r.num_paths, dtype=np.int64), np.diff(r.flow_ptr))
        self.col = entry_path[np.argsort(r.flow_res, kind="stable")]
        self.stats = {"local": 0, "whole": 0, "resolved_paths": 0}

    def solve(self, prep: Prepared) -> Solved:
        """``prep``'s allocation (a steady-state :class:`Solved`), locally when the certificate
        allows, else by :func:`~designer.engine.analysis.simulate.solve_prepared`."""
        # Under ``any`` every GPU's traffic is striped over every NIC: nearly every failure reaches
        # a tie of bottlenecks and falls back (348 of 364 on a 16-host ring), so it is not tried.
        # A rule of the scenario, not of the failures seen so far: chunks count as the whole sweep.
        hopeless = prep.scenario.routing.get("nic_policy") == "any"
        solved = (self._local(prep) if prep.scenario.mode == "steady" and len(prep.affected) and not hopeless
                  and in_flow_order(self.prep0.routes) and in_flow_order(prep.routes) else None)
        if solved is None:
            self.stats["whole"] += 1
            return solve_prepared(prep)
        self.stats["local"] += 1
        return solved

    def _splice(self, r0, r, changed: np.ndarray, base_arr: np.ndarray, fill) -> np.ndarray:
        """A per-path array of the new routes ``r``: the nominal values of untouched flows (as
        slices, shifted), ``fill`` on the re-routed flows' paths."""
        out = np.empty(r.num_paths, dtype=base_arr.dtype)
        lo = 0
        for f in changed.tolist():
            b0, b1 = int(r0.first[lo]) if lo < r0.num_flows else r0.num_paths, int(r0.first[f])
            n0 = int(r.first[lo]) if lo < r.num_flows else r.num_paths
            out[n0:n0 + (b1 - b0)] = base_arr[b0:b1]
            out[int(r.first[f]):int(r.first[f] + r.count[f])] = fill
            lo = f + 1
        if lo < r0.num_flows:
            b0, n0 = int(r0.first[lo]), int(r.first[lo])
            out[n0:] = base_arr[b0:]
        return out

    def _local(self, prep: Prepared) -> Solved | None:
        r0, r = self.prep0.routes, prep.routes
        changed = np.asarray(prep.affected, dtype=np.int64)
        is_changed = np.zeros(r.num_flows, dtype=bool)
        is_changed[changed] = True
        new_paths = _ranges(r.first[changed], r.first[changed] + r.count[changed])
        old_paths = _ranges(r0.first[changed], r0.first[changed] + r0.count[changed])
        rates = self._splice(r0, r, changed, self.rates, 0.0)
        level = self._splice(r0, r, changed, self.level, 0.0)
        bneck = self._splice(r0, r, changed, self.bneck, -1)
        demand = self._splice(r0, r, changed, self.demand, 0.0)
        demand[new_paths] = prep.flows.demand_gbps[r.owner[new_paths]] * r.share[new_paths]
        cap = prep.capacity_gbps
        recapped = np.flatnonzero(cap != self.prep0.capacity_gbps)
        removed_res = _rows(r0.flow_ptr, r0.flow_res, old_paths, old_paths + 1)
        new_res = _rows(r.flow_ptr, r.flow_res, new_paths, new_paths + 1)
        new_owner = np.repeat(new_paths, np.diff(r.flow_ptr)[new_paths])
        fixed_load = self.load - np.bincount(removed_res, weights=np.repeat(
            self.rates[old_paths], np.diff(r0.flow_ptr)[old_paths]), minlength=len(cap))

        def crossing(resources):
            starts, lens = self.col_ptr[resources], self.col_ptr[resources + 1] - self.col_ptr[resources]
            bp = self.col[_ranges(starts, starts + lens)]
            fo = r0.owner[bp]
            keep = ~is_changed[fo]
            er, ep = np.repeat(resources, lens)[keep], (bp - r0.first[fo] + r.first[fo])[keep]
            mine = np.isin(new_res, resources)
            return np.concatenate([er, new_res[mine]]), np.concatenate([ep, new_owner[mine]])

        free = new_paths
        if len(recapped):
            free = np.union1d(free, crossing(recapped)[1])
            kept = free[~is_changed[r.owner[free]]]
            fixed_load -= np.bincount(_rows(r.flow_ptr, r.flow_res, kept, kept + 1), weights=np.repeat(
                rates[kept], np.diff(r.flow_ptr)[kept]), minlength=len(cap))
        fill = maxmin_local(cap, r.flow_ptr, r.flow_res, demand, r.weight, rates, level, bneck, fixed_load, free,
                            crossing, np.union1d(removed_res, recapped), max_paths=int(MAX_FREE_FRACTION * r.num_paths))
        if fill is None:
            return None
        self.stats["resolved_paths"] += fill.resolved_paths
        util = np.zeros_like(fill.load_gbps)
        ok = np.isfinite(cap) & (cap > 0)
        util[ok] = fill.load_gbps[ok] / cap[ok]
        rate, fb, completion = self._per_flow(prep, fill, np.union1d(changed, r.owner[fill.free]))
        return Solved(fill.rates_gbps, fill.bottleneck, fill.load_gbps, util, rate, fb, completion, fill.rounds,
                      timings_s={"solve": 0.0})

    def _per_flow(self, prep: Prepared, fill, flows: np.ndarray):
        """:func:`~designer.engine.analysis.flow_rates.per_flow` of the new allocation: the nominal
        per-flow figures, recomputed for ``flows`` (those with a re-solved sub-flow) only."""
        r = prep.routes
        rate, bneck, completion = self.flow_rate.copy(), self.flow_bneck.copy(), self.flow_completion.copy()
        paths = _ranges(r.first[flows], r.first[flows] + r.count[flows])
        sub = _SubRoutes(r, flows, paths)
        sr, sb, sc = per_flow(sub, _SubFlows(prep.flows, flows),
                              fill.rates_gbps[paths], fill.bottleneck[paths], fill.level[paths])
        rate[flows], bneck[flows], completion[flows] = sr, sb, sc
        return rate, bneck, completion


class _SubRoutes:
    """The few fields of :class:`~designer.engine.routing.Routes` that ``per_flow`` reads, for a
    subset of flows (their paths renumbered from 0)."""

    def __init__(self, r, flows: np.ndarray, paths: np.ndarray):
        self.count = r.count[flows]
        self.first = np.zeros(len(flows), dtype=np.int64)
        np.cumsum(self.count[:-1], out=self.first[1:])
        self.num_flows, self.num_paths = len(flows), len(paths)
        self.owner = np.repeat(np.arange(len(flows), dtype=np.int64), self.count)
        self.weight = r.weight[paths]


class _SubFlows:
    """The ``bytes`` of a subset of flows (all ``per_flow`` reads of a Flows)."""

    def __init__(self, flows, idx: np.ndarray):
        self.bytes = flows.bytes[idx]
