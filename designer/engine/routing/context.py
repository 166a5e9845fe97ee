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
from itertools import repeat

import numpy as np

from designer.engine.routing.csr import dense_ids
from designer.engine.routing.fabric import FabricPaths, Uplinks, build_uplinks, node_classes
from designer.engine.routing.intra import HostShape, is_nvlink, local_id
from designer.engine.model.topology import Topology, node_attr_keys, value_codes
from designer.engine.numbers import first_appearance_codes

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


# The node attrs routing reads (NIC choice, rails, sockets): part of a host's shape.
_ROUTING_ATTRS = ("index", "rail", "role", "nic", "socket")


def _signature(topo: Topology, nodes, links, local, gateways, wired, failed_nodes, failed_links) -> tuple:
    """What makes two hosts share a shape: local structure, routing attrs, capacities, state."""
    node_sig = tuple((local_id(topo, g), topo.node_kind[g], float(topo.node_capacity_gbps[g])
                      if topo.node_resource[g] >= 0 else None,
                      repr(sorted((k, v) for k, v in topo.node_attrs[g].items() if k in _ROUTING_ATTRS)))
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


class _HostLayout:
    """Every host's nodes (by local id) and internal links (by local ends, then id) as CSR over
    host indices: ``node[node_ptr[h]:node_ptr[h+1]]``, ``link[link_ptr[h]:link_ptr[h+1]]``;
    ``node_local``: per node its position in its host (-1 outside hosts)."""

    __slots__ = ("node", "node_ptr", "link", "link_ptr", "node_local", "lid_rank", "node_columns")

    def __init__(self, node, node_ptr, link, link_ptr, node_local, lid_rank):
        self.node, self.node_ptr, self.link, self.link_ptr = node, node_ptr, link, link_ptr
        self.node_local = node_local
        self.lid_rank = lid_rank   # per entry of ``node``: rank of its local id among all (a code)
        self.node_columns = None   # _node_columns, once asked


def _host_layout(topo: Topology, node_hidx: np.ndarray, n_hosts: int) -> _HostLayout:
    """The order of :meth:`RoutingContext._build_shapes_itemwise`'s ``sorted`` calls, by lexsort
    (ties: node index, as the stable sort keeps them; link ids ranked only among tied links)."""
    in_host = np.flatnonzero(node_hidx >= 0)
    lid_rank = _local_id_ranks(topo)[in_host]
    order = np.lexsort((in_host, lid_rank, node_hidx[in_host]))
    node, lid_rank = in_host[order], lid_rank[order]
    node_ptr = _ptr(node_hidx[node], n_hosts)
    node_local = np.full(topo.num_nodes, -1, dtype=np.int64)
    node_local[node] = np.arange(len(node), dtype=np.int64) - node_ptr[node_hidx[node]]
    ha, hb = node_hidx[topo.link_a], node_hidx[topo.link_b]
    link = np.flatnonzero((ha >= 0) & (ha == hb))
    host, la, lb = ha[link], node_local[topo.link_a[link]], node_local[topo.link_b[link]]
    order = np.lexsort((link, lb, la, host))
    link = link[order]
    host, la, lb = host[order], la[order], lb[order]
    tied = np.zeros(len(link), dtype=bool)
    same = (host[1:] == host[:-1]) & (la[1:] == la[:-1]) & (lb[1:] == lb[:-1])
    tied[1:] |= same
    tied[:-1] |= same
    if tied.any():   # parallel links inside a host: by id, as the walk's sort key says
        id_rank = np.zeros(len(link), dtype=np.int64)
        tied_links = link[tied].tolist()
        by_id = sorted(range(len(tied_links)), key=lambda k: topo.link_ids[tied_links[k]])
        id_rank[np.flatnonzero(tied)[by_id]] = np.arange(len(by_id), dtype=np.int64)
        order = np.lexsort((id_rank, lb, la, host))
        link, host = link[order], host[order]
    return _HostLayout(node, node_ptr, link, _ptr(host, n_hosts), node_local, lid_rank)


def _local_id_ranks(topo: Topology) -> np.ndarray:
    """Per node: a rank of its :func:`~.intra.local_id` (in order among the distinct ones; the
    whole id of a node outside hosts ranks with them, which changes no order or equality among
    the hosts' nodes). ``str.removeprefix`` of ``host + "/"`` is local_id (a node id without that
    prefix stays whole), mapped in C rather than by local_id inlined in a comprehension."""
    prefix = {h: h + "/" if h else "" for h in dict.fromkeys(topo.node_host)}   # as local_id: no host, no prefix
    lids = list(map(str.removeprefix, topo.node_ids, map(prefix.__getitem__, topo.node_host)))
    distinct, code = first_appearance_codes(lids)
    rank = np.empty(len(distinct), dtype=np.int64)
    rank[sorted(range(len(distinct)), key=distinct.__getitem__)] = np.arange(len(distinct), dtype=np.int64)
    return rank[code]


def _host_indices(topo: Topology) -> tuple[list[str], np.ndarray]:
    """The hosts in order of first appearance, and per node its host's index (-1: none); kept
    on the topology (shared, never modified)."""
    got = topo.__dict__.get("_routing_host_indices")
    if got is None:
        distinct, code = value_codes(topo, "node_host")
        is_host = np.array([h is not None for h in distinct], dtype=bool)
        position = np.where(is_host, np.cumsum(is_host) - 1, -1).astype(np.int64)
        got = topo.__dict__["_routing_host_indices"] = (
            [h for h in distinct if h is not None], position[code])
    return got


def _cached_layout(topo: Topology, node_hidx: np.ndarray, n_hosts: int) -> _HostLayout:
    """:func:`_host_layout`, kept on the topology (it depends on nothing else): a failure sweep's
    contexts built from scratch share it."""
    layout = topo.__dict__.get("_routing_host_layout")
    if layout is None:
        layout = topo.__dict__["_routing_host_layout"] = _host_layout(topo, node_hidx, n_hosts)
    return layout


def _ptr(sorted_owner: np.ndarray, n: int) -> np.ndarray:
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(sorted_owner, minlength=n), out=ptr[1:])
    return ptr


def _kind_codes(topo: Topology) -> np.ndarray:
    """Per node: a code of its kind (:func:`~designer.engine.model.topology.value_codes`, shared with
    the tiers)."""
    return value_codes(topo, "node_kind")[1]


def _kind_code(topo: Topology, kind: str) -> int:
    """The code of ``kind`` in :func:`_kind_codes` (-1: no node has it)."""
    kinds = value_codes(topo, "node_kind")[0]
    return kinds.index(kind) if kind in kinds else -1


def _nvlink_tech(topo: Topology) -> np.ndarray:
    """Per link: its tech names NVLink (the first test of :func:`~.intra.is_nvlink`), from the
    tech codes the tiers share; kept on the topology."""
    got = topo.__dict__.get("_routing_nvlink_tech")
    if got is None:
        techs, code = value_codes(topo, "link_tech")
        nvl = np.array([(tech or "").lower().startswith("nvl") for tech in techs], dtype=bool)
        got = topo.__dict__["_routing_nvlink_tech"] = nvl[code]
    return got


class _Absent:
    """An attribute a node does not have (distinct from every value, None included)."""


def _node_columns(topo: Topology, layout: _HostLayout) -> list[np.ndarray]:
    """Codes of what :func:`_signature` holds per node (in layout order): local id, kind,
    capacity (or None) and each routing attr, equal exactly when the signature's items are.
    Kept on the layout: they depend on the topology only."""
    if layout.node_columns is not None:
        return layout.node_columns
    nodes = layout.node
    cap = topo.node_capacity_gbps[nodes]
    # np.unique compares with ==, as the signature's floats do (node_resource >= 0 iff finite).
    finite = np.isfinite(cap)
    cap_code = np.full(len(nodes), -1, dtype=np.int64)
    cap_code[finite] = np.unique(cap[finite], return_inverse=True)[1].reshape(-1)
    cols = [layout.lid_rank, _kind_codes(topo)[nodes], cap_code]
    attrs = list(map(topo.node_attrs.__getitem__, nodes.tolist()))
    absent = _Absent()
    # A key no node has is absent everywhere: no column (``nic`` at 16,384 GPUs: a pass saved).
    known = node_attr_keys(topo)
    keys = _ROUTING_ATTRS if known is None else [k for k in _ROUTING_ATTRS if k in known]
    cols += _attr_codes([list(map(dict.get, attrs, repeat(key), repeat(absent))) for key in keys])
    layout.node_columns = cols
    return cols


def _attr_codes(columns: list[list]) -> list[np.ndarray]:
    """Codes of the routing attrs' columns, equal exactly when the values' reprs are: one code
    for all the columns whose values compare like their reprs (a tuple per node, cheaper than a
    code per column), one per other column (:func:`_value_codes`)."""
    exact = [c for c in columns if _exact(set(map(type, c)))]
    codes = [_value_codes(c) for c in columns if not any(c is e for e in exact)]
    if exact:
        codes.append(first_appearance_codes(list(zip(*exact)))[1])
    return codes


def _exact(classes: set) -> bool:
    return any(classes <= ok for ok in _EXACT_CLASSES)


# Classes whose == is repr equality (bool and int compare equal across classes, floats do not
# repr like they compare: -0.0, nan).
_EXACT_CLASSES = ({str, int, type(None), _Absent}, {str, bool, type(None), _Absent})


def _value_codes(values: list) -> np.ndarray:
    """A code per value, equal exactly when the values' reprs are (the signature holds the
    routing attrs as a repr): by the values themselves when every value's class compares like
    its repr (checked on all values, not the distinct ones: a dict keeps one of 0 and 0.0),
    else by repr."""
    if not _exact(set(map(type, values))):   # (every exact class is hashable)
        values = [repr(v) for v in values]
    return first_appearance_codes(values)[1]


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
        self.hosts, self.node_hidx = _host_indices(topo)
        self._set_forwarders(self._fabric_side() & ~self.node_failed)
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
        """Group the hosts into shapes, column-wise; the host-by-host walk when a column cannot
        be coded exactly (:func:`_host_layout`, :meth:`_shape_keys`).

        Why: the walk builds one signature per host (a tuple and an attrs repr per node, a tuple
        per link), most of what a 16,384-GPU ring's context cost for its 2,048 alike hosts.
        Codes per node and link give the same grouping, numbering and representatives in a few
        passes.
        """
        layout = _cached_layout(self.topo, self.node_hidx, len(self.hosts))
        keys = self._shape_keys(layout)
        if keys is None:
            self._build_shapes_itemwise()
            return
        self.node_local = layout.node_local.copy()   # the layout is shared by every context
        self.shapes: list[HostShape] = []
        self.host_shape = np.zeros(len(self.hosts), dtype=np.int64)
        signatures: dict[tuple, int] = {}
        node_ptr, link_ptr = layout.node_ptr.tolist(), layout.link_ptr.tolist()
        for hi, key in enumerate(keys):
            shape = signatures.get(key)
            if shape is None:
                nodes = layout.node[node_ptr[hi]:node_ptr[hi + 1]].tolist()
                links = layout.link[link_ptr[hi]:link_ptr[hi + 1]].tolist()
                shape = signatures[key] = len(self.shapes)
                self.shapes.append(HostShape(*self._host_key(nodes, links)[1]))
            self.host_shape[hi] = shape
        self._set_host_maps(layout)

    def _shape_keys(self, layout: _HostLayout) -> list[tuple] | None:
        """Per host: a key equal for two hosts exactly when their :func:`_signature` is (the
        bytes of its nodes' codes and of its links' rows, in local order); None when a link
        capacity is NaN (NaN never equals itself in a signature, so such hosts never share)."""
        topo = self.topo
        node, link = layout.node, layout.link
        link_cap = topo.link_capacity_gbps[link]
        if np.isnan(link_cap).any():
            return None
        node_code = dense_ids(_node_columns(topo, layout) + [
            np.diff(self.up_ptr)[node] > 0, self.wired[node], self.node_failed[node]])
        kind, nvswitch, gpu = _kind_codes(topo), _kind_code(topo, "nvswitch"), _kind_code(topo, "gpu")
        ka, kb = kind[topo.link_a[link]], kind[topo.link_b[link]]
        nvlink = _nvlink_tech(topo)[link] | (ka == nvswitch) | (kb == nvswitch) | ((ka == gpu) & (kb == gpu))
        rows = np.stack([layout.node_local[topo.link_a[link]], layout.node_local[topo.link_b[link]], nvlink,
                         np.unique(link_cap, return_inverse=True)[1].reshape(-1), self.link_failed[link]],
                        axis=1).astype(np.int64)
        node_bytes, link_bytes = node_code.tobytes(), rows.tobytes()
        node_ptr, link_ptr = (8 * layout.node_ptr).tolist(), (40 * layout.link_ptr).tolist()
        return [(node_bytes[node_ptr[h]:node_ptr[h + 1]], link_bytes[link_ptr[h]:link_ptr[h + 1]])
                for h in range(len(self.hosts))]

    def _build_shapes_itemwise(self) -> None:
        """The host-by-host walk: one :func:`_signature` per host (the reference of the
        column-wise grouping, and its fallback)."""
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

    def _set_host_maps(self, layout: _HostLayout) -> None:
        """:meth:`_build_host_maps` from the layout's columns: each host's block is its links'
        two directions (interleaved), then its nodes' resources."""
        topo = self.topo
        n_nodes, n_links = np.diff(layout.node_ptr), np.diff(layout.link_ptr)
        block = 2 * n_links + n_nodes
        self.host_res_base = np.zeros(len(self.hosts), dtype=np.int64)
        np.cumsum(block[:-1], out=self.host_res_base[1:])
        self.host_node_base = layout.node_ptr[:-1].copy()
        self.host_node_flat = layout.node.copy()
        flat = np.empty(int(block.sum()), dtype=np.int64)
        link_host = np.repeat(np.arange(len(self.hosts), dtype=np.int64), n_links)
        rank_in_host = np.arange(len(layout.link), dtype=np.int64) - layout.link_ptr[link_host]
        at = self.host_res_base[link_host] + 2 * rank_in_host
        flat[at], flat[at + 1] = 2 * layout.link, 2 * layout.link + 1
        node_host = np.repeat(np.arange(len(self.hosts), dtype=np.int64), n_nodes)
        flat[self.host_res_base[node_host] + 2 * n_links[node_host] + layout.node_local[layout.node]] = \
            topo.node_resource[layout.node]
        self.host_res_flat = flat

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
        """Per node: outside every host and of a forwarding kind (a fabric switch, up or down)."""
        hostless, endpoint = node_classes(self.topo)
        return hostless & ~endpoint

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
