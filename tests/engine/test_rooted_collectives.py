"""nccl-tests' rooted and send/receive collectives as engine pattern kinds: broadcast and reduce
(a chain on the ring's channels), gather and scatter (sends to / from the root), hypercube
(recursive doubling). Hand-derived bytes and times on a small drawn cluster (``mini`` of
tests/engine/test_routing.py): 2 hosts × 2 GPUs, one 400 Gb/s NIC per host (rail 0)::

    [hX/gpu0]--400--[hX/pcie0]--400--[hX/nic0]==400==[leaf0]==400==[spine0, spine1]
    [hX/gpu1]--400--/      \\==3600 NVLink (gpu↔nvs0)==

Ranks are the GPUs in document order: 0 = h0/gpu0, 1 = h0/gpu1, 2 = h1/gpu0, 3 = h1/gpu1.
A 400 Gb/s link is 50 GB/s; two flows sharing one get 25 GB/s each.
"""
import pytest

from designer.engine.analysis.simulate import simulate
from designer.engine.errors import InvalidWorkload
from designer.engine.traffic.collectives import busbw_factor
from designer.engine.traffic.workloads import generate, normalize_pattern
from tests.engine.test_routing import mini

S = 4e9


@pytest.fixture(scope="module")
def topo():
    return mini(hosts=2, gpus=2, nic_per_gpu=False)


def flows(topo, raw):
    f = generate(topo, [normalize_pattern(topo, raw, "workload[0]", set())])
    ids = topo.node_ids
    return [(ids[s], ids[d], b) for s, d, b in zip(f.src, f.dst, f.bytes)]


def timed(topo, raw):
    r = simulate({"topology": topo, "workload": [{"id": "c", **raw}], "options": {"max_flows_listed": 0}})
    return r["summary"]["patterns"]["c"]


def test_broadcast_is_a_chain_from_the_root_on_every_channel(topo):
    """Two channels (2 GPUs a host); each ring cut open at the root: n − 1 = 3 links of S/2."""
    got = flows(topo, {"kind": "broadcast", "bytes": S, "root": "h1/gpu1"})
    assert len(got) == 2 * 3 and all(b == S / 2 for *_, b in got)
    senders = [s for s, _, _ in got]
    receivers = [d for _, d, _ in got]
    for k in (0, 3):   # per channel: the root sends first and never receives
        chain = got[k:k + 3]
        assert chain[0][0] == "h1/gpu1" and "h1/gpu1" not in [d for _, d, _ in chain]
        assert [d for _, d, _ in chain[:-1]] == [s for s, _, _ in chain[1:]]   # a chain, link to link
    assert receivers.count("h1/gpu1") == 0 and senders.count("h1/gpu1") == 2


def test_reduce_is_the_chain_ending_at_the_root(topo):
    got = flows(topo, {"kind": "reduce", "bytes": S, "root": "h0/gpu1"})
    assert len(got) == 6
    for k in (0, 3):
        chain = got[k:k + 3]
        assert chain[-1][1] == "h0/gpu1" and "h0/gpu1" not in [s for s, _, _ in chain]


def test_gather_and_scatter_move_s_over_n_to_and_from_the_root(topo):
    gather = flows(topo, {"kind": "gather", "bytes": S, "root": "h0/gpu0"})
    assert sorted(gather) == [(g, "h0/gpu0", S / 4) for g in ("h0/gpu1", "h1/gpu0", "h1/gpu1")]
    scatter = flows(topo, {"kind": "scatter", "bytes": S})          # root: the first participant
    assert sorted(scatter) == [("h0/gpu0", g, S / 4) for g in ("h0/gpu1", "h1/gpu0", "h1/gpu1")]


def test_hypercube_exchanges_s_mask_over_n_with_rank_xor_mask(topo):
    got = flows(topo, {"kind": "hypercube", "bytes": S})
    assert sorted(got) == sorted([
        ("h0/gpu0", "h0/gpu1", S / 4), ("h0/gpu1", "h0/gpu0", S / 4),   # mask 1
        ("h1/gpu0", "h1/gpu1", S / 4), ("h1/gpu1", "h1/gpu0", S / 4),
        ("h0/gpu0", "h1/gpu0", S / 2), ("h1/gpu0", "h0/gpu0", S / 2),   # mask 2
        ("h0/gpu1", "h1/gpu1", S / 2), ("h1/gpu1", "h0/gpu1", S / 2)])
    sent = {}
    for s, _, b in got:
        sent[s] = sent.get(s, 0) + b
    assert all(v == pytest.approx(3 / 4 * S) for v in sent.values())    # (n−1)/n × S each


def test_broadcast_time_is_the_rings_bottleneck(topo):
    """Both channels' chains leave h0 through nic0 (channel 0 from h0/gpu1, channel 1 from the
    root h0/gpu0): two S/2 flows on 50 GB/s, 25 GB/s each, so data = (S/2)/25 GB/s and
    busbw = algbw = S/t → 50 GB/s, one NIC's rate."""
    p = timed(topo, {"kind": "broadcast", "bytes": S, "root": "h0/gpu0"})
    assert p["algorithm"] == "ring"
    data = (S / 2) / 25e9
    assert p["completion_s"] == pytest.approx(p["latency_s"] + data / p["efficiency"], rel=1e-9)
    assert p["busbw_gbs"] == pytest.approx(p["algbw_gbs"])          # factor 1


def test_gather_time_is_bound_by_the_roots_nic(topo):
    """Two remote ranks send S/4 each into the root's host through nic0 (and the root's PCIe
    link): 25 GB/s each; the local rank's S/4 over NVLink is faster."""
    p = timed(topo, {"kind": "gather", "bytes": S, "root": "h0/gpu0"})
    assert p["algorithm"] == "p2p"
    assert p["completion_s"] == pytest.approx(p["latency_s"] + (S / 4) / 25e9 / p["efficiency"], rel=1e-9)
    assert p["busbw_gbs"] == pytest.approx(p["algbw_gbs"] * 3 / 4)


def test_hypercube_time_is_the_cross_host_step_and_its_latency_counts_log2_n_steps(topo):
    """Mask 2 sends S/2 from each GPU of a host through its one NIC: two flows, 25 GB/s each."""
    p = timed(topo, {"kind": "hypercube", "bytes": S})
    assert p["completion_s"] == pytest.approx(p["latency_s"] + (S / 2) / 25e9 / p["efficiency"], rel=1e-9)
    from designer.engine.traffic.collectives.protocols import BASE_LAT_US, PROTOCOLS, latency_us

    # P2P latency = base + rounds × (intra step + inter step): gather one round, hypercube log2(4) = 2.
    base = BASE_LAT_US["p2p"][PROTOCOLS.index("Simple")]
    one = latency_us("p2p", "Simple", "gather", 4, 2) - base
    assert one > 0
    assert latency_us("p2p", "Simple", "hypercube", 4, 2) - base == pytest.approx(2 * one)
    assert latency_us("p2p", "Simple", "hypercube", 16, 2) - base == pytest.approx(4 * one)


def test_busbw_factors_of_the_new_kinds():
    assert busbw_factor("broadcast", 8) == busbw_factor("reduce", 8) == 1.0
    assert busbw_factor("gather", 8) == busbw_factor("scatter", 8) == busbw_factor("hypercube", 8) == 7 / 8


@pytest.mark.parametrize("raw, path, words", [
    ({"kind": "broadcast", "bytes": 1, "root": "h9/gpu0"}, "workload[0].root", "unknown node"),
    ({"kind": "gather", "bytes": 1, "root": "h1/gpu0", "participants": {"ids": ["h0/gpu0", "h0/gpu1"]}},
     "workload[0].root", "not a participant"),
    ({"kind": "hypercube", "bytes": 1, "participants": {"ids": ["h0/gpu0", "h0/gpu1", "h1/gpu0"]}},
     "workload[0].participants", "power-of-two"),
    ({"kind": "scatter", "bytes": 1, "channels": 2}, "workload[0]", "unknown field"),
    ({"kind": "reduce", "bytes": 1, "algorithm": "tree"}, "workload[0].algorithm", "unknown algorithm"),
])
def test_bad_rooted_patterns_are_located(topo, raw, path, words):
    with pytest.raises(InvalidWorkload) as err:
        normalize_pattern(topo, raw, "workload[0]", set())
    assert any(p.path == path and words in p.message for p in err.value.problems), err.value.problems
