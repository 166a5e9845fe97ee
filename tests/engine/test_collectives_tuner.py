"""NCCL tuner mechanisms the time model takes from NCCL's own source, with hand-checkable numbers.

- Per-architecture bandwidth ceilings (NVIDIA/nccl src/graph/tuning.cc ``llMaxBws``,
  ``perChMaxRingLL128Bws``, ``perChMaxTreeBws``, ``perChMaxTreeLL128Bws``): ring LL on one host
  is capped at 87.7 GB/s (A100), 141 (H100), 282 (B200).
- The tree's medium-size correction (tuning.cc ``treeCorrectionFactor``, ``ncclTopoGetAlgoTime``).
- NVLS channels by architecture (src/transport/nvls.cc: 16 on SM90; 24 in one host or NVLink
  domain, 32 across hosts on SM100) and NVLS off with two GPUs or fewer in a host.

Topologies (catalog effective rates)::

    one DGX H100:   [gpu0..gpu7] ==18 × NVLink 4 (20.6 GB/s) = 370.8 GB/s== [nvswitch0..3]
    one DGX A100:   [gpu0..gpu7] ==12 × NVLink 3 (20.0 GB/s) = 240.0 GB/s== [nvswitch0..5]
    one GB200 tray: [gpu0..gpu3] ==18 × NVLink 5 (40.1 GB/s) = 721.8 GB/s== [18 NVSwitch chips]
    two DGX H100:   [gpuI]--[pcieI]--[nicI]==400G==[leafI]==[spine*]   (rail-optimized)
"""
import pytest

from designer.engine.benchmarks.fidelity import build_topology
from designer.engine.catalog import nvls_channels, nvls_efficiency
from designer.engine.traffic.collectives import plan_pattern
from designer.engine.traffic.collectives.common import group_of
from designer.engine.traffic.collectives.protocols import (
    bandwidth_efficiency,
    ll_max_bw,
    tree_correction,
    tuner_efficiency,
)
from designer.engine.traffic.collectives.ceilings import gpu_arch
from designer.engine.traffic.workloads import normalize_pattern

MIB = 2**20


@pytest.fixture(scope="module")
def tops():
    return {
        "h100": build_topology({"template": "dgx-h100", "hosts": 1}),
        "a100": build_topology({"template": "dgx-a100", "hosts": 1}),
        "gb200": build_topology({"template": "gb200-nvl72", "hosts": 1, "params": {"trays": 1}}),
        "h100x2": build_topology({"template": "dgx-h100", "hosts": 2, "fabric": "rail-optimized"}),
        "mi300x": build_topology({"template": "amd-mi300x", "hosts": 1}),
    }


def _plan(topo, **pattern):
    raw = {"kind": "allreduce", "participants": {"kind": "gpu"}, **pattern}
    return plan_pattern(topo, normalize_pattern(topo, raw, "workload[0]", set()))


def test_tree_correction_reads_nccls_table_by_log2_of_size_over_64():
    """log2(32 MiB / 64) = 19: LL128 0.9, Simple 0.7, LL 1.0; log2(1 KiB / 64) = 4: LL 0.9; Simple at
    8 KiB (index 7) 0.8; 256 MiB (index 22) Simple 0.9; 512 MiB and more (index ≥ 23, where NCCL
    stops applying it to the tree) and under 64 B: 1."""
    assert tree_correction("LL128", 32 * MIB) == 0.9
    assert tree_correction("Simple", 32 * MIB) == 0.7
    assert tree_correction("LL", 32 * MIB) == 1.0
    assert tree_correction("LL", 1024) == 0.9
    assert tree_correction("Simple", 8 * 1024) == 0.8          # log2(8 KiB / 64) = 7
    assert tree_correction("Simple", 256 * MIB) == 0.9
    assert tree_correction("Simple", 512 * MIB) == 1.0
    assert tree_correction("LL", 63) == 1.0


def test_ll_max_bw_rows_by_gpu_on_one_host_and_by_cpu_across_hosts():
    assert ll_max_bw("ampere", 1) == 87.7
    assert ll_max_bw("hopper", 1) == 141.0
    assert ll_max_bw("blackwell", 1) == 282.0
    assert ll_max_bw("hopper", 2) == 39.0                      # Intel hosts: the Volta row
    assert ll_max_bw("hopper", 2, cpu_amd=True) == 22.5        # AMD hosts: the Ampere row
    assert ll_max_bw("hopper", 8, cpu_amd=True) == 19.0


def test_tuner_efficiency_caps_in_nccls_order():
    """Ring LL on B200: min(282, 721.8 × ½) / 721.8 = 0.3907; ring LL on H100 at 200 GB/s: 0.5
    (not capped). Tree on 4+ Hopper hosts, 16 channels, 1000 GB/s: Simple min(920, 16 × 36) = 576
    → 0.576; LL128 min(576 × 120/128, 16 × 29) = 464 → 0.464; LL min(576 / 3.8, 19) = 19 → 0.019."""
    assert tuner_efficiency("ring", "LL", "allreduce", 1, 721.8, "blackwell", 32) == pytest.approx(282 / 721.8)
    assert tuner_efficiency("ring", "LL", "allreduce", 1, 200.0, "hopper", 32) == pytest.approx(0.5)
    assert tuner_efficiency("ring", "LL128", "allreduce", 1, 721.8, "blackwell", 32) == pytest.approx(0.92)
    assert tuner_efficiency("tree", "Simple", "allreduce", 4, 1000.0, "hopper", 16) == pytest.approx(0.576)
    assert tuner_efficiency("tree", "LL128", "allreduce", 4, 1000.0, "hopper", 16) == pytest.approx(0.464)
    assert tuner_efficiency("tree", "LL", "allreduce", 4, 1000.0, "hopper", 16, cpu_amd=True) == pytest.approx(0.019)
    # Unknown architecture (no NVLink) or another algorithm: the plain protocol efficiency.
    for args in (("ring", "LL", "allreduce", 1, 721.8, None, 32), ("nvls", "Simple", "allreduce", 1, 721.8, "hopper", 16)):
        assert tuner_efficiency(*args) == bandwidth_efficiency(*args[:4])


def test_gpu_arch_from_the_nvlink_generation(tops):
    def arch_of(topo):
        pattern = normalize_pattern(topo, {"kind": "allreduce", "participants": {"kind": "gpu"}, "bytes": MIB},
                                    "workload[0]", set())
        return gpu_arch(topo, group_of(topo, pattern))

    arch = {name: arch_of(t) for name, t in tops.items() if name != "h100x2"}
    assert arch == {"h100": "hopper", "a100": "ampere", "gb200": "blackwell", "mi300x": None}


def test_ring_ll_efficiency_in_a_plan_is_llmaxbw_over_the_nvlink_rate(tops):
    """At 1 MiB every LL channel runs (1 MiB ≥ 32 × 512 threads × 8 B × 4 ranks on the tray), so
    the plan's efficiency is the ceiling alone: 282 / 721.8 on B200, 141 / 370.8 on H100; at
    16 MiB on A100 87.7 / 240. LL128 on B200: 0.92 (16.7 × 32 channels is no ceiling)."""
    assert _plan(tops["gb200"], bytes=MIB, algorithm="ring", protocol="LL").efficiency == pytest.approx(282 / 721.8)
    assert _plan(tops["gb200"], bytes=MIB, algorithm="ring", protocol="LL128").efficiency == pytest.approx(0.92)
    assert _plan(tops["h100"], bytes=MIB, algorithm="ring", protocol="LL").efficiency == pytest.approx(141 / 370.8)
    assert _plan(tops["a100"], bytes=16 * MIB, algorithm="ring", protocol="LL").efficiency == pytest.approx(87.7 / 240)


def test_tree_correction_in_a_plan_on_two_h100_hosts(tops):
    """Tree LL128 on two hosts: the efficiency at 32 MiB is 0.9 × the one at 1 GiB (LL128 keeps all
    channels at both sizes, and the ceilings do not depend on the size)."""
    small = _plan(tops["h100x2"], bytes=32 * MIB, algorithm="tree", protocol="LL128").efficiency
    large = _plan(tops["h100x2"], bytes=1024 * MIB, algorithm="tree", protocol="LL128").efficiency
    assert small / large == pytest.approx(0.9)


def test_nvls_channels_and_efficiency_by_architecture():
    """Hopper 16 channels: 0.85 × 15/16; Blackwell 24 in one NVLink domain: 0.74 × 23/24, 32 across
    hosts: 0.74 × 31/32."""
    assert (nvls_channels(3), nvls_channels(3, True), nvls_channels(4), nvls_channels(4, True)) == (16, 16, 24, 32)
    assert nvls_efficiency(3) == pytest.approx(0.85 * 15 / 16)
    assert nvls_efficiency(4) == pytest.approx(0.74 * 23 / 24)
    assert nvls_efficiency(4, multi_node=True) == pytest.approx(0.74 * 31 / 32)


def test_nvls_needs_more_than_two_gpus_in_a_host(tops):
    """Two GPUs of one H100 host: NCCL leaves NVLS off (nvls.cc ``gpuCount <= 2``); three: on."""
    h100 = tops["h100"]
    two = _plan(h100, bytes=64 * MIB, participants={"ids": ["h0/gpu0", "h0/gpu1"]})
    assert two.algorithm != "nvls" and "more than two GPUs" in two.alternatives["nvls"]["reason"]
    three = _plan(h100, bytes=64 * MIB, participants={"ids": ["h0/gpu0", "h0/gpu1", "h0/gpu2"]})
    assert three.alternatives["nvls"]["reason"] is None


def test_the_ceiling_holds_when_the_capped_pair_is_the_only_candidate(tops):
    """An all-gather on one A100 host runs ring only (no NVLS on NVSwitch gen2, no PAT with 8 GPUs
    a host); asked for LL it is the single candidate, and still gets llMaxBw: all-gather's ring
    moves (n − 1)/n · S per GPU at 240 GB/s, so the efficiency is 87.7 / 240 at 16 MiB."""
    raw = {"kind": "allgather", "participants": {"kind": "gpu"}, "bytes": 16 * MIB, "protocol": "LL"}
    plan = plan_pattern(tops["a100"], normalize_pattern(tops["a100"], raw, "workload[0]", set()))
    assert (plan.algorithm, plan.protocol) == ("ring", "LL")
    assert plan.efficiency == pytest.approx(87.7 / 240)


def test_a_ring_ll128_with_one_rank_a_host_takes_nccls_0_7():
    """NCCL's ``LL128Ratio``: 0.7 when nRanks / nNodes < 2 ("sending/receiving at the same GPU
    through the NIC"), else 0.92 (tuning.cc). On Hopper across 2 hosts with 16 channels the
    LL128 ceiling is 16 × 36.7 = 587 GB/s, above both: 100 GB/s of bus bandwidth → 70 or 92."""
    assert bandwidth_efficiency("ring", "LL128", "allreduce", 2, 1.0) == 0.7
    assert bandwidth_efficiency("ring", "LL128", "allreduce", 2, 8.0) == 0.92
    assert bandwidth_efficiency("ring", "LL128", "allreduce", 2) == 0.92          # unknown: NCCL's usual
    assert tuner_efficiency("ring", "LL128", "allreduce", 2, 100.0, "hopper", 16, ranks_per_host=1.0) \
        == pytest.approx(0.7)
    assert tuner_efficiency("ring", "LL128", "allreduce", 2, 100.0, "hopper", 16, ranks_per_host=8.0) \
        == pytest.approx(0.92)
    assert bandwidth_efficiency("tree", "LL128", "allreduce", 2, 1.0) == pytest.approx(0.92 * 120 / 128)


def test_the_ranks_a_host_reach_the_ring_ll128_of_a_plan(tops):
    """One GPU on each of two DGX H100: the ring's LL128 efficiency is NCCL's 0.7 (at most)."""
    from designer.engine.traffic.collectives.ceilings import ceilings_for, protocol_efficiency

    topo = tops["h100x2"]
    pattern = normalize_pattern(topo, {"kind": "allreduce", "bytes": 64 * MIB,
                                       "participants": {"ids": ["h0/gpu0", "h1/gpu0"]}}, "workload[0]", set())
    group = group_of(topo, pattern)
    assert (group.n, group.nodes) == (2, 2)
    eff = protocol_efficiency("ring", "LL128", group, 1e-3, ceilings_for(topo, group, "ring"))
    assert eff <= 0.7 + 1e-12
