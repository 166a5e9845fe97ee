""":func:`route`: flows → paths, by concatenating segments with numpy (CSR) gathers.

A flow's path is ``src ─intra→ (relay ─intra→) gateway ─uplink→ switch ─fabric→ switch
─downlink→ gateway ─intra→ dst`` (or one intra segment inside a host). :class:`Router` looks up
each segment's alternatives once per distinct key (host shape and local endpoints, switch pair),
the NIC policy picks the gateways, and :meth:`Router._assemble` combines the alternatives into
paths: every combination of the intra-host alternatives (striped), and of the fabric ones under
``split`` — one by the flow hash under ``hash``.
"""
from __future__ import annotations

from functools import partial
from typing import NamedTuple

import numpy as np

from designer.engine.errors import InvalidScenario, LimitExceeded, Problem
from designer.engine.model.pathclass import classify_grouped
from designer.engine.routing.assemble import assemble_paths
from designer.engine.routing.context import FailureSet, RoutingContext, cached_context
from designer.engine.routing.csr import SegTable, dense_ids, group_keys, lookup
from designer.engine.routing.domain import domain_segments
from designer.engine.routing.fabric import fabric_segments
from designer.engine.routing.hashing import FABRIC_SALT, hashed_rows
from designer.engine.routing.limits import MAX_PATH_ENTRIES
from designer.engine.routing.memo import recent_routes, remember
from designer.engine.routing.nic_policies import Ends, resolve, storage_mask
from designer.engine.routing.routes import (
    DST_DOWN, NIC_DOWN, NO_FABRIC, NO_INTRA, NO_INTRA_DST, NO_INTRA_SRC, NO_NIC, OK, SAME_NODE, SRC_DOWN,
    UPLINK_DOWN, Routes, RoutesJoiner, fold_virtual, take_flows,
)
from designer.engine.model.topology import Topology

__all__ = ["MULTIPATH_MODES", "Grouped", "lay_out", "route", "route_grouped", "Router"]

MULTIPATH_MODES = ("hash", "split")


def route(topo: Topology, flows, *, nic_policy="affinity", multipath: str = "hash", seed: int = 0,
          failed=None, context: RoutingContext | None = None) -> Routes:
    """Route flows across host and fabric.

    Parameters
    ----------
    topo : Topology
    flows : Flows
        Flows to route (any subset of a workload: routing a flow does not depend on the others).
    nic_policy : {"affinity", "own_nic", "pxn", "any", "static"} or callable
        How a GPU picks its NIC: nearest by PCIe distance, the sends of NCCL's send/receive kinds
        by PXN (NCCL's default); ``own_nic`` the nearest NIC for every flow (PXN off); ``pxn``
        moves every cross-host flow's data over NVLink to the peer GPU whose NIC is on the
        destination's rail; ``any`` spreads over
        every NIC of the host (split or hashed like ECMP); ``static`` follows node attrs
        ``{"nic": "nic3"}`` and falls back to affinity. A name from
        :data:`~designer.engine.routing.nic_policies.NIC_POLICIES` or a strategy function (see
        :mod:`~designer.engine.routing.nic_policies`).
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
    grouped, remember = _recalled(topo, flows, nic_policy, multipath, seed, failed, context)
    routes = _laid_out(grouped, flows)
    remember(routes)
    return routes


def route_grouped(topo: Topology, flows, *, nic_policy="affinity", multipath: str = "hash", seed: int = 0,
                  failed=None, keep: bool = True) -> "Grouped":
    """:func:`route`'s answer before its repeated same-host flows are laid out one by one.

    Why: to predict a candidate algorithm's time the planner needs only what each resource
    carries, and the 16,384-GPU tree's 524,256 flows are 98,272 distinct routes: laying them out
    as 1.9M paths (:func:`~designer.engine.routing.routes.take_flows`) is work of which it uses
    nothing. Shares the memo of :func:`route` (same options, same flows), so routing the
    same flows afterwards lays the kept routes out without routing them again.

    ``keep=False`` leaves the memo alone (neither looked up nor filled): for routes nobody
    will ask for again — a planner candidate that cannot be chosen, whose routes would only be
    forgotten — the digest of the memo key is saved (a pass over every flow's columns). The routes are the same either way.

    Returns
    -------
    Grouped
        ``routes`` of the distinct flows and ``rep`` (per flow, the position of its route among
        them; None when every flow is its own: ``routes`` is then :func:`route`'s).
    """
    if not keep:
        name, policy = _options(nic_policy, multipath)
        ctx = cached_context(topo, FailureSet.coerce(failed))
        return _route_grouped(ctx, flows, policy, multipath, int(seed), name)
    grouped, remember = _recalled(topo, flows, nic_policy, multipath, seed, failed)
    remember(grouped.routes if grouped.rep is None else grouped)
    return grouped


def lay_out(grouped: "Grouped", flows) -> Routes:
    """The :func:`route` answer of ``flows`` from their :func:`route_grouped` one: each flow's
    route laid out (``grouped.routes`` itself when every flow is its own)."""
    return _laid_out(grouped, flows)


def _recalled(topo: Topology, flows, nic_policy, multipath: str, seed: int, failed, context=None):
    """(these flows' :class:`Grouped` routes — from the memo, or routed now —, and a function
    that keeps what the caller made of them in the memo). Laid-out routes found in the memo
    are returned as they are and stay where they are."""
    name, policy = _options(nic_policy, multipath)
    ctx = context if context is not None else cached_context(topo, FailureSet.coerce(failed))
    recent, key = recent_routes(ctx, flows, nic_policy, name, multipath, int(seed))
    known = recent.get(key) if key is not None else None
    if isinstance(known, Routes):
        return Grouped(known, None), _keep_nothing
    grouped = known if known is not None else _route_grouped(ctx, flows, policy, multipath, int(seed), name)
    return grouped, (_keep_nothing if key is None else partial(remember, recent, key))


def _keep_nothing(_value) -> None:
    return None


def _options(nic_policy, multipath: str):
    """(policy name, policy function); raises InvalidScenario for an unknown policy or mode."""
    name, policy = resolve(nic_policy)
    if multipath not in MULTIPATH_MODES:
        raise InvalidScenario("unknown multipath mode", [Problem(
            "routing.multipath", f"unknown mode {multipath!r} (choose from {', '.join(MULTIPATH_MODES)})")])
    return name, policy


class Grouped(NamedTuple):
    """Routes of distinct flows and, per flow, its route's position among them (see
    :func:`route_grouped`); ``rep`` None: one route per flow."""

    routes: Routes
    rep: np.ndarray | None


# Below this many repeated same-host flows, finding them costs more than it saves.
_MIN_REPEATS = 10_000


def _route_distinct(ctx: RoutingContext, flows, policy, multipath: str, seed: int, name: str) -> Routes:
    """:func:`_route_grouped`, laid out flow by flow: the routes of ``flows``."""
    return _laid_out(_route_grouped(ctx, flows, policy, multipath, seed, name), flows)


def _laid_out(grouped: Grouped, flows) -> Routes:
    routes, rep = grouped
    return routes if rep is None else take_flows(routes, rep, flows.src)


def _route_grouped(ctx: RoutingContext, flows, policy, multipath: str, seed: int, name: str) -> Grouped:
    """:class:`Router` on ``flows``, each same-host (source, destination) pair routed once.

    Why: NCCL's tree runs each host's chain under both trees of the double binary tree, so its
    chain flows come twice (262,128 repeats of 524,256 flows on 16,384 GPUs). A flow's route
    depends on its identity (pattern, index) only through the flow hash, and the hash only
    picks among a cross-host flow's NICs, uplinks and fabric paths (``nic_policies``,
    ``fabric``, :meth:`Router._assemble`); a flow inside one host takes its host's intra
    segments of (source, destination) whatever its index. So the repeats of a same-host pair
    share the first one's route, and :func:`~designer.engine.routing.routes.take_flows`
    lays it out exactly as routing every flow does (checked against that in
    ``tests/engine/test_routing_distinct.py``).
    """
    repeats = _same_host_repeats(ctx, flows)
    if repeats is None:
        return Grouped(_route_blocks(ctx, flows, policy, multipath, seed, name), None)
    keep, rep = repeats
    return Grouped(_route_blocks(ctx, flows.take(keep), policy, multipath, seed, name), rep)


# Up to this many flows, one Router call (every workload the former 5M-flow limit admitted routes
# exactly as before); above, blocks of _BLOCK_FLOWS. Why: each per-flow temporary of a 16.8M-flow
# all-to-all is 134 MB, beyond glibc's largest mmap threshold (32 MB), so every one was a fresh
# mapping faulted in page by page, and routing 4,096 GPUs' all-to-all in one call was mostly
# system time. 1M-flow blocks keep the temporaries at 8 MB, reused from the heap.
_ONE_BLOCK_FLOWS = 5_000_000
_BLOCK_FLOWS = 1 << 20


def _too_many_entries(entries: int) -> LimitExceeded:
    return LimitExceeded("routing produced too many path entries",
                         [Problem("routing", f"{entries:,} (path, resource) entries exceed "
                                             f"{MAX_PATH_ENTRIES:,}; use multipath 'hash'")])


def _route_blocks(ctx: RoutingContext, flows, policy, multipath: str, seed: int, name: str) -> Routes:
    """:class:`Router` on ``flows``, in consecutive blocks above :data:`_ONE_BLOCK_FLOWS`.

    Exact: a flow's route depends on its own source, destination and hash identity only (see
    :func:`route`), so a block routes its flows as the whole would; the blocks are joined by
    :class:`~designer.engine.routing.routes.RoutesJoiner` (class names then in order of first
    appearance over the blocks; ``tests/engine/test_routing_assemble.py`` checks every other field
    against one call).
    """
    n = len(flows)
    if n <= _ONE_BLOCK_FLOWS:
        return Router(ctx, flows, policy, multipath, seed, name).run()
    joined = RoutesJoiner(ctx.topo, n, MAX_PATH_ENTRIES)
    for lo in range(0, n, _BLOCK_FLOWS):
        block = Router(ctx, flows.take(np.arange(lo, min(lo + _BLOCK_FLOWS, n))), policy, multipath, seed, name)
        part = block.run()
        if joined.entries + len(part.flow_res) > MAX_PATH_ENTRIES:
            raise _too_many_entries(joined.entries + len(part.flow_res))
        joined.add(part)
    return joined.routes()


def _same_host_repeats(ctx: RoutingContext, flows):
    """(kept flows, per flow its position among them), keeping the first flow of each same-host
    (source, destination) pair and every cross-host flow, in order; None when fewer than
    :data:`_MIN_REPEATS` flows repeat an earlier one."""
    n = len(flows)
    if n < _MIN_REPEATS:
        return None
    src, dst = np.asarray(flows.src, dtype=np.int64), np.asarray(flows.dst, dtype=np.int64)   # read only
    hs = ctx.node_hidx[src]
    same = (hs >= 0) & (hs == ctx.node_hidx[dst])
    if int(np.count_nonzero(same)) < _MIN_REPEATS:
        return None
    # Only same-host flows can repeat: one unique over their pairs, the cross-host flows all kept
    # (28,672 keys on 4,096 GPUs' all-to-all, which has none, instead of a 16.8M-key unique).
    idx = np.flatnonzero(same)
    pairs = src[idx] * len(ctx.node_hidx) + dst[idx]
    _, first, inverse = np.unique(pairs, return_index=True, return_inverse=True)
    if len(idx) - len(first) < _MIN_REPEATS:
        return None
    first_flow = idx[first]   # per distinct pair: its first flow
    keep = ~same
    keep[first_flow] = True
    position = np.cumsum(keep) - 1   # of each kept flow among the kept
    position[idx] = position[first_flow[inverse.reshape(-1)]]
    return np.flatnonzero(keep), position


def _lexicographic_ids(cols: list, n: int) -> np.ndarray:
    """Per row: a non-negative int64 id of its values in the columns ``cols`` (int, >= -1), in the
    lexicographic order of the rows' tuples — the order :func:`~designer.engine.routing.csr.
    dense_ids` gives — kept within ``max(4 n, 2^16)`` values when it can be, by ranking the ids so
    far with a presence table before a column would make them span more.

    Why: the path-class keys of 1,024 GPUs' all-to-all span 28M values (three intra columns of
    ~240 rows and the fabric one), so :func:`~designer.engine.routing.csr.group_keys` sorted its
    1.05M keys; ranked, they span a few thousand and it counts them. Only the order
    and equality of the ids count for the classes (``classify_grouped`` reads the sorted distinct
    keys in order), so the classes and their numbering are the same."""
    limit = max(4 * n, 1 << 16)
    if not all(len(c) == n and c.dtype.kind in "iu" for c in cols):
        return dense_ids(cols)
    key, span = np.zeros(n, dtype=np.int64), 1
    for col in cols:
        col = col.astype(np.int64) + 1
        if n and int(col.min()) < 0:
            return dense_ids(cols)
        width = int(col.max()) + 1 if n else 1
        if span * width > limit and span <= limit:
            key, span = _presence_rank(key, span)
        if span * width >= (1 << 62):
            return dense_ids(cols)
        key = key * width + col
        span *= width
    return key


def _presence_rank(key: np.ndarray, span: int):
    """(each key's rank among the distinct ``key`` values in [0, span), their number)."""
    seen = np.zeros(span, dtype=bool)
    seen[key] = True
    distinct = np.flatnonzero(seen)
    rank = np.zeros(span, dtype=np.int64)
    rank[distinct] = np.arange(len(distinct), dtype=np.int64)
    return rank[key], max(len(distinct), 1)


def _nvswitch_mask(topo: Topology) -> np.ndarray:
    """Per node: an NVSwitch (cached on the topology)."""
    mask = topo.__dict__.get("_nvswitch_mask")
    if mask is None:
        mask = topo.__dict__["_nvswitch_mask"] = np.array([k == "nvswitch" for k in topo.node_kind], dtype=bool)
    return mask


class Router:
    """One routing call: the flows, the policy and the segment registries it fills.

    ``nic_slot`` (per flow, or None) is the NIC a virtual flow of a fanned-out policy uses.
    """

    def __init__(self, ctx: RoutingContext, flows, policy, multipath: str, seed: int, policy_name: str):
        self.ctx, self.topo, self.flows = ctx, ctx.topo, flows
        self.policy, self.policy_name, self.multipath, self.seed = policy, policy_name, multipath, seed
        self.n = len(flows)
        self.status = np.zeros(self.n, dtype=np.int8)
        self.subject = np.full(self.n, -1, dtype=np.int64)
        self.intra = SegTable()
        self.fabric = SegTable()
        self.domain = SegTable()   # NVLink paths between hosts of one NVLink domain (domain.py)
        self.nic_slot: np.ndarray | None = None
        self.dead_nic = np.full(self.n, -1, dtype=np.int64)
        self._one = np.ones(self.n, dtype=np.int64)   # the count of a single-resource piece

    def fail(self, mask: np.ndarray, code: int, subject: np.ndarray) -> None:
        """Mark the still-routable flows of ``mask`` unroutable with ``code`` (first reason wins)."""
        if not mask.any():   # the usual case on a healthy fabric: nothing to mark
            return
        new = mask & (self.status == OK)
        self.status[new] = code
        self.subject[new] = subject[new] if isinstance(subject, np.ndarray) else subject

    # ------------------------------------------------------------------ main
    def run(self) -> Routes:
        fan_out = getattr(self.policy, "fan_out", None)
        if fan_out is not None and (self.multipath == "split" or getattr(fan_out, "always", False)):
            k = fan_out(self)
            if k is not None:
                return self._run_fanned_out(k)
        return self._run()

    def _run_fanned_out(self, k: np.ndarray) -> Routes:
        """Route ``k`` virtual flows per flow, NIC slot 0..k-1 each, then fold them back: the
        virtual flows of a flow are consecutive, so their paths already are too."""
        f = self.flows
        rep = np.repeat(np.arange(self.n, dtype=np.int64), k)
        start = np.cumsum(k) - k
        sub = Router(self.ctx, f.take(rep), self.policy, self.multipath, self.seed, self.policy_name)
        sub.nic_slot = np.arange(len(rep), dtype=np.int64) - start[rep]
        return fold_virtual(sub._run(), f, rep, start)

    def _run(self) -> Routes:
        ctx, f = self.ctx, self.flows
        # Read only (the routes' src may share the flows' column, as take_flows' does).
        src, dst = np.asarray(f.src, dtype=np.int64), np.asarray(f.dst, dtype=np.int64)
        self.fail(src == dst, SAME_NODE, src)
        # A flow to or from an NVSwitch ends at the host's NVSwitch plane (routing/intra.py):
        # one switch down leaves the others, so only a GPU-side endpoint being down is fatal.
        if ctx.node_failed.any():
            plane = _nvswitch_mask(self.topo)
            self.fail(ctx.node_failed[src] & ~plane[src], SRC_DOWN, src)
            self.fail(ctx.node_failed[dst] & ~plane[dst], DST_DOWN, dst)
        hs, hd = ctx.node_hidx[src], ctx.node_hidx[dst]
        same = (hs >= 0) & (hs == hd)
        pieces = self._pieces(src, dst, hs, hd, same)
        return self._assemble(src, pieces)

    def _pieces(self, src, dst, hs, hd, same) -> list:
        """Per flow: a list of pieces, each (kind, first alternative, count, host) arrays; kind
        'intra' rows hold local tokens mapped through the host, 'fabric' rows hold resources,
        'single' pieces one resource (or -1), 'domain' rows global NVLink resources."""
        dom = domain_segments(self.ctx, self.domain, src, dst)   # None without NVLink domains
        if dom is not None:
            same = same & (dom[0] < 0)
        sfirst, scount = self._same_host(src, dst, hs, same)
        cross = ~same if dom is None else ~same & (dom[0] < 0)
        gs, gd, relay = self._gateways(src, dst, hs, hd, cross)
        p1f, p1c, p2f, p2c = self._source_side(src, hs, cross, gs, relay)
        p4f, p4c = self._destination_side(dst, hd, cross, gd)
        p3f, p3c, up_tok, down_tok = self._fabric_side(dst, cross, gs, gd)
        # Host-less endpoints' own node resources (a storage box with a throughput limit).
        node_res = self.topo.node_resource
        src_tok = np.where(cross & (hs < 0), node_res[src], -1)
        dst_tok = np.where(cross & (hd < 0), node_res[dst], -1)
        pieces = [("single", src_tok), ("intra", sfirst, scount, hs), ("intra", p1f, p1c, hs),
                  ("intra", p2f, p2c, hs), ("single", up_tok), ("fabric", p3f, p3c),
                  ("single", down_tok), ("intra", p4f, p4c, hd), ("single", dst_tok)]
        return pieces if dom is None else pieces + [("domain", dom[0], dom[1])]

    def _none(self) -> np.ndarray:
        return np.full(self.n, -1, dtype=np.int64)

    def _zero(self) -> np.ndarray:
        return np.zeros(self.n, dtype=np.int64)

    def _same_host(self, src, dst, hs, same):
        """Same host: one intra segment."""
        ctx = self.ctx
        sfirst, scount = self._none(), self._zero()
        if same.any():
            idx = np.flatnonzero(same)
            fi, co = self._intra_lookup(hs[idx], ctx.node_local[src[idx]], ctx.node_local[dst[idx]])
            sfirst[idx], scount[idx] = fi, co
            self.fail(same & (scount == 0), NO_INTRA, dst)
        return sfirst, scount

    def _source_side(self, src, hs, cross, gs, relay):
        """Source side: src → (relay →) gateway."""
        ctx = self.ctx
        p1f, p1c, p2f, p2c = self._none(), self._zero(), self._none(), self._zero()
        in_host = cross & (hs >= 0) & (self.status == OK)
        if in_host.any():
            idx = np.flatnonzero(in_host)
            loc_s = ctx.node_local[src[idx]]
            relays = relay[idx]
            has_relay = relays >= 0
            if has_relay.any():
                via = np.where(has_relay, ctx.node_local[np.maximum(relays, 0)], ctx.node_local[gs[idx]])
            else:   # no PXN relay (affinity): the gateway's local index, without the where
                via = ctx.node_local[gs[idx]]
            p1f[idx], p1c[idx] = self._intra_lookup(hs[idx], loc_s, via)
            if has_relay.any():
                ridx = idx[has_relay]
                # relay → gateway, without repeating the relay's own node resource.
                p2f[ridx], p2c[ridx] = self._intra_lookup(hs[ridx], ctx.node_local[relay[ridx]],
                                                          ctx.node_local[gs[ridx]], skip_first=True)
                self.fail(in_host & (relay >= 0) & (p2c == 0), NO_INTRA_SRC, src)
            self.fail(in_host & (p1c == 0), NO_INTRA_SRC, src)
        return p1f, p1c, p2f, p2c

    def _destination_side(self, dst, hd, cross, gd):
        """Destination side: gateway → dst."""
        ctx = self.ctx
        p4f, p4c = self._none(), self._zero()
        out_host = cross & (hd >= 0) & (self.status == OK)
        if out_host.any():
            idx = np.flatnonzero(out_host)
            p4f[idx], p4c[idx] = self._intra_lookup(hd[idx], ctx.node_local[gd[idx]], ctx.node_local[dst[idx]])
            self.fail(out_host & (p4c == 0), NO_INTRA_DST, dst)
        return p4f, p4c

    def _fabric_side(self, dst, cross, gs, gd):
        """Fabric: gateway → gateway through switches."""
        p3f, p3c = self._none(), self._zero()
        up_tok, down_tok = self._none(), self._none()
        fab = cross & (self.status == OK)
        if fab.any():
            idx = np.flatnonzero(fab)
            p3f[idx], p3c[idx], up_tok[idx], down_tok[idx] = fabric_segments(
                self.ctx, self.fabric, self.flows, idx, gs[idx], gd[idx], self.seed)
            self.fail(fab & (p3c == 0), NO_FABRIC, dst)
        return p3f, p3c, up_tok, down_tok

    # ------------------------------------------------------------------ lookups
    def _intra_lookup(self, host, a, b, skip_first=False):
        """(first, count) of the striped intra-host alternatives a→b (local) in each host."""
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

        return lookup(keys, compute, space=len(ctx.shapes) * nmax * nmax)

    def _gateways(self, src, dst, hs, hd, cross):
        """Per cross-host flow: source gateway, destination gateway (global nodes; the node itself
        when it is a host-less endpoint) and PXN relay GPU (-1 when none), chosen by the policy."""
        # A flow whose far end is a fabric storage box uses the storage NICs.
        storage = storage_mask(self.topo)
        ends = Ends(src, dst, hs, hd, cross, storage[dst] | storage[src], gs=np.where(hs < 0, src, -1),
                    gd=np.where(hd < 0, dst, -1), relay=np.full(self.n, -1, dtype=np.int64))
        self.policy(self, ends)
        self._check_gateways(src, dst, cross, ends.gs, ends.gd)
        return ends.gs, ends.gd, ends.relay

    def _check_gateways(self, src, dst, cross, gs, gd) -> None:
        """Flows without a NIC, or whose NIC is down or has no working uplink: unroutable."""
        ctx = self.ctx
        # Per node: down, or without a working uplink (a NIC that fails its flows).
        bad_node = ctx.node_failed | (ctx.up_ptr[1:] == ctx.up_ptr[:-1])
        for side_g, side_n in ((gs, src), (gd, dst)):
            g = np.maximum(side_g, 0)
            if not (cross & ((side_g == -2) | ((side_g >= 0) & bad_node[g]))).any():
                continue   # every mask below is empty: nothing to mark
            self.fail(cross & (side_g == -2), NO_NIC, side_n)
            dead = cross & (side_g >= 0) & ctx.node_failed[g]
            self.dead_nic[dead & (self.status == OK)] = g[dead & (self.status == OK)]
            self.fail(dead, NIC_DOWN, side_n)
            no_up = cross & (side_g >= 0) & (ctx.up_ptr[g + 1] == ctx.up_ptr[g])
            self.dead_nic[no_up & (self.status == OK)] = g[no_up & (self.status == OK)]
            self.fail(no_up, UPLINK_DOWN, side_n)

    # ------------------------------------------------------------------ assembly
    def _alternatives(self, piece) -> np.ndarray:
        """Per flow: how many alternatives of ``piece`` its paths combine (at least 1)."""
        if piece[0] == "single" or (piece[0] == "fabric" and self.multipath == "hash"):
            return self._one   # one hashed fabric alternative per flow
        if len(piece[2]) == 0 or int(piece[2].max()) <= 1:
            # Every count 0 or 1: every flow combines one alternative, as below (three passes and
            # the product of _assemble fewer for most pieces of an all-to-all).
            return self._one
        return np.maximum(np.where(piece[1] >= 0, piece[2], 1), 1)

    def _assemble(self, src, pieces) -> Routes:
        n = self.n
        ok = self.status == OK
        counts = [self._alternatives(piece) for piece in pieces]
        nsub = ok.astype(np.int64)
        for c in counts:
            if c is not self._one:   # a factor of ones changes no product
                nsub *= c
        first = np.zeros(n, dtype=np.int64)
        np.cumsum(nsub[:-1], out=first[1:])
        total = int(nsub.sum())
        owner = np.repeat(np.arange(n, dtype=np.int64), nsub)
        # Combination index of each path within its flow (only read where a piece has choices).
        combo = np.arange(total, dtype=np.int64) - first[owner] if total > int(np.count_nonzero(ok)) else None
        tables = {"intra": self.intra.arrays(), "fabric": self.fabric.arrays(), "domain": self.domain.arrays()}
        fab_hash = partial(hashed_rows, self.flows, self.seed, FABRIC_SALT) if self.multipath == "hash" else None
        flow_ptr, flow_res, stripes = assemble_paths(self.ctx, pieces, counts, owner, combo, fab_hash, tables)
        share = stripes / np.bincount(owner, weights=stripes, minlength=n)[owner] if total else np.zeros(0)
        if len(flow_res) > MAX_PATH_ENTRIES:
            raise _too_many_entries(len(flow_res))
        routes = Routes(self.topo, flow_ptr, flow_res, owner, share, src, first, nsub, self.status,
                        np.full(n, -1, dtype=np.int16), [], self.policy_name, self.subject, self.dead_nic,
                        share.copy(), stripes)   # solver weights = shares: one flow weighs 1
        self._classify(routes, pieces)
        return routes

    def _classify(self, routes: Routes, pieces) -> None:
        """Path class per flow, computed once per structural key: the local-token rows of the
        intra pieces (they already encode host shape and local endpoints, so the gateways and
        relay chosen), whether there is a fabric piece (the fabric part does not change the
        class), and host-less endpoints."""
        ok = np.flatnonzero(routes.status == OK)
        if len(ok) == 0:
            return
        ctx = self.ctx
        every = len(ok) == self.n
        on_ok = (lambda a: a) if every else (lambda a: a[ok])   # no gather when every flow routes
        src, dst = on_ok(self.flows.src), on_ok(self.flows.dst)
        first_path = on_ok(routes.first)
        cols = []
        for piece in pieces:
            if piece[0] == "intra":
                cols.append(on_ok(piece[1]))
            elif piece[0] in ("fabric", "domain"):
                cols.append((on_ok(piece[1]) >= 0).astype(np.int64))
        for end in (src, dst):
            hostless = ctx.node_hidx[end] < 0
            if hostless.any():   # else a column of -1: left out as constant below
                cols.append(np.where(hostless, end, -1))
        # A column equal on every flow orders and groups nothing: leaving it out changes no key's
        # rank, so neither the groups nor the order classes are numbered in.
        varying = [c for c in cols if len(c) and int(c.min()) != int(c.max())] or [np.zeros(len(ok), np.int64)]
        keys, first, inverse = group_keys(_lexicographic_ids(varying, len(ok)))
        # One key per group, in increasing order: classify_grouped numbers the classes exactly as
        # on every flow's key (first appearance over the sorted keys), with far less to sort.
        codes, names = classify_grouped(ctx.topo, keys, lambda j: routes.path_nodes(int(first_path[first[j]])))
        routes.class_code[ok] = codes[inverse]
        routes.class_names = names
