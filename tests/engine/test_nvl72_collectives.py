"""Collectives across a GB200 NVL72 NVLink domain: NVLS runs across the 18 trays
(NVSwitch gen 4 reduces and multicasts for all 72 GPUs), and between racks the collective falls
back to the network (NVLS inside each rack, trees over the NICs: nvlstree).

    rack h0: 72 GPUs ══ 18 NVSwitch chips (one NVLS plane)      rack h1: the same
                 └── tray NICs ── rail leaves ── tray NICs ──┘

All-reduce of S bytes by NVLS, per GPU: S·(m+1)/m up to the plane and as much down (m = 72),
over 18 NVLink 5 links at NCCL's 40.1 GB/s each, times the Blackwell NVLS efficiency
(catalog.nvls_efficiency(4) = 0.74 · 23/24: 24 NVLS channels in one NVLink domain on Blackwell,
NCCL src/transport/nvls.cc NVLS_NCHANNELS_SM100_NVL).
"""
from __future__ import annotations

import pytest

from designer.engine.catalog import TECHS, nvls_efficiency
from designer.engine.traffic.collectives.common import block_key, group_of, host_blocks, nvswitch_plane
from designer.engine.model.fabrics import build_cluster
from designer.engine.analysis.simulate import simulate
from designer.engine.model.templates import host_document
from designer.engine.model.topology import Topology

SIZE = 1e9


@pytest.fixture(scope="module")
def rack():
    return host_document("gb200-nvl72")


def _pattern(doc, participants):
    work = [{"id": "ar", "kind": "allreduce", "participants": participants, "bytes": SIZE}]
    result = simulate({"topology": doc, "workload": work})
    return result["summary"]["patterns"]["ar"], result["flows"]


def test_the_domain_is_one_collective_node_with_one_nvswitch_plane(rack):
    topo = Topology.from_document(rack)
    gpus = topo.nodes_of_kind("gpu")
    blocks = host_blocks(topo, gpus[::-1])
    assert len(blocks) == 1 and len(blocks[0]) == 72
    # Domain order: tray-major, so position p is tray p // 4, GPU p % 4 (rail p % 4).
    assert [topo.node_ids[g] for g in blocks[0][:5]] == [
        "h0/tray0/gpu0", "h0/tray0/gpu1", "h0/tray0/gpu2", "h0/tray0/gpu3", "h0/tray1/gpu0"]
    assert block_key(topo, gpus[0]) == "h0"
    assert len(nvswitch_plane(topo, "h0")) == 18
    group = group_of(topo, {"kind": "allreduce", "bytes": SIZE, "participants": gpus})
    assert group.nodes == 1 and group.nvls_gap(topo) is None


def test_nvls_allreduce_across_the_18_trays(rack):
    p, flows = _pattern(rack, {"kind": "gpu", "group": "h0"})
    assert p["algorithm"] == "nvls"
    assert p["alternatives"]["nvls"]["reason"] is None
    assert p["completion_s"] < min(p["alternatives"][a]["time_s"] for a in ("ring", "tree"))
    per_gpu_gbps = 18 * TECHS["nvlink5x1"].effective_gbps
    # Pipeline fill (collectives/sizing.py): 24 NVLS channels × 72 heads = 1,728 concurrent ops;
    # at 1e9 B the chunk is 64 KiB (< 64 × 1,728 × 128 KiB, ≥ 8 × 1,728 × 64 KiB), k = ⌈1e9 /
    # (1,728 × 64 KiB)⌉ = 9 → 9/11; just under 8 × 1,728 × 64 KiB (905,969,664 B) the chunk
    # is 32 KiB and k = 16 → 16/18, the better fill at or below this size: 16/18.
    links_s = SIZE * 73 / 72 * 8 / (per_gpu_gbps * 1e9 * nvls_efficiency(4) * 16 / 18)
    # The NVSwitch plane's own limit (catalog.NVLS_BUS_GBYTES, 920 GB/s of bus bandwidth on
    # Blackwell) binds across the whole rack: the bus bytes S·2·71/72 at 920 GB/s, same fill.
    switch_s = SIZE * 2 * 71 / 72 / (920e9 * 16 / 18)
    assert switch_s > links_s
    assert p["completion_s"] - p["latency_s"] == pytest.approx(switch_s, rel=1e-6)
    assert {f["class"] for f in flows} == {"NVL"}
    up = next(f for f in flows if f["dst"].startswith("h0/nvs"))
    assert len(up["paths"]) == 18                         # striped over every chip of the plane
    assert len({p["path"][1] for p in up["paths"]}) == 18


def test_between_racks_nvls_inside_each_rack_and_the_network_between(rack):
    pod = build_cluster("gb200-nvl72", 2, fabric="rail-optimized")
    p, flows = _pattern(pod, {"kind": "gpu"})
    assert p["algorithm"] == "nvlstree"
    assert "span 2 hosts" in p["alternatives"]["nvls"]["reason"]
    net = [f for f in flows if f["class"] == "NET"]
    nvl = [f for f in flows if f["class"] == "NVL"]
    assert net and nvl
    for f in net:   # rack-to-rack legs leave through a tray NIC and a leaf, never an NVSwitch
        assert f["src"].split("/")[0] != f["dst"].split("/")[0]
        assert any("/nic" in n for n in f["path"]) and any(n.startswith("leaf") for n in f["path"])
        assert not any("/nvs" in n for n in f["path"])
    for f in nvl:
        assert f["src"].split("/")[0] == f["dst"].split("/")[0]
