"""Algorithm and protocol selection, as NCCL (or a net plugin's tuner) does it.

:func:`plan_pattern` lists the algorithms of the pattern's kind, asks each whether it runs on
the topology (an unsupported one is excluded from ``auto``, with its reason; asked for
explicitly it is a located :class:`~designer.engine.errors.InvalidWorkload`), and predicts each
supported one by generating its flows *alone* on the topology, routing them with the scenario's
routing options and solving them with the exact max-min solver (one solve per algorithm).
Per protocol the predicted time is

``latency + data_time / (protocol efficiency × algorithm efficiency)``

with ``data_time`` the slowest flow's ``bytes / rate`` of that solve, the latency of
:func:`.protocols.latency_us` (with the hosts' network post overhead, :func:`net_overhead_us`,
and one network step on the topology's own path, :func:`network_steps_us`)
and the algorithm efficiency the catalog's NVLS efficiency for
``nvls``/``nvlstree`` (1 otherwise), both times the size factor of :mod:`.sizing` (channels in
use × pipeline fill at the pattern's size; NCCL ``enqueue.cc``). The protocol efficiency of ring
and tree is held under NCCL's per-architecture ceilings (:func:`.protocols.tuner_efficiency`,
the architecture from :func:`.ceilings.gpu_arch`), and a tree all-reduce's carries NCCL's medium-size
correction (:func:`.protocols.tree_correction`); a ring Simple latency carries NCCL's "plateau"
factor (:func:`.protocols.ring_plateau`). The (algorithm, protocol) chosen by NCCL's model of
these times, or the pair a net plugin's tuner forces (:mod:`.chooser`), sets the
pattern's latency and efficiency, which :mod:`designer.engine.analysis.completion` applies to the
pattern's *contended* data time in the full scenario.

Selection happens once, on the failure-free topology, like NCCL's at communicator creation: a
failure later re-routes the chosen algorithm's flows (stable re-routing), it does not re-plan —
a running communicator that loses a NIC does not complete. ``failed`` plans on a failed
topology instead, as NCCL re-initialized on it would: channels, tree heads and NVLS heads only
on the rails whose NICs are up in every host (see :func:`.common.live_rails`); simulate reports
that as the pattern's ``fallback``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from designer.engine.solve import solver
from designer.engine.traffic.collectives import collnet, nvls, nvlstree, p2p, pat, ring, tree
from designer.engine.traffic.collectives.common import Group, group_of
from designer.engine.traffic.collectives.ceilings import ceilings_for, cpu_vendor, may_be_capped, protocol_efficiency
from designer.engine.traffic.collectives.chooser import (FORCED_COST, allowed_only, chooser_name,
                                                         compute_nic_models, plugin_choice, selection_time)
from designer.engine.traffic.collectives.sizing import size_factors_for
from designer.engine.traffic.collectives.protocols import (
    NET_OVERHEAD_BY_VENDOR_US,
    NET_OVERHEAD_US,
    PROTOCOLS,
    latency_us,
    protocols_for,
    ring_plateau,
    tree_correction,
)
from designer.engine.catalog import net_plugin_latency_us
from designer.engine.errors import InvalidWorkload, Problem
from designer.engine.routing import FailureSet, forget_routes, route, route_grouped
from designer.engine.routing.csr import range_positions
from designer.engine.routing.intra import is_nvlink
from designer.engine.routing.router import lay_out
from designer.engine.model.hop_latency import network_step
from designer.engine.model.topology import kind_nodes
from designer.engine.traffic.flows import Flows
from designer.engine.traffic.collectives.staging import stage_through_memory

__all__ = ["ALGORITHMS", "MODULES", "Plan", "candidates", "check_algorithm", "cpu_vendor", "intra_technology",
           "net_overhead_us", "net_plugin_latency_of", "network_steps_us", "plan_pattern"]

# In NCCL's order of preference on ties (cheaper algorithms first).
ALGORITHMS = ("ring", "tree", "nvls", "nvlstree", "collnet", "pat", "p2p")
MODULES = {"ring": ring, "tree": tree, "nvls": nvls, "nvlstree": nvlstree, "collnet": collnet,
           "pat": pat, "p2p": p2p}
_KINDS = {"ring": ring.KINDS, "tree": ("allreduce",), "nvls": nvls.KINDS, "nvlstree": ("allreduce",),
          "collnet": ("allreduce",), "pat": ("allgather", "reducescatter"), "p2p": p2p.KINDS}


@dataclass
class Plan:
    """The algorithm and protocol a collective pattern runs with, and what they cost.

    Attributes
    ----------
    algorithm, protocol : str
    latency_s : float
        Latency term of the chosen pair (s).
    efficiency : float
        Protocol × algorithm bandwidth efficiency (0 < e ≤ 1): data time is divided by it.
    alternatives : dict
        Algorithm → ``{"time_s", "protocol", "reason"}``: its predicted time alone on the
        topology (best protocol) or None with the reason it does not run.
    n, nodes : int
        Ranks and hosts.
    size : float
        The pattern's ``bytes`` (nccl-tests' size S).
    chosen_by : str
        Who chose the algorithm: ``nccl``, ``plugin`` or ``request`` (:func:`.chooser.chooser_name`).
    """

    algorithm: str
    protocol: str
    latency_s: float
    efficiency: float
    n: int
    nodes: int
    size: float
    alternatives: dict = field(default_factory=dict)
    chosen_by: str = "nccl"

    def as_dict(self) -> dict:
        return {"algorithm": self.algorithm, "protocol": self.protocol, "latency_s": self.latency_s,
                "alternatives": self.alternatives, "chosen_by": self.chosen_by}


def candidates(kind: str) -> list[str]:
    """Algorithms that implement ``kind``."""
    return [a for a in ALGORITHMS if kind in _KINDS[a]]


def intra_technology(topo, group: Group) -> str:
    """``nvlink`` when the first host's participants reach each other over NVLink, else ``pci``."""
    block = set(group.blocks[0].tolist()) if group.blocks else set()
    for g in block:
        for v, link in topo.adjacency[g]:
            if is_nvlink(topo, link):
                return "nvlink"
    return "pci"


def net_overhead_us(topo, group: Group) -> float:
    """Network post overhead (µs) NCCL charges per ring step across hosts, from the CPUs of the
    participants' hosts (tuning.cc ``getNetOverhead``: Intel 1.0, AMD 2.0, others 1.0). The largest
    over the hosts: a ring step waits for the slowest host's proxy."""
    if group.nodes < 2:
        return NET_OVERHEAD_US
    # The participants' own hosts (a block may be an NVLink domain of several); one pass over
    # the CPU nodes, not one scan of the topology per host.
    hosts = {topo.node_host[int(g)] for g in group.participants.tolist()} - {None}
    overheads = [NET_OVERHEAD_BY_VENDOR_US.get(cpu_vendor(topo.node_attrs[i].get("model")), NET_OVERHEAD_US)
                 for i in kind_nodes(topo, "cpu").tolist() if topo.node_host[i] in hosts]
    return max(overheads, default=NET_OVERHEAD_US)


def net_plugin_latency_of(topo, group: Group, nics: set | None = None) -> float:
    """Network latency (µs) the participants' NICs' net plugin reports
    (:func:`designer.engine.catalog.net_plugin_latency_us` by NIC ``model``); the largest over the
    hosts' compute NICs, as NCCL keeps the largest latency of the networks a graph uses. 0 on one
    host (no step crosses a network)."""
    if group.nodes < 2:
        return 0.0
    return max((net_plugin_latency_us(m) for m in (compute_nic_models(topo, group) if nics is None else nics)),
               default=0.0)


def _data_time(topo, group: Group, algorithm: str, routing: dict, failed=None,
               capacity_gbps=None, routed: dict | None = None,
               keep: bool = True, staged: tuple = ()) -> tuple[float | None, str | None]:
    """Slowest flow's bytes / rate (s) of ``algorithm``'s flows alone, or (None, why) when a flow
    does not route or gets no bandwidth. ``routed`` (optional) receives algorithm → its Routes;
    ``keep=False``: the routes are not kept in :func:`route`'s memo (an algorithm that cannot be
    chosen: nobody routes its flows again). ``staged``: hosts without GPUDirect RDMA, whose
    network legs go through host memory (:func:`~designer.engine.traffic.collectives.staging.stage_through_memory`)."""
    src, dst, size = MODULES[algorithm].flows(topo, group)
    if staged:
        src, dst, size = stage_through_memory(topo, src, dst, size, staged)
    if len(src) == 0:
        return 0.0, None
    flows = Flows.from_pairs(src, dst, size, pattern_id=algorithm, kind=group.kind)
    grouped = route_grouped(topo, flows, failed=failed, keep=keep, **routing)
    distinct, rep = grouped
    status = distinct.status if rep is None else distinct.status[rep]
    lost = np.flatnonzero(status != 0)
    if routed is not None:
        routed[algorithm] = distinct
    if len(lost):
        why = distinct.reason(int(lost[0] if rep is None else rep[lost[0]]))   # a repeat's is its route's
        return None, f"{len(lost):,} of {len(flows):,} flows do not route: {why}"
    capacity = topo.resource_capacity_gbps() if capacity_gbps is None else capacity_gbps
    level = _grouped_first_level(capacity, grouped, flows) if rep is not None else None
    if level is not None:
        worst = _equal_bytes_time(float(flows.bytes[0]), level)
    else:
        # Laid out per flow: through the memo when kept (then route() finds them laid out).
        routes = (route(topo, flows, failed=failed, **routing) if keep and rep is not None
                  else lay_out(grouped, flows))
        if routed is not None:
            routed[algorithm] = routes
        worst = _slowest_time(capacity, routes, flows, flows.demand_gbps[routes.owner] * routes.share)
    if not np.isfinite(worst):
        return None, _no_time_reason(flows)
    return worst, None


def _no_time_reason(flows) -> str:
    """Why a flow has no finite time: bytes whose ``bytes * 8`` overflows (a scenario stored
    before sizes were bounded; the error used to blame a link "of capacity 0"), else no
    bandwidth."""
    largest = float(flows.bytes.max()) if len(flows.bytes) else 0.0
    if not np.isfinite(largest * 8.0 / 1e9):
        return (f"the flows' size ({largest:.3g} B) is too large to compute a time with; a pattern "
                "may carry at most 2**60 B")
    return "a flow gets no bandwidth (it crosses a resource of capacity 0)"


def _slowest_time(capacity, routes, flows, demand) -> float:
    """The slowest flow's data time (s) under the max-min solve of these routes: bytes * 8 /
    (slowest sub-flow level * 1e9), the largest over the flows (inf: a flow gets nothing)."""
    worst = _separate_sizes_time(capacity, routes, flows, demand)
    if worst is not None:
        return worst
    pace = np.minimum.reduceat(_levels(capacity, routes, flows, demand), routes.first)
    with np.errstate(divide="ignore"):
        times = np.where(flows.bytes > 0, flows.bytes * 8.0 / (pace * 1e9), 0.0)
    return float(times.max())


def _levels(capacity, routes, flows, demand) -> np.ndarray:
    """Sub-flow levels of the algorithm's max-min solve, or enough of them for the slowest flow.

    The fill stops once a flow carrying the most bytes freezes
    (:func:`~designer.engine.solve.maxmin.maxmin_levels_until`): with no demand cap every freeze is
    at the smallest fair share left, so levels only rise; a flow not reached yet will run at
    or above that level and moves no more bytes, so it cannot be slower. When every flow moves
    the same bytes the first freeze settles it: the first level, every resource's fair share
    ``capacity / Σ weights`` at the start (:func:`_first_level`), is returned for every
    sub-flow — the slowest flow's level and a lower bound of the others'. A flow with a demand
    cap freezes at its own level, out of that order: then the fill runs to the end.
    """
    if np.isfinite(demand).any():
        return solver.maxmin(capacity, routes.flow_ptr, routes.flow_res, demand, weights=routes.weight).flow_level
    if len(flows.bytes) and (flows.bytes == flows.bytes[0]).all():
        return np.full(routes.num_paths, _first_level(capacity, routes))
    largest = flows.bytes == flows.bytes.max()
    stop = np.where(largest[routes.owner], np.inf, -np.inf)
    level, stopped = solver.maxmin_levels_until(capacity, routes.flow_ptr, routes.flow_res, demand, stop,
                                                weights=routes.weight)
    if stopped:
        level[np.isnan(level)] = np.inf   # not reached: never the slowest (see above)
    return level


# Byte sizes beyond this many are left to the stopped fill (each size is one pass below).
_MAX_SIZES = 4


def _separate_sizes_time(capacity, routes, flows, demand) -> float | None:
    """:func:`_slowest_time` without a fill when the flows of each byte size cross resources
    that no flow of another size crosses and one size's time is clearly the largest; None
    otherwise (the fill decides).

    Why: the NVLS-tree candidate's NVLink plane flows (S(m+1)/m bytes) and its network tree
    flows (S/heads) share no resource; the stopped fill ran through all 65,504 tree flows of a
    16,384-GPU ring before its first plane flow froze.

    Exact: with no demand cap, a resource's fair share changes only when a flow crossing it
    freezes, so until a size's first freeze its resources keep ``capacity / Σ weights`` (summed
    in entry order as the kernel sums them: a resource's entries are all of one size), and the
    size first freezes at the smallest, ``H_c`` — or at the level already reached, when that
    is within the kernel's snap tolerance (``SNAP_RTOL``) below ``H_c``. The fill's
    very first freeze is at the lowest ``H``, to the bit (:func:`_first_level`); another size
    ``c`` freezes at ``H_c`` to the bit when no other size's flows can reach that window: a
    flow's level never exceeds ``capacity / weight`` of a finite resource it crosses
    (:func:`_level_bounds`). A size's slowest flow runs at its first level, so its time is
    ``bytes_c / H_c``; taken when that size's is exact and above every other size's (even at
    ``H / (1 + rtol)``) by a margin. It is then the stopped fill's answer (:func:`_levels`: the
    largest-bytes size freezes at or above it, and a size first freezing later has fewer bytes
    at a higher level).
    """
    from designer.engine.solve.kernels.constants import SNAP_RTOL

    if np.isfinite(demand).any():
        return None
    sizes, size_of = np.unique(flows.bytes, return_inverse=True)
    per_path = np.diff(routes.flow_ptr)
    if not 1 < len(sizes) <= _MAX_SIZES or not (per_path > 0).all() or not (routes.weight > 0).all():
        return None   # (a weightless sub-flow freezes at any level: no bound below)
    path_size = size_of.reshape(-1)[routes.owner]
    first = _size_first_levels(np.asarray(capacity, dtype=np.float64), routes, per_path, path_size, len(sizes))
    if first is None:
        return None
    with np.errstate(divide="ignore"):
        times = np.where(sizes > 0, sizes * 8.0 / (first * 1e9), 0.0)   # elementwise, as _slowest_time
    w = int(np.argmax(times))
    if w != int(np.argmin(first)):
        reach = _level_bounds(np.asarray(capacity, dtype=np.float64), routes, per_path, path_size, len(sizes))
        if reach is None or \
                max(reach[c] for c in range(len(sizes)) if c != w) * (1.0 + SNAP_RTOL) * (1.0 + 1e-6) >= first[w]:
            return None   # another size may reach w's window: w might freeze at that level
    if not all(times[c] * (1.0 + SNAP_RTOL) * (1.0 + 1e-9) < times[w] for c in range(len(sizes)) if c != w):
        return None
    return float(times[w])


def _size_first_levels(capacity, routes, per_path, path_size, n_sizes) -> np.ndarray | None:
    """Per byte size: the smallest ``capacity / Σ weights`` over the finite resources its flows
    cross, each sum in entry order; None when a resource is crossed by two sizes, or a size
    has no positive finite level (unlimited resources only, capacity 0, a negative one)."""
    res = routes.flow_res
    entry_size = np.repeat(path_size, per_path)
    size_of_res = np.zeros(len(capacity), dtype=entry_size.dtype)
    size_of_res[res] = entry_size        # any entry's size wins; all agree when sizes are separate
    if not (size_of_res[res] == entry_size).all():
        return None
    wsum = np.bincount(res, weights=np.repeat(np.asarray(routes.weight, dtype=np.float64), per_path),
                       minlength=len(capacity))
    crossed = (np.bincount(res, minlength=len(capacity)) > 0) & np.isfinite(capacity)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = capacity[crossed] / wsum[crossed]
    share_size = size_of_res[crossed]
    first = np.array([np.min(share[share_size == c], initial=np.inf) for c in range(n_sizes)])
    return first if (np.isfinite(first) & (first > 0)).all() else None


def _level_bounds(capacity, routes, per_path, path_size, n_sizes) -> np.ndarray | None:
    """Per byte size: the highest level a sub-flow of it can freeze at, ``capacity / weight``
    of the tightest finite resource it crosses, the largest over its sub-flows (sub-flows on
    unlimited resources only never freeze); None when the kernel's rounding could break that
    bound by more than 1e-7 relative.

    Why the rounding test: the kernel keeps each resource's weight sum as a running sum, adding
    every weight then subtracting those that freeze, so the sum left for the last sub-flow is
    off by up to ~``n_r · 2^-52 · Σw_r`` — against a weight of ``min w_r`` that can be a large
    factor (weights 0.7, 0.2 and 1.7e-16 on one resource left 5.6e-17 for the last: it froze at
    1.65× its ``capacity / weight``; found in review). Declining then leaves it to the fill."""
    weight = np.repeat(np.asarray(routes.weight, dtype=np.float64), per_path)
    res = routes.flow_res
    lightest = np.full(len(capacity), np.inf)
    np.minimum.at(lightest, res, weight)
    crossed = np.flatnonzero(np.isfinite(lightest))
    entries = np.bincount(res, minlength=len(capacity))[crossed]
    wsum = np.bincount(res, weights=weight, minlength=len(capacity))[crossed]
    if (entries * 2.0 ** -52 * wsum > 1e-7 * lightest[crossed]).any():
        return None
    with np.errstate(divide="ignore", invalid="ignore"):
        room = np.minimum.reduceat(np.asarray(capacity, dtype=np.float64)[res] / weight, routes.flow_ptr[:-1])
    bounded = np.isfinite(room)
    return np.array([np.max(room[bounded & (path_size == c)], initial=0.0) for c in range(n_sizes)])


def _first_level(capacity, routes) -> float:
    """The level of the fill's first freeze with no demand cap: the smallest fair share
    ``capacity / Σ weights of the sub-flows crossing it`` over the finite resources crossed
    (inf when none). The weights are summed in entry order, as the kernel sums them, so the
    share is the kernel's to the bit."""
    entry_weight = np.repeat(np.asarray(routes.weight, dtype=np.float64), np.diff(routes.flow_ptr))
    wsum = np.bincount(routes.flow_res, weights=entry_weight, minlength=len(capacity))
    crossed = (np.bincount(routes.flow_res, minlength=len(capacity)) > 0) & np.isfinite(capacity)
    return float(np.min(np.asarray(capacity, dtype=np.float64)[crossed] / wsum[crossed], initial=np.inf))


def _grouped_first_level(capacity, grouped, flows) -> float | None:
    """:func:`_first_level` of the routes :func:`route` would lay out from ``grouped`` (each
    flow ``i`` taking route ``rep[i]``), to the bit, without laying them out; None when that is
    not the level :func:`_levels` would return (a demand cap, unequal bytes).

    Why: the 16,384-GPU tree candidate's 524,256 flows are 98,272 distinct routes; laying them out
    as 1.9M paths and summing their 4.3M entries is work of which the level needs little.

    Exact: the fair shares are first summed per distinct route, counted once per flow taking
    it (a different order of adding, off by at most a few ulps); only the resources whose share
    comes within that error of the smallest can hold the kernel's minimum, and theirs are summed
    again entry by entry in the laid-out order (flow by flow), as the kernel sums them.
    """
    if np.isfinite(flows.demand_gbps).any() or not len(flows.bytes) or not (flows.bytes == flows.bytes[0]).all():
        return None
    routes, rep = grouped
    capacity = np.asarray(capacity, dtype=np.float64)
    per_path = np.diff(routes.flow_ptr)
    takers = np.bincount(rep, minlength=len(routes.count))   # flows per distinct route
    path_weight = np.asarray(routes.weight, dtype=np.float64)
    path_takers = takers[routes.owner]
    # Per entry its path's weight times takers (one repeat of the per-path products: the same
    # products as multiplying per entry).
    wsum = np.bincount(routes.flow_res, weights=np.repeat(path_weight * path_takers, per_path),
                       minlength=len(capacity))
    terms = np.bincount(routes.flow_res, weights=np.repeat(path_takers, per_path),
                        minlength=len(capacity))   # laid-out entries
    crossed = np.flatnonzero((terms > 0) & np.isfinite(capacity))
    if not len(crossed):
        return float("inf")
    with np.errstate(divide="ignore", invalid="ignore"):
        share = capacity[crossed] / wsum[crossed]
    if np.isnan(share).any() or share.min() < 0:
        return None   # capacity 0 over weight 0, or a negative capacity: left to the laid-out routes
    # Each sum of n terms is within n·2^-53 (relative) of the exact one, either way of adding.
    slack = 16.0 * (float(terms.max()) + 2.0) * 2.0 ** -53
    if slack > 1e-6:
        return None
    near = crossed[share <= share.min() * (1.0 + slack)]
    return _first_level_of(capacity, routes, rep, takers, near)


def _first_level_of(capacity, routes, rep, takers, near) -> float:
    """The smallest ``capacity / Σ weights`` over the resources ``near``, each sum taken over the
    laid-out routes' entries in their order: flow by flow (``rep``; ``takers``: the flows taking
    each distinct route), a route's entries in order."""
    hot = np.zeros(len(capacity), dtype=bool)
    hot[near] = True
    entries = np.flatnonzero(hot[routes.flow_res])   # distinct routes' entries on those resources
    path = np.searchsorted(routes.flow_ptr, entries, side="right") - 1
    flow_of = routes.owner[path]
    # The flows taking each route with such an entry, in flow order (sorting only those: the
    # few hundred on the 16,384-GPU tree's 5 hottest resources, not its 524,256 flows).
    hot_route = np.zeros(len(takers), dtype=bool)
    hot_route[flow_of] = True
    hot_flows = np.flatnonzero(hot_route[rep])
    by_route = hot_flows[np.argsort(rep[hot_flows], kind="stable")]
    start = np.zeros(len(takers) + 1, dtype=np.int64)
    np.cumsum(np.where(hot_route, takers, 0), out=start[1:])   # of each hot route in by_route
    count = takers[flow_of]
    flow = by_route[range_positions(start[flow_of], count)]   # per laid-out entry: its flow
    entry = np.repeat(np.arange(len(entries)), count)         # and its distinct entry
    order = np.lexsort((entry, flow))
    res = routes.flow_res[entries][entry[order]]
    weight = np.asarray(routes.weight, dtype=np.float64)[path][entry[order]]
    wsum = np.bincount(res, weights=weight, minlength=len(capacity))
    return float(np.min(capacity[near] / wsum[near], initial=np.inf))


def _equal_bytes_time(size: float, level: float) -> float:
    """:func:`_slowest_time` when every flow moves ``size`` bytes and runs at ``level``."""
    with np.errstate(divide="ignore"):
        return float(np.float64(size) * 8.0 / (np.float64(level) * 1e9)) if size > 0 else 0.0


def network_steps_us(topo, group: Group, routing: dict, failed=None) -> dict[str, float]:
    """Latency (µs) of one network step per protocol on this topology's own path (empty on one
    host): the first live rail's GPU of the first host to the same rail's GPU of the second host
    (NCCL's rings and trees cross hosts rail-aligned), routed with the scenario's routing
    options, through :func:`designer.engine.model.hop_latency.network_step` — the hops, switch tiers, PCIe
    path and CPU-proxied control of the real fabric instead of one tuner figure."""
    if group.nodes < 2:
        return {}
    a, b = group.blocks[0], group.blocks[1]
    rail = next((r for r in (group.rails or [0]) if r < len(a) and r < len(b)), 0)
    flows = Flows.from_pairs([int(a[rail])], [int(b[rail])], 8.0, pattern_id="net-step")
    routes = route(topo, flows, failed=failed, **routing)
    if routes.status[0] != 0:
        return {}   # the algorithms' own flows report why they do not route
    path = routes.path_nodes(int(routes.first[0]))
    return {p: network_step(topo, path, p)["total_ns"] * 1e-3 for p in PROTOCOLS}


def _best_protocol(algorithm, group, intra, data_s, eff_alg, protocol, net_overhead=NET_OVERHEAD_US,
                   net_steps=None, topo=None, plugin_latency=0.0, forced=None):
    """(time_s, protocol, latency_s, efficiency, selection time) of the allowed protocol NCCL's model
    chooses (a net plugin's ``forced`` pair costs 0); the efficiency holds NCCL's per-architecture
    ceilings (:func:`.protocols.tuner_efficiency`) and the size factor of :mod:`.sizing`."""
    best = None
    ceilings = ceilings_for(topo, group, algorithm) if topo is not None else None
    factor = size_factors_for(topo, group, algorithm) if topo is not None else (lambda protocol: 1.0)
    # All-to-all's sends are not tuned: NCCL picks LL or Simple by the bytes a peer gets.
    for p in protocols_for(algorithm, group.size / max(group.n, 1) if protocol == "auto" else None):
        if protocol not in ("auto", p):
            continue
        lat = (latency_us(algorithm, p, group.kind, group.n, group.nodes, intra, net_overhead,
                          (net_steps or {}).get(p), plugin_latency) * 1e-6
               if group.size > 0 else 0.0)
        if algorithm == "ring" and p == "Simple" and ceilings is not None:
            # NCCL's ring Simple "plateau" (src/tuning/ring.cc ncclTuningRingModelSim).
            lat *= ring_plateau(group.kind, group.n, group.nodes, group.size, ceilings["channels"],
                                ceilings["arch"], intra)
        eff = protocol_efficiency(algorithm, p, group, data_s, ceilings) * eff_alg * factor(p)
        if algorithm == "tree" and group.kind == "allreduce":
            # NCCL's own medium-size correction of the tree (tuning.cc ncclTopoGetAlgoTime).
            eff *= tree_correction(p, group.size)
        score = FORCED_COST if forced == (algorithm, p) else selection_time(algorithm, lat, data_s, eff)
        if best is None or score < best[4]:
            best = (lat + data_s / eff, p, lat, eff, score)
    return best


def plan_pattern(topo, pattern: dict, routing: dict | None = None, failed=None, capacity_gbps=None) -> Plan:
    """Choose the algorithm and protocol of one normalized collective pattern.

    Parameters
    ----------
    topo : Topology
    pattern : dict
        Normalized pattern (``kind``, ``participants``, ``bytes``, ``algorithm``, ``protocol``,
        ``where``).
    routing : dict, optional
        ``nic_policy``, ``multipath``, ``seed`` (default: affinity, hash, 0), and ``gdr_off``:
        host ids without GPUDirect RDMA, whose network legs stage through host memory.
    failed : FailureSet, optional
        Plan on the topology with these elements down (NCCL re-initialized on it).
    capacity_gbps : ndarray, optional
        Resource capacities (degraded ones included); default the topology's.

    Raises
    ------
    InvalidWorkload
        An explicit algorithm (or protocol) that does not run on this topology, with the reason.
    """
    routing = dict(routing or {})
    # "gdr_off": hosts without GPUDirect RDMA (a diagnosis candidate); not a route() option.
    staged = tuple(routing.pop("gdr_off", None) or ())
    failed = FailureSet.coerce(failed) if failed is not None else None
    group = group_of(topo, pattern, failed)
    where = pattern.get("where", "workload")
    requested = pattern.get("algorithm") or "auto"
    protocol = pattern.get("protocol") or "auto"
    reasons = allowed_only(_reasons(topo, group, protocol), pattern.get("algorithms"))
    usable = _check_requested(reasons, requested, protocol, where)
    # One (algorithm, protocol) candidate needs no prediction, except to report a fallback's time.
    single = (failed is None and len(usable) == 1
              and len([p for p in protocols_for(usable[0]) if protocol in ("auto", p)]) == 1
              and not may_be_capped(topo, group, usable[0], protocol))
    routed, nics = {}, compute_nic_models(topo, group)   # one scan of the NICs for the latency and the chooser
    forced = plugin_choice(topo, group, nics, reasons, requested, protocol)
    # An explicit algorithm is the one chosen: the others' routes need not be kept for prepare.
    alternatives, scored = _predict(topo, group, reasons, protocol, single,
                                    lambda a: _data_time(topo, group, a, routing, failed, capacity_gbps, routed,
                                                         keep=requested in ("auto", a), staged=staged),
                                    network_steps_us(topo, group, routing, failed), nics, forced)
    pool = [requested] if requested != "auto" else [a for a in usable if a in scored]
    if not pool or pool[0] not in scored:
        chosen = requested if requested != "auto" else usable[0]
        raise InvalidWorkload("no algorithm routes here", [Problem(
            f"{where}.algorithm", alternatives[chosen]["reason"] or "no algorithm routes every flow")])
    chosen = min(pool, key=lambda a: (scored[a][4], ALGORITHMS.index(a)))
    # Only the chosen algorithm's flows are routed again (simulate): the others' routes go.
    forget_routes(topo, [r for r in routed.values() if r is not routed.get(chosen)], failed)
    _, proto, lat, eff, _ = scored[chosen]
    return Plan(chosen, proto, lat, eff, group.n, group.nodes, group.size, alternatives,
                chooser_name(requested, forced == (chosen, proto)))


def _predict(topo, group: Group, reasons: dict, protocol: str, single: bool, data_time, net_steps=None,
             nics=None, forced=None):
    """``alternatives`` (every algorithm: predicted time, protocol, reason) and ``scored`` (algorithm →
    (time, protocol, latency, efficiency, selection time) of those that route; :func:`_best_protocol`)."""
    intra = intra_technology(topo, group)
    overhead = net_overhead_us(topo, group)
    plugin_latency = net_plugin_latency_of(topo, group, nics)
    alternatives, scored = {}, {}
    for a, reason in reasons.items():
        data_s = 0.0
        if reason is None and not (single or group.n < 2):
            data_s, reason = data_time(a)
        if reason is not None:
            alternatives[a] = {"time_s": None, "protocol": None, "reason": reason}
            continue
        eff_alg = nvls.plane_efficiency(topo, group, a, data_s) if a in ("nvls", "nvlstree") else 1.0
        scored[a] = _best_protocol(a, group, intra, data_s, eff_alg, protocol, overhead, net_steps, topo,
                                   plugin_latency, forced)
        alternatives[a] = {"time_s": None if single else scored[a][0], "protocol": scored[a][1], "reason": None}
    return alternatives, scored


def check_algorithm(topo, pattern: dict) -> None:
    """Raise the located :class:`InvalidWorkload` of an explicit algorithm (or protocol) that does
    not run on ``topo`` — the structural checks of :func:`plan_pattern`, without any solve, so a
    scenario is refused when it is validated, not when it runs."""
    group = group_of(topo, pattern)
    _check_requested(allowed_only(_reasons(topo, group, pattern.get("protocol") or "auto"), pattern.get("algorithms")),
                     pattern.get("algorithm") or "auto", pattern.get("protocol") or "auto",
                     pattern.get("where", "workload"))


def _reasons(topo, group: Group, protocol: str) -> dict[str, str | None]:
    """Per algorithm of the pattern's kind: why it does not run here (None when it does).

    The last answer is kept on the topology: a scenario's validation (:func:`check_algorithm`)
    and its planning ask it for the same group, and NVLS's NVSwitch checks walk every host's
    plane (16,384 generation look-ups at 16,384 GPUs). The key holds everything the
    ``supports`` checks read: kind, participants (hence blocks and hosts), live rails, protocol.
    """
    key = (group.kind, group.participants.tobytes(), tuple(group.rails), protocol)
    last = topo.__dict__.get("_collective_reasons")
    if last is not None and last[0] == key:
        return dict(last[1])
    reasons = _reasons_uncached(topo, group, protocol)
    topo.__dict__["_collective_reasons"] = (key, dict(reasons))
    return reasons


def _reasons_uncached(topo, group: Group, protocol: str) -> dict[str, str | None]:
    names = candidates(group.kind)
    reasons = {a: MODULES[a].supports(topo, group) for a in names}
    if group.nodes > 1 and not group.rails:
        reasons = {a: r or ("no rail has its GPU and NIC up in every host" if a != "p2p" else None)
                   for a, r in reasons.items()}
    if protocol != "auto":
        for a in names:
            if reasons[a] is None and protocol not in protocols_for(a):
                reasons[a] = f"{a} runs with {', '.join(protocols_for(a))} only, not {protocol}"
    return reasons


def _check_requested(reasons: dict, requested: str, protocol: str, where: str) -> list[str]:
    """The algorithms that run; a located error when the requested one (or none) does."""
    why = reasons.get(requested)
    if requested != "auto" and why:
        field_ = "protocol" if protocol != "auto" and why.endswith(f"not {protocol}") else "algorithm"
        raise InvalidWorkload(f"algorithm {requested} does not run here", [Problem(f"{where}.{field_}", why)])
    usable = [a for a, r in reasons.items() if r is None]
    if not usable:
        raise InvalidWorkload("no algorithm runs here", [Problem(
            f"{where}.algorithm", "; ".join(f"{a}: {r}" for a, r in reasons.items()))])
    return usable
