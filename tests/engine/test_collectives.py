"""Collective algorithms and the time model: hand-checkable numbers on 8×H100 and 2×DGX-H100.

One HGX/DGX H100 host (catalog: NVLink 4 effective 20.6 GB/s per link, 18 links per GPU =
370.8 GB/s per direction; PCIe Gen5 x16 48 GB/s; 400G NICs)::

    [gpu0..gpu7] ==5/4/4/5 NVLinks== [nvswitch0..3]        (NVSwitch gen3: NVLS-capable)
    [gpuI]--[pcieI]--[nicI]==400G==[leafI]==[spine*]        (two hosts: rail-optimized)

Latencies are NCCL tuning.cc's (designer/engine/traffic/collectives/protocols.py): ring Simple on one
host = 8.4 + 14 × 3.4 = 56 µs; ring LL = 6.6 + 14 × 0.6 = 15 µs; NVLS = 25 µs. Across hosts the
network step is the fabric's own (designer/engine/analysis/latency.network_step): one LL step on the rail
path h0/gpu0 → pcie0 → nic0 → leaf0 → h1/nic0 → pcie0 → gpu0 = proxy notice 1.5 + WQE 0.15 +
doorbell 0.42 + WQE fetch 0.9 + payload read 0.9 + flight 0.6 + forwarding 1.29 + the NIC's
write to host memory 0.32 + the GPU's poll of host memory 0.9 = 6.98 µs (NCCL keeps LL network
buffers in host memory), so on two hosts tree LL = 6.8 + 2 × (7 × 0.6 + 1 × 6.98) = 29.16 µs.
"""
import numpy as np
import pytest

from designer.engine.traffic.collectives import busbw_factor, plan_pattern
from designer.engine.traffic.collectives.protocols import latency_us
from designer.engine.errors import InvalidWorkload
from designer.engine.model.fabrics import build_cluster
from designer.engine.analysis.simulate import simulate
from designer.engine.model.templates import host_document
from designer.engine.model.topology import Topology
from designer.engine.traffic.workloads import generate, normalize_pattern

GIB8 = 8 * 2**30
NVLINK_GBS = 18 * 20.6          # one H100's NVLink, GB/s per direction (catalog, effective)
NVLS_EFF = 0.85 * 15 / 16   # Hopper nvlsEfficiency × (16 NVLS channels − 1) / 16 (catalog.nvls_efficiency)
PCIE5_GBS = 48.0                # PCIe Gen5 x16 effective (catalog): the GPU↔NIC hop
# Pipeline fill at 8 GiB (collectives/sizing.py): NVLS, 16 channels × 8 heads = 128 concurrent
# ops, 128 KiB chunks (8 GiB ≥ 64 × 128 × 128 KiB), k = 8 GiB / (128 × 128 KiB) = 512 chunks
# through 3 stages: 512 / 514. NVLS-tree on 2 hosts: the same 512 chunks through 3 + 2·log2(2) = 5
# stages: 512 / 516. Tree on 2 hosts: 16 channels (2 × 8 NICs), 512 KiB chunks, k = 8 GiB / (16 ×
# 512 KiB) = 1024 through 2·(8 − 1 + 1) = 16 stages: 1024 / 1039.
NVLS_FILL_8G = 512 / 514
NVLSTREE_FILL_8G = 512 / 516
TREE2_FILL_8G = 1024 / 1039


@pytest.fixture(scope="module")
def one():
    return Topology.from_document(host_document("dgx-h100"))


@pytest.fixture(scope="module")
def two():
    return Topology.from_document(build_cluster("dgx-h100", 2))


def run(topo, size, algorithm="auto", kind="allreduce", routing=None, failures=()):
    pattern = {"id": "c", "kind": kind, "participants": {"kind": "gpu"}, "bytes": size, "algorithm": algorithm}
    r = simulate({"topology": topo, "workload": [pattern], "routing": routing or {}, "failures": list(failures)})
    return r, r["summary"]["patterns"]["c"]


def test_ring_on_one_h100_host_is_nvlink_bound(one):
    """Ring, one channel: every GPU sends 2(n−1)/n × S to its successor at its whole NVLink rate;
    busbw = algbw × 2(n−1)/n = 370.8 GB/s less the 56 µs latency."""
    _, p = run(one, GIB8, "ring")
    assert (p["algorithm"], p["protocol"]) == ("ring", "Simple")
    assert p["latency_s"] == pytest.approx(56e-6)
    data = 2 * 7 / 8 * GIB8 / (NVLINK_GBS * 1e9)
    assert p["completion_s"] == pytest.approx(56e-6 + data, rel=1e-9)
    assert p["busbw_gbs"] == pytest.approx(NVLINK_GBS, rel=2e-3)
    assert p["algbw_gbs"] == pytest.approx(GIB8 / p["completion_s"] / 1e9)
    assert p["busbw_gbs"] == pytest.approx(p["algbw_gbs"] * 2 * 7 / 8)


def test_nvls_busbw_is_2_n_minus_1_over_n_plus_1_of_nvlink_at_hopper_efficiency(one):
    """NVLS: per GPU S(n+1)/n up to the NVSwitch plane and as much down, at NVLink rate × 0.85 ×
    15/16 (NCCL's nvlsEfficiency and its (nChannels − 1)/nChannels with 16 NVLS channels):
    busbw = 2(n−1)/(n+1) × 370.8 × 0.797 ≈ 459 GB/s (published ~480, NVIDIA/nccl-tests#212)."""
    _, p = run(one, GIB8, "nvls")
    eff = NVLS_EFF * NVLS_FILL_8G
    assert (p["algorithm"], p["protocol"], p["efficiency"]) == ("nvls", "Simple", pytest.approx(eff))
    data = GIB8 * 9 / 8 / (NVLINK_GBS * 1e9)
    assert p["completion_s"] == pytest.approx(25e-6 + data / eff, rel=1e-9)
    assert p["busbw_gbs"] == pytest.approx(2 * 7 / 9 * NVLINK_GBS * eff, rel=2e-3)
    assert 480 * 0.9 < p["busbw_gbs"] < 480 * 1.1   # within the fidelity tolerance of the published ~480


def test_nvls_flows_go_to_the_nvswitch_plane_striped_like_nvlink(one):
    """A flow to an NVSwitch ends at the whole plane: 4 sub-flows with shares 5/4/4/5 of 18."""
    r, _ = run(one, GIB8, "nvls")
    up = [f for f in r["flows"] if f["dst"] == "h0/nvswitch0"]
    assert len(up) == 8 and all(f["bytes"] == pytest.approx(GIB8 * 9 / 8) for f in up)
    shares = sorted(round(x["share"] * 18) for x in up[0]["paths"])
    assert shares == [4, 4, 5, 5] and {x["path"][-1] for x in up[0]["paths"]} == {
        f"h0/nvswitch{j}" for j in range(4)}


def test_auto_picks_nvls_for_large_and_ring_ll_for_8_bytes_on_one_host(one):
    _, big = run(one, GIB8)
    assert big["algorithm"] == "nvls"
    alt = big["alternatives"]
    assert alt["ring"]["time_s"] > alt["nvls"]["time_s"] and alt["nvlstree"]["time_s"] is None
    assert "two or more hosts" in alt["nvlstree"]["reason"] and "one host" in alt["collnet"]["reason"]
    _, small = run(one, 8)
    # Latency-dominated: ring LL 15 µs beats tree LL 6.8 + 2 × 7 × 0.6 = 15.2 µs and NVLS 25 µs.
    assert (small["algorithm"], small["protocol"]) == ("ring", "LL")
    assert 15e-6 <= small["completion_s"] < 15.01e-6


def test_tree_on_two_hosts_is_rail_aligned_and_near_the_ring(two):
    """Inter-host tree edges join GPUs of one local position (rail): NIC i → leaf i → NIC i,
    never a spine. Intra-host chains carry 1.75 S per GPU like the ring, and NCCL's tuner
    charges an all-reduce tree 0.92 of that rate, so busbw ≈ 0.92 × 1.875 × 370.8 / 1.75 ≈ 365
    GB/s — not the 37.5 GB/s of a flat tree over 16 GPUs."""
    r, p = run(two, GIB8, "tree")
    net = [f for f in r["flows"] if f["class"] == "NET"]
    assert net and all(f["src"].split("gpu")[1] == f["dst"].split("gpu")[1] for f in net)
    assert not any(n.startswith("spine") for f in net for n in f["path"])
    _, ring = run(two, GIB8, "ring")
    assert p["efficiency"] == pytest.approx(0.92 * TREE2_FILL_8G)
    assert p["completion_s"] == pytest.approx(
        p["latency_s"] + 1.75 * GIB8 / (0.92 * TREE2_FILL_8G * NVLINK_GBS * 1e9), rel=1e-9)
    assert p["busbw_gbs"] == pytest.approx(0.92 * TREE2_FILL_8G * 2 * 15 / 16 * NVLINK_GBS / 1.75, rel=3e-3)
    assert abs(p["busbw_gbs"] - ring["busbw_gbs"]) < 0.1 * ring["busbw_gbs"]


def test_auto_on_two_hosts_tree_for_small_nvlstree_for_large(two):
    _, small = run(two, 8)
    assert (small["algorithm"], small["protocol"]) == ("tree", "LL")
    assert small["latency_s"] == pytest.approx(29.16e-6) and small["completion_s"] < 30e-6
    _, big = run(two, GIB8)
    assert big["algorithm"] == "nvlstree"
    # NVLink-bound inside each host (S·9/8 at 370.8 GB/s ÷ NVLS_EFF) — the 8 NICs carry only S/8 each way.
    data = GIB8 * 9 / 8 / (NVLINK_GBS * 1e9) / (NVLS_EFF * NVLSTREE_FILL_8G)
    assert big["completion_s"] == pytest.approx(big["latency_s"] + data, rel=1e-9)
    assert big["alternatives"]["nvls"]["time_s"] is None


def test_nic_failure_under_nvlstree_does_not_complete_and_falls_back_on_live_rails(two):
    """The running communicator loses GPU3's rail (NCCL does not re-plan it): not complete. The
    fallback — NCCL re-initialized on the failed fabric — builds its heads on the 7 live rails:
    still NVLink-bound (S/7 per NIC at 48 GB/s is less than S·9/8 at 370.8), so the same busbw;
    with three rails down NVLSTree's heads are NIC-bound: the fallback's busbw drops (NVLSTree on
    5 rails still beats a tree, which NCCL's tuner charges 0.92 of its rate)."""
    _, healthy = run(two, GIB8, routing={"nic_policy": "pxn"})
    _, p = run(two, GIB8, routing={"nic_policy": "pxn"}, failures=[{"target": "h0/nic3"}])
    assert p["complete"] is False and p["busbw_gbs"] is None and "h0/gpu3" in p["reason"]
    assert 1 / (7 * PCIE5_GBS) < (9 / 8) / NVLINK_GBS
    assert p["fallback"]["algorithm"] == "nvlstree"
    assert p["fallback"]["busbw_gbs"] == pytest.approx(healthy["busbw_gbs"], rel=1e-9)
    assert (p["fallback"]["rails"], p["fallback"]["rails_total"]) == (7, 8)
    three = [{"target": t} for t in ("h0/nic3", "h1/nic5", "h1/nic1")]
    _, q = run(two, GIB8, routing={"nic_policy": "pxn"}, failures=three)
    assert (q["fallback"]["rails"], q["fallback"]["rails_total"]) == (5, 8)
    assert q["fallback"]["busbw_gbs"] < 0.8 * healthy["busbw_gbs"]
    assert healthy["completion_s"] < q["fallback"]["time_s"]


def test_explicit_unsupported_algorithm_is_a_located_error():
    a100 = Topology.from_document(host_document("dgx-a100"))
    with pytest.raises(InvalidWorkload) as err:
        run(a100, 1e9, "nvls")
    problem = err.value.problems[0]
    assert problem.path == "workload[0].algorithm" and "gen3" in problem.message
    _, p = run(a100, 1e9)
    assert p["algorithm"] in ("ring", "tree") and "gen3" in p["alternatives"]["nvls"]["reason"]
    pcie = Topology.from_document(host_document("pcie-commodity"))
    with pytest.raises(InvalidWorkload) as err:
        run(pcie, 1e9, "nvls")
    assert "h0 has none" in err.value.problems[0].message


def test_unknown_algorithm_for_the_kind_and_protocol_are_rejected(one):
    for raw, path in (({"algorithm": "tree", "kind": "allgather"}, "workload[0].algorithm"),
                      ({"algorithm": "ring", "protocol": "LL256"}, "workload[0].protocol")):
        pattern = {"kind": "allreduce", "participants": {"kind": "gpu"}, "bytes": 1, **raw}
        with pytest.raises(InvalidWorkload) as err:
            normalize_pattern(one, pattern, "workload[0]", set())
        assert err.value.problems[0].path == path


def test_collnet_only_with_sharp_switches(two):
    doc = build_cluster("dgx-h100", 2)
    for n in doc["nodes"]:
        if n["kind"] == "switch":
            n.setdefault("attrs", {})["sharp"] = True
    sharp = Topology.from_document(doc)
    r, p = run(sharp, GIB8, "collnet")
    assert p["algorithm"] == "collnet" and p["complete"]
    # Per rail the heads exchange one S/8 shard each way (SHARP's NIC-port load).
    net = [f for f in r["flows"] if f["class"] == "NET"]
    assert len(net) == 16 and all(f["bytes"] == pytest.approx(GIB8 / 8) for f in net)
    with pytest.raises(InvalidWorkload) as err:
        run(two, GIB8, "collnet")
    assert "sharp" in err.value.problems[0].message


def test_pat_needs_one_gpu_per_host_and_alltoall_runs_p2p(one, two):
    gpu0s = {"ids": ["h0/gpu0", "h1/gpu0"]}
    plan = plan_pattern(two, normalize_pattern(two, {"kind": "allgather", "participants": gpu0s, "bytes": 1e6},
                                               "workload[0]", set()))
    assert plan.alternatives["pat"]["reason"] is None and plan.alternatives["pat"]["time_s"] > 0
    _, p = run(one, 1e6, kind="allgather")
    assert "one GPU per host" in p["alternatives"]["pat"]["reason"]
    _, a2a = run(one, 8e6, kind="alltoall")
    assert a2a["algorithm"] == "p2p" and a2a["busbw_gbs"] == pytest.approx(a2a["algbw_gbs"] * 7 / 8)


def test_pattern_bytes_are_nccl_tests_size_and_factors():
    """S is the per-rank buffer (all-reduce, all-to-all), the gathered buffer (all-gather), the
    sent buffer (reduce-scatter); nccl-tests' busbw factors."""
    assert busbw_factor("allreduce", 8) == 1.75 and busbw_factor("allgather", 8) == 0.875
    assert busbw_factor("alltoall", 16) == 15 / 16 and busbw_factor("p2p", 2) == 1.0


def test_nvls_volumes_per_gpu(one):
    """Per GPU on the plane: all-reduce S(n+1)/n each way; all-gather S/n up, S down;
    reduce-scatter S up, S/n down."""
    for kind, up, down in (("allreduce", 9 / 8, 9 / 8), ("allgather", 1 / 8, 1.0), ("reducescatter", 1.0, 1 / 8)):
        pattern = normalize_pattern(one, {"kind": kind, "algorithm": "nvls", "participants": {"kind": "gpu"},
                                          "bytes": 8e9}, "workload[0]", set())
        f = generate(one, [pattern])
        hub = one.node_index["h0/nvswitch0"]
        assert np.allclose(f.bytes[f.dst == hub], up * 8e9) and np.allclose(f.bytes[f.src == hub], down * 8e9)


def test_latency_model_matches_tuning_cc_formulas():
    # ring all-reduce on 2 × 8 GPUs, LL: 6.6 + 28 × max(0.6, 1.0 net overhead) + 2 × 2.7 = 40 µs
    assert latency_us("ring", "LL", "allreduce", 16, 2) == pytest.approx(40.0)
    # tree Simple: 8.4 + 2 × (7 × 4.0 + 1 × 14) = 92.4 µs; nvlstree: 25 + 2 × 1 × 14 = 53 µs
    assert latency_us("tree", "Simple", "allreduce", 16, 2) == pytest.approx(92.4)
    assert latency_us("nvlstree", "Simple", "allreduce", 16, 2) == pytest.approx(53.0)
    assert latency_us("ring", "Simple", "allgather", 8, 1, "pci") == pytest.approx(8.4 + 7 * 5.7)
    # a routed network step replaces the NET figure of ring / tree / nvlstree / p2p only:
    # ring LL 6.6 + 28 × 1.0 + 2 × 7.0 = 48.6 µs; NVLS and CollNet reduce in the switches, PAT is a fit
    assert latency_us("ring", "LL", "allreduce", 16, 2, net_step_us=7.0) == pytest.approx(48.6)
    assert latency_us("nvlstree", "Simple", "allreduce", 16, 2, net_step_us=8.5) == pytest.approx(42.0)
    for algorithm in ("nvls", "collnet", "pat"):
        assert (latency_us(algorithm, "Simple", "allreduce", 16, 2, net_step_us=1.0)
                == latency_us(algorithm, "Simple", "allreduce", 16, 2))


def test_scenario_validation_refuses_an_explicit_algorithm_that_cannot_run():
    """Refused when the scenario is normalized (API save, CLI), before any flow is built."""
    from designer.engine.traffic.scenario import normalize_scenario

    sc = {"topology": host_document("dgx-a100"),
          "workload": [{"id": "a", "kind": "allreduce", "participants": {"kind": "gpu"}, "bytes": 1e6},
                       {"id": "b", "kind": "allreduce", "algorithm": "nvlstree", "participants": {"kind": "gpu"},
                        "bytes": 1e6}]}
    with pytest.raises(InvalidWorkload) as err:
        normalize_scenario(sc)
    assert [p.path for p in err.value.problems] == ["workload[1].algorithm"]


def test_an_nvswitch_down_under_nvls_leaves_the_rest_of_the_plane(one):
    """NVSwitch0 carries 5 of each GPU's 18 NVLinks: with it down the plane flows stripe over the
    other 13, so NVLS busbw drops to 13/18 (NVSwitch1, 4 links: 14/18); nothing disconnects."""
    _, healthy = run(one, GIB8, "nvls")
    for switch, left in (("h0/nvswitch0", 13), ("h0/nvswitch1", 14)):
        r, p = run(one, GIB8, "nvls", failures=[{"target": switch}])
        assert p["complete"] and p["unroutable"] == 0
        data = GIB8 * 9 / 8 / (left * 20.6e9) / (NVLS_EFF * NVLS_FILL_8G)
        assert p["completion_s"] == pytest.approx(25e-6 + data, rel=1e-9)
        assert p["busbw_gbs"] == pytest.approx(healthy["busbw_gbs"] * left / 18, rel=1e-3)
        assert all(switch not in x["path"] for f in r["flows"] for x in f.get("paths", []))
