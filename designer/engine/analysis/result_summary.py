"""The summary fields of a result document: per pattern (completion, throughput, the slowest
flow and its bottleneck, the collective's plan and fallback), the bottlenecks named overall and
per tier, utilization per tier and the path classes counted.
"""
from __future__ import annotations

from itertools import repeat

import numpy as np

from designer.engine.model.tiers import TIERS
from designer.engine.model.topology import Topology
from designer.engine.numbers import json_float as _num
from designer.engine.routing import Routes
from designer.engine.analysis.completion import PatternCompletion
from designer.engine.traffic.collectives import collective_fields, fallback_fields
from designer.engine.traffic.flows import Flows

__all__ = ["pattern_summary", "add_fallbacks", "bottleneck_lists", "tier_utilization", "class_counts"]

# How many bottleneck ids the summary names (all of them are in ``resources``).
_TOP_BOTTLENECKS = 20


def pattern_summary(topo: Topology, flows: Flows, routes: Routes, solved,
                    done: dict[str, PatternCompletion], members: list[np.ndarray]) -> dict:
    """Per pattern: completion by :mod:`designer.engine.analysis.completion` (a pattern with a lost flow
    does not complete), throughput, the slowest flow and the resource that limits it."""
    out = {}
    for k, pid in enumerate(flows.pattern_ids):
        c = done[pid]
        entry = {**c.as_dict(), "slowest_flow": None, "flows": c.flows, "bytes": c.bytes, "kind": c.kind,
                 "bottleneck": None}
        for key in ("completion_s", "throughput_gbps", "surviving_completion_s"):
            entry[key] = _num(entry[key]) if entry[key] is not None else None
        if c.slowest is not None:
            entry["slowest_flow"] = flows.flow_id(c.slowest)
            good = members[k][routes.status[members[k]] == 0]
            entry["min_rate_gbps"] = _num(np.nanmin(solved.flow_rate_gbps[good]))
            b = int(solved.flow_bottleneck[c.slowest])
            entry["bottleneck"] = topo.resource_id(b) if b >= 0 else None
        plan = flows.pattern_plans[k] if flows.pattern_plans else None
        if plan is not None:
            entry.update(collective_fields(plan, c.kind, entry["completion_s"]))
        out[pid] = entry
    return out


def add_fallbacks(prep, patterns: dict) -> None:
    """``fallback`` of every collective pattern under failures (see
    :func:`designer.engine.traffic.collectives.fallback_fields`)."""
    flows, sc = prep.flows, prep.scenario
    for k, pid in enumerate(flows.pattern_ids):
        if flows.pattern_plans[k] is not None:
            patterns[pid]["fallback"] = fallback_fields(prep.topology, sc.patterns[k], sc.routing, prep.failed,
                                                        prep.capacity_gbps)


def bottleneck_lists(topo: Topology, tiers: list[str], order: list[int]):
    """Saturated resources that limit some flow, most consequential first (``order`` from
    :func:`~designer.engine.analysis.bottlenecks.rank_bottlenecks`), overall and per tier."""
    ranked = order
    by_tier: dict[str, list[str]] = {}
    for r in ranked:
        ids = by_tier.setdefault(tiers[r], [])
        if len(ids) < _TOP_BOTTLENECKS:
            ids.append(topo.resource_id(r))
    return [topo.resource_id(r) for r in ranked[:_TOP_BOTTLENECKS]], by_tier


def tier_utilization(solved, tiers: list[str], routes: Routes) -> dict:
    """Per tier of the resources some path uses: the largest and mean utilization, and how many."""
    used = np.zeros(len(solved.utilization), dtype=bool)
    used[routes.flow_res] = True
    out = {}
    # Tier codes by one dict lookup per resource, then integer masks (not 383k object comparisons
    # per tier at 16,384 GPUs).
    code = {t: k for k, t in enumerate(TIERS)}
    codes = np.fromiter(map(code.get, tiers, repeat(-1)), dtype=np.int64, count=len(tiers))
    for k, t in enumerate(TIERS):
        m = used & (codes == k)
        if m.any():
            u = solved.utilization[m]
            out[t] = {"max": _num(u.max()), "mean": _num(u.mean()), "resources": int(m.sum())}
    return out


def class_counts(routes: Routes) -> dict:
    """Sub-flows per path class (NVL, PIX, …, NET)."""
    codes = routes.class_code[routes.class_code >= 0]
    counts = np.bincount(codes, minlength=len(routes.class_names)) if len(codes) else []
    return {name: int(c) for name, c in zip(routes.class_names, counts)}
