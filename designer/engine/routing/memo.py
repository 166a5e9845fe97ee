"""The memo of recent routes kept on a routing context: :func:`~.router.route` and
:func:`~.router.route_grouped` look a workload up before routing it, and keep what they
routed; :func:`forget_routes` drops routes nobody will ask for again.
"""
from __future__ import annotations

import hashlib

import numpy as np

from designer.engine.model.topology import Topology
from designer.engine.routing.context import FailureSet, RoutingContext
from designer.engine.routing.nic_policies import NCCL_P2P_KINDS

__all__ = ["forget_routes", "memo_key", "recent_routes", "remember"]


def recent_routes(ctx: RoutingContext, flows, nic_policy, name: str, multipath: str, seed: int):
    """(the context's memo of recent routes, this call's key in it, or None: a strategy
    function as the policy is not recognised across calls)."""
    # id(ctx) in the key: a derived context starts as a copy of its base's attributes, memo
    # included, but routes differently.
    memo = ctx.__dict__.get("_recent_routes")
    if memo is None or memo[0] != id(ctx):
        memo = ctx.__dict__["_recent_routes"] = (id(ctx), {})
    if not isinstance(nic_policy, str):
        return memo[1], None
    return memo[1], (id(ctx), *memo_key(flows, name, multipath, seed))


def remember(recent: dict, key, value) -> None:
    """Keep ``value`` under ``key``, the most recent of at most :data:`_RECENT_ROUTES`."""
    recent.pop(key, None)
    if len(recent) >= _RECENT_ROUTES:
        recent.pop(next(iter(recent)))   # the oldest
    recent[key] = value


# Routes kept per context for repeated calls: the planner predicts up to three algorithms of a
# collective (ring, tree, NVLS tree) before the chosen one is routed for the simulation.
_RECENT_ROUTES = 4


def forget_routes(topo: Topology, routes, failed=None) -> None:
    """Drop ``routes`` from the memo of :func:`route` on ``topo`` under ``failed``.

    Why: the planner routes every candidate algorithm of a collective, and only the chosen one is
    routed again (by ``simulate.prepare``); the others' routes stayed alive to the end of the
    process: 126 MB (1.9M paths) for the tree candidate of a 16,384-GPU ring, 17 MB for its NVLS
    tree, all of it in that simulate's peak RSS.

    Parameters
    ----------
    topo : Topology
    routes : iterable of Routes
        Objects :func:`route` returned (compared by identity; others in the memo stay).
    failed : FailureSet or dict or (nodes, links), optional
        The failures they were routed under (as given to :func:`route`).
    """
    gone = {id(r) for r in routes}
    ctx = topo.__dict__.get("_routing_contexts", {}).get(FailureSet.coerce(failed))
    memo = ctx.__dict__.get("_recent_routes") if ctx is not None else None
    if not gone or memo is None:
        return
    recent = memo[1]
    for key in [k for k, r in recent.items() if id(r) in gone or id(getattr(r, "routes", None)) in gone]:
        del recent[key]


def memo_key(flows, policy_name: str, multipath: str, seed: int) -> tuple:
    """What a flow's route depends on besides the context: its source, destination and hash
    identity (pattern, index; :func:`~designer.engine.routing.hashing.flow_hash`), which
    patterns are NCCL send/receive kinds, the policy, the multipath mode and the seed —
    digested, so equal workloads routed twice on one context are recognised without keeping a
    copy of their arrays.

    Why: planning a collective (``collectives.select``) routes the pattern's flows to predict its
    time, then ``simulate.prepare`` routes the same flows again; for a 1M-flow all-to-all that
    second routing is a large share of the process. ``Routes`` are never modified once returned
    (``replace_flows`` and ``repeated`` build new ones), so handing out the same object is safe.
    """
    # SHA-256: with the CPU's SHA extensions faster than BLAKE2b here, and this digests every
    # flow's four columns twice per simulation.
    digest = hashlib.sha256()
    for column in (flows.src, flows.dst, flows.pattern, flows.index):
        arr = np.ascontiguousarray(column)
        digest.update(str(arr.dtype).encode())
        digest.update(memoryview(arr).cast("B"))
    # Which patterns are NCCL send/receive (PXN under ``affinity``): the same pairs route
    # differently as an all-to-all and as another kind.
    p2p = tuple(k in NCCL_P2P_KINDS for k in (getattr(flows, "pattern_kinds", None) or ()))
    return (policy_name, multipath, seed, len(flows), p2p, digest.digest()[:16])
