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
from designer.engine.analysis.simulate import (Prepared, Solved, flows_crossing, prepare, prepare_failures,
                                               resource_tiers, solve_prepared)
from designer.engine.numbers import json_float as _num
from designer.engine.routing import FailureSet, Routes, routing_context
from designer.engine.traffic.failures import failed_resources, resolve_failures
from designer.engine.traffic.jobs.dag import run_job, step_diff
from designer.engine.traffic.scenario import Scenario, normalize_scenario

__all__ = ["State", "WhatIf", "split_scenario", "state_summary", "run_step", "step_impact"]


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

    def __init__(self, sc: Scenario, *, derive: bool = False, base_entries: list | None = None):
        self.sc = sc
        self.prep0 = prepare(sc, failures=[])
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
        solved = solve_prepared(prep)
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
