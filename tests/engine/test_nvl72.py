"""GB200 NVL72: the rack template reproduces NVIDIA's published facts, NVLink carries
GPU traffic between the trays of one rack, the network carries it between racks.

One rack, as ``host_document("gb200-nvl72")`` builds it (``h0`` is the NVLink domain)::

    h0/tray0 … h0/tray17 (hosts)          h0/nvs0 … h0/nvs8 (NVLink-switch trays)
      gpu0 gpu1 ─C2C─ cpu0 ─PCIe─ nic0 nic1 (+ nic4 BF-3)       nvswitch0  nvswitch1
      gpu2 gpu3 ─C2C─ cpu1 ─PCIe─ nic2 nic3 (+ nic5 BF-3)
      every GPU ── 1 × NVLink 5 ── every one of the 18 NVSwitch chips

So a GPU has 18 links of 50 GB/s (raw) per direction = 900 GB/s, 1.8 TB/s both ways; a GPU
pair of any two trays is striped over 18 one-switch paths. Between racks a GPU leaves through
its tray's NIC on its own Grace (C2C, then PCIe Gen5 x16).
"""
from __future__ import annotations

import pytest

from designer.engine.catalog import TECHS
from designer.engine.cli import main
from designer.engine.document import normalize, validate
from designer.engine.errors import InvalidTopology
from designer.engine.traffic.failures import resolve_failures
from designer.engine.model.fabrics import build_cluster, fabric_summary
from designer.engine.model.pathclass import classify, node_domains, topo_matrix
from designer.engine.analysis.simulate import simulate
from designer.engine.model.templates import TEMPLATES, host_document
from designer.engine.model.topology import Topology
from designer.engine.analysis.whatif import ranking_key, sweep

NVLINK5 = TECHS["nvlink5x1"]


@pytest.fixture(scope="module")
def rack():
    return host_document("gb200-nvl72")


@pytest.fixture(scope="module")
def topo(rack):
    return Topology.from_document(rack)


@pytest.fixture(scope="module")
def pod():
    """8 NVL72 racks (576 GPUs) in a rail-optimized fabric: the DGX SuperPOD GB200 scalable unit size."""
    return build_cluster("gb200-nvl72", 8, fabric="rail-optimized")


def _p2p(doc, pairs, **extra):
    work = [{"id": f"p{i}", "kind": "p2p", "src": a, "dst": b, "bytes": 1e9} for i, (a, b) in enumerate(pairs)]
    return {f["id"].split("#")[0]: f for f in simulate({"topology": doc, "workload": work, **extra})["flows"]}


# ============================================================================ published facts
def test_template_is_listed_and_valid(rack):
    assert "gb200-nvl72" in TEMPLATES
    assert validate(rack) == []


def test_72_gpus_36_grace_18_trays_9_switch_trays(topo):
    assert len(topo.nodes_of_kind("gpu")) == 72
    graces = [i for i in topo.nodes_of_kind("cpu") if topo.node_attrs[i]["model"] == "NVIDIA Grace"]
    assert len(graces) == 36
    trays = topo.hosts()
    assert len(trays) == 18
    for tray in trays:
        kinds = [topo.node_kind[i] for i in topo.nodes_of_host(tray)]
        assert kinds.count("gpu") == 4 and kinds.count("cpu") == 2
    switch_trays = [g for g, v in topo.groups.items() if v["kind"] == "nvlink_switch_tray"]
    assert len(switch_trays) == 9
    chips = topo.nodes_of_kind("nvswitch")
    assert len(chips) == 18
    assert sorted(topo.node_group[i] for i in chips) == sorted(switch_trays * 2)
    assert all(topo.node_host[i] is None for i in chips)          # the switch layer is outside the trays
    assert all(topo.node_attrs[i]["generation"] == 4 for i in chips)


def test_one_nvlink_domain_holds_the_rack(topo):
    ids, domain = node_domains(topo)
    assert ids == ["h0"] and topo.groups["h0"]["kind"] == "nvlink_domain"
    assert (domain == 0).all()


def test_every_gpu_has_18_nvlink5_links_one_to_each_chip(topo):
    chips = set(topo.nodes_of_kind("nvswitch"))
    for g in topo.nodes_of_kind("gpu"):
        nvlinks = [(v, l) for v, l in topo.adjacency[g] if topo.link_tech[l] == "nvlink5x1"]
        assert len(nvlinks) == 18 and {v for v, _ in nvlinks} == chips
        assert {float(topo.link_capacity_gbps[l]) for _, l in nvlinks} == {NVLINK5.effective_gbps}
    # 18 x 50 GB/s = 900 GB/s per direction = the published 1.8 TB/s bidirectional per GPU.
    assert 18 * NVLINK5.raw_gbps / 8 * 2 == pytest.approx(1800.0)
    # Each chip has 72 NVLink 5 ports: one per GPU of the rack.
    assert all(len(topo.adjacency[c]) == 72 for c in chips)


def test_grace_gpu_pairs_are_nvlink_c2c(topo):
    c2c = TECHS["nvlink-c2c"]
    assert c2c.raw_gbps / 8 * 2 == pytest.approx(900.0)   # 900 GB/s bidirectional
    for g in topo.nodes_of_kind("gpu"):
        socket = topo.node_attrs[g]["socket"]
        grace = [v for v, l in topo.adjacency[g] if topo.link_tech[l] == "nvlink-c2c"]
        assert len(grace) == 1 and topo.node_attrs[grace[0]]["socket"] == socket
        assert topo.node_host[grace[0]] == topo.node_host[g]


def test_nics_per_tray_four_connectx7_and_two_bluefield3(topo):
    for tray in topo.hosts():
        nics = [i for i in topo.nodes_of_host(tray) if topo.node_kind[i] == "nic"]
        compute = [i for i in nics if topo.node_attrs[i]["role"] == "compute"]
        storage = [i for i in nics if topo.node_attrs[i]["role"] == "storage"]
        assert sorted(topo.node_attrs[i]["rail"] for i in compute) == [0, 1, 2, 3]
        assert {topo.node_attrs[i]["model"] for i in compute} == {"ConnectX-7"}
        assert {topo.node_attrs[i]["port_gbps"] for i in compute} == {400.0}
        assert len(storage) == 2 and {topo.node_attrs[i]["model"] for i in storage} == {"BlueField-3"}
        # Two ConnectX-7 per Grace: a GPU's rail NIC is on its own socket.
        for i in compute:
            cpu = [v for v, l in topo.adjacency[i] if topo.node_kind[v] == "cpu"]
            assert topo.node_attrs[cpu[0]]["socket"] == topo.node_attrs[i]["rail"] // 2


def test_topo_matrix_of_a_tray_matches_nvidia_smi_on_gb200(topo):
    """sgl-project/sglang#11208 (a GB200 tray): GPUs NV18 to each other, SYS to all 6 NICs."""
    m = topo_matrix(topo, "h0/tray3")
    assert m["labels"] == [f"GPU{i}" for i in range(4)] + [f"NIC{i}" for i in range(6)]
    for r, row in enumerate(m["matrix"]):
        assert row[:4] == ["NV18" if c != r else "X" for c in range(4)]
        assert row[4:] == ["SYS"] * 6
    assert m["numa"] == [0, 0, 1, 1]
    # Every GPU of the tray hangs off its Grace by NVLink-C2C: the page says why its NICs are SYS.
    assert m["c2c"] == ["GPU0", "GPU1", "GPU2", "GPU3"]


def test_topo_matrix_of_the_domain_says_nvlink_across_trays(topo):
    m = topo_matrix(topo, "h0")
    assert len(m["rows"]) == 72 and len(m["labels"]) == 72 + 18 * 6
    first = m["matrix"][0]
    assert first[0] == "X" and set(first[1:72]) == {"NV18"}
    own_tray = {f"h0/tray0/nic{k}" for k in range(6)}
    for label, cls in zip(m["labels"][72:], first[72:]):
        assert cls == ("SYS" if m["ids"][label] in own_tray else "NET")
    assert classify(topo, "h0/tray0/gpu0", "h0/tray17/gpu3") == "NV18"
    assert classify(topo, "h0/tray0/gpu0", "h0/tray17/nic0") == "NET"


def test_smaller_racks_and_bad_counts():
    t = Topology.from_document(host_document("gb200-nvl72", trays=2, switch_trays=3))
    assert len(t.nodes_of_kind("gpu")) == 8 and len(t.nodes_of_kind("nvswitch")) == 6
    assert classify(t, "h0/tray0/gpu0", "h0/tray1/gpu0") == "NV6"
    with pytest.raises(InvalidTopology):
        host_document("gb200-nvl72", trays=0)


# ============================================================================ fabric of 8 racks
def test_eight_racks_build_a_rail_fabric(pod):
    doc = normalize(pod)
    s = fabric_summary(doc)
    assert s["gpus"] == 576 and s["hosts"] == 8 * 18
    assert doc["fabric"]["rails"] == 4 and doc["fabric"]["hosts_per_rack"] == 1
    topo = Topology.compile(doc)
    assert len(node_domains(topo)[0]) == 8
    assert [g for g, v in topo.groups.items() if v["kind"] == "rack"] == [f"rack{r}" for r in range(8)]
    assert all(topo.groups[f"h{r}"]["parent"] == f"rack{r}" for r in range(8))
    leaf_rail = {topo.node_ids[i]: topo.node_attrs[i]["rail"] for i in topo.nodes_of_kind("switch")
                 if topo.node_role[i] == "leaf"}
    wired = 0
    for l in range(topo.num_links):
        a, b = topo.node_ids[topo.link_a[l]], topo.node_ids[topo.link_b[l]]
        if b in leaf_rail:
            nic = topo.node_index[a]
            assert topo.node_attrs[nic]["role"] == "compute"
            assert topo.node_attrs[nic]["rail"] == leaf_rail[b]   # NIC k of every tray on rail k
            wired += 1
    assert wired == 8 * 18 * 4   # every ConnectX-7, no BlueField-3


def test_build_cli_makes_the_pod(tmp_path, capsys):
    out = tmp_path / "pod.json"
    assert main(["build", "--template", "gb200-nvl72", "--hosts", "8", "--fabric", "rail-optimized",
                 "-o", str(out)]) == 0
    assert main(["validate", str(out)]) == 0
    capsys.readouterr()


# ============================================================================ routing
def test_p2p_between_trays_of_one_rack_runs_over_nvlink5(pod):
    flows = _p2p(pod, [("h0/tray0/gpu0", "h0/tray5/gpu2"), ("h0/tray1/gpu0", "h0/tray1/gpu3")])
    for f in flows.values():
        assert f["class"] == "NVL"
        paths = [p["path"] for p in f["paths"]]
        assert len(paths) == 18 and all(len(p) == 3 for p in paths)
        assert len({p[1] for p in paths}) == 18 and all("/nvs" in p[1] for p in paths)
        assert f["rate_gbps"] == pytest.approx(18 * NVLINK5.effective_gbps)
    raw = dict(pod, capacity_basis="raw")
    f = _p2p(raw, [("h0/tray0/gpu0", "h0/tray5/gpu2")])["p0"]
    assert f["rate_gbps"] == pytest.approx(18 * 400.0)   # 900 GB/s: NVLink 5's published rate


def test_p2p_between_racks_runs_over_the_nics(pod):
    f = _p2p(pod, [("h0/tray0/gpu1", "h3/tray7/gpu1")])["p0"]
    assert f["class"] == "NET"
    path = f["path"]
    assert path[:3] == ["h0/tray0/gpu1", "h0/tray0/cpu0", "h0/tray0/nic1"]
    assert path[-3:] == ["h3/tray7/nic1", "h3/tray7/cpu0", "h3/tray7/gpu1"]
    assert not any("nvswitch" in n for n in path)
    # The NIC's 400G port vs its PCIe Gen5 x16 (NCCL's 48 GB/s planning figure): PCIe is tighter.
    assert f["rate_gbps"] == pytest.approx(min(400.0, TECHS["pcie5x16"].effective_gbps))


def test_a_switch_tray_down_leaves_16_links_and_all_down_falls_back_to_the_network(rack):
    pair = [("h0/tray0/gpu0", "h0/tray9/gpu1")]
    f = _p2p(rack, pair, failures=[{"target": "h0/nvs4", "mode": "down"}])["p0"]
    assert f["class"] == "NVL" and len(f["paths"]) == 16
    assert f["rate_gbps"] == pytest.approx(16 * NVLINK5.effective_gbps)
    pod = build_cluster("gb200-nvl72", 1, fabric="rail-optimized")
    every = [{"target": f"h0/nvs{s}", "mode": "down"} for s in range(9)]
    f = _p2p(pod, pair, failures=every)["p0"]
    assert f["class"] == "NET" and "h0/tray0/nic0" in f["path"]


def test_a_trays_nvlinks_are_a_failure_selector(topo, rack):
    sel = {"kind": "link", "touching": "h0/tray3", "tech": "nvlink5*"}
    failed, _ = resolve_failures(topo, [{"target": sel, "mode": "down"}])
    assert len(failed.links) == 4 * 18
    assert all("tray3/gpu" in topo.link_ids[l] for l in failed.links)
    flows = _p2p(rack, [("h0/tray3/gpu0", "h0/tray4/gpu0"), ("h0/tray5/gpu0", "h0/tray6/gpu0")],
                 failures=[{"target": sel, "mode": "degrade", "factor": 0.5}])
    assert flows["p0"]["rate_gbps"] == pytest.approx(9 * NVLINK5.effective_gbps)
    assert flows["p1"]["rate_gbps"] == pytest.approx(18 * NVLINK5.effective_gbps)


def test_sweep_over_the_nvlink_switch_trays_ranks_by_impact(rack):
    """An all-reduce over the 72 GPUs (NVLS across the trays): each switch tray down costs 2 of
    the 18 links of every GPU; a tray's NIC is not on the all-reduce's path and ranks last."""
    scenario = {"topology": rack, "workload": [
        {"id": "ar", "kind": "allreduce", "participants": {"kind": "gpu", "group": "h0"}, "bytes": 1e9}]}
    out = sweep(scenario, over="nvlink_switch_tray", failures=[{"target": "h0/tray0/nic0", "mode": "down"}])
    ranking = out["ranking"]
    assert len(ranking) == 10
    assert ranking == sorted(ranking, key=ranking_key)
    trays = [e for e in ranking if e["failure"]["target"].startswith("h0/nvs")]
    assert len(trays) == 9 and ranking[-1]["failure"]["target"] == "h0/tray0/nic0"
    increases = [e["impact"]["completion_increase_s"] for e in trays]
    assert min(increases) > 0 and max(increases) == pytest.approx(min(increases))
    before = trays[0]["impact"]["job_completion_s"]["before"]
    assert trays[0]["impact"]["job_completion_s"]["after"] / before == pytest.approx(18 / 16, rel=0.05)
    assert ranking[-1]["impact"]["completion_increase_s"] == pytest.approx(0.0, abs=1e-12)
