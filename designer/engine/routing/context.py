"""Failure context: everything :func:`~designer.engine.routing.route` precomputes for one
(topology, failure set), and how a context is derived under more failures.

A :class:`RoutingContext` holds the hosts grouped into :class:`~designer.engine.routing.intra.HostShape`
classes (hosts that look alike, local failures included, share one), the local→global maps of
every host, the gateway uplinks and the fabric path tables. It is cached on the topology per
failure set (:func:`cached_context`). :meth:`RoutingContext.derive` builds the context under a
superset of the failures by sharing everything the extra failures leave untouched: what makes a
failure sweep cheap (:func:`routing_context` with ``base``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from designer.engine.routing.fabric import FabricPaths, Uplinks, build_uplinks
from designer.engine.routing.intra import HostShape, is_nvlink, local_id
from designer.engine.topology import ENDPOINT_KINDS, Topology

__all__ = ["FailureSet", "RoutingContext", "routing_context", "cached_context"]


@dataclass(frozen=True)
class FailureSet:
    """Elements that are down: node indices and link indices of the topology."""

    nodes: frozenset = frozenset()
    links: frozenset = frozenset()

    @classmethod
    def coerce(cls, failed) -> FailureSet:
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


def _signature(topo: Topology, nodes, links, local, gateways, wired, failed_nodes, failed_links) -> tuple:
    """What makes two hosts share a shape: local structure, routing attrs, capacities, state."""
    node_sig = tuple((local_id(topo, g), topo.node_kind[g], float(topo.node_capacity_gbps[g])
                      if topo.node_resource[g] >= 0 else None,
                      repr(sorted((k, v) for k, v in topo.node_attrs[g].items()
                                  if k in ("index", "rail", "role", "nic", "socket"))))
                     for g in nodes)
    # Capacities are part of the shape: striping weights (and so shares) depend on them.
    link_sig = tuple((local[int(topo.link_a[l])], local[int(topo.link_b[l])], is_nvlink(topo, l),
                      float(topo.link_capacity_gbps[l])) for l in links)
    return (node_sig, link_sig, tuple(gateways), tuple(wired), frozenset(failed_nodes),
            frozenset(failed_links))


def _host_members(topo: Topology, hosts: list[str]) -> tuple[dict, dict]:
    """Per host: its nodes, and its internal links (both ends inside it)."""
    members: dict[str, list[int]] = {h: [] for h in hosts}
    for i, h in enumerate(topo.node_host):
        if h is not None:
            members[h].append(i)
    internal: dict[str, list[int]] = {h: [] for h in hosts}
    for l in range(topo.num_links):
        ha, hb = topo.node_host[int(topo.link_a[l])], topo.node_host[int(topo.link_b[l])]
        if ha is not None and ha == hb:
            internal[ha].append(l)
    return members, internal


class RoutingContext:
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
        self._set_forwarders(np.array([topo.node_host[i] is None and topo.node_kind[i] not in ENDPOINT_KINDS
                                       and not self.node_failed[i] for i in range(n)], dtype=bool))
        self._set_uplinks(build_uplinks(topo, self.link_failed, self.forwarder))
        self._build_shapes()
        self.rails: dict = {}
        self.fabric = FabricPaths(topo, self.link_failed, self.forwarder)

    def _set_forwarders(self, forwarder: np.ndarray) -> None:
        self.forwarder = forwarder
        self.forwarders = np.flatnonzero(forwarder).astype(np.int64)
        self.forwarder_rank = np.full(self.topo.num_nodes, -1, dtype=np.int64)
        self.forwarder_rank[self.forwarders] = np.arange(len(self.forwarders))

    def _set_uplinks(self, up: Uplinks) -> None:
        self.wired, self.up_ptr, self.up_link, self.up_sw = up.wired, up.up_ptr, up.up_link, up.up_sw

    # ---------------------------------------------------------------- shapes
    def _host_key(self, nodes: list[int], links: list[int]) -> tuple[tuple, tuple]:
        """(shape signature, HostShape arguments) of a host with these nodes and links, in the
        state (failures, uplinks) of this context."""
        local = {g: k for k, g in enumerate(nodes)}
        gateways = [bool(self.up_ptr[g + 1] > self.up_ptr[g]) for g in nodes]
        wired = [bool(self.wired[g]) for g in nodes]
        failed_nodes = {local[g] for g in nodes if self.node_failed[g]}
        failed_links = {k for k, l in enumerate(links) if self.link_failed[l]}
        sig = _signature(self.topo, nodes, links, local, gateways, wired, failed_nodes, failed_links)
        return sig, (self.topo, nodes, links, gateways, failed_nodes, failed_links, wired)

    def _build_shapes(self) -> None:
        topo = self.topo
        members, internal = _host_members(topo, self.hosts)
        signatures: dict[tuple, int] = {}
        self.shapes: list[HostShape] = []
        self.host_shape = np.zeros(len(self.hosts), dtype=np.int64)
        self.node_local = np.full(topo.num_nodes, -1, dtype=np.int64)
        host_nodes, host_links = [], []
        for hi, h in enumerate(self.hosts):
            nodes = sorted(members[h], key=lambda g: local_id(topo, g))
            local = {g: k for k, g in enumerate(nodes)}
            links = sorted(internal[h], key=lambda l: (local[int(topo.link_a[l])], local[int(topo.link_b[l])],
                                                       topo.link_ids[l]))
            self.node_local[nodes] = np.arange(len(nodes))
            sig, args = self._host_key(nodes, links)
            if sig not in signatures:
                signatures[sig] = len(self.shapes)
                self.shapes.append(HostShape(*args))
            self.host_shape[hi] = signatures[sig]
            host_nodes.append(np.array(nodes, dtype=np.int64))
            host_links.append(np.array(links, dtype=np.int64))
        self._build_host_maps(host_nodes, host_links)

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

    def to_global(self, hosts: np.ndarray, local: np.ndarray) -> np.ndarray:
        """Global node of local node ``local`` of host ``hosts`` (elementwise, both valid)."""
        return self.host_node_flat[self.host_node_base[hosts] + local]

    # ---------------------------------------------------------------- derivation
    def derive(self, failed: FailureSet) -> RoutingContext:
        """The context under ``failed`` (a superset of this one's failures), sharing everything
        the extra failures do not touch. See :func:`routing_context`."""
        failed = FailureSet.coerce(failed)
        if not (failed.nodes >= self.failed.nodes and failed.links >= self.failed.links):
            return cached_context(self.topo, failed)
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
            forwarder = self.forwarder.copy()
            forwarder[fabric_nodes] = False
            ctx._set_forwarders(forwarder)
        side = self._fabric_side()
        ends = [(int(topo.link_a[l]), int(topo.link_b[l])) for l in extra_links]
        uplinks_changed = bool(fabric_nodes) or any(side[a] != side[b] for a, b in ends)
        if uplinks_changed:
            ctx._set_uplinks(build_uplinks(topo, ctx.link_failed, ctx.forwarder))
        if fabric_nodes or any(side[a] and side[b] for a, b in ends):
            ctx.fabric = FabricPaths(topo, ctx.link_failed, ctx.forwarder)
        hosts = self._touched_hosts(ctx, extra_nodes, ends, uplinks_changed)
        if hosts:
            self._reshape(ctx, hosts)
        return ctx

    def _touched_hosts(self, ctx: RoutingContext, extra_nodes, ends, uplinks_changed: bool) -> list[int]:
        """Hosts (sorted indices) holding a new failure, or whose nodes gained or lost uplinks."""
        hosts = {int(self.node_hidx[v]) for v in extra_nodes} | {int(self.node_hidx[x]) for e in ends for x in e}
        if uplinks_changed:
            moved = (np.diff(self.up_ptr) > 0) != (np.diff(ctx.up_ptr) > 0)
            hosts |= set(self.node_hidx[np.flatnonzero(moved)].tolist())
        hosts.discard(-1)
        return sorted(hosts)

    def _fabric_side(self) -> np.ndarray:
        side = self.__dict__.get("_side")
        if side is None:
            topo = self.topo
            side = self.__dict__["_side"] = np.array(
                [topo.node_host[i] is None and topo.node_kind[i] not in ENDPOINT_KINDS for i in range(topo.num_nodes)],
                dtype=bool)
        return side

    def _reshape(self, ctx: RoutingContext, hosts: list[int]) -> None:
        """Give each host of ``hosts`` the shape its failures make in ``ctx`` (shapes are cached
        on this base context by signature, so every derivation shares them)."""
        cache = self.__dict__.setdefault("_derived_shapes", {})
        ctx.shapes = list(self.shapes)
        ctx.host_shape = self.host_shape.copy()
        position = {id(s): k for k, s in enumerate(ctx.shapes)}
        for hi in hosts:
            rep = self.shapes[int(self.host_shape[hi])]
            nb, rb = int(self.host_node_base[hi]), int(self.host_res_base[hi])
            nodes = self.host_node_flat[nb:nb + rep.n].tolist()
            links = (self.host_res_flat[rb:rb + 2 * rep.nl:2] // 2).tolist()
            sig, args = ctx._host_key(nodes, links)
            shape = cache.get(sig)
            if shape is None:
                shape = cache[sig] = HostShape(*args)
            if id(shape) not in position:
                position[id(shape)] = len(ctx.shapes)
                ctx.shapes.append(shape)
            ctx.host_shape[hi] = position[id(shape)]


def cached_context(topo: Topology, failed: FailureSet) -> RoutingContext:
    """The context of ``topo`` under ``failed``, built once and cached on the topology."""
    # Cached on the topology object so repeated what-if calls with the same failures reuse it.
    cache = topo.__dict__.setdefault("_routing_contexts", {})
    ctx = cache.get(failed)
    if ctx is None:
        if len(cache) > 8:
            cache.clear()
        ctx = cache[failed] = RoutingContext(topo, failed)
    return ctx


def routing_context(topo: Topology, failed=None, *, base: RoutingContext | None = None) -> RoutingContext:
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
    return cached_context(topo, failed)
