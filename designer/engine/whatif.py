"""What-if engine: failure diffs, N-1 sweeps, chunk merging and NIC-policy comparison (DESIGN.md §2.6).

Entry points
------------
- :func:`simulate_with_diff` — a scenario with ``failures`` → its ``fabricscope.result/1`` with
  ``diff`` filled against the same scenario without failures (disconnected flows with their
  reason, rerouted flows with old/new path and class, per-pattern completion before/after,
  new bottlenecks, largest utilization shifts).
- :func:`sweep_candidates` / :func:`sweep` / :func:`merge_sweeps` — every single failure of a
  class (``nic``, ``pcie_switch``, ``leaf-spine``, …) ranked by impact (``fabricscope.sweep/1``),
  optionally in chunks whose merge equals the unchunked sweep.
- :func:`compare_policies` — the same scenario under several NIC policies, with and without its
  failures (``fabricscope.compare/1``): would unified intra/inter-host routing have saved the job?

Failure semantics (decided here, documented for users)
------------------------------------------------------
- **Stable re-routing.** Flows whose paths avoid every failed element keep their paths; only
  flows that crossed a failed element are routed again (with :func:`~designer.engine.routing.route`
  on the failed topology). This is what resilient ECMP hashing in switches and NCCL's fixed
  channel/NIC bindings do: a failure does not re-shuffle healthy flows. It is also what makes
  sweeps cheap. Degradations never move a flow (routing ignores capacity).
- **Dead endpoints.** Flows from or to a node that is down (a dead host's GPUs) are
  *disconnected*, with the reason; a pattern's ``completion_s`` after the failure covers its
  surviving flows, and its diff entry says ``complete: false`` with the number of flows lost —
  the collective as specified cannot finish, and what is left shows how the rest fares.
- **Ranking.** Most harmful first: more disconnected flows, then the larger increase of the job
  completion time (the slowest pattern), then more throughput lost, then the larger per-pattern
  slowdown; ties keep candidate order.

Why sweeps are fast, and why it is exact
----------------------------------------
The baseline is routed and solved once, and a resource→paths index (CSC of the routes) is built.
Per candidate failure:

1. *Untouched elements* (no baseline path crosses them, no degraded resource carries load) give
   exactly the baseline: same paths, same capacities on every used resource, hence the same
   max-min allocation. They are not solved.
2. *Affected flows* — those whose baseline paths cross a failed resource — are the only ones
   re-routed (stable semantics above, so this is the definition, not an approximation). Their
   routing context is *derived* from the baseline one: only the hosts holding a failed element
   get a new intra-host shape (shared by every host with the same local failure, so the segment
   and NIC tables of "nic3 down" are built once for all 128 hosts), and fabric distance tables
   are rebuilt only when a fabric element fails. Tests check the derived routes equal routing
   from scratch.
3. The max-min allocation is global (a failure can change rates anywhere in the component of
   shared resources), so the whole problem is re-solved with the compiled solver, warm in the
   sense that nothing but the merged CSR arrays changes. On a 1,024-GPU ring all-reduce this is
   ~3 ms, cheaper than tracking components.
"""
from __future__ import annotations

import copy
import dataclasses
import math
import time
from dataclasses import dataclass

import numpy as np

from designer.engine import routing as _routing
from designer.engine.errors import InvalidScenario, Problem
from designer.engine.failures import failed_resources, failure_label, normalize_failures
from designer.engine.routing import FailureSet, Routes, route
from designer.engine.scenario import Scenario, normalize_scenario
from designer.engine.simulate import Prepared, Solved, build_result, prepare, resource_tiers, solve_prepared

__all__ = ["SWEEP_FORMAT", "COMPARE_FORMAT", "SWEEP_CLASSES", "simulate_with_diff", "diff_results",
           "sweep_candidates", "sweep", "merge_sweeps", "compare_policies", "ranking_key"]

SWEEP_FORMAT = "fabricscope.sweep/1"
COMPARE_FORMAT = "fabricscope.compare/1"
SWEEP_CLASSES = ("nic", "pcie_switch", "nvswitch", "gpu", "cpu", "leaf-spine", "nic-leaf", "spine-core",
                 "host", "switch", "leaf", "spine")
# Lists in a diff are capped (counts always cover everything): a host failure in an all-to-all
# disconnects ~16k flows, and a diff is meant to be read.
_MAX_LISTED = 500
_TOP_SHIFTS = 20
_TOP_BOTTLENECKS = 20
_SATURATED = 1e-6
_RATE_RTOL = 1e-9
# Attributes of routing's per-failure-set context that the derivation knows how to patch; if
# routing.py changes them, sweeps fall back to routing every failure from scratch (same result).
_CTX_FIELDS = frozenset({
    "topo", "failed", "node_failed", "link_failed", "hosts", "node_hidx", "forwarder", "forwarders",
    "forwarder_rank", "wired", "up_ptr", "up_link", "up_sw", "shapes", "host_shape", "node_local",
    "host_res_base", "host_node_base", "host_res_flat", "host_node_flat", "rails", "fabric_dist",
    "pair_paths", "next_hops", "fab_adj"})


def _progress(progress, fraction: float, message: str) -> None:
    if progress is not None:
        progress(float(min(max(fraction, 0.0), 1.0)), message)


def _num(x) -> float | None:
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


# ======================================================================================== states
@dataclass
class _State:
    """Routes, capacities and the solved allocation under one failure list."""

    entries: list
    failed: FailureSet
    capacity: np.ndarray
    routes: Routes
    solved: Solved
    affected: np.ndarray     # flow indices re-routed against the nominal routes
    prep: Prepared


def _split_scenario(scenario, topology_loader) -> tuple[Scenario, list]:
    """The scenario without failures (normalized) and its raw failures list."""
    if isinstance(scenario, Scenario):
        raw = [{k: f[k] for k in ("target", "mode", "factor") if f.get(k) is not None} for f in scenario.failures]
        return dataclasses.replace(scenario, failures=[]), raw
    if not isinstance(scenario, dict):
        raise InvalidScenario("a scenario must be a JSON object", [Problem("", "not an object")])
    rest = {k: v for k, v in scenario.items() if k != "failures"}
    # Failures are resolved here (link selectors, located messages), not by normalize_scenario.
    return normalize_scenario(rest, topology_loader=topology_loader), scenario.get("failures") or []


class _Rerouter:
    """Routes subsets of flows under a failure set that contains ``base``'s, reusing its context."""

    def __init__(self, topo, routing: dict, base: FailureSet, derive: bool):
        self.topo, self.routing, self.base = topo, dict(routing), base
        self.derive = derive and hasattr(_routing, "_context") and hasattr(_routing, "_Router")
        self.shape_cache: dict = {}
        self.base_ctx = None
        if self.derive:
            self.base_ctx = _routing._context(topo, base)
            self.derive = set(vars(self.base_ctx)) == _CTX_FIELDS

    def route(self, flows, failed: FailureSet) -> Routes:
        if self.derive and failed.nodes >= self.base.nodes and failed.links >= self.base.links:
            try:
                ctx = self._derived(failed)
                r = self.routing
                return _routing._Router(ctx, flows, r["nic_policy"], r["multipath"], int(r["seed"])).run()
            except (AttributeError, TypeError):  # routing.py internals changed: exact slow path
                self.derive = False
        return route(self.topo, flows, failed=failed, **self.routing)

    # ------------------------------------------------------------------ context derivation
    def _derived(self, failed: FailureSet):
        base, topo = self.base_ctx, self.topo
        ctx = object.__new__(type(base))
        ctx.__dict__.update(base.__dict__)
        ctx.failed = failed
        extra_nodes = sorted(failed.nodes - base.failed.nodes)
        extra_links = sorted(failed.links - base.failed.links)
        ctx.node_failed = base.node_failed.copy()
        ctx.node_failed[extra_nodes] = True
        ctx.link_failed = base.link_failed.copy()
        ctx.link_failed[extra_links] = True
        fabric_nodes = [n for n in extra_nodes if topo.node_host[n] is None]
        fwd = base.forwarder
        if fabric_nodes:
            ctx.forwarder = fwd.copy()
            ctx.forwarder[fabric_nodes] = False
            ctx.forwarders = np.flatnonzero(ctx.forwarder).astype(np.int64)
            ctx.forwarder_rank = np.full(topo.num_nodes, -1, dtype=np.int64)
            ctx.forwarder_rank[ctx.forwarders] = np.arange(len(ctx.forwarders))
        fabric_side = np.array([topo.node_host[i] is None and topo.node_kind[i] not in _routing.ENDPOINT_KINDS
                                for i in range(topo.num_nodes)]) if (extra_links or fabric_nodes) else None
        ends = [(int(topo.link_a[l]), int(topo.link_b[l])) for l in extra_links]
        uplinks_changed = bool(fabric_nodes) or any(fabric_side[a] != fabric_side[b] for a, b in ends)
        fabric_changed = bool(fabric_nodes) or any(fabric_side[a] and fabric_side[b] for a, b in ends)
        if uplinks_changed:
            ctx._build_uplinks()
        if fabric_changed:
            ctx.fab_adj = ctx._fabric_adjacency()
            ctx.fabric_dist, ctx.pair_paths, ctx.next_hops = {}, {}, {}
        hosts = {int(base.node_hidx[n]) for n in extra_nodes} | {int(base.node_hidx[x]) for e in ends for x in e}
        if uplinks_changed:
            gw_old = np.diff(base.up_ptr) > 0
            gw_new = np.diff(ctx.up_ptr) > 0
            hosts |= set(base.node_hidx[np.flatnonzero(gw_old != gw_new)].tolist())
        hosts.discard(-1)
        if hosts:
            self._reshape(ctx, sorted(hosts))
        return ctx

    def _reshape(self, ctx, hosts: list[int]) -> None:
        """Give each affected host the shape its failures make (shared across candidates)."""
        base, topo = self.base_ctx, self.topo
        ctx.shapes = list(base.shapes)
        ctx.host_shape = base.host_shape.copy()
        position = {id(s): k for k, s in enumerate(ctx.shapes)}
        for hi in hosts:
            rep = base.shapes[int(base.host_shape[hi])]
            nb, rb = int(base.host_node_base[hi]), int(base.host_res_base[hi])
            nodes = base.host_node_flat[nb:nb + rep.n].tolist()
            links = (base.host_res_flat[rb:rb + 2 * rep.nl:2] // 2).tolist()
            local = {g: k for k, g in enumerate(nodes)}
            gateways = [bool(ctx.up_ptr[g + 1] > ctx.up_ptr[g]) for g in nodes]
            wired = [bool(ctx.wired[g]) for g in nodes]
            failed_nodes = {local[g] for g in nodes if ctx.node_failed[g]}
            failed_links = {k for k, l in enumerate(links) if ctx.link_failed[l]}
            sig = ctx._signature(nodes, links, local, gateways, wired, failed_nodes, failed_links)
            shape = self.shape_cache.get(sig)
            if shape is None:
                shape = self.shape_cache[sig] = _routing._Shape(topo, nodes, links, gateways, failed_nodes,
                                                                failed_links, wired)
            if id(shape) not in position:
                position[id(shape)] = len(ctx.shapes)
                ctx.shapes.append(shape)
            ctx.host_shape[hi] = position[id(shape)]


class _WhatIf:
    """A scenario's nominal (no-failure) routes and allocation, and states derived from them."""

    def __init__(self, sc: Scenario, *, derive: bool = False, base_entries: list | None = None):
        self.sc = sc
        self.prep0 = prepare(sc, failures=[])
        self.topo, self.flows = self.prep0.topology, self.prep0.flows
        self.routes0 = self.prep0.routes
        self.capacity0 = self.topo.resource_capacity_gbps()
        self.members = [np.flatnonzero(self.flows.pattern == k) for k in range(len(self.flows.pattern_ids))]
        self._index_resources()
        self.nominal = self._make_state([], FailureSet(), self.capacity0, self.routes0, np.zeros(0, np.int64))
        self.base_entries = list(base_entries or [])
        base_failed, _ = _combine(self.topo, self.base_entries)
        self.rerouter = _Rerouter(self.topo, sc.routing, base_failed, derive)

    def _index_resources(self) -> None:
        r = self.routes0
        R = self.topo.num_resources
        counts = np.bincount(r.flow_res, minlength=R) if len(r.flow_res) else np.zeros(R, np.int64)
        self.res_ptr = np.zeros(R + 1, dtype=np.int64)
        np.cumsum(counts, out=self.res_ptr[1:])
        entry_path = np.repeat(np.arange(r.num_paths, dtype=np.int64), np.diff(r.flow_ptr))
        self.res_paths = entry_path[np.argsort(r.flow_res, kind="stable")]
        self.res_used = counts > 0

    def touching(self, resources: np.ndarray) -> np.ndarray:
        """Flows (sorted) whose nominal paths cross any of ``resources``."""
        if len(resources) == 0:
            return np.zeros(0, dtype=np.int64)
        starts, ends = self.res_ptr[resources], self.res_ptr[resources + 1]
        lens = ends - starts
        total = int(lens.sum())
        if total == 0:
            return np.zeros(0, dtype=np.int64)
        pos = np.arange(total, dtype=np.int64) + np.repeat(starts - (np.cumsum(lens) - lens), lens)
        return np.unique(self.routes0.owner[self.res_paths[pos]])

    def state(self, entries: list) -> _State:
        failed, mult = _combine(self.topo, entries)
        capacity = self.capacity0 * mult
        if not failed.nodes and not failed.links:
            return self._make_state(entries, failed, capacity, self.routes0, np.zeros(0, np.int64))
        affected = self.touching(failed_resources(self.topo, failed))
        routes = self.routes0
        if len(affected):
            sub = self.rerouter.route(self.flows.take(affected), failed)
            routes = _merge_routes(self.routes0, sub, affected)
        return self._make_state(entries, failed, capacity, routes, affected)

    def unchanged(self, cand: dict, base: _State) -> bool:
        """True when adding ``cand`` to ``base``'s failures provably leaves ``base`` as it is.

        A ``down`` candidate qualifies only on a failure-free base whose paths avoid it (with
        other elements already down, removing one more can still change an ECMP choice); a
        ``degrade`` qualifies when no path of ``base`` crosses what it slows.
        """
        failed, mult = _combine(self.topo, [cand])
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

    def _make_state(self, entries, failed, capacity, routes, affected) -> _State:
        prep = Prepared(self.sc, self.topo, self.flows, routes, capacity, failed)
        solved = solve_prepared(prep)
        return _State(entries, failed, capacity, routes, solved, affected, prep)


def _combine(topo, entries: list) -> tuple[FailureSet, np.ndarray]:
    """FailureSet and capacity multipliers of already normalized entries (no re-resolving)."""
    from designer.engine.failures import _degraded_resources

    nodes, links = set(), set()
    mult = np.ones(topo.num_resources, dtype=np.float64)
    for f in entries:
        if f["mode"] == "down":
            nodes.update(f["nodes"])
            links.update(f["links"])
        else:
            mult[_degraded_resources(topo, f["nodes"], f["links"])] *= f["factor"]
    return FailureSet(frozenset(nodes), frozenset(links)), mult


def _merge_routes(base: Routes, sub: Routes, idx: np.ndarray) -> Routes:
    """``base`` with the flows ``idx`` (sorted) replaced by ``sub`` (routed for exactly those)."""
    n = base.num_flows
    in_sub = np.zeros(n, dtype=bool)
    in_sub[idx] = True
    pos = np.full(n, -1, dtype=np.int64)
    pos[idx] = np.arange(len(idx))
    count = base.count.copy()
    count[idx] = sub.count
    first = np.zeros(n, dtype=np.int64)
    np.cumsum(count[:-1], out=first[1:])
    total = int(count.sum())
    owner = np.repeat(np.arange(n, dtype=np.int64), count)
    k = np.arange(total, dtype=np.int64) - first[owner]
    use_sub = in_sub[owner]
    src_path = base.first[owner] + k
    if use_sub.any():
        src_path[use_sub] = sub.first[pos[owner[use_sub]]] + k[use_sub] + base.num_paths
    pool_ptr = np.concatenate([base.flow_ptr[:-1], sub.flow_ptr + len(base.flow_res)])
    pool_res = np.concatenate([base.flow_res, sub.flow_res])
    pool_share = np.concatenate([base.share, sub.share])
    starts = pool_ptr[src_path]
    lens = pool_ptr[src_path + 1] - starts
    flow_ptr = np.zeros(total + 1, dtype=np.int64)
    np.cumsum(lens, out=flow_ptr[1:])
    gather = np.arange(int(flow_ptr[-1]), dtype=np.int64) + np.repeat(starts - flow_ptr[:-1], lens)
    names = list(base.class_names)
    remap = np.array([names.index(c) if c in names else names.append(c) or len(names) - 1
                      for c in sub.class_names] + [-1], dtype=np.int16)
    class_code = base.class_code.copy()
    class_code[idx] = remap[sub.class_code]   # code -1 → the trailing -1
    status = base.status.copy()
    status[idx] = sub.status
    subject = base._subject.copy() if base._subject is not None else np.full(n, -1, dtype=np.int64)
    if sub._subject is not None:
        subject[idx] = sub._subject
    return Routes(base.topo, flow_ptr, pool_res[gather], owner, pool_share[src_path], base.src, first, count,
                  status, class_code, names, base.nic_policy, subject)


# ======================================================================================== diff
def _pattern_stats(w: _WhatIf, st: _State) -> dict:
    """Per pattern: completion (s, over routable flows), throughput (Gb/s), flows lost."""
    out = {}
    ok = st.routes.status == 0
    completion = st.solved.flow_completion_s
    for k, pid in enumerate(w.flows.pattern_ids):
        mine = w.members[k]
        good = mine[ok[mine]]
        entry = {"completion_s": None, "throughput_gbps": None, "unroutable": int(len(mine) - len(good))}
        if len(good):
            times = completion[good]
            slowest = float(times[np.argmax(np.where(np.isnan(times), -1, times))])
            entry["completion_s"] = slowest
            if slowest > 0 and math.isfinite(slowest):
                entry["throughput_gbps"] = float(w.flows.bytes[good].sum()) * 8 / 1e9 / slowest
        out[pid] = entry
    return out


def _bottleneck_set(st: _State) -> dict[int, int]:
    b = st.solved.flow_bottleneck
    b = b[b >= 0]
    if len(b) == 0:
        return {}
    counts = np.bincount(b, minlength=len(st.solved.utilization))
    sat = st.solved.utilization >= 1 - _SATURATED
    chosen = np.flatnonzero((counts > 0) & sat)
    return dict(zip(chosen.tolist(), counts[chosen].tolist()))


def _memo(st: _State, key: str, compute):
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


def _compare(w: _WhatIf, before: _State, after: _State, *, details: bool) -> dict:
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
    p0, p1 = _memo(before, "patterns", lambda: _pattern_stats(w, before)), _pattern_stats(w, after)
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
                         "disconnected": int(lost), "complete": p1[pid]["unroutable"] == 0}
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


def _impact(p0: dict, p1: dict, disconnected: int) -> dict:
    def job(p):
        times = [v["completion_s"] for v in p.values() if v["completion_s"] is not None]
        return max(times) if times else None

    j0, j1 = job(p0), job(p1)
    increase = (j1 - j0) if j0 is not None and j1 is not None else (math.inf if j0 is not None else 0.0)
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
    return {"disconnected_flows": disconnected,
            "job_completion_s": {"before": _num(j0), "after": _num(j1)},
            "completion_increase_s": _num(increase) if math.isfinite(increase) else None,
            "completion_unbounded": not math.isfinite(increase),
            "throughput_lost_gbps": _num(lost), "slowdown": _num(slowdown), "worst_pattern": worst}


def ranking_key(entry: dict) -> tuple:
    """Sort key of a sweep ranking entry: most harmful first, ties in candidate order."""
    imp = entry["impact"]
    inc = math.inf if imp.get("completion_unbounded") else (imp["completion_increase_s"] or 0.0)
    return (-imp["disconnected_flows"], -inc, -(imp["throughput_lost_gbps"] or 0.0),
            -(imp["slowdown"] or 1.0), entry["index"])


# ---------------------------------------------------------------------------------------- details
def _legs(topo, nodes: list[int]) -> dict:
    """Host-side legs of a path: ``src`` (source → its NIC) and ``dst`` (NIC → destination),
    classified like ``nvidia-smi topo -m`` (PIX/PXB/PHB/NODE/SYS, PXN when relayed)."""
    from designer.engine.pathclass import classify_path

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


def _reroute_entry(w: _WhatIf, before: _State, after: _State, f: int) -> dict:
    topo, flows = w.topo, w.flows
    ids, tiers = topo.node_ids, resource_tiers(topo)
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


def _details(w: _WhatIf, before: _State, after: _State, disconnected, rerouted, new_b, b1, moved) -> dict:
    topo, flows = w.topo, w.flows
    ids, tiers = topo.node_ids, resource_tiers(topo)
    r0, r1 = before.routes, after.routes
    lost = []
    for f in disconnected[:_MAX_LISTED].tolist():
        lost.append({"flow": flows.flow_id(f), "pattern": flows.pattern_ids[int(flows.pattern[f])],
                     "src": ids[int(flows.src[f])], "dst": ids[int(flows.dst[f])], "reason": r1.reason(f),
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


def _rate_changes(w: _WhatIf, before: _State, after: _State, moved: np.ndarray) -> list[dict]:
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


def _echo(entries: list) -> list[dict]:
    return [{"target": f["target"], "mode": f["mode"], **({"factor": f["factor"]} if f["mode"] == "degrade" else {}),
             "label": f["label"]} for f in entries]


# ======================================================================================== simulate
def simulate_with_diff(scenario, progress=None, *, topology_loader=None) -> dict:
    """Run a scenario and, when it has failures, diff it against the same scenario without them.

    Parameters
    ----------
    scenario : dict or Scenario
        A ``fabricscope.scenario/1`` document; ``failures`` as in :mod:`designer.engine.failures`.
    progress : callable, optional
        ``progress(fraction, message)``.
    topology_loader : callable, optional
        Resolves a topology given by reference (see ``normalize_scenario``).

    Returns
    -------
    dict
        The ``fabricscope.result/1`` document of the failed scenario (flows, resources and
        summary after the failures) with ``diff``: ``summary`` (counts, per-pattern completion
        and throughput before/after), ``impact`` (as in sweeps), ``disconnected`` (flow, reason,
        old path), ``rerouted`` (old/new path, class and host legs, what it now crosses),
        ``rate_changes``, ``new_bottlenecks``, ``utilization_shifts``. ``diff`` is None without
        failures.

    Raises
    ------
    InvalidScenario
        Among others ``failures[1].target: unknown node or link "h9/nic0"``.
    """
    t0 = time.perf_counter()
    _progress(progress, 0.0, "validating scenario")
    sc, raw_failures = _split_scenario(scenario, topology_loader)
    entries = normalize_failures(sc.topology, raw_failures)
    _progress(progress, 0.1, "routing and solving the baseline")
    w = _WhatIf(sc)
    after = w.nominal
    if entries:
        _progress(progress, 0.5, f"applying {len(entries)} failure(s)")
        after = w.state(entries)
    t1 = time.perf_counter()
    result = build_result(after.prep, after.solved)
    result["scenario"]["failures"] = _echo(entries)
    if entries:
        _progress(progress, 0.9, "computing the diff")
        result["diff"] = {"against": "the same scenario without failures", "failures": _echo(entries),
                          **_compare(w, w.nominal, after, details=True)}
    result["timings_s"] = {**w.prep0.timings_s, "whatif": t1 - t0, "summarize": time.perf_counter() - t1}
    _progress(progress, 1.0, "done")
    return result


def diff_results(scenario, failures: list, *, topology_loader=None) -> dict:
    """Only the ``diff`` of ``scenario`` with ``failures`` added (no result document)."""
    sc, own = _split_scenario(scenario, topology_loader)
    w = _WhatIf(sc)
    entries = normalize_failures(sc.topology, list(own) + list(failures))
    return _compare(w, w.nominal, w.state(entries), details=True)


# ======================================================================================== sweeps
def sweep_candidates(scenario, over, *, degrade: float | None = None, topology_loader=None) -> list[dict]:
    """Every single failure of the chosen classes, in topology order.

    Parameters
    ----------
    scenario : dict or Scenario or Topology
    over : str or list of str
        Classes from :data:`SWEEP_CLASSES`: node kinds ``nic``, ``pcie_switch``, ``nvswitch``,
        ``gpu``, ``cpu``, ``switch``; switch roles ``leaf``, ``spine``; link tiers ``leaf-spine``,
        ``nic-leaf``, ``spine-core``; ``host`` (whole host groups). A comma-separated string works.
    degrade : float, optional
        When given, each candidate is ``{"mode": "degrade", "factor": degrade}`` instead of down.

    Returns
    -------
    list of dict
        ``{"target": id, "mode": ...}`` failure dicts (no duplicates).

    Raises
    ------
    InvalidScenario
        Unknown class (located at ``over[k]``) or bad factor.
    """
    from designer.engine.topology import Topology

    topo = scenario if isinstance(scenario, Topology) else _split_scenario(scenario, topology_loader)[0].topology
    classes = [c.strip() for c in over.split(",")] if isinstance(over, str) else list(over or [])
    bad = [Problem(f"over[{k}]", f"unknown class {c!r} (choose from {', '.join(SWEEP_CLASSES)})")
           for k, c in enumerate(classes) if c not in SWEEP_CLASSES]
    if not classes:
        bad.append(Problem("over", "choose at least one class"))
    if degrade is not None and (not isinstance(degrade, (int, float)) or isinstance(degrade, bool)
                                or not 0 < degrade <= 1):
        bad.append(Problem("degrade", "factor must be in (0, 1]"))
    if bad:
        raise InvalidScenario("bad sweep", bad)
    targets = list(dict.fromkeys(t for c in classes for t in _class_targets(topo, c)))
    if degrade is None:
        return [{"target": t, "mode": "down"} for t in targets]
    return [{"target": t, "mode": "degrade", "factor": float(degrade)} for t in targets]


def _class_targets(topo, cls: str) -> list[str]:
    if cls == "host":
        return topo.hosts()
    if cls in ("leaf", "spine"):
        roles = ("leaf", "tor") if cls == "leaf" else ("spine",)
        return [topo.node_ids[i] for i in topo.nodes_of_kind("switch") if topo.node_role[i] in roles]
    if cls in ("leaf-spine", "nic-leaf", "spine-core"):
        tiers = resource_tiers(topo)
        return [topo.link_ids[l] for l in range(topo.num_links) if tiers[2 * l] == cls]
    return [topo.node_ids[i] for i in topo.nodes_of_kind(cls)]


def _parse_chunk(chunk, total: int) -> tuple[int, int, int, int] | None:
    if chunk is None:
        return None
    if isinstance(chunk, str):
        try:
            i, n = (int(x) for x in chunk.split("/"))
        except ValueError:
            raise InvalidScenario("bad chunk", [Problem("chunk", f"expected i/n like 0/4, got {chunk!r}")]) from None
    else:
        i, n = chunk
    if not (isinstance(n, int) and isinstance(i, int) and n >= 1 and 0 <= i < n):
        raise InvalidScenario("bad chunk", [Problem("chunk", f"need 0 <= i < n, got {i}/{n}")])
    return i, n, i * total // n, (i + 1) * total // n


def _summary(w: _WhatIf, st: _State) -> dict:
    p = _pattern_stats(w, st)
    times = [v["completion_s"] for v in p.values() if v["completion_s"] is not None]
    util = st.solved.utilization
    return {"patterns": {k: {"completion_s": _num(v["completion_s"]), "throughput_gbps": _num(v["throughput_gbps"]),
                             "unroutable": v["unroutable"]} for k, v in p.items()},
            "job_completion_s": _num(max(times)) if times else None,
            "max_utilization": _num(util.max()) if len(util) else 0.0,
            "flows_total": len(w.flows), "unroutable": int((st.routes.status != 0).sum()),
            "classes": {name: int(c) for name, c in zip(
                st.routes.class_names, np.bincount(st.routes.class_code[st.routes.class_code >= 0],
                                                   minlength=len(st.routes.class_names)).tolist())}}


def sweep(scenario, *, over=None, failures: list | None = None, degrade: float | None = None, chunk=None,
          progress=None, topology_loader=None, derive: bool = True) -> dict:
    """Rank single failures by impact (``fabricscope.sweep/1``).

    Each candidate is added to the scenario's own failures (if any), and compared with the
    scenario as given: "what is the next failure that hurts most?".

    Parameters
    ----------
    scenario : dict or Scenario
    over : str or list of str, optional
        Failure classes (see :func:`sweep_candidates`).
    failures : list of dict, optional
        Explicit candidates (``{"target", "mode", "factor"}``), evaluated after ``over``'s.
    degrade : float, optional
        Degrade the ``over`` candidates by this factor instead of taking them down.
    chunk : (int, int) or "i/n", optional
        Evaluate only the i-th of n contiguous blocks of candidates (0 <= i < n);
        :func:`merge_sweeps` of all n parts equals the unchunked sweep.
    progress : callable, optional
        ``progress(fraction, message)``.
    derive : bool
        Reuse the baseline routing context across candidates (exact; False routes each
        candidate's affected flows from scratch — for tests).

    Returns
    -------
    dict
        ``format``, ``baseline`` (summary of the scenario as given), ``candidates`` (total),
        ``chunk`` ([i, n] or None), ``evaluated``, ``stats``, and ``ranking``: per candidate
        ``index``, ``failure``, ``label``, ``impact`` (``disconnected_flows``,
        ``job_completion_s`` before/after, ``completion_increase_s``, ``throughput_lost_gbps``,
        ``slowdown``, ``worst_pattern``) and ``diff_summary`` — most harmful first.

    Raises
    ------
    InvalidScenario
        Unknown class or target (located ``failures[k].target``), bad chunk.
    """
    _progress(progress, 0.0, "validating scenario")
    sc, own = _split_scenario(scenario, topology_loader)
    topo = sc.topology
    base_entries = normalize_failures(topo, own)
    raw = (sweep_candidates(sc, over, degrade=degrade) if over else []) + list(failures or [])
    if not raw:
        raise InvalidScenario("nothing to sweep", [Problem("over", "give failure classes or explicit failures")])
    candidates = normalize_failures(topo, raw)
    total = len(candidates)
    part = _parse_chunk(chunk, total)
    lo, hi = (part[2], part[3]) if part else (0, total)
    _progress(progress, 0.02, "routing and solving the baseline")
    w = _WhatIf(sc, derive=derive, base_entries=base_entries)
    base = w.state(base_entries) if base_entries else w.nominal
    idle = _compare(w, base, base, details=False)
    ranking, stats = [], {"solved": 0, "untouched": 0, "rerouted_flows": 0}
    clock = time.perf_counter()
    for k in range(lo, hi):
        cand = candidates[k]
        if w.unchanged(cand, base):
            diff = copy.deepcopy(idle)
            stats["untouched"] += 1
        else:
            st = w.state(base_entries + [cand])
            diff = _compare(w, base, st, details=False)
            stats["solved"] += 1
            stats["rerouted_flows"] += len(st.affected)
        ranking.append({"index": k, "failure": {x: cand[x] for x in ("target", "mode", "factor") if cand[x] is not None},
                        "label": cand["label"], "impact": diff["impact"], "diff_summary": diff["summary"]})
        now = time.perf_counter()
        if now - clock > 0.5 or k == hi - 1:
            clock = now
            _progress(progress, 0.05 + 0.95 * (k + 1 - lo) / max(hi - lo, 1),
                      f"failure {k + 1 - lo:,}/{hi - lo:,}: {cand['label']}")
    ranking.sort(key=ranking_key)
    return {"format": SWEEP_FORMAT,
            "scenario": {"routing": dict(sc.routing), "mode": sc.mode, "failures": _echo(base_entries)},
            "over": ([c.strip() for c in over.split(",")] if isinstance(over, str) else list(over)) if over else None,
            "degrade": degrade, "baseline": _summary(w, base), "candidates": total,
            "chunk": [part[0], part[1]] if part else None, "evaluated": hi - lo, "stats": stats,
            "ranking": ranking}


def merge_sweeps(parts: list[dict]) -> dict:
    """Merge chunked sweeps (any order) into the unchunked sweep.

    Raises
    ------
    InvalidScenario
        Parts of different sweeps, missing or repeated chunks (located ``parts[k]``).
    """
    if not parts:
        raise InvalidScenario("nothing to merge", [Problem("parts", "no sweep parts")])
    problems = []
    head = parts[0]
    seen: dict[int, int] = {}
    for k, p in enumerate(parts):
        if not isinstance(p, dict) or p.get("format") != SWEEP_FORMAT:
            problems.append(Problem(f"parts[{k}]", f"not a {SWEEP_FORMAT} document"))
            continue
        for key in ("baseline", "candidates", "scenario", "over", "degrade"):
            if p.get(key) != head.get(key):
                problems.append(Problem(f"parts[{k}].{key}", "differs from parts[0]: not chunks of one sweep"))
        ch = p.get("chunk") or [0, 1]
        if ch[1] != (head.get("chunk") or [0, 1])[1]:
            problems.append(Problem(f"parts[{k}].chunk", "chunk counts differ"))
        if ch[0] in seen:
            problems.append(Problem(f"parts[{k}].chunk", f"chunk {ch[0]} repeats parts[{seen[ch[0]]}]"))
        seen[ch[0]] = k
    n = (head.get("chunk") or [0, 1])[1]
    missing = sorted(set(range(n)) - set(seen))
    if missing and not problems:
        problems.append(Problem("parts", f"missing chunk(s) {missing} of {n}"))
    if problems:
        raise InvalidScenario("cannot merge sweeps", problems)
    ranking = sorted((e for p in parts for e in p["ranking"]), key=ranking_key)
    stats = {k: sum(p["stats"][k] for p in parts) for k in head["stats"]}
    return {**head, "chunk": None, "evaluated": sum(p["evaluated"] for p in parts), "stats": stats,
            "ranking": ranking}


# ======================================================================================== policies
def compare_policies(scenario, *, policies=("affinity", "pxn", "any"), progress=None, topology_loader=None) -> dict:
    """The same scenario under several NIC policies, with and without its failures.

    Parameters
    ----------
    scenario : dict or Scenario
    policies : sequence of str
        NIC policies (``affinity``, ``pxn``, ``any``, ``static``).
    progress : callable, optional

    Returns
    -------
    dict
        ``{"format": "fabricscope.compare/1", "failures": [...], "policies": {name: {"baseline":
        summary, "with_failures": summary or None, "impact": ... or None, "diff_summary": ...}},
        "best": {"baseline": name, "with_failures": name}, "headline": str}``.

    Raises
    ------
    InvalidScenario
        Unknown policy (located ``policies[k]``) or bad scenario.
    """
    policies = [p.strip() for p in policies.split(",")] if isinstance(policies, str) else list(policies)
    bad = [Problem(f"policies[{k}]", f"unknown policy {p!r} (choose from {', '.join(_routing.NIC_POLICIES)})")
           for k, p in enumerate(policies) if p not in _routing.NIC_POLICIES]
    if bad or not policies:
        raise InvalidScenario("bad policies", bad or [Problem("policies", "choose at least one policy")])
    sc, own = _split_scenario(scenario, topology_loader)
    entries = normalize_failures(sc.topology, own)
    out = {}
    for k, pol in enumerate(policies):
        _progress(progress, k / len(policies), f"policy {pol}")
        w = _WhatIf(dataclasses.replace(sc, routing={**sc.routing, "nic_policy": pol}))
        entry = {"baseline": _summary(w, w.nominal), "with_failures": None, "impact": None, "diff_summary": None}
        if entries:
            st = w.state(entries)
            diff = _compare(w, w.nominal, st, details=False)
            entry.update({"with_failures": _summary(w, st), "impact": diff["impact"], "diff_summary": diff["summary"]})
        out[pol] = entry
    _progress(progress, 1.0, "done")
    best = {"baseline": _best(out, "baseline"), "with_failures": _best(out, "with_failures") if entries else None}
    return {"format": COMPARE_FORMAT, "scenario": {"routing": dict(sc.routing), "mode": sc.mode},
            "failures": _echo(entries), "policies": out, "best": best, "headline": _headline(out, best, entries)}


def _best(out: dict, which: str) -> str | None:
    def key(item):
        s = item[1][which]
        job = s["job_completion_s"]
        return (s["unroutable"], math.inf if job is None else job)

    return min(out.items(), key=key)[0] if out else None


def _headline(out: dict, best: dict, entries: list) -> str:
    which = "with_failures" if entries else "baseline"
    parts = []
    for pol, e in out.items():
        s = e[which]
        job = s["job_completion_s"]
        txt = f"{pol}: " + (f"{job * 1e3:.3f} ms" if job is not None else "no completion")
        if s["unroutable"]:
            txt += f", {s['unroutable']:,} flow(s) disconnected"
        parts.append(txt)
    lead = "with failures " + ", ".join(f["label"] for f in entries) if entries else "without failures"
    return f"{lead} — " + "; ".join(parts) + f". Best: {best[which]}."
