"""Diff of two solved states of one scenario (``diff`` in docs/FORMATS.md, Result; docs/ENGINE.md,
"What-if").

:func:`compare` answers "what changed" between a *before* and an *after* outcome of the same
flows (same topology, same workload): flows disconnected (with the reason), flows rerouted (old
and new path, class and host legs, what they now cross), per-pattern completion and throughput
before/after, rate changes, new bottlenecks and the largest utilization shifts, plus the
``impact`` figures a sweep ranks by. It is pure: it reads routes and solver output only, so both
:func:`designer.engine.analysis.simulate.simulate` (a scenario with failures) and the what-if engine's
sweeps use it without depending on each other.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from designer.engine.analysis.completion import pattern_completions
from designer.engine.routing import Routes
from designer.engine.numbers import json_float as _num
from designer.engine.traffic.collectives import collective_fields

__all__ = ["Frame", "Outcome", "compare", "pattern_stats", "echo_failures", "fallback_impact", "fallback_applies"]

# Lists in a diff are capped (counts always cover everything): a host failure in an all-to-all
# disconnects ~16k flows, and a diff is meant to be read.
_MAX_LISTED = 500
_TOP_SHIFTS = 20
_TOP_BOTTLENECKS = 20
_SATURATED = 1e-6
_RATE_RTOL = 1e-9


class Frame:
    """What every outcome of one scenario shares: topology, flows, per-pattern members, tiers."""

    def __init__(self, topo, flows, tiers: list[str]):
        self.topo, self.flows, self.tiers = topo, flows, tiers
        self.members = [np.flatnonzero(flows.pattern == k) for k in range(len(flows.pattern_ids))]


@dataclass
class Outcome:
    """Routes and solved allocation under one failure list; ``affected`` = flows re-routed
    against the failure-free routes (the only ones whose paths can differ)."""

    routes: Routes
    solved: object
    affected: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))



def pattern_stats(w: Frame, st: Outcome) -> dict:
    """Per pattern, as :mod:`designer.engine.analysis.completion` defines it: ``complete``,
    ``completion_s`` (None unless complete), ``throughput_gbps``, ``unroutable``, ``stalled``,
    ``surviving_completion_s`` (over the routed flows) and ``reason``."""
    done = pattern_completions(w.flows, st.routes, st.solved.flow_completion_s, w.members)
    return {pid: c.as_dict() for pid, c in done.items()}


def _bottleneck_set(st: Outcome) -> dict[int, int]:
    b = st.solved.flow_bottleneck
    b = b[b >= 0]
    if len(b) == 0:
        return {}
    counts = np.bincount(b, minlength=len(st.solved.utilization))
    sat = st.solved.utilization >= 1 - _SATURATED
    chosen = np.flatnonzero((counts > 0) & sat)
    return dict(zip(chosen.tolist(), counts[chosen].tolist()))


def _memo(st: Outcome, key: str, compute):
    # The sweep compares every candidate with one base state: compute its figures once.
    cache = st.__dict__.setdefault("_memo", {})
    if key not in cache:
        cache[key] = compute()
    return cache[key]


def _path_changed(a: Routes, b: Routes, f: int) -> bool:
    ca, cb = int(a.count[f]), int(b.count[f])
    if ca != cb:
        return True
    pa, pb = int(a.first[f]), int(b.first[f])
    ra = a.flow_res[a.flow_ptr[pa]:a.flow_ptr[pa + ca]]
    rb = b.flow_res[b.flow_ptr[pb]:b.flow_ptr[pb + cb]]
    return len(ra) != len(rb) or not np.array_equal(ra, rb) or not np.array_equal(
        a.flow_ptr[pa:pa + ca + 1] - a.flow_ptr[pa], b.flow_ptr[pb:pb + cb + 1] - b.flow_ptr[pb])


def compare(w, before, after, *, details: bool) -> dict:
    """The diff of ``after`` against ``before``: summary + impact (+ lists when ``details``)."""
    r0, r1 = before.routes, after.routes
    ok0, ok1 = r0.status == 0, r1.status == 0
    disconnected = np.flatnonzero(ok0 & ~ok1)
    candidates = np.union1d(before.affected, after.affected)
    both = candidates[ok0[candidates] & ok1[candidates]]
    rerouted = np.array([f for f in both.tolist() if _path_changed(r0, r1, f)], dtype=np.int64)
    rate0, rate1 = before.solved.flow_rate_gbps, after.solved.flow_rate_gbps
    live = ok0 & ok1
    with np.errstate(invalid="ignore"):
        slower = live & (rate1 < rate0 * (1 - _RATE_RTOL))
        faster = live & (rate1 > rate0 * (1 + _RATE_RTOL))
    p0, p1 = _memo(before, "patterns", lambda: pattern_stats(w, before)), pattern_stats(w, after)
    b0, b1 = _memo(before, "bottlenecks", lambda: _bottleneck_set(before)), _bottleneck_set(after)
    new_b = sorted((r for r in b1 if r not in b0), key=lambda r: (-b1[r], r))
    util0, util1 = before.solved.utilization, after.solved.utilization
    max0 = float(util0.max()) if len(util0) else 0.0
    max1 = float(util1.max()) if len(util1) else 0.0
    topo = w.topo
    patterns = {}
    for pid in w.flows.pattern_ids:
        lost = p1[pid]["unroutable"] - p0[pid]["unroutable"]
        patterns[pid] = {"completion_s": {"before": _num(p0[pid]["completion_s"]),
                                          "after": _num(p1[pid]["completion_s"])},
                         "throughput_gbps": {"before": _num(p0[pid]["throughput_gbps"]),
                                             "after": _num(p1[pid]["throughput_gbps"])},
                         "disconnected": int(lost), "complete": p1[pid]["complete"],
                         "surviving_completion_s": _num(p1[pid]["surviving_completion_s"]),
                         "reason": p1[pid]["reason"]}
    summary = {"disconnected": int(len(disconnected)), "rerouted": int(len(rerouted)),
               "slower_flows": int(slower.sum()), "faster_flows": int(faster.sum()),
               "patterns": patterns,
               "new_bottlenecks": [topo.resource_id(r) for r in new_b[:5]],
               "new_bottleneck_count": len(new_b),
               "max_utilization": {"before": _num(max0), "after": _num(max1)}}
    diff = {"summary": summary, "impact": _impact(p0, p1, int(len(disconnected)))}
    if details:
        diff.update(_details(w, before, after, disconnected, rerouted, new_b, b1, slower | faster))
    return diff


def _job(p: dict) -> float | None:
    """Job completion: the slowest pattern's, None unless every pattern completes."""
    if not all(v["complete"] for v in p.values()):
        return None
    return max((v["completion_s"] or 0.0 for v in p.values()), default=0.0)


def _impact(p0: dict, p1: dict, disconnected: int) -> dict:
    """What a failure does to the job: the patterns it breaks (complete before, not after), the
    flows it disconnects, and the slowdown of the patterns that still complete (docs/ENGINE.md,
    "Completion, impact and bottlenecks").

    ``slowdown`` (the largest after/before completion ratio over the patterns) is None when
    something broke — a broken collective has no finite slowdown; ``slowdown_of_completing``
    still ranks how the survivors fare. ``completion_unbounded`` says the job completed before
    and does not now.
    """
    broken = [pid for pid in p0 if p0[pid]["complete"] and not p1[pid]["complete"]]
    j0, j1 = _job(p0), _job(p1)
    lost, worst, slowdown = 0.0, None, 1.0
    for pid in p0:
        t0, t1 = p0[pid]["throughput_gbps"], p1[pid]["throughput_gbps"]
        if t0 is not None:
            lost += max(0.0, t0 - (t1 if t1 is not None else 0.0))
        c0, c1 = p0[pid]["completion_s"], p1[pid]["completion_s"]
        if c0 and c1 is not None and c0 > 0:
            ratio = c1 / c0
            if ratio > slowdown * (1 + _RATE_RTOL):
                slowdown, worst = ratio, pid
    increase = j1 - j0 if j0 is not None and j1 is not None else None
    return {"broken": broken, "broken_patterns": len(broken), "disconnected_flows": disconnected,
            "complete": j1 is not None,
            "job_completion_s": {"before": _num(j0), "after": _num(j1)},
            "completion_increase_s": _num(increase),
            "completion_unbounded": j0 is not None and j1 is None,
            "throughput_lost_gbps": _num(lost),
            "slowdown": None if broken else _num(slowdown), "slowdown_of_completing": _num(slowdown),
            "worst_pattern": broken[0] if broken else worst}


# ---------------------------------------------------------------------------------------- details
def _legs(topo, nodes: list[int]) -> dict:
    """Host-side legs of a path: ``src`` (source → its NIC) and ``dst`` (NIC → destination),
    classified like ``nvidia-smi topo -m`` (PIX/PXB/PHB/NODE/SYS, PXN when relayed)."""
    from designer.engine.model.pathclass import classify_path

    fabric = [k for k, n in enumerate(nodes) if topo.node_host[n] is None]
    if not fabric:
        return {}
    out = {}
    if fabric[0] > 1:
        out["src"] = classify_path(topo, nodes[:fabric[0]])
    if fabric[-1] < len(nodes) - 2:
        out["dst"] = classify_path(topo, nodes[fabric[-1] + 1:])
    return out


def _path_links(topo, routes: Routes, p: int) -> list[int]:
    two_l = 2 * topo.num_links
    return [r >> 1 for r in routes.path_resources(p).tolist() if r < two_l]


def _reroute_entry(w: Frame, before: Outcome, after: Outcome, f: int) -> dict:
    topo, flows = w.topo, w.flows
    ids, tiers = topo.node_ids, w.tiers
    r0, r1 = before.routes, after.routes
    p0, p1 = int(r0.first[f]), int(r1.first[f])
    old_nodes, new_nodes = r0.path_nodes(p0), r1.path_nodes(p1)
    old_links = set(_path_links(topo, r0, p0))
    new_only = [l for l in _path_links(topo, r1, p1) if l not in old_links]
    entry = {"flow": flows.flow_id(f), "pattern": flows.pattern_ids[int(flows.pattern[f])],
             "src": ids[int(flows.src[f])], "dst": ids[int(flows.dst[f])],
             "old_path": [ids[n] for n in old_nodes], "new_path": [ids[n] for n in new_nodes],
             "old_class": r0.path_class(f), "new_class": r1.path_class(f),
             "rate_gbps": {"before": _num(before.solved.flow_rate_gbps[f]),
                           "after": _num(after.solved.flow_rate_gbps[f])},
             "now_crosses": [{"link": topo.link_ids[l], "tier": tiers[2 * l]} for l in new_only[:8]]}
    legs0, legs1 = _legs(topo, old_nodes), _legs(topo, new_nodes)
    if legs0 or legs1:
        entry["old_legs"], entry["new_legs"] = legs0, legs1
    entry["change"] = _change_text(entry, legs0, legs1, topo, new_only, tiers)
    if int(r1.count[f]) > 1 or int(r0.count[f]) > 1:
        entry["paths"] = {"before": int(r0.count[f]), "after": int(r1.count[f])}
    return entry


_TIER_WORDS = {"inter-socket": "the inter-socket link", "root-complex": "the CPU root complex",
               "nvlink": "NVLink", "leaf-spine": "a leaf–spine link", "pcie": "PCIe"}


def _change_text(entry, legs0, legs1, topo, new_only, tiers) -> str:
    parts = []
    if entry["old_class"] != entry["new_class"]:
        parts.append(f"{entry['old_class']} → {entry['new_class']}")
    for side, word in (("src", "source side"), ("dst", "destination side")):
        a, b = legs0.get(side), legs1.get(side)
        if a != b and (a or b):
            parts.append(f"{word} {a} → {b}")
    new_tiers = [t for t in dict.fromkeys(tiers[2 * l] for l in new_only) if t in _TIER_WORDS]
    text = "; ".join(parts) or "same class, different elements"
    if new_tiers:
        text += " because traffic now crosses " + ", ".join(_TIER_WORDS[t] for t in new_tiers)
    return text


def _details(w: Frame, before: Outcome, after: Outcome, disconnected, rerouted, new_b, b1, moved) -> dict:
    topo, flows = w.topo, w.flows
    ids, tiers = topo.node_ids, w.tiers
    r0, r1 = before.routes, after.routes
    lost = []
    for f in disconnected[:_MAX_LISTED].tolist():
        lost.append({"flow": flows.flow_id(f), "pattern": flows.pattern_ids[int(flows.pattern[f])],
                     "src": ids[int(flows.src[f])], "dst": ids[int(flows.dst[f])], "reason": r1.reason(f),
                     **({"failed_nic": r1.failed_nic(f)} if r1.failed_nic(f) else {}),
                     "old_path": [ids[n] for n in r0.path_nodes(int(r0.first[f]))],
                     "old_class": r0.path_class(f)})
    moved_list = [_reroute_entry(w, before, after, f) for f in rerouted[:_MAX_LISTED].tolist()]
    util0, util1 = before.solved.utilization, after.solved.utilization
    shift = util1 - util0
    order = [int(r) for r in np.argsort(-np.abs(shift), kind="stable")[:_TOP_SHIFTS] if abs(shift[r]) > 1e-9]
    rates = _rate_changes(w, before, after, moved)
    return {
        "disconnected": lost, "rerouted": moved_list, "rate_changes": rates,
        "new_bottlenecks": [{"id": topo.resource_id(r), "tier": tiers[r], "flows": int(b1[r]),
                             "utilization": _num(util1[r])} for r in new_b[:_TOP_BOTTLENECKS]],
        "utilization_shifts": [{"id": topo.resource_id(r), "tier": tiers[r], "before": _num(util0[r]),
                                "after": _num(util1[r]), "change": _num(shift[r])} for r in order],
        "truncated": {"disconnected": max(0, len(disconnected) - _MAX_LISTED),
                      "rerouted": max(0, len(rerouted) - _MAX_LISTED)},
    }


def _rate_changes(w: Frame, before: Outcome, after: Outcome, moved: np.ndarray) -> list[dict]:
    """The flows whose rate changed most (relative), largest drop first."""
    idx = np.flatnonzero(moved)
    if len(idx) == 0:
        return []
    r0, r1 = before.solved.flow_rate_gbps[idx], after.solved.flow_rate_gbps[idx]
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(r0 > 0, (r1 - r0) / r0, 0.0)
    top = idx[np.argsort(rel, kind="stable")[:_TOP_SHIFTS]]
    return [{"flow": w.flows.flow_id(f), "before": _num(before.solved.flow_rate_gbps[f]),
             "after": _num(after.solved.flow_rate_gbps[f])} for f in top.tolist()]


def echo_failures(entries: list) -> list[dict]:
    """Failures as a result shows them: target, mode, factor (degrade only), label."""
    return [{"target": f["target"], "mode": f["mode"], **({"factor": f["factor"]} if f["mode"] == "degrade" else {}),
             "label": f["label"]} for f in entries]


# ------------------------------------------------------------------------------ NCCL's fallback
_NO_FALLBACK = "not a collective: nothing re-plans its lost flows"


def fallback_applies(topo, failed) -> bool:
    """Whether ``impact.fallback`` is computed for this failure set: NICs down, nothing else
    (links and other nodes aside; degradations allowed). The question it answers is "what does
    the job lose when that NIC dies"; re-planning a 1,024-GPU collective for every PCIe switch of
    a sweep would cost ~0.2 s each (docs/PERFORMANCE.md), so other failures keep their verdict."""
    return (failed is not None and bool(failed.nodes) and not failed.links
            and all(topo.node_kind[n] == "nic" for n in failed.nodes))


def fallback_impact(patterns: dict, flows, kinds: list[str], fallback_of) -> dict | None:
    """``impact.fallback``: what the job runs at once NCCL, re-initialized without the failed
    elements, falls back to, for a failure that breaks collectives — what the job really loses,
    where "does not complete" is the same verdict for every NIC of a rail-optimized pod. None
    when nothing broke.

    Parameters
    ----------
    patterns : dict
        A diff's ``summary.patterns`` (completion and throughput before/after, ``complete``).
    flows : Flows
        The scenario's flows (``pattern_plans``: the plans chosen on the failure-free topology).
    kinds : list of str
        Pattern kinds, in pattern order.
    fallback_of : callable
        ``fallback_of(k)`` → :func:`designer.engine.traffic.collectives.fallback_fields` of
        pattern ``k`` on the failed topology, or None for a pattern that is not a collective.

    Returns
    -------
    dict or None
        ``patterns`` ({pattern: ``algorithm``, ``protocol``, ``completion_s``, ``busbw_gbs``,
        ``busbw_before_gbs``, ``reason``}), ``job_completion_s`` (s; None when a broken pattern
        has nothing to fall back to), ``completion_increase_s``, ``slowdown`` (job after /
        before), ``throughput_lost_gbps`` (Gb/s) and ``unbounded``. A broken collective's time
        after the fallback is its time before scaled by the plans' predicted times alone
        (fallback / chosen), so contention with other patterns stays as it was; its busbw
        scales inversely (the same bytes).
    """
    broken = [p for p, v in patterns.items() if v["complete"] is False and v["completion_s"]["before"] is not None]
    if not broken:
        return None
    out = {}
    for k, pid in enumerate(flows.pattern_ids):
        if pid in broken:
            plan0 = flows.pattern_plans[k] if flows.pattern_plans else None
            fb = fallback_of(k) if plan0 is not None else None
            out[pid] = _pattern_fallback(plan0, kinds[k], patterns[pid]["completion_s"]["before"], fb)
    return _job_fallback(patterns, out)


def _pattern_fallback(plan0, kind: str, before: float, fb: dict | None) -> dict:
    """One broken pattern's fallback (see :func:`fallback_impact`)."""
    if plan0 is None or fb is None:
        return {"algorithm": None, "protocol": None, "completion_s": None, "busbw_gbs": None,
                "busbw_before_gbs": None, "reason": _NO_FALLBACK}
    alone0 = plan0.alternatives[plan0.algorithm]["time_s"]
    after = before * fb["time_s"] / alone0 if fb["time_s"] and alone0 else None
    busbw0 = collective_fields(plan0, kind, before)["busbw_gbs"]
    return {"algorithm": fb["algorithm"], "protocol": fb["protocol"], "completion_s": _num(after),
            "busbw_gbs": _num(busbw0 * before / after) if after and busbw0 else None,
            "busbw_before_gbs": _num(busbw0), "reason": fb["reason"],
            **{key: fb[key] for key in ("rails", "rails_total") if key in fb}}


def _job_fallback(patterns: dict, fallback: dict) -> dict:
    """The job-level numbers of :func:`fallback_impact` from the per-pattern fallbacks."""
    unbounded = any(f["completion_s"] is None for f in fallback.values())
    before = max((v["completion_s"]["before"] or 0.0 for v in patterns.values()), default=0.0)
    after, lost = 0.0, 0.0
    for pid, v in patterns.items():
        t0, c0 = v["throughput_gbps"]["before"] or 0.0, v["completion_s"]["before"]
        c1 = fallback[pid]["completion_s"] if pid in fallback else v["completion_s"]["after"]
        if c1 is None:
            lost += t0
            continue
        after = max(after, c1)
        if pid in fallback:     # the same bytes in c1 instead of c0: the rate falls by c0 / c1
            lost += max(0.0, t0 - t0 * c0 / c1)
        else:
            lost += max(0.0, t0 - (v["throughput_gbps"]["after"] or 0.0))
    job = None if unbounded else after
    return {"patterns": fallback, "job_completion_s": _num(job),
            "completion_increase_s": _num(job - before) if job is not None else None,
            "slowdown": _num(job / before) if job is not None and before > 0 else None,
            "throughput_lost_gbps": _num(lost), "unbounded": unbounded}
