"""Fabric routing: uplinks from hosts to switches, equal-cost switch paths (ECMP), uplink choice.

- *Uplinks*: the alive links from a host node (a NIC, usually) or a host-less endpoint to a
  fabric forwarder, as CSR (:func:`build_uplinks`).
- *Switch paths*: equal-cost shortest paths (hop count) between two switches, enumerated once
  per (first switch, last switch) pair (:class:`FabricPaths`, at most
  :data:`~designer.engine.routing.limits.MAX_EQUAL_COST_PATHS`).
- *Per flow* (:func:`fabric_segments`): the uplink pair (hashed among the fewest-hop pairs when a
  gateway has several uplinks), then the switch paths between their switches; ``multipath``
  later picks one by hash or splits over all of them.
"""
from __future__ import annotations

import numpy as np

from designer.engine.routing.csr import SegTable, lookup
from designer.engine.routing.hashing import UPLINK_SALT, flow_hash
from designer.engine.routing.limits import MAX_EQUAL_COST_PATHS
from designer.engine.topology import ENDPOINT_KINDS, Topology

__all__ = ["Uplinks", "build_uplinks", "FabricPaths", "fabric_segments"]


class Uplinks:
    """Alive uplinks as CSR: node ``u``'s are ``up_link[up_ptr[u]:up_ptr[u+1]]`` (link indices),
    reaching switches ``up_sw[...]``; ``wired[u]``: ``u`` has an uplink at all, alive or not."""

    __slots__ = ("wired", "up_ptr", "up_link", "up_sw")

    def __init__(self, wired, up_ptr, up_link, up_sw):
        self.wired, self.up_ptr, self.up_link, self.up_sw = wired, up_ptr, up_link, up_sw


def _is_uplink(topo: Topology, u: int, v: int) -> bool:
    """Whether the link u→v leaves a host (or a host-less endpoint) towards a fabric forwarder."""
    if topo.node_host[v] is not None:
        return False  # v must be a fabric node
    if topo.node_host[u] is None and topo.node_kind[u] not in ENDPOINT_KINDS:
        return False  # u→v is fabric-internal, not an uplink
    return topo.node_kind[v] not in ENDPOINT_KINDS


def build_uplinks(topo: Topology, link_failed: np.ndarray, forwarder: np.ndarray) -> Uplinks:
    """For every host node with a link to the fabric, and every host-less endpoint: its alive
    links to fabric forwarders.

    Parameters
    ----------
    topo : Topology
    link_failed : ndarray of bool
        Per link: down.
    forwarder : ndarray of bool
        Per node: an alive fabric node that forwards.

    Returns
    -------
    Uplinks
    """
    ups: list[list[tuple[int, int]]] = [[] for _ in range(topo.num_nodes)]
    wired = np.zeros(topo.num_nodes, dtype=bool)
    for l in range(topo.num_links):
        a, b = int(topo.link_a[l]), int(topo.link_b[l])
        for u, v in ((a, b), (b, a)):
            if not _is_uplink(topo, u, v):
                continue
            wired[u] = True
            if not link_failed[l] and forwarder[v]:
                ups[u].append((l, v))
    counts = np.array([len(u) for u in ups], dtype=np.int64)
    up_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    flat = [x for u in ups for x in u]
    return Uplinks(wired, up_ptr, np.array([x[0] for x in flat], dtype=np.int64),
                   np.array([x[1] for x in flat], dtype=np.int64))


class FabricPaths:
    """Shortest paths between fabric switches over the alive links between forwarders, with
    per-target distance tables and per-pair path lists cached (shared by every context whose
    failures leave the fabric untouched)."""

    def __init__(self, topo: Topology, link_failed: np.ndarray, forwarder: np.ndarray):
        self.topo = topo
        self.adj: list[list[tuple[int, int]]] = [[] for _ in range(topo.num_nodes)]
        for l in range(topo.num_links):
            if link_failed[l]:
                continue
            a, b = int(topo.link_a[l]), int(topo.link_b[l])
            if forwarder[a] and forwarder[b]:
                self.adj[a].append((b, l))
                self.adj[b].append((a, l))
        # Distances live in forwarder-rank space (a few thousand switches), not node space
        # (~100k nodes at 16k GPUs, most of them inside hosts): a per-target table of node size
        # cost 0.8 MB each, over 2 GB at 16k GPUs. ``rank`` maps node -> rank (-1: not a forwarder).
        self.rank = np.full(topo.num_nodes, -1, dtype=np.int64)
        fwd = np.flatnonzero(forwarder)
        self.rank[fwd] = np.arange(len(fwd))
        self._csr = self._forwarder_csr(fwd)
        self.dist: dict[int, np.ndarray] = {}
        self._steps_of: dict[int, list] = {}
        self.pair_paths: dict[tuple[int, int], list[list[int]]] = {}
        self.next_hops: dict[tuple[int, int], list[tuple[int, list[int]]]] = {}

    def _forwarder_csr(self, fwd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The alive forwarder-to-forwarder adjacency as CSR over forwarder ranks."""
        lens = np.fromiter((len(self.adj[u]) for u in fwd.tolist()), dtype=np.int64, count=len(fwd))
        ptr = np.zeros(len(fwd) + 1, dtype=np.int64)
        np.cumsum(lens, out=ptr[1:])
        nbr = np.fromiter((v for u in fwd.tolist() for v, _ in self.adj[u]), dtype=np.int64,
                          count=int(ptr[-1]))
        return ptr, self.rank[nbr]

    def distances_to(self, target: int) -> np.ndarray:
        """Hop distance to switch ``target`` of every forwarder, indexed by forwarder rank
        (``dist[self.rank[node]]``; -1 unreachable). Cached.

        Breadth-first, one numpy gather per hop level (a fabric is a few levels deep), instead
        of one Python step per switch.
        """
        dist = self.dist.get(target)
        if dist is None:
            ptr, nbr = self._csr
            dist = np.full(len(ptr) - 1, -1, dtype=np.int64)
            t = self.rank[target]
            if t >= 0:
                dist[t] = 0
                frontier, level = np.array([t], dtype=np.int64), 0
                while len(frontier):
                    level += 1
                    starts, lens = ptr[frontier], ptr[frontier + 1] - ptr[frontier]
                    pos = np.arange(int(lens.sum()), dtype=np.int64) + np.repeat(starts - (np.cumsum(lens) - lens), lens)
                    reached = nbr[pos]
                    frontier = np.unique(reached[dist[reached] < 0])
                    dist[frontier] = level
            self.dist[target] = dist
        return dist

    def distance(self, x: int, y: int) -> int:
        """Hop count from switch ``x`` to switch ``y`` over alive fabric links (-1: none)."""
        r = self.rank[x]
        return int(self.distances_to(y)[r]) if r >= 0 else (0 if x == y else -1)

    def _steps(self, u: int) -> list[tuple[int, int, list[int]]]:
        """Every step out of forwarder ``u``, in (neighbour, link) order: (neighbour, its rank,
        the resources of the step: link direction, then the neighbour's node resource). Cached."""
        steps = self._steps_of.get(u)
        if steps is None:
            topo, node_res, rank = self.topo, self.topo.node_resource, self.rank
            steps = self._steps_of[u] = [
                (v, int(rank[v]), [topo.link_resource(l, u)] + ([int(node_res[v])] if node_res[v] >= 0 else []))
                for v, l in sorted(self.adj[u])]
        return steps

    def _next_hops(self, u: int, y: int, dist: list) -> list[tuple[int, list[int]]]:
        """Next hops from u towards y on shortest paths, with the resources of each step
        (``dist``: :meth:`distances_to` ``y`` as a list)."""
        key = (u, y)
        hops = self.next_hops.get(key)
        if hops is None:
            want = dist[self.rank[u]] - 1
            hops = self.next_hops[key] = [(v, step) for v, rv, step in self._steps(u) if dist[rv] == want]
        return hops

    def switch_paths(self, x: int, y: int) -> list[list[int]]:
        """Equal-cost paths switch x → switch y as resource lists (links and node resources of the
        switches), at most MAX_EQUAL_COST_PATHS, in a deterministic order. Cached."""
        key = (x, y)
        cached = self.pair_paths.get(key)
        if cached is not None:
            return cached
        dist = self.distances_to(y).tolist()   # indexed per element below: a list is faster
        if self.rank[x] < 0 or dist[self.rank[x]] < 0:
            self.pair_paths[key] = []
            return []
        paths: list[list[int]] = []
        node_res = self.topo.node_resource
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


def fabric_segments(ctx, table: SegTable, flows, idx: np.ndarray, gs: np.ndarray, gd: np.ndarray, seed: int):
    """Fabric part of flows ``idx`` from gateway ``gs`` to gateway ``gd`` (global nodes).

    Uplink choice (hash among the gateways' uplinks that reach the other side soonest), then the
    equal-cost switch paths, registered in ``table`` keyed by switch pair (so few distinct keys).
    ``ctx`` is the :class:`~designer.engine.routing.context.RoutingContext`.

    Returns
    -------
    first, count, up_res, down_res : ndarray of int64
        Per flow: first fabric alternative in ``table`` and their number (0 when none), and the
        uplink and downlink resources (-1 when none).
    """
    topo, up_ptr = ctx.topo, ctx.up_ptr
    n_up = np.diff(up_ptr)   # per node: its uplinks
    ns, nd = n_up[gs], n_up[gd]
    valid = (ns > 0) & (nd > 0)
    multi = valid & ((ns > 1) | (nd > 1))
    if len(ctx.up_link) == 0:
        return np.full(len(idx), -1), np.zeros(len(idx), np.int64), np.full(len(idx), -1), np.full(len(idx), -1)
    if multi.any():
        us, ud = up_ptr[gs], up_ptr[gd]  # index into up_* arrays: first uplink
        _choose_uplinks(ctx, flows.take(idx[multi]), seed, gs, gd, us, ud, multi)
        us, ud = np.where(valid, us, 0), np.where(valid, ud, 0)
        link_s, sw_s = ctx.up_link[us], ctx.up_sw[us]
        link_d, sw_d = ctx.up_link[ud], ctx.up_sw[ud]
        up_res = 2 * link_s + (topo.link_a[link_s] != gs)
        down_res = 2 * link_d + (topo.link_a[link_d] != sw_d)
    else:
        # Every flow takes its gateways' first uplinks: read them per node, then per flow.
        sw_node, up_node, down_node = _first_uplinks(ctx, n_up)
        sw_s, sw_d, up_res, down_res = sw_node[gs], sw_node[gd], up_node[gs], down_node[gd]
    nf = len(ctx.forwarders)
    keys = np.where(valid, ctx.forwarder_rank[sw_s] * nf + ctx.forwarder_rank[sw_d], -1)

    def compute(key):
        if key < 0:
            return (-1, 0)
        x, y = divmod(key, nf)
        return table.add(key, ctx.fabric.switch_paths(int(ctx.forwarders[x]), int(ctx.forwarders[y])))

    first, count = lookup(keys, compute, space=nf * nf)
    count = np.where(first >= 0, count, 0)
    return first, count, np.where(count > 0, up_res, -1), np.where(count > 0, down_res, -1)


def _first_uplinks(ctx, n_up: np.ndarray):
    """Per node: the switch of its first uplink, and that link's resource towards the switch
    and back (what a flow leaving and one entering through the node cross; arbitrary for a node
    without uplinks, whose flows do not route)."""
    first = np.where(n_up > 0, ctx.up_ptr[:-1], 0)
    link, sw = ctx.up_link[first], ctx.up_sw[first]
    nodes = np.arange(len(n_up))
    return sw, 2 * link + (ctx.topo.link_a[link] != nodes), 2 * link + (ctx.topo.link_a[link] != sw)


def _choose_uplinks(ctx, flows, seed: int, gs, gd, us, ud, multi) -> None:
    """Gateways with several uplinks (dual-port NICs): among the (source uplink, destination
    uplink) pairs with the fewest switch hops, pick one by the flow hash (``flows`` are those of
    ``multi``, in order)."""
    h = flow_hash(flows, seed, salt=UPLINK_SALT)
    for k, (i, a, b) in enumerate(zip(np.flatnonzero(multi).tolist(), gs[multi].tolist(), gd[multi].tolist())):
        cands = _nearest_uplink_pairs(ctx, a, b)
        if cands:
            us[i], ud[i] = cands[int(h[k] % np.uint64(len(cands)))]


def _nearest_uplink_pairs(ctx, a: int, b: int) -> list[tuple[int, int]]:
    """(uplink of a, uplink of b) pairs, as indices into ``up_*``, with the fewest switch hops."""
    best, cands = None, []
    for ia in range(int(ctx.up_ptr[a]), int(ctx.up_ptr[a + 1])):
        for ib in range(int(ctx.up_ptr[b]), int(ctx.up_ptr[b + 1])):
            d = ctx.fabric.distance(int(ctx.up_sw[ia]), int(ctx.up_sw[ib]))
            if d < 0:
                continue
            if best is None or d < best:
                best, cands = d, [(ia, ib)]
            elif d == best:
                cands.append((ia, ib))
    return cands

