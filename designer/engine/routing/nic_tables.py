"""Per-host-shape NIC-choice tables: which NIC each local node uses, per rail, per relay.

Every function takes a :class:`~designer.engine.routing.intra.HostShape` and returns a table
indexed by local node (or rail), computed once per shape and cached in ``shape.tables``; the
NIC policies (:mod:`~designer.engine.routing.nic_policies`) gather them per flow with
:func:`gather`. NIC indices in tables are *local*; -1 means none.
"""
from __future__ import annotations

import numpy as np

from designer.engine.routing.intra import HostShape

__all__ = ["live_nics", "affinity", "affinity_set", "static", "rail_of", "rail_gateway", "pxn_relay", "pxn_gateway",
           "gather", "endpoint_order", "shapes_present"]


def gather(ctx, shape_idx: np.ndarray, loc: np.ndarray, build) -> np.ndarray:
    """Gather ``build(shape)[loc]`` per element (tables are per shape; ``ctx`` is the
    :class:`~designer.engine.routing.context.RoutingContext` holding the shapes)."""
    shapes = shapes_present(shape_idx)
    if len(shapes) == 1:   # one host shape (a homogeneous cluster): no masks
        return build(ctx.shapes[shapes[0]])[loc].astype(np.int64, copy=False)
    out = np.full(len(loc), -1, dtype=np.int64)
    for sh in shapes:
        m = shape_idx == sh
        out[m] = build(ctx.shapes[sh])[loc[m]]
    return out


def shapes_present(shape_idx: np.ndarray) -> list[int]:
    """The distinct host-shape indices (small, non-negative) of ``shape_idx``, increasing — as
    ``np.unique`` gives them, by a count instead of a sort of a million flows."""
    if len(shape_idx) == 0:
        return []
    return np.flatnonzero(np.bincount(shape_idx)).tolist()


def _nics(shape: HostShape, storage: bool) -> list[int]:
    """Wired NICs of the storage (or compute) role; every wired NIC when none has that role."""
    wired = [v for v in range(shape.n) if shape.gateway_any[v]]
    nics = [v for v in wired if shape.kind[v] == "nic"] or wired
    role = [v for v in nics if (shape.attrs[v].get("role") == "storage") == storage]
    return role or nics


def endpoint_order(shape: HostShape) -> list[int]:
    """Local nodes by kind, then ``attrs.index`` (nodes without one last), then local id."""
    def key(v):
        index = shape.attrs[v].get("index")
        return (shape.kind[v], 0 if isinstance(index, int) else 1, index if isinstance(index, int) else 0,
                shape.local_ids[v])
    return sorted(range(shape.n), key=key)


def live_nics(shape: HostShape, storage: bool) -> np.ndarray:
    """Local NICs (compute or storage role) that are up and have a working uplink."""
    key = f"live{int(storage)}"
    if key not in shape.tables:
        shape.tables[key] = np.array([v for v in _nics(shape, storage) if shape.alive_nic(v)], dtype=np.int64)
    return shape.tables[key]


def affinity(shape: HostShape, storage: bool) -> np.ndarray:
    """Per local node: the nearest NIC (local index) among compute (or storage) NICs, -1 if
    none. Ties between equally near NICs are dealt round-robin among the nodes that share
    them, so two GPUs under a switch with two NICs get one NIC each (NCCL pairs them so)."""
    key = "aff_storage" if storage else "aff"
    if key not in shape.tables:
        nics = _nics(shape, storage)
        table = np.full(shape.n, -1, dtype=np.int64)
        dealt: dict[tuple, int] = {}
        for v in endpoint_order(shape):
            if shape.kind[v] == "nic" and v in nics:
                table[v] = v
                continue
            tied = _nearest(shape, v, nics)
            if not tied:
                continue
            k = dealt.get((shape.kind[v], tied), 0)
            dealt[(shape.kind[v], tied)] = k + 1
            table[v] = tied[k % len(tied)]
        shape.tables[key] = table
    return shape.tables[key]


def _nearest(shape: HostShape, v: int, nics: list[int]) -> tuple:
    """The NICs of ``nics`` nearest to local node ``v`` on the healthy host (increasing; empty
    when none is reachable)."""
    dist = shape.healthy_distance(v)
    reach = [(dist[g], g) for g in nics if g in dist]
    if not reach:
        return ()
    best = min(d for d, _ in reach)
    return tuple(sorted(g for d, g in reach if d == best))


def affinity_set(shape: HostShape) -> np.ndarray:
    """``table[v, j]``: the compute NICs GPU ``v`` stripes its cross-host traffic over (local
    indices, -1 padded; one column when no GPU has several), column 0 its :func:`affinity` NIC.

    NCCL binds a GPU's channels to the NICs nearest to it and the OFI plugin stripes over them,
    so a GPU with several equally near NICs (AWS p5: 4 × 100G EFA behind its PCIe switch) uses
    all of them. Ties *between* GPUs are dealt as :func:`affinity` deals them: the ``m`` GPUs that
    share a set of ``t`` tied NICs take one NIC each, round-robin in endpoint order (two GPUs
    under a switch with two NICs: one each); when ``t > m`` GPU ``k`` of them also takes NICs
    ``k + m``, ``k + 2m``, … of the set (one GPU with four NICs: all four). Other node kinds and
    the storage role keep their single affinity NIC."""
    key = "aff_set"
    if key not in shape.tables:
        nics = _nics(shape, False)
        primary = affinity(shape, False)
        groups: dict[tuple, list[int]] = {}
        for v in endpoint_order(shape):
            if shape.kind[v] == "gpu" and primary[v] >= 0:
                tied = _nearest(shape, v, nics)
                if len(tied) > 1:
                    groups.setdefault(tied, []).append(v)
        rows = {}
        for tied, members in groups.items():
            if len(tied) > len(members):
                for k, v in enumerate(members):
                    rows[v] = tied[k::len(members)]
        table = primary.reshape(-1, 1).copy()
        if rows:
            table = np.full((shape.n, max(len(r) for r in rows.values())), -1, dtype=np.int64)
            table[:, 0] = primary
            for v, row in rows.items():
                assert row[0] == primary[v]   # column 0 is the affinity NIC (dealt the same way)
                table[v, :len(row)] = row
        table.flags.writeable = False
        shape.tables[key] = table
    return shape.tables[key]


def static(shape: HostShape, storage: bool) -> np.ndarray:
    """Bindings from node attrs ``{"nic": "nic3"}`` (local or full id); affinity elsewhere."""
    key = "static_storage" if storage else "static"
    if key not in shape.tables:
        table = affinity(shape, storage).copy()
        by_id = {lid: i for i, lid in enumerate(shape.local_ids)}
        by_id.update({shape.topo.node_ids[g]: i for i, g in enumerate(shape.nodes)})
        for v in range(shape.n):
            bound = shape.attrs[v].get("nic")
            if isinstance(bound, str) and bound in by_id:
                table[v] = by_id[bound]
        shape.tables[key] = table
    return shape.tables[key]


def rail_of(shape: HostShape, rails: dict) -> np.ndarray:
    """Per local node: integer rail key of the node if it is a NIC with a ``rail`` attr, else -1.
    ``rails`` (``repr(rail)`` → key) is shared by every shape of a context and grows here."""
    key = "rail"
    if key not in shape.tables:
        out = np.full(shape.n, -1, dtype=np.int64)
        for v in range(shape.n):
            rail = shape.attrs[v].get("rail")
            if shape.kind[v] == "nic" and rail is not None and shape.gateway_any[v]:
                out[v] = rails.setdefault(repr(rail), len(rails))
        shape.tables[key] = out
    return shape.tables[key]


def rail_gateway(shape: HostShape, rails: dict, num_rails: int, storage: bool) -> np.ndarray:
    """Per rail key: the local NIC on that rail (-1 when none)."""
    key = f"rail_gw{int(storage)}_{num_rails}"
    if key not in shape.tables:
        rail = rail_of(shape, rails)
        out = np.full(max(num_rails, 1), -1, dtype=np.int64)
        for v in sorted(_nics(shape, storage), reverse=True):
            if rail[v] >= 0 and rail[v] < num_rails:
                out[rail[v]] = v
        shape.tables[key] = out
    return shape.tables[key]


def pxn_relay(shape: HostShape, rails: dict, num_rails: int, healthy: bool = False) -> np.ndarray:
    """``relay[v, rail]``: the local GPU whose NIC sends for ``v`` towards ``rail``.

    ``v`` itself when one of its NICs (:func:`affinity_set`: its nearest ones) is on that rail
    and alive; else a GPU reached over NVLink only with a NIC on that rail, alive; else the
    fallback column ``relay[v, num_rails]`` (also used when the destination's rail is unknown):
    ``v`` while its own NIC is alive (cross-rail, as NCCL does without a rail-aligned peer),
    otherwise the first GPU over NVLink whose NIC is alive — the relay around a dead NIC. -1
    when nothing works. ``healthy``: every wired NIC counts as alive (the choice NCCL makes
    once, at start-up, on the healthy host; a send bound to a NIC that later fails is lost).
    """
    key = f"pxn_{num_rails}_{int(healthy)}"
    if key not in shape.tables:
        aff = affinity(shape, False)
        rail = rail_of(shape, rails)
        alive = _alive(shape, healthy)
        out = np.full((shape.n, num_rails + 1), -1, dtype=np.int64)
        gpus = [v for v in endpoint_order(shape) if shape.kind[v] == "gpu" and aff[v] >= 0]
        served = _rails_served(shape, rail, alive)
        for v in range(shape.n):
            if shape.kind[v] == "gpu":
                out[v] = _relay_row(shape, v, gpus, aff, served, num_rails, alive)
        shape.tables[key] = out
    return shape.tables[key]


def pxn_gateway(shape: HostShape, rails: dict, num_rails: int, healthy: bool = False) -> np.ndarray:
    """``nic[g, rail]``: the NIC relay GPU ``g`` sends by towards ``rail`` — the first of its
    :func:`affinity_set` NICs on that rail that is alive, else its :func:`affinity` NIC (the
    fallback column ``num_rails`` too). -1 for nodes without a NIC."""
    key = f"pxn_gw_{num_rails}_{int(healthy)}"
    if key not in shape.tables:
        aff = affinity(shape, False)
        out = np.repeat(aff.reshape(-1, 1), num_rails + 1, axis=1)
        rail = rail_of(shape, rails)
        alive = _alive(shape, healthy)
        for v, nics in _rails_served(shape, rail, alive).items():
            for r, nic in nics.items():
                if r < num_rails:
                    out[v, r] = nic
        shape.tables[key] = out
    return shape.tables[key]


def _alive(shape: HostShape, healthy: bool):
    """Whether a local NIC counts as usable: wired (``healthy``) or up with a working uplink."""
    return (lambda v: v >= 0 and bool(shape.gateway_any[v])) if healthy else shape.alive_nic


def _rails_served(shape: HostShape, rail: np.ndarray, alive) -> dict[int, dict[int, int]]:
    """Per GPU: {rail: its first usable :func:`affinity_set` NIC on that rail}."""
    table = affinity_set(shape)
    out: dict[int, dict[int, int]] = {}
    for v in range(shape.n):
        if shape.kind[v] != "gpu":
            continue
        for nic in table[v]:
            if nic >= 0 and rail[nic] >= 0 and alive(int(nic)):
                out.setdefault(v, {}).setdefault(int(rail[nic]), int(nic))
    return out


def _relay_row(shape: HostShape, v: int, gpus: list[int], aff: np.ndarray, served: dict, num_rails: int,
               alive) -> np.ndarray:
    """Row ``v`` of :func:`pxn_relay`: the relay per destination rail, then the fallback."""
    row = np.full(num_rails + 1, -1, dtype=np.int64)
    own_ok = aff[v] >= 0 and alive(int(aff[v]))
    peers = [g for g in gpus if g != v and alive(int(aff[g])) and shape.nvlink_only(v, g)]
    fallback = v if own_ok else (peers[0] if peers else -1)
    row[num_rails] = fallback
    own = served.get(v, {})
    for r in range(num_rails):
        if r in own:
            row[r] = v
            continue
        row[r] = next((g for g in peers if r in served.get(g, {})), fallback)
    return row
