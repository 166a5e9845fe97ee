"""Routing each same-host (source, destination) pair once (``router._route_distinct``) gives
exactly the arrays routing every flow gives.

    host h0: gpu0..gpu7 ─ NVSwitches ─ nic0..nic7 ─┐
    host h1: gpu0..gpu7 ─ NVSwitches ─ nic0..nic7 ─┴─ rail-optimized leaves / spines

The flows mix what NCCL's tree makes (each chain edge twice, once per tree) with cross-host
flows (hashed over NICs and fabric paths, so they must keep their own identity), a flow from a
GPU to itself and, with a failure, flows that do not route. Every ``Routes`` field is compared
with :class:`Router` run on all the flows, for each NIC policy and multipath mode, on a
DGX H100 pair, an MI300X pair (direct xGMI mesh) and two GB200 NVL72 racks (NVLink domain).
"""
from __future__ import annotations

import numpy as np
import pytest

from designer.engine.model.fabrics import build_cluster
from designer.engine.routing import FailureSet, router
from designer.engine.routing.context import cached_context
from designer.engine.routing.nic_policies import resolve
from designer.engine.model.topology import Topology
from designer.engine.traffic.flows import Flows

FIELDS = ("flow_ptr", "flow_res", "owner", "share", "src", "first", "count", "status", "class_code",
          "_subject", "_nic", "weight", "stripes")


def _topology(template: str) -> Topology:
    return Topology.from_document(build_cluster(template, 2, fabric="rail-optimized"))


def _flows(topo: Topology) -> Flows:
    """Chain edges twice (up and down), cross-host pairs (twice) in between, one GPU to itself."""
    gpus = np.array([i for i, k in enumerate(topo.node_kind) if k == "gpu"], dtype=np.int64)
    host = np.array([topo.node_host[int(g)] for g in gpus])
    src, dst = [], []
    for h in dict.fromkeys(host.tolist()):
        chain = gpus[host == h]
        up, down = chain[1:], chain[:-1]
        for _ in range(2):               # the chain serves both trees
            src += [up, down]
            dst += [down, up]
    other = np.roll(gpus, len(gpus) // 2)
    for at in (2, 3):                    # cross-host pairs, twice: each copy hashes on its own
        src.insert(at, gpus)
        dst.insert(at, other)
    src.append(gpus[:1])
    dst.append(gpus[:1])
    return Flows.from_pairs(np.concatenate(src), np.concatenate(dst), 1e6)


def _assert_same(a, b) -> None:
    for name in FIELDS:
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype, name
        np.testing.assert_array_equal(x, y, err_msg=name)
    assert a.class_names == b.class_names
    assert a.nic_policy == b.nic_policy


@pytest.mark.parametrize("template", ["dgx-h100", "amd-mi300x", "gb200-nvl72"])
@pytest.mark.parametrize("policy", ["affinity", "pxn", "any", "static"])
@pytest.mark.parametrize("multipath", ["hash", "split"])
def test_routing_each_same_host_pair_once_is_exact(monkeypatch, template, policy, multipath):
    topo = _topology(template)
    flows = _flows(topo)
    ctx = cached_context(topo, FailureSet())
    monkeypatch.setattr(router, "_MIN_REPEATS", 1)
    repeats = router._same_host_repeats(ctx, flows)
    assert repeats is not None and len(repeats[0]) < len(flows)   # the shortcut is taken
    name, strategy = resolve(policy)
    every = router.Router(ctx, flows, strategy, multipath, 7, name).run()
    once = router._route_distinct(ctx, flows, strategy, multipath, 7, name)
    assert (once.status == 0).any()
    _assert_same(once, every)


def test_exact_with_failures_and_unroutable_flows(monkeypatch):
    """An NVSwitch and a NIC down: fewer intra paths, some flows unroutable."""
    topo = _topology("dgx-h100")
    flows = _flows(topo)
    down = [next(i for i, k in enumerate(topo.node_kind) if k == "nvswitch"),
            next(i for i, k in enumerate(topo.node_kind) if k == "nic")]
    ctx = cached_context(topo, FailureSet.coerce((down, ())))
    monkeypatch.setattr(router, "_MIN_REPEATS", 1)
    name, strategy = resolve("affinity")
    every = router.Router(ctx, flows, strategy, "hash", 0, name).run()
    once = router._route_distinct(ctx, flows, strategy, "hash", 0, name)
    assert (every.status != 0).any()
    _assert_same(once, every)


def test_repeats_keep_first_flows_in_order():
    """Kept: every cross-host flow and the first of each same-host pair, in flow order; each
    flow maps to its pair's first flow."""
    topo = _topology("dgx-h100")
    ctx = cached_context(topo, FailureSet())
    g = [i for i, k in enumerate(topo.node_kind) if k == "gpu"]
    a, b, far = g[0], g[1], g[8]   # a, b in one host, far in the other
    flows = Flows.from_pairs([a, a, far, a, b, a], [b, far, a, b, a, far])
    old = router._MIN_REPEATS
    try:
        router._MIN_REPEATS = 1
        keep, rep = router._same_host_repeats(ctx, flows)
    finally:
        router._MIN_REPEATS = old
    assert keep.tolist() == [0, 1, 2, 4, 5]
    assert rep.tolist() == [0, 1, 2, 0, 3, 4]
