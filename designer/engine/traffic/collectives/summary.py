"""Result fields of a collective pattern (docs/FORMATS.md, Result) and its fallback under failures."""
from __future__ import annotations

from designer.engine.traffic.collectives.common import busbw_factor, group_of
from designer.engine.traffic.collectives.select import Plan, plan_pattern
from designer.engine.errors import InvalidWorkload

__all__ = ["collective_fields", "fallback_fields"]


def collective_fields(plan: Plan, kind: str, completion_s: float | None) -> dict:
    """The result fields of a collective pattern (docs/FORMATS.md, Result): ``algorithm``,
    ``protocol``, ``latency_s``, ``efficiency`` (protocol × NVLS: the data time is divided by it),
    ``size_bytes`` (its ``bytes``: nccl-tests' size S), ``algbw_gbs`` = S / completion (GB/s) and
    ``busbw_gbs`` = algbw × nccl-tests' factor (None unless it completes), ``alternatives`` (the
    chosen one with this run's completion, the others as predicted alone on the topology) and
    ``chosen_by`` (``nccl``, ``plugin`` or ``request``: :mod:`.chooser`)."""
    algbw = plan.size / completion_s / 1e9 if completion_s else None
    alternatives = {a: dict(v) for a, v in plan.alternatives.items()}
    alternatives[plan.algorithm] = {**alternatives.get(plan.algorithm, {}), "time_s": completion_s,
                                    "protocol": plan.protocol, "reason": None}
    return {"algorithm": plan.algorithm, "protocol": plan.protocol, "latency_s": plan.latency_s,
            "efficiency": plan.efficiency,
            "size_bytes": plan.size, "algbw_gbs": algbw,
            "busbw_gbs": algbw * busbw_factor(kind, plan.n) if algbw is not None else None,
            "alternatives": alternatives, "chosen_by": plan.chosen_by}


def fallback_fields(topo, pattern: dict, routing: dict, failed, capacity_gbps) -> dict:
    """What NCCL re-initialized on the failed fabric would run: the plan on the failed topology
    (channels and heads only on the rails whose GPU and NIC are up, see
    :func:`~designer.engine.traffic.collectives.common.live_rails`) with its time predicted alone (s),
    algbw and busbw — or ``algorithm: None`` with the reason when nothing runs — and, across
    hosts, ``rails`` of ``rails_total``: the rails it runs on (the sentence an engineer reads:
    "ring on 7 of 8 rails"). The pattern itself keeps its flows: a running communicator that loses
    a NIC does not complete."""
    rails = _rails(topo, pattern, failed)
    try:
        plan = plan_pattern(topo, pattern, routing, failed=failed, capacity_gbps=capacity_gbps)
    except InvalidWorkload as exc:
        return {"algorithm": None, "protocol": None, "time_s": None, "algbw_gbs": None, "busbw_gbs": None,
                "reason": "; ".join(p.message for p in exc.problems), **rails}
    time_s = plan.alternatives[plan.algorithm]["time_s"]
    fields = collective_fields(plan, pattern["kind"], time_s)
    return {"algorithm": plan.algorithm, "protocol": plan.protocol, "time_s": time_s,
            "algbw_gbs": fields["algbw_gbs"], "busbw_gbs": fields["busbw_gbs"], "reason": None, **rails}


def _rails(topo, pattern: dict, failed) -> dict:
    """``{"rails", "rails_total"}`` of a pattern across hosts (live rails and GPUs per host), or
    ``{}`` on one host, where no rail is involved."""
    group = group_of(topo, pattern, failed)
    if len(group.blocks) < 2:
        return {}
    return {"rails": len(group.rails), "rails_total": min(len(b) for b in group.blocks)}
