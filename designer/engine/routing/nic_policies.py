"""NIC policies: how a flow leaving (or entering) a host picks its NIC — a table of strategies.

:data:`NIC_POLICIES` maps a policy name to its strategy function, resolved by :func:`resolve`
(as networkx resolves ``flow_func``): :func:`~designer.engine.routing.route` accepts a name
from the table or a strategy function itself. A strategy is called once per routing call as
``policy(router, ends)`` and fills, for the cross-host flows of ``ends`` (an :class:`Ends`):

- ``ends.gs`` / ``ends.gd``: the source / destination gateway (global node; ``-2`` when the node
  has no NIC connected to the fabric), already set for host-less endpoints (a storage box);
- ``ends.relay``: the GPU a PXN flow first moves its data to over NVLink (-1 for none).

``router`` (a :class:`~designer.engine.routing.router.Router`) gives the routing context
(``router.ctx``), the flows, the seed and ``router.nic_slot``. A strategy that divides a flow
over several NICs also carries ``fan_out(router) -> ndarray | None``, the number of NICs per
flow (None: no flow is divided): the router then routes that many virtual flows, NIC slot
``0..k-1`` each, and folds them back into one flow. The router calls it under
``multipath="split"`` only, unless it has ``fan_out.always`` (``affinity``'s striping over a
GPU's equally near NICs, which NCCL does whatever the fabric's multipath). Adding a policy
is one function plus one entry in :data:`NIC_POLICIES`.

Flows whose far end is a storage box use the storage-role NICs (``attrs.role == "storage"``)
when the host has some. NIC tables come from :mod:`~designer.engine.routing.nic_tables`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from designer.engine.errors import InvalidScenario, Problem
from designer.engine.routing import nic_tables
from designer.engine.routing.hashing import NIC_SALT, flow_hash
from designer.engine.model.topology import Topology

__all__ = ["NIC_POLICIES", "NCCL_P2P_KINDS", "Ends", "resolve", "affinity", "own_nic", "pxn", "any_nic", "static",
           "storage_mask", "nccl_p2p_flows", "relay_to_destination_rail"]


@dataclass
class Ends:
    """Per flow (int64 arrays unless said): source and destination nodes, their host indices
    (-1 for host-less), masks ``cross`` (different hosts) and ``to_storage`` (an end is a
    storage box), and the gateways and relay the policy fills."""

    src: np.ndarray
    dst: np.ndarray
    hs: np.ndarray
    hd: np.ndarray
    cross: np.ndarray
    to_storage: np.ndarray
    gs: np.ndarray
    gd: np.ndarray
    relay: np.ndarray


def storage_mask(topo: Topology) -> np.ndarray:
    """Per node: whether it is a storage box (cached on the topology, read only: otherwise a list
    pass over every node's kind per routing call)."""
    mask = topo.__dict__.get("_storage_mask")
    if mask is None:
        mask = np.array([k == "storage" for k in topo.node_kind], dtype=bool)
        mask.flags.writeable = False
        topo.__dict__["_storage_mask"] = mask
    return mask


# ======================================================================================== building blocks
def _bound(ctx, nodes: np.ndarray, hosts: np.ndarray, build) -> np.ndarray:
    """Gateway (global node, -2 when none) of ``nodes`` from the per-shape table ``build``."""
    gl = nic_tables.gather(ctx, ctx.host_shape[hosts], ctx.node_local[nodes], build)
    return np.where(gl >= 0, ctx.host_node_flat[ctx.host_node_base[hosts] + np.maximum(gl, 0)], -2)


def bind_destinations(router, ends: Ends, table) -> None:
    """Destination gateways of cross-host flows from ``table(shape, storage)``."""
    _bind(router.ctx, ends.gd, ends.dst, ends.hd, ends.cross & (ends.hd >= 0), ends.to_storage, table)


def bind_sources(router, ends: Ends, table) -> None:
    """Source gateways of cross-host flows from ``table(shape, storage)``."""
    _bind(router.ctx, ends.gs, ends.src, ends.hs, ends.cross & (ends.hs >= 0), ends.to_storage, table)


# From this many flows on, a side's gateways are bound per node, then gathered per flow.
_PER_NODE_MIN = 4096


def _bind(ctx, out, nodes, hosts, todo, to_storage, table) -> None:
    """``out[sel] = _bound(nodes[sel], hosts[sel])`` for the flows ``sel`` of ``todo`` to (then
    from) storage ends and the others, with the table of their storage role.

    Why per node: :func:`_bound` is elementwise in (node, host), and a node's host is
    ``ctx.node_hidx[node]``: binding the few distinct nodes met and gathering their gateways per
    flow leaves out the masked copies and the ~10 per-flow passes of ``_bound`` (1.04M flows on
    1,024 GPUs' all-to-all). The same gateways: checked first
    that every selected flow's host is its node's (else the per-flow binding)."""
    # Node ids in range too: a negative one would mark another node's slot (found in review).
    per_node = (len(nodes) >= _PER_NODE_MIN and bool(np.all(((nodes >= 0) & (nodes < len(ctx.node_hidx))) | ~todo))
                and bool(np.all((ctx.node_hidx[nodes] == hosts) | ~todo)))
    for storage in (False, True):
        sel = todo & (to_storage == storage)
        if not sel.any():
            continue
        build = lambda s, storage=storage: table(s, storage)   # noqa: E731
        if not per_node:
            out[sel] = _bound(ctx, nodes[sel], hosts[sel], build)
            continue
        met = np.zeros(len(ctx.node_hidx) + 1, dtype=bool)
        met[np.where(sel, nodes, len(ctx.node_hidx))] = True   # unselected flows on the extra slot
        distinct = np.flatnonzero(met[:-1])
        gateway = np.full(len(ctx.node_hidx), -2, dtype=np.int64)
        gateway[distinct] = _bound(ctx, distinct, ctx.node_hidx[distinct], build)
        np.copyto(out, gateway[nodes], where=sel)


def _rails(ctx) -> int:
    """Number of rails of the context (numbering every shape's NIC rails first)."""
    for s in ctx.shapes:
        nic_tables.rail_of(s, ctx.rails)
    return len(ctx.rails)


# ======================================================================================== policies
def affinity(router, ends: Ends) -> None:
    """NCCL's default: each node uses its nearest NIC by PCIe distance, decided on the healthy
    host — a flow whose NIC is down is unroutable, as in NCCL —, and the sends of NCCL's
    point-to-point operations (:data:`NCCL_P2P_KINDS`) leave by PXN.

    *Nearest NIC.* A GPU with several equally near NICs
    (:func:`~designer.engine.routing.nic_tables.affinity_set`) stripes over them:
    :func:`nic_stripes` fans its cross-host flows out into one virtual flow per NIC slot, and
    virtual flow ``j`` leaves by NIC ``j mod t`` of the source GPU's ``t`` and arrives by NIC
    ``j mod t'`` of the destination GPU's ``t'`` (rail-aligned between like hosts).

    *PXN for send/receive.* NCCL binds a send to a remote peer to the NIC of the local GPU with
    the peer's device index and, when that GPU is reached over NVLink and the NIC is PXB or
    nearer to it, hands the data to that GPU over NVLink first (NVIDIA/nccl
    ``src/graph/search.cc`` ``ncclTopoGetNetDev``: ``NCCL_P2P_PXN_LEVEL`` defaults to 2, "use PXN
    as much as possible", unless ``NCCL_PXN_DISABLE``); the receiver keeps its own NIC
    (``src/transport/net.cc`` ``recvSetup``: "the receiver uses its own NIC"). So a send leaves
    on the destination's rail: :func:`relay_to_destination_rail` on the flows of those kinds.
    Collective algorithms (ring, tree, NVLS, …) keep the NICs of their channels' graph, as here.
    :func:`own_nic` is this policy with PXN disabled."""
    own_nic(router, ends)
    p2p = nccl_p2p_flows(router.flows)
    if p2p is not None:
        relay_to_destination_rail(router, ends, ends.cross & p2p, healthy=True)


def own_nic(router, ends: Ends) -> None:
    """Every flow leaves by its own GPU's nearest NIC(s), striped as :func:`affinity` does:
    NCCL with PXN disabled (``NCCL_PXN_DISABLE=1``)."""
    bind_destinations(router, ends, nic_tables.affinity)
    bind_sources(router, ends, nic_tables.affinity)
    if router.nic_slot is not None:
        _stripe(router, ends, ends.gd, ends.dst, ends.hd)
        _stripe(router, ends, ends.gs, ends.src, ends.hs)


#: Pattern kinds NCCL runs as grouped ``ncclSend``/``ncclRecv`` (all-to-all, nccl-tests'
#: gather, scatter and hypercube: ``traffic/collectives/p2p.py``), whose cross-host sends take
#: PXN by NCCL's default (see :func:`affinity`).
NCCL_P2P_KINDS = ("alltoall", "gather", "scatter", "hypercube")


def nccl_p2p_flows(flows) -> np.ndarray | None:
    """Per flow: whether its pattern is one of :data:`NCCL_P2P_KINDS` (None when no flow is)."""
    kinds = np.array([k in NCCL_P2P_KINDS for k in (flows.pattern_kinds or [])], dtype=bool)
    if not kinds.any():
        return None
    return kinds[np.asarray(flows.pattern, dtype=np.int64)]


def _stripe(router, ends: Ends, out, nodes, hosts) -> None:
    """``out`` of the compute flows of GPUs with several NICs: NIC ``slot mod t`` of the ``t``."""
    ctx = router.ctx
    sel = np.flatnonzero(ends.cross & (hosts >= 0) & ~ends.to_storage)
    shape = ctx.host_shape[hosts[sel]]
    for sh in nic_tables.shapes_present(shape):
        table = nic_tables.affinity_set(ctx.shapes[sh])
        if table.shape[1] == 1:
            continue
        idx = sel[shape == sh]
        loc = ctx.node_local[nodes[idx]]
        t = np.count_nonzero(table[loc] >= 0, axis=1)
        many = t > 1
        idx, loc, t = idx[many], loc[many], t[many]
        local = table[loc, router.nic_slot[idx] % t]
        out[idx] = ctx.host_node_flat[ctx.host_node_base[hosts[idx]] + local]


def nic_stripes(router) -> np.ndarray | None:
    """``affinity``'s fan-out: per flow, the most NICs its source or destination GPU stripes
    over (see :func:`affinity`); None — route as is, no virtual flows — when no GPU of any host
    shape has several (a DGX H100), checked per shape, not per flow."""
    ctx, f = router.ctx, router.flows
    tables = [nic_tables.affinity_set(s) for s in ctx.shapes]
    if all(t.shape[1] == 1 for t in tables):
        return None
    width = [np.maximum(np.count_nonzero(t >= 0, axis=1), 1) for t in tables]
    src, dst = np.asarray(f.src, dtype=np.int64), np.asarray(f.dst, dtype=np.int64)
    hs, hd = ctx.node_hidx[src], ctx.node_hidx[dst]
    storage = storage_mask(router.topo)
    compute = (hs != hd) & ~(storage[src] | storage[dst])
    k = np.ones(len(f), dtype=np.int64)
    for nodes, hosts in ((src, hs), (dst, hd)):
        sel = np.flatnonzero(compute & (hosts >= 0))
        shape = ctx.host_shape[hosts[sel]]
        for sh in nic_tables.shapes_present(shape):
            idx = sel[shape == sh]
            k[idx] = np.maximum(k[idx], width[sh][ctx.node_local[nodes[idx]]])
    return k if int(k.max(initial=1)) > 1 else None


nic_stripes.always = True   # NCCL stripes whatever the fabric multipath mode
affinity.fan_out = nic_stripes
own_nic.fan_out = nic_stripes


def static(router, ends: Ends) -> None:
    """Bindings from node attrs ``{"nic": "nic3"}`` (local or full id); affinity elsewhere."""
    bind_destinations(router, ends, nic_tables.static)
    bind_sources(router, ends, nic_tables.static)


def pxn(router, ends: Ends) -> None:
    """Affinity, then sender-side PXN for every cross-host flow, not only NCCL's send/receive
    (the "unified network" what-if): see :func:`relay_to_destination_rail`."""
    own_nic(router, ends)
    relay_to_destination_rail(router, ends, ends.cross)


def relay_to_destination_rail(router, ends: Ends, sel: np.ndarray, healthy: bool = False) -> None:
    """Sender-side PXN on the flows ``sel``: if the destination NIC's rail is served by another
    local GPU reached over NVLink, go to that GPU first (``ends.relay``) and leave by its NIC on
    that rail (NCCL_PXN). A GPU whose own NIC is down relays to a peer whose NIC is alive (on
    the destination's rail when one is, else any): the "unified network" answer to a NIC
    failure. With several NICs a GPU (AWS p5) the rail is the destination's NIC stripe's, and
    the relay is the GPU whose NICs include one on it (:func:`~.nic_tables.pxn_relay`).
    ``healthy``: relays and NICs chosen on the healthy host (NCCL's choice at start-up: a send
    bound to a NIC that is down is then unroutable), not around failures."""
    ctx = router.ctx
    num_rails = _rails(ctx)
    sel = sel & (ends.hs >= 0) & ~ends.to_storage & (ends.gd >= 0)
    if not sel.any():
        return
    idx = np.flatnonzero(sel)
    hd_ = ctx.node_hidx[ends.gd[idx]]
    dst_rail = np.full(len(idx), num_rails, dtype=np.int64)  # column num_rails = no preference
    inhost = hd_ >= 0
    if num_rails and inhost.any():
        r = nic_tables.gather(ctx, ctx.host_shape[hd_[inhost]], ctx.node_local[ends.gd[idx][inhost]],
                              lambda s: nic_tables.rail_of(s, ctx.rails))
        dst_rail[inhost] = np.where(r >= 0, r, num_rails)
    shape = ctx.host_shape[ends.hs[idx]]
    loc = ctx.node_local[ends.src[idx]]
    rel = np.full(len(idx), -1, dtype=np.int64)
    nic = np.full(len(idx), -1, dtype=np.int64)
    for sh in nic_tables.shapes_present(shape):
        m = shape == sh
        rel[m] = nic_tables.pxn_relay(ctx.shapes[sh], ctx.rails, num_rails, healthy)[loc[m], dst_rail[m]]
        nic[m] = nic_tables.pxn_gateway(ctx.shapes[sh], ctx.rails, num_rails, healthy)[np.maximum(rel[m], 0),
                                                                                   dst_rail[m]]
    use = (rel >= 0) & (rel != loc)
    idx, rel, nic = idx[use], rel[use], nic[use]
    base = ctx.host_node_base[ends.hs[idx]]
    ends.relay[idx] = ctx.host_node_flat[base + rel]
    ends.gs[idx] = ctx.host_node_flat[base + nic]


def any_nic(router, ends: Ends) -> None:
    """Every working NIC of the host serves every GPU (the unified-network what-if). The source
    takes one by a seeded per-flow hash (``hash``) or the NIC of its virtual flow (``split``, see
    :func:`every_live_nic`); the destination uses its NIC on the same rail, so the fabric leg
    stays rail-aligned — or, when that NIC is down, its own NIC, else any live one."""
    bind_destinations(router, ends, nic_tables.affinity)
    ctx = router.ctx
    num_rails = _rails(ctx)
    h = flow_hash(router.flows, router.seed, salt=NIC_SALT)
    pick = h if router.nic_slot is None else router.nic_slot.astype(np.uint64)
    sel = ends.cross & (ends.hs >= 0)
    for storage in (False, True):
        part = sel & (ends.to_storage == storage)
        if not part.any():
            continue
        idx = np.flatnonzero(part)
        shape = ctx.host_shape[ends.hs[idx]]
        chosen = np.full(len(idx), -1, dtype=np.int64)
        for sh in nic_tables.shapes_present(shape):
            m = np.flatnonzero(shape == sh)
            nics = nic_tables.live_nics(ctx.shapes[sh], storage)
            if len(nics):
                chosen[m] = nics[(pick[idx[m]] % np.uint64(len(nics))).astype(np.int64)]
        base = ctx.host_node_base[ends.hs[idx]]
        ends.gs[idx] = np.where(chosen >= 0, ctx.host_node_flat[base + np.maximum(chosen, 0)], -2)
        dsel = (ends.hd[idx] >= 0) & (chosen >= 0) & (num_rails > 0)
        if dsel.any():
            _rail_aligned_destination(ctx, ends, idx[dsel], shape[dsel], chosen[dsel], storage, num_rails)
        _live_destination(ctx, ends, idx[ends.hd[idx] >= 0], storage, h)


def _rail_aligned_destination(ctx, ends: Ends, didx, src_shape, chosen, storage, num_rails) -> None:
    """Destination NIC on the rail of the chosen source NIC, when it exists and is alive."""
    hd, gd = ends.hd, ends.gd
    rail = nic_tables.gather(ctx, src_shape, chosen, lambda s: nic_tables.rail_of(s, ctx.rails))
    has = rail >= 0
    didx, rail = didx[has], rail[has]
    dgw = np.full(len(didx), -1, dtype=np.int64)
    dshape = ctx.host_shape[hd[didx]]
    alive = np.zeros(len(didx), dtype=bool)
    for sh in nic_tables.shapes_present(dshape):
        m = dshape == sh
        s = ctx.shapes[sh]
        dgw[m] = nic_tables.rail_gateway(s, ctx.rails, num_rails, storage)[rail[m]]
        alive[m] = [s.alive_nic(v) for v in dgw[m].tolist()]
    gd[didx[alive]] = ctx.host_node_flat[ctx.host_node_base[hd[didx[alive]]] + dgw[alive]]


def _live_destination(ctx, ends: Ends, didx, storage, h) -> None:
    """Destination whose NIC is down (or has no uplink): another live NIC of its host (hash)."""
    hd, gd = ends.hd, ends.gd
    g = gd[didx]
    gg = np.maximum(g, 0)
    dead = (g >= 0) & (ctx.node_failed[gg] | (ctx.up_ptr[gg + 1] == ctx.up_ptr[gg]))
    didx = didx[dead]
    if not len(didx):
        return
    dshape = ctx.host_shape[hd[didx]]
    for sh in nic_tables.shapes_present(dshape):
        m = np.flatnonzero(dshape == sh)
        nics = nic_tables.live_nics(ctx.shapes[sh], storage)
        if len(nics):
            k = didx[m]
            local = nics[(h[k] % np.uint64(len(nics))).astype(np.int64)]
            gd[k] = ctx.host_node_flat[ctx.host_node_base[hd[k]] + local]


def every_live_nic(router) -> np.ndarray:
    """``any`` + ``split``: each cross-host flow leaving a host is split evenly over every live
    NIC of that host (docs/ENGINE.md, Routing): the number of NICs per flow (1 for the others)."""
    ctx, f = router.ctx, router.flows
    src, dst = f.src.astype(np.int64), f.dst.astype(np.int64)
    hs, hd = ctx.node_hidx[src], ctx.node_hidx[dst]
    storage = storage_mask(router.topo)
    to_storage = storage[src] | storage[dst]
    k = np.ones(len(f), dtype=np.int64)
    leaving = (hs >= 0) & (hs != hd)
    for st in (False, True):
        m = leaving & (to_storage == st)
        if m.any():
            live = np.array([len(nic_tables.live_nics(s, st)) for s in ctx.shapes], dtype=np.int64)
            k[m] = np.maximum(live[ctx.host_shape[hs[m]]], 1)
    return k


any_nic.fan_out = every_live_nic


# ======================================================================================== the table
class _PolicyTable(dict):
    """A dict whose membership test answers False for unhashable keys (a JSON list, say), as the
    former tuple of names did: validators test raw scenario values against it."""

    def __contains__(self, key) -> bool:
        try:
            return dict.__contains__(self, key)
        except TypeError:
            return False


NIC_POLICIES = _PolicyTable({"affinity": affinity, "own_nic": own_nic, "pxn": pxn, "any": any_nic,
                             "static": static})


def resolve(nic_policy):
    """The (name, strategy) of ``nic_policy``: a name from :data:`NIC_POLICIES`, or a strategy
    function (named by its table entry, else its ``__name__``).

    Raises
    ------
    InvalidScenario
        An unknown name.
    """
    if callable(nic_policy):
        name = next((k for k, fn in NIC_POLICIES.items() if fn is nic_policy), None)
        return name or getattr(nic_policy, "__name__", "custom"), nic_policy
    if nic_policy not in NIC_POLICIES:
        raise InvalidScenario("unknown NIC policy", [Problem(
            "routing.nic_policy", f"unknown policy {nic_policy!r} (choose from {', '.join(NIC_POLICIES)})")])
    return nic_policy, NIC_POLICIES[nic_policy]
