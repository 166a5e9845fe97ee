"""All-to-all's protocol is NCCL's per-peer-size rule, not the tuner's fastest pick.

NCCL does not tune point-to-point operations: ``addP2pToPlan`` (NVIDIA/nccl ``src/enqueue.cc``)
gives a send or receive LL when its bytes are at most ``NCCL_P2P_LL_THRESHOLD`` (16384), else
Simple — never LL128. An all-to-all of size S over n ranks sends S/n to each peer.

Topology (catalog effective rates; ``aws-p5`` × 2, the fabric generator's rail-optimized default)::

    [gpuI]==NVLink 4==[nvswitch*]          (one host: 8 × H100)
    [gpuI]--[pcie]--[4 × efa-100 NIC]==100G==[leaf]==[spine*]==[leaf]==...(host 1)

16 ranks: 256 KiB → 16 KiB a peer (LL); 512 KiB → 32 KiB a peer (Simple); 32 MiB → 2 MiB (Simple).
"""
import pytest

from designer.engine.benchmarks.fidelity import build_topology
from designer.engine.traffic.collectives import plan_pattern
from designer.engine.traffic.collectives.protocols import P2P_LL_THRESHOLD, p2p_protocol, protocols_for
from designer.engine.traffic.workloads import normalize_pattern

KIB, MIB = 1024, 2**20


@pytest.fixture(scope="module")
def p5x2():
    return build_topology({"template": "aws-p5", "hosts": 2, "fabric": "rail-optimized"})


def _plan(topo, size, protocol="auto"):
    raw = {"kind": "alltoall", "participants": {"kind": "gpu"}, "bytes": size, "protocol": protocol}
    return plan_pattern(topo, normalize_pattern(topo, raw, "workload[0]", set()))


def test_p2p_protocol_is_ll_up_to_16_kib_a_peer_then_simple():
    assert P2P_LL_THRESHOLD == 16384
    assert p2p_protocol(64) == "LL"
    assert p2p_protocol(16384) == "LL"          # bytes <= threshold
    assert p2p_protocol(16385) == "Simple"
    assert p2p_protocol(128 * MIB) == "Simple"  # never LL128
    assert protocols_for("p2p", 16384) == ("LL",)
    assert protocols_for("p2p") == ("LL", "LL128", "Simple")   # no size: an explicit protocol may be any


def test_alltoall_plans_take_the_per_peer_rule(p5x2):
    """16 ranks: 256 KiB / 16 = 16 KiB a peer → LL; 512 KiB → 32 KiB → Simple."""
    assert _plan(p5x2, 256 * KIB).protocol == "LL"
    assert _plan(p5x2, 512 * KIB).protocol == "Simple"


def test_a_32_mib_alltoall_runs_simple_although_ll128_would_be_modelled_faster(p5x2):
    """2 MiB a peer → Simple. Its latency is the ring-row Simple step of each technology crossed:
    8.4 (base) + 3.4 (NVLink) + the routed EFA step 8.5 + twice the plugin's 75 µs = 170.3 µs;
    LL128 (forced) would charge 14 + 1.9 + 5.96 + 75 = 96.9 µs, and the tuner-style pick of the
    fastest protocol chose it before NCCL's rule was modelled."""
    auto = _plan(p5x2, 32 * MIB)
    assert auto.protocol == "Simple"
    assert auto.latency_s * 1e6 == pytest.approx(8.4 + 3.4 + 8.5 + 2 * 75.0, abs=0.05)
    ll128 = _plan(p5x2, 32 * MIB, protocol="LL128")   # an explicit protocol is still honoured
    assert ll128.protocol == "LL128"
    assert ll128.latency_s < auto.latency_s
