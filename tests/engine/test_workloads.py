"""Workloads → flows: byte accounting, ring order, selectors, located errors."""
import numpy as np
import pytest

from designer.engine.errors import InvalidWorkload
from designer.engine.traffic.workloads import generate, normalize_pattern, resolve_selector, ring_orders
from tests.engine.test_routing import mini


def flows_for(topo, raw):
    return generate(topo, [normalize_pattern(topo, raw, "workload[0]", set())])


def test_ring_allreduce_bytes_per_gpu_and_rail_aligned_hops():
    """2 hosts x 2 GPUs: n = 4, two channels; each GPU sends 2(n-1)/n x size in total."""
    topo = mini()
    f = flows_for(topo, {"id": "ar", "kind": "allreduce", "algorithm": "ring", "bytes": 1e9})
    assert len(f) == 4 * 2
    sent = np.bincount(f.src, weights=f.bytes, minlength=topo.num_nodes)
    for g in topo.nodes_of_kind("gpu"):
        assert sent[g] == pytest.approx(2 * 3 / 4 * 1e9)
    for s, d in zip(f.src, f.dst):
        if topo.node_host[s] != topo.node_host[d]:  # inter-host hop: same local GPU index (rail)
            assert topo.node_attrs[s]["index"] == topo.node_attrs[d]["index"]


def test_ring_orders_keep_hosts_consecutive_and_cover_every_rail():
    topo = mini(hosts=2, gpus=4)
    gpus = np.array(topo.nodes_of_kind("gpu"))
    orders = ring_orders(topo, gpus)
    assert len(orders) == 4
    exits = set()
    for order in orders:
        hosts = [topo.node_host[n] for n in order]
        assert hosts == sorted(hosts)  # consecutive per host
        exits.add(topo.node_attrs[int(order[3])]["index"])
    assert exits == {0, 1, 2, 3}


def test_allgather_reducescatter_alltoall_tree_bytes():
    topo = mini()
    n = 4
    ag = flows_for(topo, {"kind": "allgather", "algorithm": "ring", "bytes": 8e8})
    assert ag.bytes.sum() == pytest.approx(n * (n - 1) / n * 8e8)
    a2a = flows_for(topo, {"kind": "alltoall", "bytes": 8e8})
    assert len(a2a) == n * (n - 1) and np.allclose(a2a.bytes, 8e8 / n)
    # NCCL's tree (tests/engine/test_collectives.py): per channel (2 here, one per local GPU),
    # each host's 2-GPU chain (1 edge) and the 2-host tree edge, both ways, in each of the 2
    # trees: (2 x 1 + 1) x 2 x 2 = 12 flows of S / (2 trees x 2 channels).
    tree = flows_for(topo, {"kind": "allreduce", "algorithm": "tree", "bytes": 1e9})
    assert len(tree) == 2 * 12 and np.allclose(tree.bytes, 1e9 / 4)


def test_storage_bounce_is_two_flows_through_host_memory():
    topo = mini()
    f = flows_for(topo, {"kind": "storage_read", "source": {"ids": ["h0/mem0"]},
                         "participants": {"ids": ["h0/gpu0"]}, "bytes": 1e9, "via": "gpudirect"})
    assert len(f) == 1
    topo2 = mini(extra_nodes=[("st0", "storage", None, {})], extra_links=[("st0", "spine0", 400)])
    f = flows_for(topo2, {"kind": "storage_read", "source": {"kind": "storage"},
                          "participants": {"group": "h1", "kind": "gpu"}, "bytes": 1e9, "via": "bounce"})
    ids = topo2.node_ids
    assert [(ids[s], ids[d]) for s, d in zip(f.src, f.dst)] == [
        ("st0", "h1/mem0"), ("st0", "h1/mem0"), ("h1/mem0", "h1/gpu0"), ("h1/mem0", "h1/gpu1")]
    w = flows_for(topo2, {"kind": "storage_write", "source": {"kind": "storage"},
                          "participants": {"ids": ["h0/gpu0"]}, "bytes": 1e9})
    assert (ids[w.src[0]], ids[w.dst[0]]) == ("h0/gpu0", "st0")


def test_kv_transfer_offload_p2p():
    topo = mini()
    kv = flows_for(topo, {"kind": "kv_transfer", "prefill": {"group": "h0", "kind": "gpu"},
                          "decode": {"group": "h1", "kind": "gpu"}, "bytes": 2e9})
    ids = topo.node_ids
    assert [(ids[s], ids[d]) for s, d in zip(kv.src, kv.dst)] == [("h0/gpu0", "h1/gpu0"), ("h0/gpu1", "h1/gpu1")]
    off = flows_for(topo, {"kind": "host_offload", "participants": {"ids": ["h1/gpu1"]}, "direction": "both",
                           "bytes": 1e9})
    assert [(ids[s], ids[d]) for s, d in zip(off.src, off.dst)] == [("h1/gpu1", "h1/mem0"), ("h1/mem0", "h1/gpu1")]
    p = flows_for(topo, {"id": "p", "kind": "p2p", "src": "h0/gpu0", "dst": "h1/gpu1", "bytes": 5, "demand_gbps": 10})
    assert p.flow_id(0) == "p#0" and p.demand_gbps[0] == 10


def test_selectors():
    topo = mini(hosts=3)
    assert len(resolve_selector(topo, {"kind": "gpu"}, "s")) == 6
    assert [topo.node_ids[i] for i in resolve_selector(topo, {"kind": "gpu", "group": "h1"}, "s")] == ["h1/gpu0", "h1/gpu1"]
    assert len(resolve_selector(topo, {"kind": "gpu", "every": 2}, "s")) == 3
    assert [topo.node_ids[i] for i in resolve_selector(topo, {"ids": ["h2/gpu1", "h0/gpu0"]}, "s")] == ["h2/gpu1", "h0/gpu0"]


@pytest.mark.parametrize("raw, path, text", [
    ({"kind": "allreduce", "participants": {"kind": "tpu"}, "bytes": 1}, "workload[0].participants", "matches no node"),
    ({"kind": "allreduce", "participants": {"ids": ["h9/gpu0"]}, "bytes": 1}, "workload[0].participants.ids[0]", "unknown node"),
    ({"kind": "allreduce", "participants": {"group": "nope"}, "bytes": 1}, "workload[0].participants.group", "unknown group"),
    ({"kind": "alltoall", "bytes": -5}, "workload[0].bytes", ">= 0"),
    ({"kind": "barrier", "bytes": 1}, "workload[0].kind", "unknown pattern kind"),   # broadcast is a kind now
    ({"kind": "storage_read", "participants": {"kind": "gpu"}, "source": {"kind": "gpu"}, "bytes": 1},
     "workload[0].source", "expected"),
    ({"kind": "allreduce", "algorithm": "butterfly", "bytes": 1}, "workload[0].algorithm", "unknown algorithm"),
])
def test_bad_patterns_are_located(raw, path, text):
    topo = mini()
    with pytest.raises(InvalidWorkload) as exc:
        normalize_pattern(topo, raw, "workload[0]", set())
    assert any(p.path == path and text in p.message for p in exc.value.problems), exc.value.problems
