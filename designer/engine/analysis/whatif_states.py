"""The states of a what-if: a scenario's nominal (no-failure) routes and allocation, and the
states derived from them under failure lists by stable re-routing (see
:mod:`designer.engine.analysis.whatif`, which sweeps and compares them), with the summary and the
job's step of a state.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from designer.engine.analysis.diff import Frame, pattern_stats
from designer.engine.analysis.diff import fallback_applies
from designer.engine.analysis.diff import fallback_impact as diff_fallback_impact
from designer.engine.analysis.simulate import (Prepared, Solved, flows_crossing, prepare, prepare_failures,
                                               resource_tiers, solve_prepared)
from designer.engine.analysis.whatif_local import LocalBase, prepare_spliced
from designer.engine.numbers import json_float as _num
from designer.engine.routing import FailureSet, Routes, routing_context
from designer.engine.traffic.collectives import fallback_fields
# _nic_up: the very test live_rails applies, so the incremental check below cannot drift from it.
from designer.engine.traffic.collectives.common import _nic_up, group_of, nearest_nics
from designer.engine.traffic.failures import failed_resources, resolve_failures
from designer.engine.traffic.jobs.dag import run_job, step_diff
from designer.engine.traffic.scenario import Scenario, normalize_scenario

__all__ = ["State", "WhatIf", "split_scenario", "state_summary", "run_step", "step_impact", "fallback_impact"]


@dataclass
class State:
    """Routes, capacities and the solved allocation under one failure list (a diff Outcome)."""

    entries: list
    failed: FailureSet
    capacity: np.ndarray
    routes: Routes
    solved: Solved
    affected: np.ndarray     # flow indices re-routed against the nominal routes
    prep: Prepared


def split_scenario(scenario, topology_loader) -> tuple[Scenario, list]:
    """The scenario without failures (normalized) and its failures (normalized entries)."""
    sc = normalize_scenario(scenario, topology_loader=topology_loader)
    return dataclasses.replace(sc, failures=[]), sc.failures


class WhatIf(Frame):
    """A scenario's nominal (no-failure) routes and allocation, and states derived from them
    with :func:`~designer.engine.analysis.simulate.prepare_failures` (stable re-routing)."""

    def __init__(self, sc: Scenario, *, derive: bool = False, base_entries: list | None = None,
                 local: bool = False):
        self.sc = sc
        self.prep0 = prepare(sc, failures=[])
        # local: failed states re-solve only what their failure touches (whatif_local), same answer.
        self.local = LocalBase(self.prep0) if local else None
        super().__init__(self.prep0.topology, self.prep0.flows, resource_tiers(self.prep0.topology))
        self.routes0 = self.prep0.routes
        self.nominal = self._make_state([], self.prep0)
        self.base_entries = list(base_entries or [])
        self.derive = derive
        self.ctx_base = None
        if derive:
            base_failed, _ = resolve_failures(self.topo, self.base_entries)
            self.ctx_base = routing_context(self.topo, base_failed, base=routing_context(self.topo))

    def touching(self, resources: np.ndarray) -> np.ndarray:
        """Flows (sorted) whose nominal paths cross any of ``resources``."""
        return flows_crossing(self.prep0, resources)

    def state(self, entries: list) -> State:
        if not entries:
            return self.nominal
        if self.local is not None and self.derive:
            prep = prepare_spliced(self.prep0, entries, derive_from=self.ctx_base)
        else:
            prep = prepare_failures(self.prep0, entries, derive_from=self.ctx_base, derive=self.derive)
        return self._make_state(entries, prep)

    def unchanged(self, cand: dict, base: State) -> bool:
        """True when adding ``cand`` to ``base``'s failures provably leaves ``base`` as it is.

        A ``down`` candidate qualifies only on a failure-free base whose paths avoid it (with
        other elements already down, removing one more can still change an ECMP choice); a
        ``degrade`` qualifies when no path of ``base`` crosses what it slows.
        """
        failed, mult = resolve_failures(self.topo, [cand])
        if failed.nodes or failed.links:
            if base.failed.nodes or base.failed.links:
                return False
            if len(self.touching(failed_resources(self.topo, failed))):
                return False
        used = base.__dict__.get("_used")
        if used is None:
            used = base.__dict__["_used"] = np.bincount(base.routes.flow_res,
                                                        minlength=self.topo.num_resources) > 0
        return not ((mult != 1.0) & used).any()

    def _make_state(self, entries, prep: Prepared) -> State:
        solved = self.local.solve(prep) if entries and self.local is not None else solve_prepared(prep)
        return State(entries, prep.failed or FailureSet(), prep.capacity_gbps, prep.routes, solved,
                     prep.affected, prep)


_STEP_KEYS = ("complete", "step_time_s", "compute_s", "communication_s", "exposed_communication_s",
              "critical_path", "reason")


def _step_numbers(step: dict | None) -> dict | None:
    """The headline numbers of a ``summary.job`` (no per-phase detail), or None."""
    return {k: step.get(k) for k in _STEP_KEYS} if step else None


def step_impact(before: dict, after: dict) -> dict:
    """``impact.job``: :func:`~designer.engine.traffic.jobs.dag.step_diff` plus the step-time increase (s)
    and the critical path after the failure."""
    d = step_diff(before, after)
    b, a = d["step_time_s"]["before"], d["step_time_s"]["after"]
    return {**d, "step_time_increase_s": _num(a - b) if a is not None and b is not None else None,
            "critical_path": after.get("critical_path") or []}


def state_summary(w: WhatIf, st: State, step: dict | None = None) -> dict:
    """Per-pattern completion, job completion, utilization and path classes of a state; ``job``
    (the step's numbers, :func:`_step_numbers`) when ``step`` is given."""
    p = pattern_stats(w, st)
    complete = all(v["complete"] for v in p.values())
    times = [v["completion_s"] or 0.0 for v in p.values()]
    util = st.solved.utilization
    return {"patterns": {k: {"complete": v["complete"], "completion_s": _num(v["completion_s"]),
                             "throughput_gbps": _num(v["throughput_gbps"]), "unroutable": v["unroutable"],
                             "reason": v["reason"]} for k, v in p.items()},
            "complete": complete, "broken": [k for k, v in p.items() if not v["complete"]],
            "job_completion_s": _num(max(times, default=0.0)) if complete else None,
            "max_utilization": _num(util.max()) if len(util) else 0.0,
            "flows_total": len(w.flows), "unroutable": int((st.routes.status != 0).sum()),
            "classes": {name: int(c) for name, c in zip(
                st.routes.class_names, np.bincount(st.routes.class_code[st.routes.class_code >= 0],
                                                   minlength=len(st.routes.class_names)).tolist())},
            **({"job": _step_numbers(step)} if step is not None else {})}


def run_step(sc: Scenario, st: State) -> dict | None:
    """The job's step on a state (None when the workload is not a job)."""
    return run_job(st.prep, sc.job) if sc.job is not None else None


# =========================================================================== NCCL's fallback
def fallback_impact(w: WhatIf, st: State, summary: dict) -> dict | None:
    """``impact.fallback`` of a state (:func:`designer.engine.analysis.diff.fallback_impact`) when
    only NICs are down (``fallback_applies``), each broken collective re-planned by
    ``fallback_fields`` — once per rail set where that is exact (:func:`_fallback_memo_key`)."""
    def fallback_of(k: int) -> dict | None:
        if not w.flows.pattern_plans or w.flows.pattern_plans[k] is None:
            return None
        key = _fallback_memo_key(w, st, k)
        memo = w.__dict__.setdefault("_fallbacks", {})
        if key is None or key not in memo:
            fb = fallback_fields(w.topo, w.sc.patterns[k], w.sc.routing, st.failed, st.capacity)
            if key is None:
                return fb
            memo[key] = fb
        return memo[key]

    if not fallback_applies(w.topo, st.failed):
        return None
    return diff_fallback_impact(summary["patterns"], w.flows, [p["kind"] for p in w.sc.patterns], fallback_of)


# Collectives whose inter-host traffic runs on per-rail channels (ring, tree, NVLS tree, PAT).
_RAIL_CHANNEL_KINDS = ("allreduce", "allgather", "reducescatter")


def _fallback_memo_key(w: WhatIf, st: State, k: int) -> tuple | None:
    """A key under which failures have the same fallback, or None (compute it).

    Why it is exact: NCCL re-initialized builds inter-host channels only on the rails live in
    every host (``live_rails``), so under ``affinity`` no flow of the fallback enters or leaves
    a NIC of a dead rail, on any host: which host's rail NIC died does not change the plan. The
    key applies only there — collectives built on rail channels (an all-to-all sends between
    every pair, so the dead NIC's host shows in its routes), NICs down (no link, no degradation,
    a failure-free base), ``affinity`` routing, every failed NIC serving only GPUs of dead
    rails — and in ``derive`` sweeps only (``derive=False`` recomputes every fallback; tests
    check both agree). It saves a re-planning per NIC of a large sweep (docs/PERFORMANCE.md)."""
    topo, failed = w.topo, st.failed
    if (not w.derive or w.base_entries or failed.links or w.sc.routing.get("nic_policy") != "affinity"
            or w.sc.patterns[k]["kind"] not in _RAIL_CHANNEL_KINDS
            or any(topo.node_kind[n] != "nic" for n in failed.nodes)
            or not np.array_equal(st.capacity, w.nominal.capacity)):
        return None
    rails = _rails(w, k)
    live = _live_rails(w, rails, failed)
    if any(rails["positions"].get(n, set()) & live for n in failed.nodes):
        return None
    return (k, tuple(sorted(live)))


def _rails(w: WhatIf, k: int) -> dict:
    """Pattern ``k``'s rails, computed once (a breadth-first search per GPU): ``at`` (position ->
    [(GPU, its nearest NICs)]), ``positions`` (NIC -> positions it serves), ``near`` (NIC ->
    positions whose liveness it can change: its own, and those of the NICs cabled to it)."""
    memo = w.__dict__.setdefault("_rails", {})
    if k not in memo:
        topo = w.topo
        blocks = group_of(topo, w.sc.patterns[k]).blocks
        per_node = min(len(b) for b in blocks) if blocks else 0
        at = {c: [(int(b[c]), nearest_nics(topo, int(b[c]))) for b in blocks] for c in range(per_node)}
        positions: dict[int, set[int]] = {}
        for c, gpus in at.items():
            for _, nics in gpus:
                for n in nics:
                    positions.setdefault(n, set()).add(c)
        near = {n: set(cs) for n, cs in positions.items()}
        for n, cs in positions.items():
            for v, _ in topo.adjacency[n]:
                near.setdefault(v, set()).update(cs)
        static = FailureSet(nodes=frozenset({-1}), links=frozenset())   # "some failure": the full check
        memo[k] = {"at": at, "positions": positions, "near": near, "deps": _rail_deps(topo, at),
                   "live": {c for c, gpus in at.items() if _rail_up(topo, gpus, static)}}
    return memo[k]


def _live_rails(w: WhatIf, rails: dict, failed) -> set[int]:
    """``live_rails`` of the pattern under ``failed`` (NIC nodes only), re-checking only the
    rails a failed NIC can change (``near``) instead of every GPU's NICs."""
    touched = set().union(*(rails["near"].get(n, set()) for n in failed.nodes))

    def up(c: int) -> bool:
        # Only the GPUs whose nearest NICs (or those NICs' cabled neighbours) failed can have
        # changed: the rail's other GPUs are as in the failure-free check that made it live.
        which = set().union(*(rails["deps"].get(n, {}).get(c, ()) for n in failed.nodes))
        return _rail_up(w.topo, [rails["at"][c][j] for j in sorted(which)], failed)

    return {c for c in rails["live"] if c not in touched or up(c)}


def _rail_deps(topo, at: dict) -> dict:
    """Node -> {position: GPU slots of ``at[position]``} whose liveness the node's failure can
    change: the GPU's nearest NICs and every node adjacent to one (``_nic_up`` reads its uplinks)."""
    deps: dict[int, dict[int, set[int]]] = {}
    for c, gpus in at.items():
        for j, (_, nics) in enumerate(gpus):
            for n in nics:
                for v in [n] + [v for v, _ in topo.adjacency[n]]:
                    deps.setdefault(v, {}).setdefault(c, set()).add(j)
    return deps


def _rail_up(topo, gpus: list, failed) -> bool:
    """A rail is live when each of its GPUs is up with a nearest NIC up (``live_rails``)."""
    return all(g not in failed.nodes and any(_nic_up(topo, n, failed) for n in nics) for g, nics in gpus)
