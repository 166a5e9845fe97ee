"""A storage fabric of its own (``designer/engine/model/storage_fabric.py``): hosts reach storage
through their storage NICs, and the compute fabric is sized without storage."""
from __future__ import annotations

import pytest

from designer.engine.analysis.simulate import simulate
from designer.engine.catalog import TECHS
from designer.engine.errors import InvalidTopology
from designer.engine.model.bom import fabric_bom
from designer.engine.model.fabrics import build_cluster


def _storage_switches(doc: dict) -> set[str]:
    return {n["id"] for n in doc["nodes"] if n["kind"] == "switch" and n["attrs"].get("storage")}


def test_storage_reads_take_the_storage_nics_and_share_the_storage_port():
    """64 DGX-H100 on ib-ndr-64 (64 × 400G), one storage server; two reads and a compute flow::

        [storage0]--400--[sleaf0]--1 port--[sspine0]--1 port--[snleaf0]--[h0/nic8]--pcie5--[h0/cpu0]..[h0/gpu0]
                                                   \\--1 port--[snleaf2]--[h63/nic8]--...--[h63/gpu0]
        [h0/gpu1]--[h0/nic1]--[leaf2]==[spine*]==[leaf3]--[h63/nic1]--[h63/gpu1]   (compute fabric)

    Storage ports: host p = 2h + k (NIC 8 + k) on snleaf ``p // 63``: h0 → snleaf0, h63 (ports
    126, 127) → snleaf2. Both reads leave storage0 through its one 400G port (and sleaf0's one
    uplink), so each gets half of it: 200 Gb/s; they enter the hosts through nic8 (socket 0, the
    GPU's socket: affinity among storage NICs), never a compute NIC. The compute flow stays on
    compute leaves and spines at the GPU's PCIe rate (384 Gb/s effective), touching no storage
    switch.
    """
    doc = build_cluster("dgx-h100", 64, switch="ib-ndr-64", storage=1)
    work = [{"id": "load", "kind": "storage_read", "source": {"ids": ["storage0"]},
             "participants": {"ids": ["h0/gpu0", "h63/gpu0"]}, "bytes": 1e9},
            {"id": "p", "kind": "p2p", "bytes": 1e9, "src": "h0/gpu1", "dst": "h63/gpu1"}]
    flows = {(f["path"][0], f["path"][-1]): f for f in simulate({"topology": doc, "workload": work})["flows"]}
    port = TECHS["ib-ndr"].effective_gbps
    a, b = flows[("storage0", "h0/gpu0")], flows[("storage0", "h63/gpu0")]
    assert a["path"] == ["storage0", "sleaf0", "sspine0", "snleaf0", "h0/nic8", "h0/cpu0", "h0/rc0",
                         "h0/pcie0", "h0/gpu0"]
    assert b["path"][:5] == ["storage0", "sleaf0", "sspine0", "snleaf2", "h63/nic8"]
    assert a["rate_gbps"] == pytest.approx(port / 2) and b["rate_gbps"] == pytest.approx(port / 2)
    compute = flows[("h0/gpu1", "h63/gpu1")]
    assert not set(compute["path"]) & _storage_switches(doc)
    assert compute["rate_gbps"] == pytest.approx(TECHS["pcie5x16"].effective_gbps)


def test_a_few_hosts_and_servers_share_one_storage_switch():
    """4 DGX-H100 + 2 storage servers: 4 × 2 storage-NIC ports + 2 = 10 ≤ 128 ports of an
    eth-51t2, so one storage switch sleaf0 holds them all, with no spine; the compute fabric is
    the single leaf per rail it is without storage (8 leaves, 2 spines: fabric defaults)."""
    plain = build_cluster("dgx-h100", 4)
    doc = build_cluster("dgx-h100", 4, storage=2)
    assert doc["fabric"]["storage_fabric"] == {"kind": "own", "host_ports": 8, "leaves": 1, "spines": 0,
                                               "cores": 0}
    assert _storage_switches(doc) == {"sleaf0"}
    on_sleaf = sorted(x["a"] for x in doc["links"] if x["b"] == "sleaf0")
    assert on_sleaf == sorted([f"h{h}/nic{n}" for h in range(4) for n in (8, 9)] + ["storage0", "storage1"])
    assert doc["fabric"]["spines"] == plain["fabric"]["spines"]
    assert any("one eth-51t2 holds the 8 host storage-NIC ports" in n for n in doc["fabric"]["notes"])


def test_a_given_spine_count_is_the_compute_fabrics():
    """spines=N with storage: N compute spines (honoured), or a located refusal when the compute
    leaves' uplinks do not fit; the storage fabric's spines follow from its own ports."""
    doc = build_cluster("dgx-h100", 128, switch="ib-ndr-64", spines=32, storage=1)
    assert doc["fabric"]["spines"] == 32 and doc["fabric"]["storage_fabric"]["spines"] == 1
    bom = fabric_bom(doc)
    assert {(r["network"], r["tier"]): r["count"] for r in bom["switches"]} == {
        ("compute", "leaf"): 32, ("compute", "spine"): 32, ("storage", "leaf"): 6, ("storage", "spine"): 1}
    with pytest.raises(InvalidTopology) as exc:
        build_cluster("dgx-h100", 128, switch="ib-ndr-64", spines=8, storage=1)
    assert exc.value.problems[0].path == "spines"


def test_bom_lists_the_storage_network_apart_from_the_compute_tiers():
    """128 DGX-H100 on ib-ndr-64 at 1:1 with one storage server: the compute rows are the 32 rail
    leaves (1,024 NIC ports: 32 down + 32 up each) and 16 spines (2,048 / 2 / 64), each switch's 64
    ports all used; the storage rows are 6 leaves (5 for the 256 host storage ports + 1 for the
    server) and 1 spine, counted apart so the compute spine count reads 16, not 17."""
    bom = fabric_bom(build_cluster("dgx-h100", 128, switch="ib-ndr-64", storage=1))
    rows = {(r["network"], r["tier"]): r for r in bom["switches"]}
    assert {k: r["count"] for k, r in rows.items()} == {
        ("compute", "leaf"): 32, ("compute", "spine"): 16, ("storage", "leaf"): 6, ("storage", "spine"): 1}
    assert rows[("compute", "spine")]["ports_free"] == 0 and rows[("compute", "leaf")]["ports_free"] == 0
    assert [r["network"] for r in bom["switches"]] == ["compute", "compute", "storage", "storage"]
