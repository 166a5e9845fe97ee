"""Multi-host NVLink domains: GPU⇄GPU traffic inside one domain rides NVLink, across hosts too.

A group of kind ``nvlink_domain`` (a GB200 NVL72 rack, :mod:`designer.engine.model.racks`) holds
several hosts (compute trays) and the NVSwitch chips they all reach; those chips sit in the
domain, outside every host. Host-by-host routing would send a flow between two trays out of
the source tray's NIC and through the network; in the real system it goes GPU → NVSwitch → GPU
over NVLink. :class:`DomainRoutes` gives :class:`~designer.engine.routing.router.Router` that
segment:

- a *domain flow* has a GPU at both ends inside the same domain and at least one working
  NVLink path between them (GPUs never forward; NVSwitches do), whether the two GPUs sit in one
  tray or in two;
- its alternatives are every fewest-hop NVLink path (one per NVSwitch chip of an NVL72: 18),
  striped by capacity like the intra-host NVLink paths
  (:meth:`~designer.engine.routing.intra.HostShape.striped`);
- without a working NVLink path (every chip or every link of the GPU down) the flow falls back
  to ordinary routing: the tray's intra-host path or its NIC and the network;
- a flow between a GPU and an NVSwitch of its domain (NVLS: the switches reduce and multicast)
  ends at the domain's whole NVSwitch plane, as inside an HGX host
  (:meth:`~designer.engine.routing.intra.HostShape._plane`): the fewest-hop paths to every live
  chip, striped — 18 one-link paths per GPU of an NVL72.

Everything else — flows between domains, to CPUs, memory, NICs or storage — is routed as before,
so topologies without an ``nvlink_domain`` group route exactly as without this module.
"""
from __future__ import annotations

from collections import deque

import numpy as np

from designer.engine.model.pathclass import DOMAIN_KIND, node_domains
from designer.engine.routing.intra import HostShape, is_nvlink
from designer.engine.routing.limits import MAX_EQUAL_COST_PATHS
from designer.engine.model.topology import Topology

__all__ = ["DOMAIN_KIND", "DomainRoutes", "domain_routes", "node_domains", "domain_segments"]

_NVLINK_ENDS = frozenset({"gpu", "nvswitch"})


class DomainRoutes:
    """NVLink paths inside the domains of one routing context (its failures applied).

    Attributes
    ----------
    domain : ndarray of int64
        Per node: its domain index, -1 outside every domain.
    adj : list of list of (int, int)
        Per node: alive NVLink neighbours inside its domain as (node, link).
    """

    def __init__(self, topo: Topology, node_failed: np.ndarray, link_failed: np.ndarray):
        self.topo = topo
        self.ids, self.domain = node_domains(topo)
        self.failed = node_failed
        self.adj: list[list[tuple[int, int]]] = [[] for _ in range(topo.num_nodes)]
        kinds = topo.node_kind
        for l in range(topo.num_links):
            a, b = int(topo.link_a[l]), int(topo.link_b[l])
            d = self.domain[a]
            if (d < 0 or self.domain[b] != d or link_failed[l] or node_failed[a] or node_failed[b]
                    or kinds[a] not in _NVLINK_ENDS or kinds[b] not in _NVLINK_ENDS or not is_nvlink(topo, l)):
                continue
            self.adj[a].append((b, l))
            self.adj[b].append((a, l))
        # Nominal capacity per resource: what the striping weights are computed from (as in a
        # HostShape, whose striped() reads ``token_cap``).
        self.token_cap = np.concatenate([np.repeat(topo.link_capacity_gbps, 2),
                                         np.asarray(topo.node_capacity_gbps, dtype=np.float64)[topo.resource_node]])
        self.plane: dict[int, list[int]] = {}   # domain -> its live NVSwitch chips
        for v in range(topo.num_nodes):
            if kinds[v] == "nvswitch" and self.domain[v] >= 0 and not node_failed[v]:
                self.plane.setdefault(int(self.domain[v]), []).append(v)
        self._bfs: dict[int, dict[int, list[tuple[int, int]]]] = {}
        self._paths: dict[tuple[int, int], tuple[list[list[int]], list[float]]] = {}
        self.translate = self._translates()

    def _translates(self) -> dict[int, tuple[int, int]]:
        """Domains that are an index translate of an earlier one (every rack built from one
        template, with the same failures): domain -> (node offset, link offset) to that one, so
        their paths are the representative's shifted instead of searched again (8 NVL72 racks:
        one search per GPU pair of one rack). Domains with capacity-bearing nodes are searched."""
        topo = self.topo
        links: dict[int, list[int]] = {}
        for u, nbrs in enumerate(self.adj):
            for v, l in nbrs:
                if u < v:
                    links.setdefault(int(self.domain[u]), []).append(l)
        first: dict[tuple, tuple[int, int]] = {}
        out: dict[int, tuple[int, int]] = {}
        for d in range(len(self.ids)):
            nodes = np.flatnonzero(self.domain == d)
            ls = np.array(sorted(links.get(d, ())), dtype=np.int64)
            if not len(nodes) or not len(ls) or (topo.node_resource[nodes] >= 0).any():
                continue
            n0, l0 = int(nodes[0]), int(ls[0])
            sig = (tuple((nodes - n0).tolist()), tuple((ls - l0).tolist()),
                   tuple((topo.link_a[ls] - n0).tolist()), tuple((topo.link_b[ls] - n0).tolist()),
                   tuple(topo.node_kind[i] for i in nodes.tolist()), tuple(self.failed[nodes].tolist()),
                   tuple(topo.link_capacity_gbps[ls].tolist()))
            rep = first.setdefault(sig, (n0, l0))
            if rep != (n0, l0):
                out[d] = (n0 - rep[0], l0 - rep[1])
        return out

    def candidates(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """Per flow: both ends in the same domain, a GPU (alive) at one end and a GPU or an
        NVSwitch at the other (an NVSwitch end stands for the whole plane: it may be down)."""
        d = self.domain
        gpu, switch = self._kind_mask("gpu"), self._kind_mask("nvswitch")
        live_gpu = gpu & ~self.failed
        pair = (d[src] >= 0) & (d[src] == d[dst]) & (src != dst)
        return pair & ((live_gpu[src] & live_gpu[dst]) | (live_gpu[src] & switch[dst]) |
                       (switch[src] & live_gpu[dst]))

    def _kind_mask(self, kind: str) -> np.ndarray:
        key = f"_{kind}_mask"
        mask = self.topo.__dict__.get(key)
        if mask is None:
            mask = self.topo.__dict__[key] = np.array([k == kind for k in self.topo.node_kind], dtype=bool)
        return mask

    def paths(self, a: int, b: int) -> tuple[list[list[int]], list[float]]:
        """Fewest-hop NVLink paths a→b as global resource lists, and their striping weights
        (empty when no NVLink path is alive). Cached per pair."""
        key = (a, b)
        got = self._paths.get(key)
        shift = self.translate.get(int(self.domain[a])) if got is None else None
        if shift is not None:
            alts, weights = self.paths(a - shift[0], b - shift[0])
            step = 2 * shift[1]   # resource 2*l + direction: a link offset moves it by 2*offset
            got = self._paths[key] = ([[r + step for r in alt] for alt in alts], weights)
        elif got is None:
            kinds = self.topo.node_kind
            if kinds[b] == "nvswitch":
                alts = self._to_plane([self._enumerate(a, t) for t in self.plane.get(int(self.domain[b]), [])])
            elif kinds[a] == "nvswitch":
                alts = self._to_plane([self._enumerate(t, b) for t in self.plane.get(int(self.domain[a]), [])])
            else:
                alts = self._enumerate(a, b)
            got = self._paths[key] = HostShape.striped(self, alts) if alts else ([], [])
        return got

    def _to_plane(self, per_switch: list[list[list[int]]]) -> list[list[int]]:
        """The fewest-link paths among those to (or from) every chip of the plane."""
        two_l = 2 * self.topo.num_links
        found = [(sum(1 for r in p if r < two_l), p) for paths in per_switch for p in paths]
        if not found:
            return []
        cheapest = min(c for c, _ in found)
        return sorted(p for c, p in found if c == cheapest)

    def _predecessors(self, a: int) -> dict[int, list[tuple[int, int]]]:
        """BFS from GPU ``a`` over alive NVLinks, forwarding through NVSwitches only: per reached
        node, its (predecessor, link) pairs on fewest-hop paths (the DAG of those paths). Cached."""
        pred = self._bfs.get(a)
        if pred is None:
            kinds = self.topo.node_kind
            dist, pred = {a: 0}, {a: []}
            queue = deque([a])
            while queue:
                u = queue.popleft()
                if u != a and kinds[u] != "nvswitch":
                    continue
                for v, l in self.adj[u]:
                    if v not in dist:
                        dist[v] = dist[u] + 1
                        pred[v] = [(u, l)]
                        queue.append(v)
                    elif dist[v] == dist[u] + 1:
                        pred[v].append((u, l))
            self._bfs[a] = pred
        return pred

    def _enumerate(self, a: int, b: int) -> list[list[int]]:
        pred = self._predecessors(a)
        if b not in pred or a == b:
            return []
        topo, node_res = self.topo, self.topo.node_resource
        out: list[list[int]] = []
        stack = [(b, [])]
        while stack and len(out) < MAX_EQUAL_COST_PATHS:
            v, suffix = stack.pop()
            if v == a:
                out.append(suffix)
                continue
            for u, l in pred[v]:
                step = [topo.link_resource(l, u)] + ([int(node_res[v])] if node_res[v] >= 0 else [])
                stack.append((u, step + suffix))
        start = [int(node_res[a])] if node_res[a] >= 0 else []
        return sorted(start + p for p in out)


def domain_routes(ctx) -> DomainRoutes | None:
    """The :class:`DomainRoutes` of a routing context (None when the topology has no domain),
    built once per context and failure set."""
    ids, _ = node_domains(ctx.topo)
    if not ids:
        return None
    cached = ctx.__dict__.get("_domain_routes")
    # Derived contexts copy the base's __dict__: the failure set tells whose routes these are.
    if cached is None or cached[0] != ctx.failed:
        cached = ctx.__dict__["_domain_routes"] = (ctx.failed, DomainRoutes(ctx.topo, ctx.node_failed, ctx.link_failed))
    return cached[1]


def domain_segments(ctx, table, src: np.ndarray, dst: np.ndarray):
    """Per flow: (first, count) of its NVLink-domain alternatives in ``table`` (a
    :class:`~designer.engine.routing.csr.SegTable` of global resources), ``(-1, 0)`` for flows
    that are not domain flows; None when the topology has no NVLink domain.

    Parameters
    ----------
    ctx : RoutingContext
    table : SegTable
        Receives the alternatives (keyed by the global node pair).
    src, dst : ndarray of int64
        Flow ends (node indices).
    """
    dom = domain_routes(ctx)
    if dom is None:
        return None
    first = np.full(len(src), -1, dtype=np.int64)
    count = np.zeros(len(src), dtype=np.int64)
    idx = np.flatnonzero(dom.candidates(src, dst))
    if len(idx) == 0:
        return first, count
    n = ctx.topo.num_nodes
    pairs, inverse = np.unique(src[idx] * n + dst[idx], return_inverse=True)
    pf = np.empty(len(pairs), dtype=np.int64)
    pc = np.empty(len(pairs), dtype=np.int64)
    for k, key in enumerate(pairs.tolist()):
        a, b = divmod(key, n)
        alts, weights = dom.paths(a, b)
        pf[k], pc[k] = table.add((a, b), alts, weights) if alts else (-1, 0)
    first[idx], count[idx] = pf[inverse.ravel()], pc[inverse.ravel()]
    return first, count
