"""NCCL's ring Simple "plateau" on the latency (NVIDIA/nccl ``src/tuning/ring.cc``,
``ncclTuningRingModelSim``), with hand-derived numbers.

Topologies (catalog effective rates)::

    one GB200 tray: [gpu0..gpu3] ==18 × NVLink 5== [18 NVSwitch chips]    ring channels min(32, 2 × 18) = 32
    one DGX H100:   [gpu0..gpu7] ==18 × NVLink 4== [nvswitch0..3]         ring channels 32

The ring Simple latency NCCL's tuner gives before the plateau (``protocols.latency_us``, one host):
``baseLat 8.4 + nSteps × hwLat 3.4`` µs — 4 ranks all-reduce: 8.4 + 6 × 3.4 = 28.8 µs; 8 ranks:
8.4 + 14 × 3.4 = 56.0 µs.
"""
import pytest

from designer.engine.benchmarks.fidelity import build_topology
from designer.engine.traffic.collectives import plan_pattern
from designer.engine.traffic.collectives.protocols import ring_plateau
from designer.engine.traffic.workloads import normalize_pattern

MIB = 2**20


@pytest.fixture(scope="module")
def tops():
    return {
        "gb200": build_topology({"template": "gb200-nvl72", "hosts": 1, "params": {"trays": 1}}),
        "h100": build_topology({"template": "dgx-h100", "hosts": 1}),
    }


def _plan(topo, **pattern):
    raw = {"kind": "allreduce", "participants": {"kind": "gpu"}, **pattern}
    return plan_pattern(topo, normalize_pattern(topo, raw, "workload[0]", set()))


def test_blackwell_one_domain_factor_by_steps_and_bytes_per_rank_and_channel():
    """4 ranks, 32 channels. All-reduce: nSteps 6, stepScale = 1 − (0.1/0.4)^5 = 1023/1024.
    64 MiB: 64 MiB / (32 × 4) = 512 KiB a rank and channel → delta 0.4 − 0.1 = 0.3 → 1 + 0.3 ×
    1023/1024. 32 MiB: exactly 256 KiB (not above) → delta 0.4. 384 KiB: halfway → 0.35.
    All-gather at 64 MiB: nSteps 3, stepScale 1 − 0.25² = 0.9375 → 1 + 0.3 × 0.9375 = 1.28125.
    4 KiB: 32 B a rank and channel, under 64 → 1. Broadcast, or Hopper, or PCIe: 1."""
    assert ring_plateau("allreduce", 4, 1, 64 * MIB, 32, "blackwell") == pytest.approx(1 + 0.3 * 1023 / 1024)
    assert ring_plateau("allreduce", 4, 1, 32 * MIB, 32, "blackwell") == pytest.approx(1 + 0.4 * 1023 / 1024)
    assert ring_plateau("allreduce", 4, 1, 48 * MIB, 32, "blackwell") == pytest.approx(1 + 0.35 * 1023 / 1024)
    assert ring_plateau("allgather", 4, 1, 64 * MIB, 32, "blackwell") == pytest.approx(1.28125)
    assert ring_plateau("allreduce", 4, 1, 4096, 32, "blackwell") == 1.0
    assert ring_plateau("broadcast", 4, 1, 64 * MIB, 32, "blackwell") == 1.0
    assert ring_plateau("allreduce", 8, 1, 64 * MIB, 32, "hopper") == 1.0
    assert ring_plateau("allreduce", 4, 1, 64 * MIB, 32, "blackwell", intra="pci") == 1.0


def test_across_hosts_all_reduce_only_by_compute_capability():
    """Several hosts: 1.4 from Ampere on, 1.9 on Volta, all-reduce only, from 64 B a rank and
    channel (16 ranks × 16 channels: 16 KiB is exactly 64 B → applied; 16 KiB − 1 → not)."""
    assert ring_plateau("allreduce", 16, 2, 1024 * MIB, 16, "hopper") == 1.4
    assert ring_plateau("allreduce", 16, 2, 1024 * MIB, 16, "ampere") == 1.4
    assert ring_plateau("allreduce", 16, 2, 1024 * MIB, 16, "volta") == 1.9
    assert ring_plateau("allreduce", 16, 2, 16 * 1024, 16, "blackwell") == 1.4
    assert ring_plateau("allreduce", 16, 2, 16 * 1024 - 1, 16, "blackwell") == 1.0
    assert ring_plateau("allgather", 16, 2, 1024 * MIB, 16, "hopper") == 1.0
    assert ring_plateau("allreduce", 16, 2, 1024 * MIB, 16, None) == 1.0      # no NVLink: not known


def test_plan_latency_on_a_gb200_tray_carries_the_plateau(tops):
    """Ring Simple all-reduce on the tray at 64 MiB: 28.8 µs × (1 + 0.3 × 1023/1024) = 37.4316 µs;
    at 4 KiB no plateau: 28.8 µs. LL128 never gets it: 14 + 6 × 1.9 = 25.4 µs."""
    gb200 = tops["gb200"]
    assert _plan(gb200, bytes=64 * MIB, algorithm="ring", protocol="Simple").latency_s == \
        pytest.approx(28.8e-6 * (1 + 0.3 * 1023 / 1024))
    assert _plan(gb200, bytes=4096, algorithm="ring", protocol="Simple").latency_s == pytest.approx(28.8e-6)
    assert _plan(gb200, bytes=64 * MIB, algorithm="ring", protocol="LL128").latency_s == pytest.approx(25.4e-6)


def test_plan_latency_on_one_hopper_host_has_no_plateau(tops):
    """One DGX H100 (Hopper, one host): ring Simple all-reduce at 64 MiB keeps 56.0 µs."""
    assert _plan(tops["h100"], bytes=64 * MIB, algorithm="ring", protocol="Simple").latency_s == pytest.approx(56.0e-6)
