"""Routing across the unified graph: host-internal segments + NIC choice + fabric ECMP.

:func:`route` turns flows (source and destination node indices) into paths, given as CSR arrays of
resources in the topology's numbering (see ``topology.py``), ready for the solver.

Transit rules (DESIGN.md §2.4)
------------------------------
- fabric nodes (no enclosing host) forward, except endpoints (``storage``);
- a host's internal components forward only traffic that starts or ends in that host, so a path
  never crosses a third host;
- endpoints (GPU, memory, NVMe, storage) never forward, except a GPU used as the explicit PXN relay.

How a path is built
-------------------
A path is a concatenation of *segments*:

``src ─intra(src host)→ gateway ─uplink→ switch ─fabric ECMP→ switch ─downlink→ gateway ─intra→ dst``

- *intra-host segments* are equal-cost shortest paths inside one host (NVLink hops cost 1, other
  hops 2, so NVLink is preferred). Hosts with the same structure (every host of a template) share a
  :class:`_Shape`: segments are computed once per shape in local numbering and mapped to each host's
  resources with one array gather. Inside a host, equal-cost alternatives (a GPU pair through each of
  the NVSwitches) are always *split*, in proportion to their bottleneck capacity (see
  :meth:`_Shape.striped`): NVLink stripes traffic over all its links in hardware, so hashing onto
  one NVSwitch would understate NVLink bandwidth, and an even split would make the 4-link
  switches of a DGX H100 (5/4/4/5 links) look like bottlenecks. Each distinct path is one
  sub-flow with a *striping multiplicity* (5, 4, 4, 5) and a solver *weight* equal to its share
  (5/18, 4/18, 4/18, 5/18), solved by weighted max-min (see "Fairness" below).
- the *gateway* (the NIC) is chosen by the NIC policy, per host shape, with lookup tables;
- *fabric segments* are equal-cost shortest paths between switches (hop count), enumerated once per
  (first switch, last switch) pair; ``multipath="hash"`` picks one per flow with a seeded hash of the
  flow's identity, ``"split"`` divides the flow over all of them (at most
  :data:`MAX_EQUAL_COST_PATHS`).

A flow with several alternatives becomes several *paths* (sub-flows), one per distinct path, each
with ``stripes`` (its striping multiplicity: the product of the striping weights of the segment
alternatives it combines; 1 for every alternative of an even ``split``), a ``share`` (its
stripes over its flow's total: the fraction of the flow's bytes and demand it carries, summing
to 1 per flow) and a solver ``weight`` equal to its share. All per-path arrays are built with
numpy (CSR concatenation), so a 1M-flow all-to-all routes in a few seconds. Path classes
(NVL/PIX/…/NET) come from :mod:`designer.engine.pathclass`, called once per structural key
(shape, local endpoints, NIC choice), not once per flow.

Fairness: weights are shares, so a flow is one flow however it is striped
--------------------------------------------------------------------------------
The solver runs weighted max-min: at water level λ an unfrozen sub-flow of weight w runs at
w·λ. Weights are normalized per flow (they sum to 1), so on a resource that *all* sub-flows
of a flow cross — its NIC, its PCIe link, a shared first or last fabric hop — the flow weighs
exactly 1 and competes as one flow, whatever its striping: a PXN flow whose NVLink leg is
striped 5/4/4/5 over the NVSwitches, a ``split`` flow over k spines, an ``any`` + ``split``
flow over k NICs each get the same share of a shared bottleneck as an unstriped flow. (Weighting
paths by raw multiplicity, as the former "repeat each alternative k times" formulation did,
made a PXN flow weigh 18 against an affinity flow's 1 on their common NIC, and a ``split``
flow weigh k on its own uplink: wrong.) When its sub-flows freeze together the flow runs at the
common level λ = Σ w·λ; on a resource crossed by only some of them (one NVSwitch, one spine)
a sub-flow of share w takes w of what a whole flow would — weighted fair share per path.

Sub-flows of one flow may freeze at *different* levels when their paths have different
bottlenecks (one spine congested, the other not). Each then runs at w·λ_p, independently. This
is the standard "weighted fair share per path" approximation of a striped flow: the split is
proportional (NVLink sprays over its links, ECMP ``split`` and NCCL channels divide the bytes
in fixed proportions) and never adaptive — a sub-flow does not move bytes to a faster sibling
— so each stripe carries exactly its share of the bytes, at its own fair rate, and the flow
completes when its slowest stripe does (see :mod:`designer.engine.simulate`). The
approximation lets a fast stripe keep its fair rate (and its load on its path) where a lockstep
sender would hold every stripe to the slowest one's pace; either way a flow never weighs more
than 1 on any resource (less where only some of its stripes cross it).
:meth:`Routes.repeated` expands a path of k stripes into k sub-flows of weight share/k, an
equivalent formulation (weighted max-min is additive on a path) kept to check exactly that.

Limits of the model: two hosts cabled back to back (NIC to NIC without a switch) and traffic that
leaves a host and re-enters the same host through the fabric are not routed (reported unroutable).
"""
from __future__ import annotations

import heapq
import math
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from designer.engine.errors import InvalidScenario, LimitExceeded, Problem
from designer.engine.topology import ENDPOINT_KINDS, Topology

__all__ = [
    "NIC_POLICIES", "MULTIPATH_MODES", "MAX_EQUAL_COST_PATHS", "MAX_PATH_ENTRIES",
    "FailureSet", "Routes", "RoutingContext", "route", "routing_context", "path_nodes_from_resources",
]

NIC_POLICIES = ("affinity", "pxn", "any", "static")
MULTIPATH_MODES = ("hash", "split")
# Equal-cost paths enumerated per pair of switches (hash and split choose among these). A
# 2-tier fabric has one per spine; a 3-tier fat-tree(k) has (k/2)^2, so k=16 fits entirely.
MAX_EQUAL_COST_PATHS = 64
# Total (path, resource) entries route() may produce: ~8 bytes each in several arrays, so 60M
# entries is about 2 GB across routing and solver.
MAX_PATH_ENTRIES = 60_000_000

_NVLINK_COST, _OTHER_COST = 1, 2
# Reason codes for unroutable flows (formatted lazily: a failure sweep can make 100k of them).
_OK, _SRC_DOWN, _DST_DOWN, _NIC_DOWN, _NO_NIC, _NO_INTRA_SRC, _NO_INTRA_DST, _NO_FABRIC, \
    _NO_INTRA, _UPLINK_DOWN, _SAME_NODE = range(11)


@dataclass(frozen=True)
class FailureSet:
    """Elements that are down: node indices and link indices of the topology."""

    nodes: frozenset = frozenset()
    links: frozenset = frozenset()

    @classmethod
    def coerce(cls, failed) -> "FailureSet":
        """Accept None, a FailureSet, ``{"nodes": [...], "links": [...]}`` or ``(nodes, links)``."""
        if failed is None:
            return cls()
        if isinstance(failed, FailureSet):
            return failed
        if isinstance(failed, dict):
            return cls(frozenset(int(n) for n in failed.get("nodes", ())),
                       frozenset(int(l) for l in failed.get("links", ())))
        nodes, links = failed
        return cls(frozenset(int(n) for n in nodes), frozenset(int(l) for l in links))


@dataclass
class Routes:
    """Routed flows. Paths (sub-flows) of flow ``f`` are ``first[f] : first[f] + count[f]``.

    Attributes
    ----------
    flow_ptr, flow_res : ndarray of int64
        CSR over *paths*: path ``p`` crosses resources ``flow_res[flow_ptr[p]:flow_ptr[p+1]]`` in
        path order — the solver's input. With no splitting there is one path per routed flow.
    owner : ndarray of int64
        Flow index of each path.
    share : ndarray of float64
        Fraction of its flow's bytes (and demand) each path carries; sums to 1 per routed flow.
        Proportional to ``stripes`` within a flow.
    src : ndarray of int64
        Source node of each flow (the first node of each of its paths).
    first, count : ndarray of int64
        Per flow: index of its first path and number of paths (0 when unroutable).
    status : ndarray of int8
        Per flow: 0 = ok, otherwise a reason code (see :meth:`reason`).
    class_code : ndarray of int16
        Per flow: index into ``class_names`` of its path class (-1 when unroutable).
    class_names : list of str
    weight : ndarray of float64
        Per path: its weight for the solver (``maxmin(..., weights=routes.weight)``), equal to
        its ``share``: weights sum to 1 per flow, so a flow competes with weight 1 on every
        resource all its paths cross (5/18, 4/18, 4/18, 5/18 for the 4 NVSwitch paths of a
        DGX H100 GPU pair; 1/k for each of k paths of an even split; 1 for an unsplit flow).
        Defaults to ``share``.
    stripes : ndarray of float64
        Per path: its striping multiplicity, the product of the striping weights of the segment
        alternatives it combines (5, 4, 4, 5 for that GPU pair: its NVLink counts; 1 for each
        path of an even split). Only ratios within a flow matter; :meth:`repeated` expands a
        path into ``stripes`` sub-flows. All 1 when not given.
    """

    topo: Topology
    flow_ptr: np.ndarray
    flow_res: np.ndarray
    owner: np.ndarray
    share: np.ndarray
    src: np.ndarray
    first: np.ndarray
    count: np.ndarray
    status: np.ndarray
    class_code: np.ndarray
    class_names: list[str]
    nic_policy: str = "affinity"
    _subject: np.ndarray = field(default=None, repr=False)
    _nic: np.ndarray = field(default=None, repr=False)   # per flow: the dead NIC a reason names
    weight: np.ndarray = None
    stripes: np.ndarray = None

    def __post_init__(self):
        if self.weight is None:
            self.weight = np.asarray(self.share, dtype=np.float64).copy()
        if self.stripes is None:
            self.stripes = np.ones(len(self.owner))

    @property
    def num_flows(self) -> int:
        return len(self.status)

    @property
    def num_paths(self) -> int:
        return len(self.owner)

    def ok(self) -> np.ndarray:
        """Boolean mask of routed flows."""
        return self.status == _OK

    def path_class(self, f: int) -> str | None:
        code = int(self.class_code[f])
        return self.class_names[code] if code >= 0 else None

    def path_resources(self, p: int) -> np.ndarray:
        return self.flow_res[self.flow_ptr[p]:self.flow_ptr[p + 1]]

    def path_nodes(self, p: int) -> list[int]:
        """Node indices of path ``p`` in order (rebuilt from its link resources)."""
        return path_nodes_from_resources(self.topo, int(self.src[self.owner[p]]), self.path_resources(p))

    def flow_paths(self, f: int) -> list[list[int]]:
        """Every path (as node indices) of flow ``f``; empty when unroutable."""
        return [self.path_nodes(p) for p in range(int(self.first[f]), int(self.first[f] + self.count[f]))]

    def failed_nic(self, f: int) -> str | None:
        """The NIC whose failure (down, or no working uplink) made flow ``f`` unroutable, if any:
        ``h3/nic5`` for "GPU h3/gpu5's only NIC under policy affinity is down"."""
        if self._nic is None or self.status[f] == _OK or self._nic[f] < 0:
            return None
        return self.topo.node_ids[int(self._nic[f])]

    def replace_flows(self, idx: np.ndarray, sub: "Routes") -> "Routes":
        """These routes with the flows ``idx`` (sorted) replaced by ``sub`` (routed for exactly
        those flows, in that order): how a failure re-routes only the flows it touches."""
        return _replace_flows(self, idx, sub)

    def repeated(self) -> "Routes":
        """The same routes with every path of k ``stripes`` repeated as k sub-flows of one stripe
        each, share and weight divided by k (so each weighs ``1 / stripes of its flow``): the
        former repeated-sub-flow formulation, with the per-flow normalization. Weighted max-min
        is additive on a path (k flows of weight w/k on one path get together what one flow of
        weight w gets), so solving either gives the same per-flow rates; kept to check exactly
        that (tests), and for tools that want one sub-flow per stripe.

        Raises
        ------
        ValueError
            When a path's ``stripes`` is not a positive integer.
        """
        k = np.rint(self.stripes).astype(np.int64)
        if len(k) and (np.any(k < 1) or np.any(np.abs(self.stripes - k) > 1e-9 * k)):
            raise ValueError("only integer stripes can be expanded into repeated sub-flows")
        path = np.repeat(np.arange(self.num_paths, dtype=np.int64), k)
        values, lens = _gather_rows(self.flow_ptr, self.flow_res, path)
        flow_ptr = np.zeros(len(path) + 1, dtype=np.int64)
        np.cumsum(lens, out=flow_ptr[1:])
        count = np.bincount(self.owner[path], minlength=self.num_flows).astype(np.int64)
        first = np.zeros(self.num_flows, dtype=np.int64)
        np.cumsum(count[:-1], out=first[1:])
        return Routes(self.topo, flow_ptr, values, self.owner[path], (self.share / k)[path], self.src, first,
                      count, self.status, self.class_code, list(self.class_names), self.nic_policy,
                      self._subject, self._nic, (self.weight / k)[path], np.ones(len(path)))

    def reason(self, f: int) -> str | None:
        """Why flow ``f`` is unroutable (None when it is routed)."""
        code = int(self.status[f])
        if code == _OK:
            return None
        ids = self.topo.node_ids
        subject = int(self._subject[f])
        name = ids[subject] if subject >= 0 else "?"
        kind = self.topo.node_kind[subject] if subject >= 0 else "node"
        return _REASONS[code].format(node=name, kind=kind.upper() if kind in ("gpu", "nic") else kind,
                                     policy=self.nic_policy)


_REASONS = {
    _SRC_DOWN: "source {node} is down",
    _DST_DOWN: "destination {node} is down",
    _NIC_DOWN: "{kind} {node}'s only NIC under policy {policy} is down",
    _NO_NIC: "{node} has no NIC connected to the fabric",
    _NO_INTRA_SRC: "no path inside the host from {node} to its NIC (transit rules or failures)",
    _NO_INTRA_DST: "no path inside the host from the NIC to {node} (transit rules or failures)",
    _NO_FABRIC: "no fabric path towards {node}",
    _NO_INTRA: "no path inside the host to {node} (transit rules or failures)",
    _UPLINK_DOWN: "{kind} {node}'s only NIC under policy {policy} has no working link to the fabric",
    _SAME_NODE: "source and destination are the same node ({node})",
}


def path_nodes_from_resources(topo: Topology, start: int, resources) -> list[int]:
    """Node sequence of a path from its start node and its ordered resources."""
    nodes, cur = [start], start
    two_l = 2 * topo.num_links
    for r in np.asarray(resources).tolist():
        if r >= two_l:
            continue
        link = r >> 1
        cur = int(topo.link_b[link]) if (r & 1) == 0 else int(topo.link_a[link])
        nodes.append(cur)
    return nodes


# ======================================================================================== host shapes
def _is_nvlink(topo: Topology, link: int) -> bool:
    tech = (topo.link_tech[link] or "").lower()
    ka, kb = topo.node_kind[topo.link_a[link]], topo.node_kind[topo.link_b[link]]
    return tech.startswith("nvl") or "nvswitch" in (ka, kb) or (ka == kb == "gpu")


class _Shape:
    """Structure shared by hosts that look alike: local numbering, intra-host segment cache and
    NIC-choice tables. ``nodes``/``links`` are those of the first member (the representative)."""

    def __init__(self, topo: Topology, nodes: list[int], links: list[int], gateways: list[bool],
                 failed_nodes: set, failed_links: set, fabric_roles: list):
        self.topo = topo
        self.nodes = nodes
        self.n = len(nodes)
        local = {g: i for i, g in enumerate(nodes)}
        self.kind = [topo.node_kind[g] for g in nodes]
        self.attrs = [topo.node_attrs[g] for g in nodes]
        self.local_ids = [_local_id(topo, g) for g in nodes]
        self.has_cap = [topo.node_resource[g] >= 0 for g in nodes]
        self.nl = len(links)
        # Nominal capacities of the local tokens (links, then capacity-bearing nodes): striping
        # weights come from them (degradations never move traffic, so nominal is the right one).
        self.token_cap = np.concatenate([np.repeat(topo.link_capacity_gbps[links], 2) if links else np.zeros(0),
                                         np.asarray(topo.node_capacity_gbps, dtype=np.float64)[nodes]])
        self.adj: list[list[tuple[int, int, int, int]]] = [[] for _ in nodes]  # (nbr, ll, dir, cost)
        self.adj_all: list[list[tuple[int, int]]] = [[] for _ in nodes]
        for ll, l in enumerate(links):
            a, b = local[int(topo.link_a[l])], local[int(topo.link_b[l])]
            cost = _NVLINK_COST if _is_nvlink(topo, l) else _OTHER_COST
            self.adj_all[a].append((b, cost))
            self.adj_all[b].append((a, cost))
            if ll in failed_links:
                continue
            self.adj[a].append((b, ll, 0, cost))
            self.adj[b].append((a, ll, 1, cost))
        self.nvlink_ll = {ll for ll, l in enumerate(links) if _is_nvlink(topo, l)}
        self.failed = failed_nodes
        self.forwards = [k not in ENDPOINT_KINDS for k in self.kind]
        self.gateway = gateways          # alive gateway (has a working uplink)
        self.gateway_any = fabric_roles  # has an uplink at all, alive or not (for affinity)
        self.segments: dict[tuple[int, int], list[list[int]]] = {}
        self._tables: dict[str, np.ndarray] = {}

    # ---------------------------------------------------------------- intra-host paths
    def segment(self, a: int, b: int) -> list[list[int]]:
        """Equal-cost paths a→b inside the host as local token lists (``2*ll+dir`` for a link,
        ``2*nl + node`` for a capacity-bearing node), empty if none. Cached."""
        key = (a, b)
        if key not in self.segments:
            self.segments[key] = self._enumerate(a, b)
        return self.segments[key]

    def _enumerate(self, a: int, b: int) -> list[list[int]]:
        if a in self.failed or b in self.failed or a == b:
            return [] if a != b else [[2 * self.nl + a] if self.has_cap[a] else []]
        dist = self._dijkstra(a, b)
        if b not in dist:
            return []
        # Walk back from b over predecessors on shortest paths (DAG of equal-cost paths).
        paths: list[list[tuple[int, int, int]]] = []
        stack = [(b, [])]
        while stack and len(paths) < MAX_EQUAL_COST_PATHS:
            v, suffix = stack.pop()
            if v == a:
                paths.append(suffix)
                continue
            for u, ll, direction, cost in self.adj[v]:
                if u in dist and dist[u] + cost == dist[v] and (u == a or self._transit(u)):
                    # adj[v] stores the direction v→u; the path goes u→v, the opposite one.
                    stack.append((u, [(u, ll, 1 - direction)] + suffix))
        out = [self._with_node_tokens(a, hops) for hops in paths]
        out.sort()
        return out

    def _with_node_tokens(self, a, hops) -> list[int]:
        tokens = [2 * self.nl + a] if self.has_cap[a] else []
        cur = a
        for u, ll, direction in hops:
            tokens.append(2 * ll + direction)
            cur = self._far(cur, ll)
            if self.has_cap[cur]:
                tokens.append(2 * self.nl + cur)
        return tokens

    def _far(self, cur, ll):
        for v, l2, _, _ in self.adj[cur]:
            if l2 == ll:
                return v
        raise AssertionError("link not adjacent")

    def _transit(self, u: int) -> bool:
        return self.forwards[u] and u not in self.failed

    def _dijkstra(self, a: int, b: int) -> dict[int, int]:
        dist = {a: 0}
        heap = [(0, a)]
        done = set()
        while heap:
            d, u = heapq.heappop(heap)
            if u in done:
                continue
            done.add(u)
            if u == b:
                continue
            if u != a and not self._transit(u):
                continue
            for v, ll, _, cost in self.adj[u]:
                if v in self.failed:
                    continue
                nd = d + cost
                if nd < dist.get(v, 1 << 60):
                    dist[v] = nd
                    heapq.heappush(heap, (nd, v))
        return dist

    def striped(self, alternatives: list[list[int]]) -> tuple[list[list[int]], list[float]]:
        """Equal-cost alternatives with striping weights proportional to their bottleneck capacity,
        so that weighted max-min stripes like NVLink does: a DGX H100 GPU has 5/4/4/5 NVLinks to
        its 4 NVSwitches, so a GPU pair gets 4 sub-flows striped 5/4/4/5 (18 in all; the flow's
        solver weights are these over 18, see the module docstring). Tokens common to every
        alternative do not count. Weights are the smallest integers in the capacity ratio (scale
        up to 8), so that :meth:`Routes.repeated` can expand them into whole sub-flows; other
        ratios keep their exact value times 4. Equal capacities (or an unknown one) weigh 1 each."""
        ones = [1.0] * len(alternatives)
        if len(alternatives) <= 1:
            return alternatives, ones
        common = set(alternatives[0]).intersection(*alternatives[1:])
        caps = [min((float(self.token_cap[t]) for t in alt if t not in common), default=math.inf)
                for alt in alternatives]
        if len(set(caps)) == 1 or not all(math.isfinite(c) and c > 0 for c in caps):
            return alternatives, ones
        ratio = [c / min(caps) for c in caps]
        scale = next((k for k in range(1, 9) if all(abs(r * k - round(r * k)) < 1e-6 for r in ratio)), None)
        if scale is None:
            return alternatives, [r * 4 for r in ratio]
        return alternatives, [float(round(r * scale)) for r in ratio]

    def alive_nic(self, v: int) -> bool:
        return v >= 0 and bool(self.gateway[v]) and v not in self.failed

    def live_nics(self, storage: bool) -> np.ndarray:
        """Local NICs (compute or storage role) that are up and have a working uplink."""
        key = f"live{int(storage)}"
        if key not in self._tables:
            self._tables[key] = np.array([v for v in self._nics(storage) if self.alive_nic(v)], dtype=np.int64)
        return self._tables[key]

    def nvlink_only(self, a: int, b: int) -> bool:
        paths = self.segment(a, b)
        return bool(paths) and all(t >= 2 * self.nl or (t >> 1) in self.nvlink_ll for t in paths[0])

    # ---------------------------------------------------------------- NIC-choice tables
    def _healthy_distance(self, a: int) -> dict[int, int]:
        """PCIe-ish distance from a (ignoring failures: affinity is decided on the healthy host,
        as NCCL decides it once at start-up)."""
        dist = {a: 0}
        heap = [(0, a)]
        while heap:
            d, u = heapq.heappop(heap)
            if d > dist[u] or (u != a and not self.forwards[u]):
                continue
            for v, cost in self.adj_all[u]:
                if d + cost < dist.get(v, 1 << 60):
                    dist[v] = d + cost
                    heapq.heappush(heap, (d + cost, v))
        return dist

    def affinity(self, storage: bool) -> np.ndarray:
        """Per local node: the nearest NIC (local index) among compute (or storage) NICs, -1 if
        none. Ties between equally near NICs are dealt round-robin among the nodes that share
        them, so two GPUs under a switch with two NICs get one NIC each (NCCL pairs them so)."""
        key = "aff_storage" if storage else "aff"
        if key not in self._tables:
            nics = self._nics(storage)
            table = np.full(self.n, -1, dtype=np.int64)
            dealt: dict[tuple, int] = {}
            for v in self._endpoint_order():
                if self.kind[v] == "nic" and v in nics:
                    table[v] = v
                    continue
                dist = self._healthy_distance(v)
                reach = [(dist[g], g) for g in nics if g in dist]
                if not reach:
                    continue
                best = min(d for d, _ in reach)
                tied = tuple(sorted(g for d, g in reach if d == best))
                k = dealt.get((self.kind[v], tied), 0)
                dealt[(self.kind[v], tied)] = k + 1
                table[v] = tied[k % len(tied)]
            self._tables[key] = table
        return self._tables[key]

    def _endpoint_order(self) -> list[int]:
        def key(v):
            index = self.attrs[v].get("index")
            return (self.kind[v], 0 if isinstance(index, int) else 1, index if isinstance(index, int) else 0,
                    self.local_ids[v])
        return sorted(range(self.n), key=key)

    def _nics(self, storage: bool) -> list[int]:
        wired = [v for v in range(self.n) if self.gateway_any[v]]
        nics = [v for v in wired if self.kind[v] == "nic"] or wired
        role = [v for v in nics if (self.attrs[v].get("role") == "storage") == storage]
        return role or nics

    def static(self, storage: bool) -> np.ndarray:
        """Bindings from node attrs ``{"nic": "nic3"}`` (local or full id); affinity elsewhere."""
        key = "static_storage" if storage else "static"
        if key not in self._tables:
            table = self.affinity(storage).copy()
            by_id = {lid: i for i, lid in enumerate(self.local_ids)}
            by_id.update({self.topo.node_ids[g]: i for i, g in enumerate(self.nodes)})
            for v in range(self.n):
                bound = self.attrs[v].get("nic")
                if isinstance(bound, str) and bound in by_id:
                    table[v] = by_id[bound]
            self._tables[key] = table
        return self._tables[key]

    def rail_of(self, rails: dict) -> np.ndarray:
        """Per local node: integer rail key of the node if it is a NIC with a ``rail`` attr, else -1."""
        key = "rail"
        if key not in self._tables:
            out = np.full(self.n, -1, dtype=np.int64)
            for v in range(self.n):
                rail = self.attrs[v].get("rail")
                if self.kind[v] == "nic" and rail is not None and self.gateway_any[v]:
                    out[v] = rails.setdefault(repr(rail), len(rails))
            self._tables[key] = out
        return self._tables[key]

    def rail_gateway(self, rails: dict, num_rails: int, storage: bool) -> np.ndarray:
        """Per rail key: the local NIC on that rail (-1 when none)."""
        key = f"rail_gw{int(storage)}_{num_rails}"
        if key not in self._tables:
            rail = self.rail_of(rails)
            out = np.full(max(num_rails, 1), -1, dtype=np.int64)
            for v in sorted(self._nics(storage), reverse=True):
                if rail[v] >= 0 and rail[v] < num_rails:
                    out[rail[v]] = v
            self._tables[key] = out
        return self._tables[key]

    def pxn_relay(self, rails: dict, num_rails: int) -> np.ndarray:
        """``relay[v, rail]``: the local GPU whose affinity NIC sends for ``v`` towards ``rail``.

        ``v`` itself when its own NIC is on that rail and alive; else a GPU reached over NVLink
        only whose NIC is on that rail and alive; else the fallback column ``relay[v, num_rails]``
        (also used when the destination's rail is unknown): ``v`` while its own NIC is alive
        (cross-rail, as NCCL does without a rail-aligned peer), otherwise the first GPU over
        NVLink whose NIC is alive — the relay around a dead NIC. -1 when nothing works.
        """
        key = f"pxn_{num_rails}"
        if key not in self._tables:
            aff = self.affinity(False)
            rail = self.rail_of(rails)
            out = np.full((self.n, num_rails + 1), -1, dtype=np.int64)
            gpus = [v for v in self._endpoint_order() if self.kind[v] == "gpu" and aff[v] >= 0]
            for v in range(self.n):
                if self.kind[v] != "gpu":
                    continue
                own_ok = aff[v] >= 0 and self.alive_nic(int(aff[v]))
                peers = [g for g in gpus if g != v and self.alive_nic(int(aff[g])) and self.nvlink_only(v, g)]
                fallback = v if own_ok else (peers[0] if peers else -1)
                out[v, num_rails] = fallback
                for r in range(num_rails):
                    if own_ok and rail[aff[v]] == r:
                        out[v, r] = v
                        continue
                    out[v, r] = next((g for g in peers if rail[aff[g]] == r), fallback)
            self._tables[key] = out
        return self._tables[key]


def _local_id(topo: Topology, g: int) -> str:
    nid, host = topo.node_ids[g], topo.node_host[g]
    return nid[len(host) + 1:] if host and nid.startswith(host + "/") else nid


# ======================================================================================== context
class _Context:
    """Everything route() precomputes for one (topology, failure set): host shapes, gateway
    uplinks, fabric distance tables. Cached on the topology per failure set."""

    def __init__(self, topo: Topology, failed: FailureSet):
        self.topo = topo
        self.failed = failed
        n = topo.num_nodes
        self.node_failed = np.zeros(n, dtype=bool)
        self.node_failed[list(failed.nodes)] = True
        self.link_failed = np.zeros(topo.num_links, dtype=bool)
        self.link_failed[list(failed.links)] = True
        self.hosts = list(dict.fromkeys(h for h in topo.node_host if h is not None))
        host_index = {h: i for i, h in enumerate(self.hosts)}
        self.node_hidx = np.array([host_index.get(h, -1) if h is not None else -1 for h in topo.node_host],
                                  dtype=np.int64)
        self.forwarder = np.array([topo.node_host[i] is None and topo.node_kind[i] not in ENDPOINT_KINDS
                                   and not self.node_failed[i] for i in range(n)], dtype=bool)
        self.forwarders = np.flatnonzero(self.forwarder).astype(np.int64)
        self.forwarder_rank = np.full(n, -1, dtype=np.int64)
        self.forwarder_rank[self.forwarders] = np.arange(len(self.forwarders))
        self._build_uplinks()
        self._build_shapes()
        self.rails: dict = {}
        self.fabric_dist: dict[int, np.ndarray] = {}
        self.pair_paths: dict[tuple[int, int], list[list[int]]] = {}
        self.next_hops: dict[tuple[int, int], list[tuple[int, list[int]]]] = {}
        self.fab_adj = self._fabric_adjacency()

    # ---------------------------------------------------------------- uplinks
    def _build_uplinks(self) -> None:
        """For every host node with a link to the fabric, and every host-less endpoint: its alive
        links to fabric forwarders (CSR ``up_ptr``/``up_link``/``up_sw``)."""
        topo = self.topo
        ups: list[list[tuple[int, int]]] = [[] for _ in range(topo.num_nodes)]
        self.wired = np.zeros(topo.num_nodes, dtype=bool)
        for l in range(topo.num_links):
            a, b = int(topo.link_a[l]), int(topo.link_b[l])
            for u, v in ((a, b), (b, a)):
                if topo.node_host[v] is not None:
                    continue  # v must be a fabric node
                if topo.node_host[u] is None and topo.node_kind[u] not in ENDPOINT_KINDS:
                    continue  # u→v is fabric-internal, not an uplink
                if topo.node_kind[v] in ENDPOINT_KINDS:
                    continue
                self.wired[u] = True
                if not self.link_failed[l] and self.forwarder[v]:
                    ups[u].append((l, v))
        counts = np.array([len(u) for u in ups], dtype=np.int64)
        self.up_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        flat = [x for u in ups for x in u]
        self.up_link = np.array([x[0] for x in flat], dtype=np.int64)
        self.up_sw = np.array([x[1] for x in flat], dtype=np.int64)

    # ---------------------------------------------------------------- shapes
    def _build_shapes(self) -> None:
        topo = self.topo
        members: dict[str, list[int]] = {h: [] for h in self.hosts}
        for i, h in enumerate(topo.node_host):
            if h is not None:
                members[h].append(i)
        internal: dict[str, list[int]] = {h: [] for h in self.hosts}
        for l in range(topo.num_links):
            ha, hb = topo.node_host[int(topo.link_a[l])], topo.node_host[int(topo.link_b[l])]
            if ha is not None and ha == hb:
                internal[ha].append(l)
        signatures: dict[tuple, int] = {}
        self.shapes: list[_Shape] = []
        self.host_shape = np.zeros(len(self.hosts), dtype=np.int64)
        self.node_local = np.full(topo.num_nodes, -1, dtype=np.int64)
        host_nodes, host_links = [], []
        for hi, h in enumerate(self.hosts):
            nodes = sorted(members[h], key=lambda g: _local_id(topo, g))
            local = {g: k for k, g in enumerate(nodes)}
            links = sorted(internal[h], key=lambda l: (local[int(topo.link_a[l])], local[int(topo.link_b[l])],
                                                       topo.link_ids[l]))
            self.node_local[nodes] = np.arange(len(nodes))
            gateways = [bool(self.up_ptr[g + 1] > self.up_ptr[g]) for g in nodes]
            wired = [bool(self.wired[g]) for g in nodes]
            failed_nodes = {local[g] for g in nodes if self.node_failed[g]}
            failed_links = {k for k, l in enumerate(links) if self.link_failed[l]}
            sig = self._signature(nodes, links, local, gateways, wired, failed_nodes, failed_links)
            if sig not in signatures:
                signatures[sig] = len(self.shapes)
                self.shapes.append(_Shape(topo, nodes, links, gateways, failed_nodes, failed_links, wired))
            self.host_shape[hi] = signatures[sig]
            host_nodes.append(np.array(nodes, dtype=np.int64))
            host_links.append(np.array(links, dtype=np.int64))
        self._build_host_maps(host_nodes, host_links)

    def _signature(self, nodes, links, local, gateways, wired, failed_nodes, failed_links) -> tuple:
        topo = self.topo
        node_sig = tuple((_local_id(topo, g), topo.node_kind[g], float(topo.node_capacity_gbps[g])
                          if topo.node_resource[g] >= 0 else None,
                          repr(sorted((k, v) for k, v in topo.node_attrs[g].items()
                                      if k in ("index", "rail", "role", "nic", "socket"))))
                         for g in nodes)
        # Capacities are part of the shape: striping weights (and so shares) depend on them.
        link_sig = tuple((local[int(topo.link_a[l])], local[int(topo.link_b[l])], _is_nvlink(topo, l),
                          float(topo.link_capacity_gbps[l])) for l in links)
        return (node_sig, link_sig, tuple(gateways), tuple(wired), frozenset(failed_nodes),
                frozenset(failed_links))

    def _build_host_maps(self, host_nodes, host_links) -> None:
        """``host_res_flat[host_res_base[h] + token]`` = global resource of a local token, and
        ``host_node_flat[host_node_base[h] + local]`` = global node."""
        topo = self.topo
        res_parts, node_parts = [], []
        self.host_res_base = np.zeros(len(self.hosts), dtype=np.int64)
        self.host_node_base = np.zeros(len(self.hosts), dtype=np.int64)
        res_off = node_off = 0
        for hi in range(len(self.hosts)):
            nodes, links = host_nodes[hi], host_links[hi]
            # Local tokens 2*ll (a>b) and 2*ll+1 (b>a) follow the representative's orientation;
            # the shape signature guarantees every member orients its links the same way.
            link_res = np.empty(2 * len(links), dtype=np.int64)
            link_res[0::2] = 2 * links
            link_res[1::2] = 2 * links + 1
            node_res = topo.node_resource[nodes]
            res_parts.append(np.concatenate([link_res, node_res]))
            node_parts.append(nodes)
            self.host_res_base[hi] = res_off
            self.host_node_base[hi] = node_off
            res_off += len(res_parts[-1])
            node_off += len(nodes)
        self.host_res_flat = np.concatenate(res_parts) if res_parts else np.zeros(0, np.int64)
        self.host_node_flat = np.concatenate(node_parts) if node_parts else np.zeros(0, np.int64)

    # ---------------------------------------------------------------- fabric
    def _fabric_adjacency(self) -> list[list[tuple[int, int]]]:
        topo = self.topo
        adj: list[list[tuple[int, int]]] = [[] for _ in range(topo.num_nodes)]
        for l in range(topo.num_links):
            if self.link_failed[l]:
                continue
            a, b = int(topo.link_a[l]), int(topo.link_b[l])
            if self.forwarder[a] and self.forwarder[b]:
                adj[a].append((b, l))
                adj[b].append((a, l))
        return adj

    def distances_to(self, target: int) -> np.ndarray:
        """Hop distance of every forwarder to switch ``target`` (-1 unreachable). Cached."""
        dist = self.fabric_dist.get(target)
        if dist is None:
            dist = np.full(self.topo.num_nodes, -1, dtype=np.int64)
            dist[target] = 0
            queue = deque([target])
            while queue:
                u = queue.popleft()
                for v, _ in self.fab_adj[u]:
                    if dist[v] < 0:
                        dist[v] = dist[u] + 1
                        queue.append(v)
            self.fabric_dist[target] = dist
        return dist

    def _next_hops(self, u: int, y: int, dist: np.ndarray) -> list[tuple[int, list[int]]]:
        """Next hops from u towards y on shortest paths, with the resources of each step."""
        key = (u, y)
        hops = self.next_hops.get(key)
        if hops is None:
            topo, node_res = self.topo, self.topo.node_resource
            hops = [(v, [topo.link_resource(l, u)] + ([int(node_res[v])] if node_res[v] >= 0 else []))
                    for v, l in sorted(self.fab_adj[u]) if dist[v] == dist[u] - 1]
            self.next_hops[key] = hops
        return hops

    def switch_paths(self, x: int, y: int) -> list[list[int]]:
        """Equal-cost paths switch x → switch y as resource lists (links and node resources of the
        switches), at most MAX_EQUAL_COST_PATHS, in a deterministic order. Cached."""
        key = (x, y)
        cached = self.pair_paths.get(key)
        if cached is not None:
            return cached
        topo = self.topo
        dist = self.distances_to(y)
        if dist[x] < 0:
            self.pair_paths[key] = []
            return []
        paths: list[list[int]] = []
        node_res = topo.node_resource
        stack = [(x, [int(node_res[x])] if node_res[x] >= 0 else [])]
        while stack and len(paths) < MAX_EQUAL_COST_PATHS:
            u, acc = stack.pop()
            if u == y:
                paths.append(acc)
                continue
            for v, step in reversed(self._next_hops(u, y, dist)):
                stack.append((v, acc + step))
        self.pair_paths[key] = paths
        return paths

    # ---------------------------------------------------------------- derivation
    def derive(self, failed: FailureSet) -> "_Context":
        """The context under ``failed`` (a superset of this one's failures), sharing everything
        the extra failures do not touch. See :func:`routing_context`."""
        failed = FailureSet.coerce(failed)
        if not (failed.nodes >= self.failed.nodes and failed.links >= self.failed.links):
            return _context(self.topo, failed)
        if failed == self.failed:
            return self
        topo = self.topo
        ctx = object.__new__(type(self))
        ctx.__dict__.update(self.__dict__)
        ctx.failed = failed
        extra_nodes = sorted(failed.nodes - self.failed.nodes)
        extra_links = sorted(failed.links - self.failed.links)
        ctx.node_failed = self.node_failed.copy()
        ctx.node_failed[extra_nodes] = True
        ctx.link_failed = self.link_failed.copy()
        ctx.link_failed[extra_links] = True
        fabric_nodes = [v for v in extra_nodes if topo.node_host[v] is None]
        if fabric_nodes:
            ctx.forwarder = self.forwarder.copy()
            ctx.forwarder[fabric_nodes] = False
            ctx.forwarders = np.flatnonzero(ctx.forwarder).astype(np.int64)
            ctx.forwarder_rank = np.full(topo.num_nodes, -1, dtype=np.int64)
            ctx.forwarder_rank[ctx.forwarders] = np.arange(len(ctx.forwarders))
        side = self._fabric_side()
        ends = [(int(topo.link_a[l]), int(topo.link_b[l])) for l in extra_links]
        uplinks_changed = bool(fabric_nodes) or any(side[a] != side[b] for a, b in ends)
        if uplinks_changed:
            ctx._build_uplinks()
        if fabric_nodes or any(side[a] and side[b] for a, b in ends):
            ctx.fab_adj = ctx._fabric_adjacency()
            ctx.fabric_dist, ctx.pair_paths, ctx.next_hops = {}, {}, {}
        hosts = {int(self.node_hidx[v]) for v in extra_nodes} | {int(self.node_hidx[x]) for e in ends for x in e}
        if uplinks_changed:
            moved = (np.diff(self.up_ptr) > 0) != (np.diff(ctx.up_ptr) > 0)
            hosts |= set(self.node_hidx[np.flatnonzero(moved)].tolist())
        hosts.discard(-1)
        if hosts:
            self._reshape(ctx, sorted(hosts))
        return ctx

    def _fabric_side(self) -> np.ndarray:
        side = self.__dict__.get("_side")
        if side is None:
            topo = self.topo
            side = self.__dict__["_side"] = np.array(
                [topo.node_host[i] is None and topo.node_kind[i] not in ENDPOINT_KINDS for i in range(topo.num_nodes)],
                dtype=bool)
        return side

    def _reshape(self, ctx: "_Context", hosts: list[int]) -> None:
        """Give each host of ``hosts`` the shape its failures make in ``ctx`` (shapes are cached
        on this base context by signature, so every derivation shares them)."""
        topo = self.topo
        cache = self.__dict__.setdefault("_derived_shapes", {})
        ctx.shapes = list(self.shapes)
        ctx.host_shape = self.host_shape.copy()
        position = {id(s): k for k, s in enumerate(ctx.shapes)}
        for hi in hosts:
            rep = self.shapes[int(self.host_shape[hi])]
            nb, rb = int(self.host_node_base[hi]), int(self.host_res_base[hi])
            nodes = self.host_node_flat[nb:nb + rep.n].tolist()
            links = (self.host_res_flat[rb:rb + 2 * rep.nl:2] // 2).tolist()
            local = {g: k for k, g in enumerate(nodes)}
            gateways = [bool(ctx.up_ptr[g + 1] > ctx.up_ptr[g]) for g in nodes]
            wired = [bool(ctx.wired[g]) for g in nodes]
            failed_nodes = {local[g] for g in nodes if ctx.node_failed[g]}
            failed_links = {k for k, l in enumerate(links) if ctx.link_failed[l]}
            sig = self._signature(nodes, links, local, gateways, wired, failed_nodes, failed_links)
            shape = cache.get(sig)
            if shape is None:
                shape = cache[sig] = _Shape(topo, nodes, links, gateways, failed_nodes, failed_links, wired)
            if id(shape) not in position:
                position[id(shape)] = len(ctx.shapes)
                ctx.shapes.append(shape)
            ctx.host_shape[hi] = position[id(shape)]


RoutingContext = _Context


def _context(topo: Topology, failed: FailureSet) -> _Context:
    # Cached on the topology object so repeated what-if calls with the same failures reuse it.
    cache = topo.__dict__.setdefault("_routing_contexts", {})
    ctx = cache.get(failed)
    if ctx is None:
        if len(cache) > 8:
            cache.clear()
        ctx = cache[failed] = _Context(topo, failed)
    return ctx


def routing_context(topo: Topology, failed=None, *, base: "RoutingContext | None" = None) -> "RoutingContext":
    """The precomputed routing state of ``topo`` under ``failed`` (pass it to :func:`route`).

    Parameters
    ----------
    topo : Topology
    failed : FailureSet or dict or (nodes, links), optional
    base : RoutingContext, optional
        A context of the same topology whose failures are a subset of ``failed`` (typically the
        baseline): the new one is *derived* from it — only hosts holding a new failure get a new
        shape (shared by every host with the same local failure, across derivations from the
        same base) and fabric tables are rebuilt only when a fabric element fails. Routing with
        a derived context gives exactly the routes of a context built from scratch.

    Returns
    -------
    RoutingContext
    """
    failed = FailureSet.coerce(failed)
    if base is not None and base.topo is topo:
        return base.derive(failed)
    return _context(topo, failed)


# ======================================================================================== hashing
def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64 finalizer: a cheap, well-spread deterministic hash of uint64 values."""
    x = x.astype(np.uint64, copy=True)
    with np.errstate(over="ignore"):
        x ^= x >> np.uint64(30)
        x *= np.uint64(0xBF58476D1CE4E5B9)
        x ^= x >> np.uint64(27)
        x *= np.uint64(0x94D049BB133111EB)
        x ^= x >> np.uint64(31)
    return x


def _flow_hash(flows, seed: int, salt: int) -> np.ndarray:
    with np.errstate(over="ignore"):
        h = _mix(flows.src.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15) ^ np.uint64(seed & (2**63 - 1)))
        h = _mix(h ^ flows.dst.astype(np.uint64))
        h = _mix(h ^ (flows.pattern.astype(np.uint64) << np.uint64(40)) ^ flows.index.astype(np.uint64))
        h = _mix(h ^ np.uint64(salt))
    return h


# ======================================================================================== segments table
class _SegTable:
    """Registry of segment alternatives: each alternative is a CSR row of *tokens* (local tokens
    for intra-host segments, global resources for fabric ones) with a striping weight (1 unless
    given). ``first[key]``/``count[key]``."""

    def __init__(self):
        self.rows: list[list[int]] = []
        self.weights: list[float] = []
        self.index: dict = {}

    def add(self, key, alternatives: list[list[int]], weights: list[float] | None = None) -> tuple[int, int]:
        got = self.index.get(key)
        if got is None:
            got = (len(self.rows), len(alternatives))
            self.rows.extend(alternatives)
            self.weights.extend(weights if weights is not None else [1.0] * len(alternatives))
            self.index[key] = got
        return got

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """CSR pointer and tokens of the rows, and the weight of each row."""
        lens = np.fromiter((len(r) for r in self.rows), dtype=np.int64, count=len(self.rows))
        ptr = np.zeros(len(self.rows) + 1, dtype=np.int64)
        np.cumsum(lens, out=ptr[1:])
        data = np.fromiter((t for r in self.rows for t in r), dtype=np.int64, count=int(ptr[-1]))
        return ptr, data, np.asarray(self.weights, dtype=np.float64)


def _lookup(keys: np.ndarray, compute, space: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Map int64 keys (-1 allowed) to (first, count) by computing each distinct key once.

    When the key space is small (``space``), a dense table replaces ``np.unique``: O(n), no sort.
    """
    if space is not None and space <= max(4 * len(keys), 1 << 16):
        needed = np.zeros(space + 1, dtype=bool)
        needed[keys] = True  # key -1 lands on the extra last slot
        first = np.full(space + 1, -1, dtype=np.int64)
        count = np.zeros(space + 1, dtype=np.int64)
        for key in np.flatnonzero(needed[:space]).tolist():
            first[key], count[key] = compute(key)
        if needed[space]:
            first[space], count[space] = compute(-1)
        return first[keys], count[keys]
    uniq, inverse = np.unique(keys, return_inverse=True)
    first = np.empty(len(uniq), dtype=np.int64)
    count = np.empty(len(uniq), dtype=np.int64)
    for k, key in enumerate(uniq.tolist()):
        first[k], count[k] = compute(key)
    return first[inverse], count[inverse]


def _dense_ids(cols: list[np.ndarray]) -> np.ndarray:
    """Combine small non-negative integer columns into one dense int64 id per row (re-densified
    with a 1-D unique whenever the product of ranges would overflow)."""
    key = np.zeros(len(cols[0]), dtype=np.int64)
    span = 1
    for col in cols:
        col = col.astype(np.int64) + 1
        width = int(col.max()) + 1 if len(col) else 1
        if span * width >= (1 << 62):
            _, key = np.unique(key, return_inverse=True)
            key = key.ravel().astype(np.int64)
            span = int(key.max()) + 1 if len(key) else 1
        key = key * width + col
        span *= width
    return key


# ======================================================================================== route()
def route(topo: Topology, flows, *, nic_policy: str = "affinity", multipath: str = "hash", seed: int = 0,
          failed=None, context: "RoutingContext | None" = None) -> Routes:
    """Route flows across host and fabric.

    Parameters
    ----------
    topo : Topology
    flows : Flows
        Flows to route (any subset of a workload: routing a flow does not depend on the others).
    nic_policy : {"affinity", "pxn", "any", "static"}
        How a GPU picks its NIC: nearest by PCIe distance (NCCL's default); ``pxn`` moves the data
        over NVLink to the peer GPU whose NIC is on the destination's rail; ``any`` spreads over
        every NIC of the host (split or hashed like ECMP); ``static`` follows node attrs
        ``{"nic": "nic3"}`` and falls back to affinity.
    multipath : {"hash", "split"}
        How a flow uses equal-cost fabric paths: one chosen by a seeded per-flow hash, or all of
        them with an even share each.
    seed : int
        Seed of the ECMP hash.
    failed : FailureSet or dict or (nodes, links), optional
        Node and link indices that are down; paths avoid them, flows left without a path are
        ``unroutable`` with a reason.
    context : RoutingContext, optional
        A context from :func:`routing_context` (then ``failed`` is ignored): lets the what-if
        engine route under many failure sets derived from one baseline.

    Returns
    -------
    Routes

    Raises
    ------
    InvalidScenario
        Unknown policy or multipath mode.
    LimitExceeded
        More than :data:`MAX_PATH_ENTRIES` (path, resource) entries.
    """
    if nic_policy not in NIC_POLICIES:
        raise InvalidScenario("unknown NIC policy", [Problem(
            "routing.nic_policy", f"unknown policy {nic_policy!r} (choose from {', '.join(NIC_POLICIES)})")])
    if multipath not in MULTIPATH_MODES:
        raise InvalidScenario("unknown multipath mode", [Problem(
            "routing.multipath", f"unknown mode {multipath!r} (choose from {', '.join(MULTIPATH_MODES)})")])
    ctx = context if context is not None else _context(topo, FailureSet.coerce(failed))
    return _Router(ctx, flows, nic_policy, multipath, int(seed)).run()


class _Router:
    def __init__(self, ctx: _Context, flows, policy: str, multipath: str, seed: int):
        self.ctx, self.topo, self.flows = ctx, ctx.topo, flows
        self.policy, self.multipath, self.seed = policy, multipath, seed
        self.n = len(flows)
        self.status = np.zeros(self.n, dtype=np.int8)
        self.subject = np.full(self.n, -1, dtype=np.int64)
        self.intra = _SegTable()
        self.fabric = _SegTable()
        self.nic_slot: np.ndarray | None = None   # any + split: which live NIC each sub-flow uses
        self.dead_nic = np.full(self.n, -1, dtype=np.int64)

    def fail(self, mask: np.ndarray, code: int, subject: np.ndarray) -> None:
        new = mask & (self.status == _OK)
        self.status[new] = code
        self.subject[new] = subject[new] if isinstance(subject, np.ndarray) else subject

    # ------------------------------------------------------------------ main
    def run(self) -> Routes:
        if self.policy == "any" and self.multipath == "split":
            return self._run_over_every_nic()
        return self._run()

    def _run_over_every_nic(self) -> Routes:
        """``any`` + ``split``: each cross-host flow leaving a host is split evenly over every live
        NIC of that host (DESIGN §2.4). Routed as one virtual flow per NIC, then folded back:
        the virtual flows of a flow are consecutive, so their paths already are too."""
        ctx, f = self.ctx, self.flows
        src, dst = f.src.astype(np.int64), f.dst.astype(np.int64)
        hs, hd = ctx.node_hidx[src], ctx.node_hidx[dst]
        storage = np.array([k == "storage" for k in self.topo.node_kind], dtype=bool)
        to_storage = storage[src] | storage[dst]
        k = np.ones(self.n, dtype=np.int64)
        leaving = (hs >= 0) & (hs != hd)
        for st in (False, True):
            m = leaving & (to_storage == st)
            if m.any():
                live = np.array([len(s.live_nics(st)) for s in ctx.shapes], dtype=np.int64)
                k[m] = np.maximum(live[ctx.host_shape[hs[m]]], 1)
        rep = np.repeat(np.arange(self.n, dtype=np.int64), k)
        start = np.cumsum(k) - k
        sub = _Router(ctx, f.take(rep), self.policy, self.multipath, self.seed)
        sub.nic_slot = np.arange(len(rep), dtype=np.int64) - start[rep]
        return _fold_virtual(sub._run(), f, rep, start)

    def _run(self) -> Routes:
        ctx, f = self.ctx, self.flows
        src, dst = f.src.astype(np.int64), f.dst.astype(np.int64)
        self.fail(src == dst, _SAME_NODE, src)
        self.fail(ctx.node_failed[src], _SRC_DOWN, src)
        self.fail(ctx.node_failed[dst], _DST_DOWN, dst)
        hs, hd = ctx.node_hidx[src], ctx.node_hidx[dst]
        same = (hs >= 0) & (hs == hd)
        pieces = self._pieces(src, dst, hs, hd, same)
        return self._assemble(src, pieces)

    def _pieces(self, src, dst, hs, hd, same) -> list:
        """Per flow: a list of pieces, each (kind, first alternative, count, host) arrays; kind
        'intra' rows hold local tokens mapped through the host, 'fabric' rows hold resources."""
        n = self.n
        none = np.full(n, -1, dtype=np.int64)
        zero = np.zeros(n, dtype=np.int64)
        ctx = self.ctx
        # Same host: one intra segment.
        sfirst, scount = none.copy(), zero.copy()
        if same.any():
            idx = np.flatnonzero(same)
            fi, co = self._intra_lookup(hs[idx], ctx.node_local[src[idx]], ctx.node_local[dst[idx]])
            sfirst[idx], scount[idx] = fi, co
            self.fail(same & (scount == 0), _NO_INTRA, dst)
        cross = ~same
        gs, gd, relay = self._gateways(src, dst, hs, hd, cross)
        # Source side: src → (relay →) gateway.
        p1f, p1c, p2f, p2c = none.copy(), zero.copy(), none.copy(), zero.copy()
        in_host = cross & (hs >= 0) & (self.status == _OK)
        if in_host.any():
            idx = np.flatnonzero(in_host)
            loc_s = ctx.node_local[src[idx]]
            via = np.where(relay[idx] >= 0, ctx.node_local[np.maximum(relay[idx], 0)], ctx.node_local[gs[idx]])
            p1f[idx], p1c[idx] = self._intra_lookup(hs[idx], loc_s, via)
            has_relay = relay[idx] >= 0
            if has_relay.any():
                ridx = idx[has_relay]
                # relay → gateway, without repeating the relay's own node resource.
                p2f[ridx], p2c[ridx] = self._intra_lookup(hs[ridx], ctx.node_local[relay[ridx]],
                                                          ctx.node_local[gs[ridx]], skip_first=True)
                self.fail(in_host & (relay >= 0) & (p2c == 0), _NO_INTRA_SRC, src)
            self.fail(in_host & (p1c == 0), _NO_INTRA_SRC, src)
        # Destination side: gateway → dst.
        p4f, p4c = none.copy(), zero.copy()
        out_host = cross & (hd >= 0) & (self.status == _OK)
        if out_host.any():
            idx = np.flatnonzero(out_host)
            p4f[idx], p4c[idx] = self._intra_lookup(hd[idx], ctx.node_local[gd[idx]], ctx.node_local[dst[idx]])
            self.fail(out_host & (p4c == 0), _NO_INTRA_DST, dst)
        # Fabric: gateway → gateway through switches.
        p3f, p3c = none.copy(), zero.copy()
        up_tok, down_tok = none.copy(), none.copy()
        fab = cross & (self.status == _OK)
        if fab.any():
            idx = np.flatnonzero(fab)
            p3f[idx], p3c[idx], up_tok[idx], down_tok[idx] = self._fabric_lookup(idx, gs[idx], gd[idx])
            self.fail(fab & (p3c == 0), _NO_FABRIC, dst)
        # Host-less endpoints' own node resources (a storage box with a throughput limit).
        node_res = self.topo.node_resource
        src_tok = np.where(cross & (hs < 0), node_res[src], -1)
        dst_tok = np.where(cross & (hd < 0), node_res[dst], -1)
        return [("single", src_tok), ("intra", sfirst, scount, hs), ("intra", p1f, p1c, hs),
                ("intra", p2f, p2c, hs), ("single", up_tok), ("fabric", p3f, p3c),
                ("single", down_tok), ("intra", p4f, p4c, hd), ("single", dst_tok)]

    # ------------------------------------------------------------------ lookups
    def _intra_lookup(self, host, a, b, skip_first=False):
        ctx = self.ctx
        shape = ctx.host_shape[host]
        nmax = max((s.n for s in ctx.shapes), default=1) + 1
        keys = (shape * nmax + a) * nmax + b

        def compute(key):
            sh, rest = divmod(key, nmax * nmax)
            la, lb = divmod(rest, nmax)
            alts, weights = ctx.shapes[sh].striped(ctx.shapes[sh].segment(la, lb))
            if skip_first:
                cap_token = 2 * ctx.shapes[sh].nl + la
                alts = [t[1:] if t and t[0] == cap_token else t for t in alts]
            return self.intra.add((sh, la, lb, skip_first), alts, weights)

        return _lookup(keys, compute, space=len(ctx.shapes) * nmax * nmax)

    def _gateways(self, src, dst, hs, hd, cross):
        """Per cross-host flow: source gateway, destination gateway (global nodes; the node itself
        when it is a host-less endpoint) and PXN relay GPU (-1 when none)."""
        ctx = self.ctx
        n = self.n
        gs = np.where(hs < 0, src, -1)
        gd = np.where(hd < 0, dst, -1)
        relay = np.full(n, -1, dtype=np.int64)
        # A flow whose far end is a fabric storage box uses the storage NICs.
        storage_s = np.array([k == "storage" for k in self.topo.node_kind], dtype=bool)
        to_storage = storage_s[dst] | storage_s[src]
        todo_d = cross & (hd >= 0)
        for storage in (False, True):
            sel = todo_d & (to_storage == storage)
            if sel.any():
                gd[sel] = self._bound_gateway(dst[sel], hd[sel], storage, "dst")
        todo_s = cross & (hs >= 0)
        if self.policy == "any":
            self._any_gateways(src, dst, hs, hd, todo_s, gs, gd, to_storage)
        else:
            for storage in (False, True):
                sel = todo_s & (to_storage == storage)
                if sel.any():
                    gs[sel] = self._bound_gateway(src[sel], hs[sel], storage, "src")
            if self.policy == "pxn":
                self._pxn(src, hs, todo_s & ~to_storage & (gd >= 0), gs, gd, relay)
        self._check_gateways(src, dst, hs, hd, cross, gs, gd)
        return gs, gd, relay

    def _table(self, shape_idx: np.ndarray, loc: np.ndarray, build) -> np.ndarray:
        """Gather ``build(shape)[loc]`` per element (tables are per shape)."""
        out = np.full(len(loc), -1, dtype=np.int64)
        for sh in np.unique(shape_idx).tolist():
            m = shape_idx == sh
            out[m] = build(self.ctx.shapes[sh])[loc[m]]
        return out

    def _bound_gateway(self, nodes, hosts, storage, side):
        ctx = self.ctx
        shape = ctx.host_shape[hosts]
        loc = ctx.node_local[nodes]
        table = (lambda s: s.static(storage)) if self.policy == "static" else (lambda s: s.affinity(storage))
        gl = self._table(shape, loc, table)
        return np.where(gl >= 0, ctx.host_node_flat[ctx.host_node_base[hosts] + np.maximum(gl, 0)], -2)

    def _check_gateways(self, src, dst, hs, hd, cross, gs, gd) -> None:
        ctx = self.ctx
        for side_g, side_n, code_nic in ((gs, src, _NO_NIC), (gd, dst, _NO_NIC)):
            self.fail(cross & (side_g == -2), code_nic, side_n)
            g = np.maximum(side_g, 0)
            dead = cross & (side_g >= 0) & ctx.node_failed[g]
            self.dead_nic[dead & (self.status == _OK)] = g[dead & (self.status == _OK)]
            self.fail(dead, _NIC_DOWN, side_n)
            no_up = cross & (side_g >= 0) & (ctx.up_ptr[g + 1] == ctx.up_ptr[g])
            self.dead_nic[no_up & (self.status == _OK)] = g[no_up & (self.status == _OK)]
            self.fail(no_up, _UPLINK_DOWN, side_n)

    def _rails(self) -> int:
        ctx = self.ctx
        for s in ctx.shapes:
            s.rail_of(ctx.rails)
        return len(ctx.rails)

    def _pxn(self, src, hs, sel, gs, gd, relay) -> None:
        """Sender-side PXN: if the destination NIC's rail is served by another local GPU reached
        over NVLink, go to that GPU first and use its NIC (NCCL_PXN). A GPU whose own NIC is down
        relays to a peer whose NIC is alive (on the destination's rail when one is, else any):
        the "unified network" answer to a NIC failure."""
        ctx = self.ctx
        num_rails = self._rails()
        if not sel.any():
            return
        idx = np.flatnonzero(sel)
        hd_ = ctx.node_hidx[gd[idx]]
        dst_rail = np.full(len(idx), num_rails, dtype=np.int64)  # column num_rails = no preference
        inhost = hd_ >= 0
        if num_rails and inhost.any():
            r = self._table(ctx.host_shape[hd_[inhost]], ctx.node_local[gd[idx][inhost]],
                            lambda s: s.rail_of(ctx.rails))
            dst_rail[inhost] = np.where(r >= 0, r, num_rails)
        shape = ctx.host_shape[hs[idx]]
        loc = ctx.node_local[src[idx]]
        rel = np.full(len(idx), -1, dtype=np.int64)
        for sh in np.unique(shape).tolist():
            m = shape == sh
            rel[m] = ctx.shapes[sh].pxn_relay(ctx.rails, num_rails)[loc[m], dst_rail[m]]
        use = (rel >= 0) & (rel != loc)
        idx, rel = idx[use], rel[use]
        base = ctx.host_node_base[hs[idx]]
        relay[idx] = ctx.host_node_flat[base + rel]
        aff = self._table(ctx.host_shape[hs[idx]], rel, lambda s: s.affinity(False))
        gs[idx] = ctx.host_node_flat[base + aff]

    def _any_gateways(self, src, dst, hs, hd, sel, gs, gd, to_storage) -> None:
        """``any``: every working NIC of the host serves every GPU (the unified-network what-if).
        The source takes one by a seeded per-flow hash (``hash``) or the NIC of its sub-flow
        (``split``, see :meth:`run`); the destination uses its NIC on the same rail, so the
        fabric leg stays rail-aligned — or, when that NIC is down, its own NIC, else any live one."""
        ctx = self.ctx
        num_rails = self._rails()
        h = _flow_hash(self.flows, self.seed, salt=0x51AB)
        pick = h if self.nic_slot is None else self.nic_slot.astype(np.uint64)
        for storage in (False, True):
            part = sel & (to_storage == storage)
            if not part.any():
                continue
            idx = np.flatnonzero(part)
            shape = ctx.host_shape[hs[idx]]
            chosen = np.full(len(idx), -1, dtype=np.int64)
            for sh in np.unique(shape).tolist():
                m = np.flatnonzero(shape == sh)
                nics = ctx.shapes[sh].live_nics(storage)
                if len(nics):
                    chosen[m] = nics[(pick[idx[m]] % np.uint64(len(nics))).astype(np.int64)]
            base = ctx.host_node_base[hs[idx]]
            gs[idx] = np.where(chosen >= 0, ctx.host_node_flat[base + np.maximum(chosen, 0)], -2)
            dsel = (hd[idx] >= 0) & (chosen >= 0) & (num_rails > 0)
            if dsel.any():
                self._any_rail_gateway(idx[dsel], shape[dsel], chosen[dsel], hd, gd, storage, num_rails)
            self._any_live_gateway(idx[hd[idx] >= 0], hd, gd, storage, h)

    def _any_rail_gateway(self, didx, src_shape, chosen, hd, gd, storage, num_rails) -> None:
        """Destination NIC on the rail of the chosen source NIC, when it exists and is alive."""
        ctx = self.ctx
        rail = self._table(src_shape, chosen, lambda s: s.rail_of(ctx.rails))
        has = rail >= 0
        didx, rail = didx[has], rail[has]
        dgw = np.full(len(didx), -1, dtype=np.int64)
        dshape = ctx.host_shape[hd[didx]]
        alive = np.zeros(len(didx), dtype=bool)
        for sh in np.unique(dshape).tolist():
            m = dshape == sh
            s = ctx.shapes[sh]
            dgw[m] = s.rail_gateway(ctx.rails, num_rails, storage)[rail[m]]
            alive[m] = [s.alive_nic(v) for v in dgw[m].tolist()]
        gd[didx[alive]] = ctx.host_node_flat[ctx.host_node_base[hd[didx[alive]]] + dgw[alive]]

    def _any_live_gateway(self, didx, hd, gd, storage, h) -> None:
        """Destination whose NIC is down (or has no uplink): another live NIC of its host (hash)."""
        ctx = self.ctx
        g = gd[didx]
        gg = np.maximum(g, 0)
        dead = (g >= 0) & (ctx.node_failed[gg] | (ctx.up_ptr[gg + 1] == ctx.up_ptr[gg]))
        didx = didx[dead]
        if not len(didx):
            return
        dshape = ctx.host_shape[hd[didx]]
        for sh in np.unique(dshape).tolist():
            m = np.flatnonzero(dshape == sh)
            nics = ctx.shapes[sh].live_nics(storage)
            if len(nics):
                k = didx[m]
                local = nics[(h[k] % np.uint64(len(nics))).astype(np.int64)]
                gd[k] = ctx.host_node_flat[ctx.host_node_base[hd[k]] + local]

    def _fabric_lookup(self, idx, gs, gd):
        """Uplink choice (hash among the gateways' uplinks that reach the other side soonest),
        then the equal-cost switch paths. Returns per flow the uplink resource, the fabric
        alternatives (keyed by switch pair, so few distinct keys) and the downlink resource."""
        ctx, topo = self.ctx, self.topo
        up_ptr = ctx.up_ptr
        ns, nd = up_ptr[gs + 1] - up_ptr[gs], up_ptr[gd + 1] - up_ptr[gd]
        valid = (ns > 0) & (nd > 0)
        us, ud = up_ptr[gs].copy(), up_ptr[gd].copy()  # index into up_* arrays: first uplink
        multi = valid & ((ns > 1) | (nd > 1))
        if multi.any():
            self._choose_uplinks(idx, gs, gd, us, ud, multi)
        us, ud = np.where(valid, us, 0), np.where(valid, ud, 0)
        if len(ctx.up_link) == 0:
            return np.full(len(idx), -1), np.zeros(len(idx), np.int64), np.full(len(idx), -1), np.full(len(idx), -1)
        link_s, sw_s = ctx.up_link[us], ctx.up_sw[us]
        link_d, sw_d = ctx.up_link[ud], ctx.up_sw[ud]
        up_res = 2 * link_s + (topo.link_a[link_s] != gs)
        down_res = 2 * link_d + (topo.link_a[link_d] != sw_d)
        nf = len(ctx.forwarders)
        keys = np.where(valid, ctx.forwarder_rank[sw_s] * nf + ctx.forwarder_rank[sw_d], -1)

        def compute(key):
            if key < 0:
                return (-1, 0)
            x, y = divmod(key, nf)
            return self.fabric.add(key, ctx.switch_paths(int(ctx.forwarders[x]), int(ctx.forwarders[y])))

        first, count = _lookup(keys, compute, space=nf * nf)
        count = np.where(first >= 0, count, 0)
        return first, count, np.where(count > 0, up_res, -1), np.where(count > 0, down_res, -1)

    def _choose_uplinks(self, idx, gs, gd, us, ud, multi) -> None:
        """Gateways with several uplinks (dual-port NICs): among the (source uplink, destination
        uplink) pairs with the fewest switch hops, pick one by the flow hash."""
        ctx = self.ctx
        h = _flow_hash(self.flows.take(idx[multi]), self.seed, salt=0x0F1)
        for k, (i, a, b) in enumerate(zip(np.flatnonzero(multi).tolist(), gs[multi].tolist(), gd[multi].tolist())):
            best, cands = None, []
            for ia in range(int(ctx.up_ptr[a]), int(ctx.up_ptr[a + 1])):
                for ib in range(int(ctx.up_ptr[b]), int(ctx.up_ptr[b + 1])):
                    d = ctx.distances_to(int(ctx.up_sw[ib]))[int(ctx.up_sw[ia])]
                    if d < 0:
                        continue
                    if best is None or d < best:
                        best, cands = d, [(ia, ib)]
                    elif d == best:
                        cands.append((ia, ib))
            if cands:
                us[i], ud[i] = cands[int(h[k] % np.uint64(len(cands)))]

    # ------------------------------------------------------------------ assembly
    def _assemble(self, src, pieces) -> Routes:
        ctx, n = self.ctx, self.n
        ok = self.status == _OK
        counts = []
        for piece in pieces:
            if piece[0] == "single":
                counts.append(np.ones(n, dtype=np.int64))
            else:
                c = np.where(piece[1] >= 0, piece[2], 1)
                if piece[0] == "fabric" and self.multipath == "hash":
                    c = np.minimum(c, 1)
                counts.append(np.maximum(c, 1))
        nsub = np.where(ok, np.prod(np.stack(counts), axis=0), 0)
        first = np.zeros(n, dtype=np.int64)
        np.cumsum(nsub[:-1], out=first[1:])
        total = int(nsub.sum())
        owner = np.repeat(np.arange(n, dtype=np.int64), nsub)
        combo = np.arange(total, dtype=np.int64) - np.repeat(first, nsub)
        stripes = np.ones(total)   # product of the striping weights of the rows a path combines
        iptr, idata, iweight = self.intra.arrays()
        fptr, fdata, fweight = self.fabric.arrays()
        fab_hash = _flow_hash(self.flows, self.seed, salt=0xEC3) if self.multipath == "hash" else None
        parts = []
        for piece, c in zip(pieces, counts):
            csub = c[owner]
            choice = combo % csub
            combo //= csub
            if piece[0] == "single":
                tok = piece[1][owner]
                lens = (tok >= 0).astype(np.int64)
                parts.append((tok[tok >= 0], lens))
                continue
            firsts = piece[1][owner]
            present = firsts >= 0
            if piece[0] == "fabric" and self.multipath == "hash":
                pick = (fab_hash[owner] % np.maximum(piece[2][owner], 1).astype(np.uint64)).astype(np.int64)
                rows = firsts + pick
            else:
                rows = firsts + choice
            rows = np.where(present, rows, -1)
            ptr, data, wrow = (iptr, idata, iweight) if piece[0] == "intra" else (fptr, fdata, fweight)
            if present.any():
                stripes[present] *= wrow[rows[present]]
            vals, lens = _gather_rows(ptr, data, rows)
            if piece[0] == "intra":
                host = np.repeat(piece[3][owner], lens)
                vals = ctx.host_res_flat[ctx.host_res_base[host] + vals]
            parts.append((vals, lens))
        flow_ptr, flow_res = _concat_parts(parts, total)
        share = stripes / np.bincount(owner, weights=stripes, minlength=n)[owner] if total else np.zeros(0)
        if len(flow_res) > MAX_PATH_ENTRIES:
            raise LimitExceeded("routing produced too many path entries",
                                [Problem("routing", f"{len(flow_res):,} (path, resource) entries exceed "
                                                    f"{MAX_PATH_ENTRIES:,}; use multipath 'hash'")])
        routes = Routes(self.topo, flow_ptr, flow_res, owner, share, src, first, nsub, self.status,
                        np.full(n, -1, dtype=np.int16), [], self.policy, self.subject, self.dead_nic,
                        share.copy(), stripes)   # solver weights = shares: one flow weighs 1
        _classify(routes, self.ctx, self.flows, pieces)
        return routes


def _replace_flows(base: Routes, idx: np.ndarray, sub: Routes) -> Routes:
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
    # Pool both path sets, then gather the chosen paths in flow order (CSR concatenation).
    pool_ptr = np.concatenate([base.flow_ptr[:-1], sub.flow_ptr + len(base.flow_res)])
    pool_res = np.concatenate([base.flow_res, sub.flow_res])
    pool_share = np.concatenate([base.share, sub.share])
    pool_weight = np.concatenate([base.weight, sub.weight])
    pool_stripes = np.concatenate([base.stripes, sub.stripes])
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

    def per_flow(a, b):
        out = a.copy() if a is not None else np.full(n, -1, dtype=np.int64)
        if b is not None:
            out[idx] = b
        return out

    return Routes(base.topo, flow_ptr, pool_res[gather], owner, pool_share[src_path], base.src, first, count,
                  status, class_code, names, base.nic_policy, per_flow(base._subject, sub._subject),
                  per_flow(base._nic, sub._nic), pool_weight[src_path], pool_stripes[src_path])


def _fold_virtual(r: Routes, flows, rep: np.ndarray, start: np.ndarray) -> Routes:
    """Routes of virtual flows (``rep[v]`` = original flow, consecutive) → routes of the
    originals: each keeps the paths of its routable virtual flows, shares divided evenly
    among them, and solver weights with them (weights = shares, so the original weighs 1 in
    all, not 1 per NIC: on its GPU's PCIe link it competes as one flow); ``stripes`` are
    unchanged. An original is unroutable (with the first reason) only if all of them are."""
    n = len(start)
    ok_v = r.status == _OK
    live = np.bincount(rep, weights=ok_v, minlength=n)
    owner = rep[r.owner]
    share = r.share / np.maximum(live[owner], 1)
    count = np.add.reduceat(r.count, start) if len(start) else np.zeros(0, np.int64)
    status = np.where(live > 0, _OK, r.status[start]).astype(np.int8)
    subject = np.where(live > 0, -1, r._subject[start])
    nic = np.where(live > 0, -1, r._nic[start])
    class_code = np.full(n, -1, dtype=np.int16)
    ok_idx = np.flatnonzero(ok_v)
    flows_ok, first_ok = np.unique(rep[ok_idx], return_index=True)
    class_code[flows_ok] = r.class_code[ok_idx[first_ok]]
    return Routes(r.topo, r.flow_ptr, r.flow_res, owner, share, flows.src.astype(np.int64), r.first[start],
                  count.astype(np.int64), status, class_code, r.class_names, r.nic_policy, subject, nic,
                  share.copy(), r.stripes)


def _gather_rows(ptr: np.ndarray, data: np.ndarray, rows: np.ndarray):
    """Concatenate CSR rows (row -1 = empty) → (flat values, length per row)."""
    valid = rows >= 0
    if not valid.any():
        return np.zeros(0, dtype=np.int64), np.zeros(len(rows), dtype=np.int64)
    r = np.where(valid, rows, 0)
    starts = ptr[r]
    lens = np.where(valid, ptr[r + 1] - starts, 0)
    total = int(lens.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64), lens
    offsets = np.cumsum(lens) - lens
    pos = np.arange(total, dtype=np.int64) + np.repeat(starts - offsets, lens)
    return data[pos], lens


def _concat_parts(parts, total: int):
    """Interleave per-path pieces: path p = piece0 row p + piece1 row p + … (CSR concatenation)."""
    lens = np.zeros(total, dtype=np.int64)
    for _, l in parts:
        lens += l
    ptr = np.zeros(total + 1, dtype=np.int64)
    np.cumsum(lens, out=ptr[1:])
    out = np.empty(int(ptr[-1]), dtype=np.int64)
    offset = ptr[:-1].copy()
    for vals, l in parts:
        if len(vals):
            within = np.arange(len(vals), dtype=np.int64) - np.repeat(np.cumsum(l) - l, l)
            out[np.repeat(offset, l) + within] = vals
        offset += l
    return ptr, out


# ======================================================================================== classes
def _classify(routes: Routes, ctx: _Context, flows, pieces) -> None:
    """Path class per flow, computed once per structural key: the flow's host shapes, local
    endpoints and the local gateways/relay chosen (the fabric part does not change the class)."""
    ok = np.flatnonzero(routes.status == _OK)
    if len(ok) == 0:
        return
    topo = ctx.topo
    src, dst = flows.src[ok], flows.dst[ok]
    first_path = routes.first[ok]
    # Structural key: the local-token rows of the pieces + the host shapes: two flows with the
    # same intra segment rows (per shape) and the same presence of a fabric piece classify alike.
    # The intra-segment row ids already encode the host shape and local endpoints.
    cols = []
    for piece in pieces:
        if piece[0] == "intra":
            cols.append(piece[1][ok])
        elif piece[0] == "fabric":
            cols.append((piece[1][ok] >= 0).astype(np.int64))
    cols.append(np.where(ctx.node_hidx[src] < 0, src, -1))
    cols.append(np.where(ctx.node_hidx[dst] < 0, dst, -1))
    _, first_index, inverse = np.unique(_dense_ids(cols), return_index=True, return_inverse=True)
    uniq = first_index
    classify = _classifier()
    names: dict[str, int] = {}
    codes = np.empty(len(uniq), dtype=np.int16)
    for k, i in enumerate(first_index.tolist()):
        nodes = routes.path_nodes(int(first_path[i]))
        name = classify(topo, nodes)
        codes[k] = names.setdefault(name, len(names))
    routes.class_code[ok] = codes[inverse.ravel()]
    routes.class_names = list(names)


def _classifier():
    try:
        from designer.engine.pathclass import classify_path
        return classify_path
    except ImportError:  # pathclass.py not present in this build: a minimal stand-in
        return _fallback_class


def _fallback_class(topo: Topology, nodes: list[int]) -> str:
    hosts = {topo.node_host[n] for n in nodes}
    kinds = [topo.node_kind[n] for n in nodes[1:-1]]
    if len(hosts) > 1 or None in hosts:
        return "PXN" if "gpu" in kinds else "NET"
    if "nvswitch" in kinds or (len(nodes) == 2 and topo.node_kind[nodes[0]] == topo.node_kind[nodes[1]] == "gpu"):
        return "NVL"
    cpus = kinds.count("cpu")
    if cpus >= 2:
        return "SYS"
    if cpus == 1:
        return "PHB"
    return "PIX" if kinds.count("pcie_switch") <= 1 else "PXB"
