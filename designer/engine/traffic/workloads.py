"""Workloads → flows: collective and data-movement patterns turned into numpy flow arrays.

A *pattern* (one entry of a scenario's ``workload`` list, docs/FORMATS.md, Scenario) names a kind
of traffic and its participants; :func:`generate` turns a list of normalized patterns into one :class:`Flows`
(parallel numpy arrays: source node, destination node, bytes, demand cap, pattern). Large patterns
(an all-to-all among 1,024 GPUs is ~1M flows) are built with array operations, never per-flow dicts.

A collective pattern's ``bytes`` is nccl-tests' *size* S: the per-rank buffer of an all-reduce
and of an all-to-all (``S/n`` to every peer), the gathered (received) buffer of an all-gather,
the sent buffer of a reduce-scatter. Its flows come from the algorithm modules of
:mod:`designer.engine.traffic.collectives` (ring: ``2(n−1)/n × S`` per GPU for an all-reduce, ``(n−1)/n ×
S`` for an all-gather/reduce-scatter; tree, NVLS, NVLSTree, CollNet, PAT and P2P as documented
there); ``algorithm`` (default ``auto``) and ``protocol`` (default ``auto``) are chosen by
:func:`designer.engine.traffic.collectives.plan_pattern`, which also sets the pattern's latency and
bandwidth efficiency (``Flows.pattern_latency_s``, ``Flows.pattern_efficiency``) that
:mod:`designer.engine.analysis.completion` applies.

Communicator groups: a collective pattern with ``groups`` runs one collective per group, all at
once, as *one* pattern (its flows are routed and solved together and it completes when every
group does; see :mod:`designer.engine.traffic.groups`). The algorithm and protocol are planned once per
group *shape* (ranks, hosts, ranks per host), like NCCL tunes each communicator; the pattern's
latency is the largest and its efficiency the smallest over its groups.
"""
from __future__ import annotations

import math
from collections import Counter

import numpy as np

from designer.engine.document.bounds import MAX_BYTES, MAX_RATE_GBPS, magnitude_problem
from designer.engine.catalog_copies import COPY_ENGINES
from designer.engine.errors import InvalidWorkload, LimitExceeded, Problem
from designer.engine.model.topology import Topology
from designer.engine.traffic.collectives import (COLLECTIVE_KINDS, PROTOCOLS, build_flows, candidates, flow_bound,
                                                 plan_pattern, ring_orders)
from designer.engine.traffic.collectives.launch import gpus_per_thread_of, issue_floor_s
from designer.engine.traffic.collectives.rooted import rooted_fields
from designer.engine.traffic.collectives.staging import host_memory_of
from designer.engine.traffic.copies import copy_caps_gbps
from designer.engine.traffic.flows import Flows
from designer.engine.traffic.groups import resolve_groups
from designer.engine.traffic.selectors import resolve_selector

__all__ = [
    "PATTERN_KINDS", "MAX_FLOWS", "Flows", "resolve_selector", "normalize_pattern", "generate",
    "ring_orders", "pattern_flow_count", "host_read_caps_gbps",
]

PATTERN_KINDS = ("allreduce", "allgather", "reducescatter", "alltoall", "broadcast", "reduce", "gather", "scatter",
                 "hypercube", "p2p", "storage_read", "storage_write", "kv_transfer", "host_offload")
# A scenario above this many flows is refused before anything is allocated. 20M admits the
# 4,096-GPU all-to-all (16,773,120 flows), which peaks at 8.1 GB RSS (measured, docs/PERFORMANCE.md);
# routing.limits.MAX_PATH_ENTRIES bounds what the flows' paths may take.
MAX_FLOWS = 20_000_000


# ---------------------------------------------------------------------------------------- validation
_COMMON = {"id", "kind", "bytes", "demand_gbps"}
_FIELDS = {
    "allreduce": {"participants", "algorithm", "algorithms", "protocol", "channels", "groups", "gpus_per_thread"},
    "allgather": {"participants", "algorithm", "algorithms", "protocol", "channels", "groups", "gpus_per_thread"},
    "reducescatter": {"participants", "algorithm", "algorithms", "protocol", "channels", "groups", "gpus_per_thread"},
    "alltoall": {"participants", "algorithm", "protocol", "groups", "gpus_per_thread"},
    # nccl-tests' rooted and send/receive collectives (collectives.rooted): one communicator, no groups.
    "broadcast": {"participants", "root", "algorithm", "algorithms", "protocol", "channels", "gpus_per_thread"},
    "reduce": {"participants", "root", "algorithm", "algorithms", "protocol", "channels", "gpus_per_thread"},
    "gather": {"participants", "root", "algorithm", "protocol", "gpus_per_thread"},
    "scatter": {"participants", "root", "algorithm", "protocol", "gpus_per_thread"},
    "hypercube": {"participants", "algorithm", "protocol", "gpus_per_thread"},
    "p2p": {"src", "dst", "groups", "reverse"},
    "storage_read": {"source", "participants", "via"},
    "storage_write": {"source", "participants", "via"},
    "kv_transfer": {"prefill", "decode"},
    "host_offload": {"participants", "direction", "engine"},
}


def normalize_pattern(topo: Topology, raw: dict, where: str, seen_ids: set, layout=None, scope=None) -> dict:
    """Check one workload pattern and resolve its selectors to node-index arrays.

    Returns a dict with ``id``, ``kind``, ``bytes``, ``demand_gbps`` and resolved node arrays
    (``participants``, ``source``, ``src``, ``dst``, ``prefill``, ``decode`` as relevant). A
    collective with ``groups`` also has ``groups`` (a list of node-index arrays) and its
    ``participants`` is its largest group (the one its algorithm is checked on).

    Parameters
    ----------
    layout : Layout, optional
        The job's parallelism layout, for ``groups: {"layout": "tp"}``.
    scope : ndarray of int64, optional
        A shared-cluster job's GPUs: its selectors choose among them (:func:`resolve_selector`).

    Raises
    ------
    InvalidWorkload
        With every located problem (``workload[2].participants: selector matches no node``).
    """
    problems: list[Problem] = []
    if not isinstance(raw, dict):
        raise InvalidWorkload("bad pattern", [Problem(where, "a pattern must be an object")])
    kind = raw.get("kind")
    if kind not in _FIELDS:
        raise InvalidWorkload("unknown pattern kind", [Problem(
            f"{where}.kind", f"unknown pattern kind {kind!r} (choose from {', '.join(PATTERN_KINDS)})")])
    pid = raw.get("id", f"{kind}{len(seen_ids)}")
    if not isinstance(pid, str) or not pid or "#" in pid:
        problems.append(Problem(f"{where}.id", "must be a non-empty string without '#'"))
    elif pid in seen_ids:
        problems.append(Problem(f"{where}.id", f"duplicate pattern id {pid!r}"))
    extra = set(raw) - _COMMON - _FIELDS[kind]
    if extra:
        problems.append(Problem(where, f"unknown field(s) {sorted(extra)} for kind {kind!r}"))
    size = raw.get("bytes")
    too_large = _magnitude_problems(raw, where)
    problems.extend(too_large.values())
    if "bytes" not in too_large and (not _is_number(size) or size < 0):
        problems.append(Problem(f"{where}.bytes", "must be a number of bytes >= 0"))
    demand = raw.get("demand_gbps")
    if "demand_gbps" not in too_large and demand is not None and (not _is_number(demand) or demand <= 0):
        problems.append(Problem(f"{where}.demand_gbps", "must be a rate in Gb/s > 0"))
    out = {"id": pid, "kind": kind, "bytes": float(size) if _is_number(size) else 0.0,
           "demand_gbps": float(demand) if demand is not None and _is_number(demand) else np.inf}
    out["_layout"], out["_scope"] = layout, scope
    _normalize_fields(topo, raw, kind, where, out, problems)
    out.pop("_layout", None)
    out.pop("_scope", None)
    _collective_groups(topo, raw, where, out, problems, layout)
    if problems:
        raise InvalidWorkload(f"invalid pattern {where}", problems)
    return out


def _normalize_fields(topo, raw, kind, where, out, problems) -> None:
    """The kind's own fields of a pattern (selectors resolved into ``out``), problems located."""
    sel = _selector_reader(topo, raw, where, problems, out.get("_scope"))
    _KIND_FIELDS[kind](topo, sel, raw, kind, where, out, problems)
    for key in ("participants", "prefill", "decode"):
        if key in out and out[key] is not None and len(out[key]) < 1:
            problems.append(Problem(f"{where}.{key}", "zero participants"))


def _selector_reader(topo, raw, where, problems, scope=None):
    """``sel(key, default=None, kinds=None)``: the nodes of ``raw[key]`` (else ``default``), None
    with the problem added when it is missing or does not resolve; ``kinds``: the node kinds
    allowed."""
    def sel(key, default=None, kinds=None):
        value = raw.get(key, default)
        if value is None:
            problems.append(Problem(f"{where}.{key}", "missing selector"))
            return None
        try:
            nodes = resolve_selector(topo, value, f"{where}.{key}", scope)
        except InvalidWorkload as exc:
            problems.extend(exc.problems)
            return None
        if kinds is not None:
            bad = [topo.node_ids[i] for i in nodes if topo.node_kind[i] not in kinds]
            if bad:
                problems.append(Problem(f"{where}.{key}", f"{bad[0]!r} is a {topo.node_kind[topo.node_index[bad[0]]]}"
                                        f", expected {' or '.join(sorted(kinds))}"))
        return nodes

    return sel


def _distinct_nodes(nodes: np.ndarray) -> bool:
    """No node twice. A kind or group selector gives increasing indices: checked in one pass,
    not a sort of every GPU for each of a step's hundreds of patterns."""
    return bool(np.all(nodes[1:] > nodes[:-1])) or len(np.unique(nodes)) == len(nodes)


def _collective_fields(topo, sel, raw, kind, where, out, problems) -> None:
    gpu_like = None  # any endpoint may take part; GPUs are the usual case
    out["participants"] = sel("participants", {"kind": "gpu"}, gpu_like)
    if out["participants"] is not None and not _distinct_nodes(out["participants"]):
        problems.append(Problem(f"{where}.participants", "selects a node twice"))
    algorithm = raw.get("algorithm", "auto")
    known = ["auto", *candidates(kind)]
    if algorithm not in known:
        problems.append(Problem(f"{where}.algorithm", f"unknown algorithm {algorithm!r} for {kind} "
                                f"(choose from {', '.join(known)})"))
    protocol = raw.get("protocol", "auto")
    if protocol not in ("auto", *PROTOCOLS):
        problems.append(Problem(f"{where}.protocol", f"unknown protocol {protocol!r} "
                                f"(choose from auto, {', '.join(PROTOCOLS)})"))
    out["algorithm"], out["protocol"], out["where"] = algorithm, protocol, where
    out["algorithms"] = _allowed_algorithms(raw, kind, algorithm, where, problems)
    channels = raw.get("channels")
    if channels is not None and (not isinstance(channels, int) or isinstance(channels, bool) or channels < 1):
        problems.append(Problem(f"{where}.channels", "must be an integer >= 1"))
    out["channels"] = channels
    out["gpus_per_thread"] = gpus_per_thread_of(raw, where, out["participants"], problems)
    rooted_fields(topo, raw, kind, where, out, problems)


def _allowed_algorithms(raw, kind, algorithm, where, problems) -> tuple | None:
    """The pattern's ``algorithms``: the ones ``auto`` may choose from (NCCL_ALGO=Ring,Tree), None
    for all. NCCL's model then picks among them — not the fastest of them."""
    allowed = raw.get("algorithms")
    if allowed is None:
        return None
    known = candidates(kind)
    if not isinstance(allowed, list) or not allowed or not all(isinstance(a, str) for a in allowed):
        problems.append(Problem(f"{where}.algorithms", f"must be a non-empty list of algorithm names "
                                f"(from {', '.join(known)})"))
        return None
    unknown = [a for a in allowed if a not in known]
    if unknown:
        problems.append(Problem(f"{where}.algorithms", f"unknown algorithm {unknown[0]!r} for {kind} "
                                f"(choose from {', '.join(known)})"))
    if algorithm != "auto":
        problems.append(Problem(f"{where}.algorithms", f"applies to algorithm auto only (algorithm is {algorithm})"))
    return tuple(a for a in known if a in allowed)


def _p2p_fields(topo, sel, raw, kind, where, out, problems) -> None:
    if "groups" in raw:
        _p2p_groups(topo, raw, where, out, problems)
        return
    out["src"] = sel("src")
    out["dst"] = sel("dst")
    if out["src"] is not None and out["dst"] is not None:
        ns, nd = len(out["src"]), len(out["dst"])
        if ns != nd and 1 not in (ns, nd):
            problems.append(Problem(f"{where}.dst", f"selects {nd} nodes for {ns} sources "
                                    "(give equal counts, or one on either side)"))


def _storage_fields(topo, sel, raw, kind, where, out, problems) -> None:
    out["source"] = sel("source", {"kind": "nvme"}, {"nvme", "storage", "memory"})
    out["participants"] = sel("participants", {"kind": "gpu"})
    via = raw.get("via", "gpudirect")
    if via not in ("gpudirect", "bounce"):
        problems.append(Problem(f"{where}.via", f"unknown via {via!r} (gpudirect or bounce)"))
    out["via"] = via


def _kv_fields(topo, sel, raw, kind, where, out, problems) -> None:
    out["prefill"] = sel("prefill")
    out["decode"] = sel("decode")


def _offload_fields(topo, sel, raw, kind, where, out, problems) -> None:
    out["participants"] = sel("participants", {"kind": "gpu"})
    direction = raw.get("direction", "to_host")
    if direction not in ("to_host", "from_host", "both"):
        problems.append(Problem(f"{where}.direction", f"unknown direction {direction!r} "
                                "(to_host, from_host or both)"))
    out["direction"] = direction
    out["engine"] = raw.get("engine", "sm")
    if out["engine"] not in COPY_ENGINES:
        problems.append(Problem(f"{where}.engine", f"unknown engine {out['engine']!r} (sm or ce)"))


# The fields each pattern kind checks (every kind of _FIELDS).
_KIND_FIELDS = {"allreduce": _collective_fields, "allgather": _collective_fields,
                "reducescatter": _collective_fields, "alltoall": _collective_fields, "p2p": _p2p_fields,
                **{kind: _collective_fields for kind in ("broadcast", "reduce", "gather", "scatter", "hypercube")},
                "storage_read": _storage_fields, "storage_write": _storage_fields, "kv_transfer": _kv_fields,
                "host_offload": _offload_fields}


def _collective_groups(topo, raw, where, out, problems, layout) -> None:
    """Resolve a collective's ``groups``; its ``participants`` become the largest group."""
    if "groups" not in raw or out.get("participants") is None or out["kind"] == "p2p":
        return
    try:
        out["groups"] = resolve_groups(topo, raw["groups"], out["participants"], f"{where}.groups",
                                       layout=layout, explicit_participants="participants" in raw)
        out["participants"] = max(out["groups"], key=len)
    except InvalidWorkload as exc:
        problems.extend(exc.problems)


def _p2p_groups(topo, raw, where, out, problems) -> None:
    """p2p over groups: in every group each member sends to the next one (a pipeline's stage s →
    s + 1 over the ``pp`` groups); ``reverse: true`` sends to the previous one (the backward)."""
    if "src" in raw or "dst" in raw:
        problems.append(Problem(where, "a p2p pattern takes src/dst or groups, not both"))
        return
    reverse = raw.get("reverse", False)
    if not isinstance(reverse, bool):
        problems.append(Problem(f"{where}.reverse", "must be true or false"))
        return
    gpus = out.get("_scope")   # a shared-cluster job's pipeline runs over its own GPUs
    gpus = np.array([i for i, k in enumerate(topo.node_kind) if k == "gpu"], dtype=np.int64) if gpus is None else gpus
    try:
        groups = resolve_groups(topo, raw["groups"], gpus, f"{where}.groups", layout=out.pop("_layout", None))
    except InvalidWorkload as exc:
        problems.extend(exc.problems)
        return
    pairs = [(g[:-1], g[1:]) for g in groups if len(g) > 1]
    src = np.concatenate([a for a, _ in pairs]) if pairs else np.zeros(0, np.int64)
    dst = np.concatenate([b for _, b in pairs]) if pairs else np.zeros(0, np.int64)
    out["src"], out["dst"] = (dst, src) if reverse else (src, dst)


def _magnitude_problems(raw: dict, where: str) -> dict[str, Problem]:
    """Field → problem for ``bytes`` or ``demand_gbps`` above its bound
    (:mod:`designer.engine.document.bounds`): two 1e308-byte collectives summed to inf."""
    found = {}
    for key, limit, unit in (("bytes", MAX_BYTES, "B"), ("demand_gbps", MAX_RATE_GBPS, "Gb/s")):
        problem = magnitude_problem(f"{where}.{key}", raw.get(key), limit, unit)
        if problem is not None:
            found[key] = problem
    return found


def _is_number(x) -> bool:
    # math.isfinite, not np.isfinite: numpy raises TypeError on a 400-digit JSON integer.
    if not isinstance(x, (int, float)) or isinstance(x, bool):
        return False
    try:
        return math.isfinite(x)
    except OverflowError:
        return False


def pattern_flow_count(pattern: dict, over=max) -> int:
    """Number of flows a normalized pattern will produce; for a collective left to ``auto``, a
    bound over its kind's algorithms (:func:`~designer.engine.traffic.collectives.flow_bound`:
    ``over=max`` at most, ``over=min`` at least)."""
    kind = pattern["kind"]
    if kind in COLLECTIVE_KINDS:
        groups = pattern.get("groups")
        sizes = Counter(map(len, groups)) if groups is not None else {len(pattern["participants"]): 1}
        algorithm, channels = pattern.get("algorithm") or "auto", pattern.get("channels")
        return sum(count * flow_bound(kind, algorithm, n, channels, over) for n, count in sizes.items())
    if kind == "p2p":
        return max(len(pattern["src"]), len(pattern["dst"]))
    if kind == "kv_transfer":
        return max(len(pattern["prefill"]), len(pattern["decode"]))
    return 2 * len(pattern["participants"])


# ---------------------------------------------------------------------------------------- generation
def generate(topo: Topology, patterns: list[dict], routing: dict | None = None) -> Flows:
    """Turn normalized patterns (see :func:`normalize_pattern`) into one :class:`Flows`.

    Parameters
    ----------
    routing : dict, optional
        The scenario's routing options (``nic_policy``, ``multipath``, ``seed``), used to predict
        the collective algorithms on the topology (:func:`~designer.engine.traffic.collectives.plan_pattern`).

    Raises
    ------
    LimitExceeded
        When the patterns would produce more than :data:`MAX_FLOWS` flows.
    InvalidWorkload
        An explicit algorithm that does not run on the topology.
    """
    least = sum(pattern_flow_count(p, min) for p in patterns)
    if least > MAX_FLOWS:
        raise LimitExceeded(f"the workload makes at least {least:,} flows (limit {MAX_FLOWS:,})",
                            [Problem("workload", f"{least:,} flows exceed the limit of {MAX_FLOWS:,}")])
    parts, ids, kinds, plans = [], [], [], []
    shape_plans: dict[tuple, object] = {}     # grouped collectives of one shape share a plan
    budget = _FlowBudget(least)
    for k, pattern in enumerate(patterns):
        plan = None
        if pattern["kind"] in COLLECTIVE_KINDS and pattern.get("groups") is not None:
            plan, src, dst, size = _grouped(topo, pattern, routing, shape_plans, budget)
        elif pattern["kind"] in COLLECTIVE_KINDS:
            plan = plan_pattern(topo, pattern, routing)
            budget.plan(pattern, plan.algorithm, len(pattern["participants"]))
            src, dst, size = build_flows(topo, pattern, plan.algorithm)
        else:
            src, dst, size = _PATTERN_BUILDERS[pattern["kind"]](topo, pattern)
        plans.append(plan)
        n = len(src)
        demand = np.full(n, pattern.get("demand_gbps", np.inf), dtype=np.float64)
        if pattern["kind"] == "host_offload":
            demand = np.minimum(demand, copy_caps_gbps(topo, src, dst, pattern.get("engine", "sm")))
        parts.append((np.asarray(src, np.int64), np.asarray(dst, np.int64),
                      np.broadcast_to(np.asarray(size, np.float64), n).astype(np.float64), demand,
                      np.full(n, k, np.int32), np.arange(n, dtype=np.int64)))
        ids.append(pattern["id"])
        kinds.append(pattern["kind"])
    if not parts:
        empty = np.zeros(0, np.int64)
        return Flows(empty, empty.copy(), np.zeros(0), np.zeros(0), np.zeros(0, np.int32), empty.copy(), [], [])
    cols = [np.concatenate([p[i] for p in parts]) for i in range(6)]
    latency = np.array([p.latency_s if p is not None else 0.0 for p in plans])
    efficiency = np.array([p.efficiency if p is not None else 1.0 for p in plans])
    return Flows(*cols, pattern_ids=ids, pattern_kinds=kinds, pattern_latency_s=latency,
                 pattern_efficiency=efficiency, pattern_plans=plans,
                 pattern_issue_floor_s=np.array([issue_floor_s(p) for p in patterns]))


def _shape(topo, nodes) -> tuple:
    """Group shape for planning: ranks per host, in host order (same shape, same plan)."""
    hosts: dict = {}
    for n in nodes.tolist():
        hosts[topo.node_host[n]] = hosts.get(topo.node_host[n], 0) + 1
    return tuple(hosts.values())


class _FlowBudget:
    """The flow limit while a workload is generated: up front only the fewest flows any algorithm
    could make is known (``least``); each collective group, once its algorithm is planned, takes
    its planned bound in place of its least one, so the limit holds before its flows are built."""

    def __init__(self, least: int):
        self.total = least
        self._extra: dict[tuple, int] = {}   # groups of one size and algorithm: ~1M at 100,000 GPUs

    def plan(self, pattern: dict, algorithm: str, n: int) -> None:
        key = (pattern["kind"], algorithm, n, pattern.get("channels"))
        if key not in self._extra:
            self._extra[key] = flow_bound(*key) - flow_bound(key[0], "auto", n, key[3], min)
        self.total += self._extra[key]
        if self.total > MAX_FLOWS:
            raise LimitExceeded(f"the workload makes more than {MAX_FLOWS:,} flows with the planned algorithms",
                                [Problem(pattern.get("where", "workload"),
                                         f"{self.total:,} flows (planned so far) exceed the limit of {MAX_FLOWS:,}")])


def _grouped(topo, pattern, routing, cache: dict, budget: _FlowBudget):
    """One collective per group: flows concatenated, planned once per group shape (and kind,
    size, algorithm, protocol, channels: ``cache`` is shared by the patterns of one workload).

    Returns the plan of the slowest-planned group (its latency is the pattern's; the pattern's
    efficiency is the smallest of its groups'), and the concatenated ``src, dst, bytes``.
    """
    plans: dict[tuple, object] = {}
    srcs, dsts, sizes = [], [], []
    common = (pattern["kind"], pattern["bytes"], pattern.get("algorithm"), pattern.get("algorithms"),
              pattern.get("protocol"), pattern.get("channels"))
    for g in pattern["groups"]:
        sub = {**pattern, "participants": g, "groups": None}
        key = _shape(topo, g)
        if key not in plans:
            if (common, key) not in cache:
                cache[(common, key)] = plan_pattern(topo, sub, routing)
            plans[key] = cache[(common, key)]
        budget.plan(pattern, plans[key].algorithm, len(g))
        src, dst, size = build_flows(topo, sub, plans[key].algorithm)
        srcs.append(np.asarray(src, np.int64))
        dsts.append(np.asarray(dst, np.int64))
        sizes.append(np.broadcast_to(np.asarray(size, np.float64), len(srcs[-1])))
    worst = max(plans.values(), key=lambda p: p.latency_s)
    efficiency = min(p.efficiency for p in plans.values())
    if efficiency != worst.efficiency:
        from dataclasses import replace
        worst = replace(worst, efficiency=efficiency)
    return worst, np.concatenate(srcs), np.concatenate(dsts), np.concatenate(sizes)


def _p2p(topo, pattern):
    src, dst = pattern["src"], pattern["dst"]
    n = max(len(src), len(dst))
    return np.resize(src, n), np.resize(dst, n), pattern["bytes"]


def _kv(topo, pattern):
    pre, dec = pattern["prefill"], pattern["decode"]
    n = max(len(pre), len(dec))
    return np.resize(pre, n), np.resize(dec, n), pattern["bytes"]


def _storage(topo, pattern):
    gpus, sources = pattern["participants"], pattern["source"]
    chosen = _assign_sources(topo, gpus, sources)
    if pattern["via"] == "bounce":
        # Bounce buffer: the data lands in host memory first, then is copied to the GPU. Both legs
        # are modelled as concurrent flows (steady state of a pipelined copy).
        memory = np.array([_nearest_memory(topo, g) for g in gpus.tolist()], dtype=np.int64)
        src = np.concatenate([chosen, memory])
        dst = np.concatenate([memory, gpus])
    else:
        src, dst = chosen, gpus
    if pattern["kind"] == "storage_write":
        src, dst = dst, src
    return src, dst, pattern["bytes"]


def _assign_sources(topo, gpus, sources) -> np.ndarray:
    # Prefer a source inside the GPU's own host (local NVMe); else spread over the others.
    by_host: dict[str | None, list[int]] = {}
    for s in sources.tolist():
        by_host.setdefault(topo.node_host[s], []).append(s)
    remote = by_host.get(None) or sources.tolist()
    used: dict[str | None, int] = {}
    out = []
    for g in gpus.tolist():
        host = topo.node_host[g]
        pool = by_host.get(host) if host is not None and host in by_host else remote
        key = host if pool is not remote else None
        k = used.get(key, 0)
        used[key] = k + 1
        out.append(pool[k % len(pool)])
    return np.array(out, dtype=np.int64)


def _nearest_memory(topo: Topology, node: int) -> int:
    """Nearest ``memory`` node inside the node's host (:func:`.collectives.staging.host_memory_of`)."""
    return host_memory_of(topo, node, where="workload", need="(needed for bounce/offload)")


def _offload(topo, pattern):
    gpus = pattern["participants"]
    memory = np.array([_nearest_memory(topo, g) for g in gpus.tolist()], dtype=np.int64)
    direction = pattern.get("direction", "to_host")
    if direction == "to_host":
        return gpus, memory, pattern["bytes"]
    if direction == "from_host":
        return memory, gpus, pattern["bytes"]
    return np.concatenate([gpus, memory]), np.concatenate([memory, gpus]), pattern["bytes"]


def host_read_caps_gbps(topo: Topology, src, dst) -> np.ndarray:
    """Per-flow rate cap (Gb/s) of host-memory copies driven by the GPU; inf where none applies.

    A GPU copy *from* host memory (``host_offload`` ``from_host``, modelled as an SM copy reading
    pinned host memory, nvbandwidth's ``host_to_device_memcpy_sm``) is bound by non-posted PCIe
    reads — each read request waits for its completion, so the rate is the GPU's outstanding read
    requests over the read round trip, not the link's posted-write rate. The copy into host
    memory (posted writes) and a NIC writing into the GPU keep the link rate. The cap is the measured host→device copy rate of
    the GPU's PCIe link technology (``catalog.PCIE_MEASURED_GBYTES[tech]["h2d"]``: H100 Gen5 x16
    35.2 GB/s, NVIDIA/nvbandwidth#24; A100 Gen4 x16 25.13 GB/s, NVIDIA/nvbandwidth#42, above the
    24 GB/s planning rate, so it does not bind there).

    Parameters
    ----------
    topo : Topology
    src, dst : array of int
        Flow endpoints (node indices).

    Returns
    -------
    ndarray of float64
        Demand cap per flow, Gb/s.
    """
    from designer.engine.catalog import GBPS_PER_GBYTE, PCIE_MEASURED_GBYTES

    caps = np.full(len(src), np.inf)
    for k, (s, d) in enumerate(zip(np.asarray(src).tolist(), np.asarray(dst).tolist())):
        if topo.node_kind[s] != "memory" or topo.node_kind[d] != "gpu":
            continue
        measured = [PCIE_MEASURED_GBYTES[topo.link_tech[l]]["h2d"][0] for _, l in topo.adjacency[d]
                    if "h2d" in PCIE_MEASURED_GBYTES.get(topo.link_tech[l] or "", {})]
        if measured:
            caps[k] = max(measured) * GBPS_PER_GBYTE
    return caps


_PATTERN_BUILDERS = {
    "p2p": _p2p, "storage_read": _storage, "storage_write": _storage,
    "kv_transfer": _kv, "host_offload": _offload,
}
