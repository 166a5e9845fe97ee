"""Intra-host search: equal-cost paths inside one host and their NVLink striping weights.

Hosts with the same structure (every host of a template, with the same local failures) share a
:class:`HostShape`: segments are searched once per shape in *local* numbering and mapped to each
member host's resources by one array gather (see :mod:`designer.engine.routing.context`).

Local tokens: ``2*ll + dir`` is local link ``ll`` in direction ``dir`` (0 = a→b), ``2*nl + v``
the own resource of capacity-bearing local node ``v``. Hop costs: NVLink 1, anything else 2, so
NVLink is preferred. Transit rules: only non-endpoint kinds forward (docs/ENGINE.md, Routing).
"""
from __future__ import annotations

import heapq
import math

import numpy as np

from designer.engine.routing.limits import MAX_EQUAL_COST_PATHS
from designer.engine.model.topology import ENDPOINT_KINDS, Topology

__all__ = ["HostShape", "is_nvlink", "local_id"]

_NVLINK_COST, _OTHER_COST = 1, 2


def is_nvlink(topo: Topology, link: int) -> bool:
    """Whether ``link`` is NVLink (by tech, an NVSwitch end, or a direct GPU⇄GPU link)."""
    tech = (topo.link_tech[link] or "").lower()
    ka, kb = topo.node_kind[topo.link_a[link]], topo.node_kind[topo.link_b[link]]
    return tech.startswith("nvl") or "nvswitch" in (ka, kb) or (ka == kb == "gpu")


def local_id(topo: Topology, g: int) -> str:
    """Id of node ``g`` inside its host (``gpu3`` for ``h7/gpu3``)."""
    nid, host = topo.node_ids[g], topo.node_host[g]
    return nid[len(host) + 1:] if host and nid.startswith(host + "/") else nid


class HostShape:
    """Structure shared by hosts that look alike: local numbering, intra-host segment cache and
    the cache of NIC-choice tables (``tables``, see :mod:`~designer.engine.routing.nic_tables`).
    ``nodes``/``links`` are those of the first member (the representative)."""

    def __init__(self, topo: Topology, nodes: list[int], links: list[int], gateways: list[bool],
                 failed_nodes: set, failed_links: set, fabric_roles: list):
        self.topo = topo
        self.nodes = nodes
        self.n = len(nodes)
        self.kind = [topo.node_kind[g] for g in nodes]
        self.attrs = [topo.node_attrs[g] for g in nodes]
        self.local_ids = [local_id(topo, g) for g in nodes]
        self.has_cap = [topo.node_resource[g] >= 0 for g in nodes]
        self.nl = len(links)
        # Nominal capacities of the local tokens (links, then capacity-bearing nodes): striping
        # weights come from them (degradations never move traffic, so nominal is the right one).
        self.token_cap = np.concatenate([np.repeat(topo.link_capacity_gbps[links], 2) if links else np.zeros(0),
                                         np.asarray(topo.node_capacity_gbps, dtype=np.float64)[nodes]])
        self._build_adjacency(links, failed_links)
        self.nvlink_ll = {ll for ll, l in enumerate(links) if is_nvlink(topo, l)}
        self.failed = failed_nodes
        self.forwards = [k not in ENDPOINT_KINDS for k in self.kind]
        self.gateway = gateways          # alive gateway (has a working uplink)
        self.gateway_any = fabric_roles  # has an uplink at all, alive or not (for affinity)
        self.segments: dict[tuple[int, int], list[list[int]]] = {}
        self.tables: dict[str, np.ndarray] = {}

    def _build_adjacency(self, links: list[int], failed_links: set) -> None:
        """``adj``: working links as (nbr, ll, dir, cost); ``adj_all``: every link as (nbr, cost)."""
        topo = self.topo
        local = {g: i for i, g in enumerate(self.nodes)}
        self.adj: list[list[tuple[int, int, int, int]]] = [[] for _ in self.nodes]
        self.adj_all: list[list[tuple[int, int]]] = [[] for _ in self.nodes]
        for ll, l in enumerate(links):
            a, b = local[int(topo.link_a[l])], local[int(topo.link_b[l])]
            cost = _NVLINK_COST if is_nvlink(topo, l) else _OTHER_COST
            self.adj_all[a].append((b, cost))
            self.adj_all[b].append((a, cost))
            if ll in failed_links:
                continue
            self.adj[a].append((b, ll, 0, cost))
            self.adj[b].append((a, ll, 1, cost))

    # ---------------------------------------------------------------- intra-host paths
    def segment(self, a: int, b: int) -> list[list[int]]:
        """Equal-cost paths a→b inside the host as local token lists (``2*ll+dir`` for a link,
        ``2*nl + node`` for a capacity-bearing node), empty if none. Cached."""
        key = (a, b)
        if key not in self.segments:
            self.segments[key] = self._enumerate(a, b)
        return self.segments[key]

    def _enumerate(self, a: int, b: int) -> list[list[int]]:
        if self.kind[b] == "nvswitch" and self.kind[a] != "nvswitch":
            return self._plane(a, b, lambda t: self._enumerate_pair(a, t))
        if self.kind[a] == "nvswitch" and self.kind[b] != "nvswitch":
            return self._plane(b, a, lambda t: self._enumerate_pair(t, b))
        return self._enumerate_pair(a, b)

    def _plane(self, end: int, switch: int, paths) -> list[list[int]]:
        """A flow between an endpoint and an NVSwitch ends at the host's whole NVSwitch plane
        (NVLS: the switches reduce and multicast as one endpoint): the cheapest paths to every
        live NVSwitch, so they are striped like any NVLink traffic (5/4/4/5 on an HGX H100)."""
        plane = [v for v in range(self.n) if self.kind[v] == "nvswitch" and v not in self.failed]
        found = [(self._cost(p), p) for t in plane for p in paths(t)]
        if not found:
            return []
        cheapest = min(c for c, _ in found)
        return sorted(p for c, p in found if c == cheapest)

    def _cost(self, tokens: list[int]) -> int:
        links = [t >> 1 for t in tokens if t < 2 * self.nl]
        return sum(_NVLINK_COST if ll in self.nvlink_ll else _OTHER_COST for ll in links)

    def _enumerate_pair(self, a: int, b: int) -> list[list[int]]:
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

    def healthy_distance(self, a: int) -> dict[int, int]:
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

    def striped(self, alternatives: list[list[int]]) -> tuple[list[list[int]], list[float]]:
        """Equal-cost alternatives with striping weights proportional to their bottleneck capacity,
        so that weighted max-min stripes like NVLink does: a DGX H100 GPU has 5/4/4/5 NVLinks to
        its 4 NVSwitches, so a GPU pair gets 4 sub-flows striped 5/4/4/5 (18 in all; the flow's
        solver weights are these over 18, see :mod:`designer.engine.routing`). Tokens common to
        every alternative do not count. Weights are the smallest integers in the capacity ratio
        (scale up to 8), so that :meth:`Routes.repeated` can expand them into whole sub-flows;
        other ratios keep their exact value times 4. Equal capacities (or an unknown one) weigh
        1 each."""
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

    # ---------------------------------------------------------------- state queries
    def alive_nic(self, v: int) -> bool:
        """Whether local node ``v`` is a gateway that is up and has a working uplink."""
        return v >= 0 and bool(self.gateway[v]) and v not in self.failed

    def nvlink_only(self, a: int, b: int) -> bool:
        """Whether the (first) shortest path a→b uses NVLink only."""
        paths = self.segment(a, b)
        return bool(paths) and all(t >= 2 * self.nl or (t >> 1) in self.nvlink_ll for t in paths[0])
