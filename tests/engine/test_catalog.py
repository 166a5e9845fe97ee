"""Catalog figures against their published sources (GB/s × 8 = Gb/s per direction), the measured
figures of docs/FIDELITY.md and per-direction link capacities."""
import json

import numpy as np
import pytest

from designer.engine.catalog import (
    NIC_MODELS,
    NODE_KINDS,
    NVLINK_MEASURED_GBYTES,
    PCIE_MEASURED_GBYTES,
    TECHS,
    catalog_as_dict,
    gpu_direction_capacities,
    tech_info,
)
from designer.engine.errors import InvalidTopology
from designer.engine.model.topology import Topology


@pytest.mark.parametrize("name, raw, effective", [
    ("pcie3x16", 15.75 * 8, 12 * 8), ("pcie4x16", 31.5 * 8, 24 * 8), ("pcie5x16", 63 * 8, 48 * 8),
    ("pcie6x16", 121 * 8, 96 * 8), ("pcie4x8", 31.5 * 4, 24 * 4), ("pcie5x1", 63 / 2, 48 / 2),
    ("nvlink3x12", 300 * 8, 12 * 20 * 8), ("nvlink4x18", 450 * 8, 18 * 20.6 * 8),
    ("nvlink5x18", 900 * 8, 18 * 40.1 * 8), ("nvlink3x2", 50 * 8, 40 * 8),
    ("ib-hdr", 200, 200), ("ib-ndr", 400, 400), ("ib-xdr", 800, 800), ("eth100", 100, 100),
    ("eth800", 800, 800), ("ddr4", 25.6 * 8, 25.6 * 8 * 0.8), ("ddr5x8", 38.4 * 64, 38.4 * 64 * 0.8),
])
def test_figures_match_reference(name, raw, effective):
    t = tech_info(name)
    assert t.raw_gbps == pytest.approx(raw) and t.effective_gbps == pytest.approx(effective)
    assert t.capacity_gbps() == pytest.approx(effective) and t.capacity_gbps("raw") == pytest.approx(raw)
    assert t.latency_ns > 0 and t.source


@pytest.mark.parametrize("name, gbytes", [("upi-skylake", 10), ("upi-spr", 22), ("upi-emr", 40),
                                          ("xgmi-zen3", 24), ("xgmi-zen4", 24), ("xgmi-zen5", 32),
                                          ("upi", 22), ("xgmi", 24)])
def test_inter_socket_effective_follows_nccl(name, gbytes):
    assert tech_info(name).effective_gbps == pytest.approx(gbytes * 8)
    assert tech_info(name).family == "inter_socket"


def test_every_family_is_complete():
    for gen in (3, 4, 5, 6):
        for width in (1, 2, 4, 8, 16):
            assert TECHS[f"pcie{gen}x{width}"].width == width
    for gen in (3, 4, 5):
        for count in range(1, 19):
            assert TECHS[f"nvlink{gen}x{count}"].width == count
    for t in TECHS.values():
        assert 0 < t.effective_gbps <= t.raw_gbps


def test_unknown_tech_suggests_names():
    with pytest.raises(KeyError, match="pcie4x16"):
        tech_info("pcie4x15")


def test_catalog_as_dict_is_json():
    data = json.loads(json.dumps(catalog_as_dict()))
    assert set(data["node_kinds"]) == set(NODE_KINDS) == {
        "gpu", "cpu", "memory", "pcie_switch", "nvswitch", "nic", "nvme", "switch", "storage"}
    assert data["techs"]["pcie5x16"]["effective_gbps"] == 384.0


# ---------------------------------------------------------------- calibrated figures


@pytest.mark.parametrize("name, raw, effective, family", [
    ("cx6-ib-hdr", 200, 24 * 8, "infiniband"), ("cx6-roce-200", 200, 192, "ethernet"),
    ("cx7-ib-ndr", 400, 48.5 * 8, "infiniband"), ("cx7-roce-400", 400, 392, "ethernet"),
    ("efa-100", 100, 100, "ethernet"),
    ("cx8-ib-xdr", 800, 800, "infiniband"), ("cx8-roce-800", 800, 800, "ethernet"),
    ("bf3-ib-ndr", 400, 48.5 * 8, "infiniband"), ("bf3-roce-400", 400, 392, "ethernet"),
    ("efa-200", 200, 200, "ethernet"),
])
def test_nic_model_techs_carry_the_measured_rate(name, raw, effective, family):
    t = tech_info(name)
    assert (t.raw_gbps, t.effective_gbps, t.family) == (raw, pytest.approx(effective), family)
    assert t.source and t.source != "IEEE 802.3 / IBTA port speeds"  # the measurement is cited


def test_every_measured_figure_has_a_source_and_stays_below_the_line_rate():
    for tech, row in PCIE_MEASURED_GBYTES.items():
        raw_gbytes = TECHS[tech].raw_gbps / 8
        for what, (value, source) in row.items():
            assert source and 0 < value <= (2 if what == "duplex_total" else 1) * raw_gbytes, (tech, what)
        if "duplex_total" in row:  # a shared budget: less than both directions at full rate
            assert row["duplex_total"][0] < row["h2d"][0] + row["d2h"][0]
    for gen, row in NVLINK_MEASURED_GBYTES.items():
        line = TECHS[f"nvlink{gen}x{12 if gen == 3 else 18}"].raw_gbps / 8
        assert all(src and 0 < v <= (2 if w == "duplex_total" else 1) * line for w, (v, src) in row.items())
    assert all(m["source"] and m["effective_gbps"] <= m["port_gbps"] for m in NIC_MODELS.values())


def test_gpu_direction_capacities_follow_the_gpu_end():
    """pcie5x16 measured: H2D 35.2 GB/s (toward the GPU), D2H 52.77 GB/s (away from it)."""
    a = gpu_direction_capacities("pcie5x16", "a")  # link a = GPU: a→b is device→host
    b = gpu_direction_capacities("pcie5x16", "b")
    assert a == {"capacity_ab_gbps": pytest.approx(52.77 * 8), "capacity_ba_gbps": pytest.approx(35.2 * 8)}
    assert b == {"capacity_ab_gbps": a["capacity_ba_gbps"], "capacity_ba_gbps": a["capacity_ab_gbps"]}
    assert gpu_direction_capacities("pcie3x16", "a") == {}
    with pytest.raises(ValueError):
        gpu_direction_capacities("pcie5x16", "c")


def _two_nodes(**link):
    """[gpu]--pcie5x16--[cpu]"""
    return {"format": "fabricscope.topology/1", "nodes": [{"id": "gpu", "kind": "gpu"}, {"id": "cpu", "kind": "cpu"}],
            "links": [{"id": "l", "a": "gpu", "b": "cpu", "tech": "pcie5x16", **link}]}


def test_per_direction_capacity_reaches_the_solver_resources():
    """[gpu]--pcie5x16--[cpu] with the measured directions: resource 0 (a>b, device→host) 422.16
    Gb/s, resource 1 (b>a, host→device) 281.6 Gb/s; the nominal capacity stays 384."""
    topo = Topology.from_document(_two_nodes(**gpu_direction_capacities("pcie5x16", "a")))
    assert topo.resource_capacity_gbps() == pytest.approx([52.77 * 8, 35.2 * 8])
    assert topo.link_capacity_gbps[0] == 384.0
    only_one = Topology.from_document(_two_nodes(capacity_ba_gbps=100.0))
    assert only_one.resource_capacity_gbps() == pytest.approx([384.0, 100.0])
    plain = Topology.from_document(_two_nodes())  # stored documents: both directions = capacity_gbps
    assert np.array_equal(plain.resource_capacity_gbps(), [384.0, 384.0])


def test_per_direction_capacity_is_validated_with_a_location():
    with pytest.raises(InvalidTopology) as err:
        Topology.from_document(_two_nodes(capacity_ab_gbps=-1, capacity_ba_gbps="fast"))
    assert {p.path for p in err.value.problems} == {"links[0].capacity_ab_gbps", "links[0].capacity_ba_gbps"}
    with pytest.raises(InvalidTopology) as err:  # zero is a typo on a working link, as for capacity_gbps
        Topology.from_document(_two_nodes(capacity_ab_gbps=0))
    assert [p.path for p in err.value.problems] == ["links[0].capacity_ab_gbps"]


def test_catalog_as_dict_lists_measured_figures_and_nic_models():
    data = json.loads(json.dumps(catalog_as_dict()))
    assert data["measured"]["pcie_gbytes"]["pcie4x16"]["h2d"] == {
        "value": 25.13, "source": PCIE_MEASURED_GBYTES["pcie4x16"]["h2d"][1]}
    assert data["measured"]["nvlink_gbytes"]["4"]["one_way"]["value"] == 380.0
    assert set(data["nic_models"]) == set(NIC_MODELS)


# ---------------------------------------------------------------- current parts


def test_xgmi_gpu_links_are_their_own_family():
    """MI300X xGMI: 64 GB/s raw per direction per link, ~48 usable (AMD), not inter-socket xGMI."""
    for name in ("xgmi-mi300", "xgmi-mi325"):
        t = tech_info(name)
        assert (t.family, t.width, t.raw_gbps, t.effective_gbps) == ("xgmi", 1, 512.0, 384.0)
        assert "rocm.blogs.amd.com" in t.source or "AMD ROCm blog" in t.source
    assert tech_info("xgmi-zen4").family == "inter_socket"


def test_blackwell_and_gen6_figures():
    """NVLink 5: 18 x 50 GB/s = 900 GB/s raw per direction, NCCL 40.1 GB/s per link; PCIe Gen6 x16."""
    assert tech_info("nvlink5x18").raw_gbps == 900 * 8
    assert tech_info("nvlink5x18").effective_gbps == pytest.approx(18 * 40.1 * 8)
    assert tech_info("pcie6x16").raw_gbps == pytest.approx(121 * 8)
    assert NIC_MODELS["ConnectX-8"]["host"] == "pcie6x16" and NIC_MODELS["ConnectX-8"]["port_gbps"] == 800


def test_800g_switch_classes_exist():
    from designer.engine.catalog import SWITCH_MODELS

    xdr, eth = SWITCH_MODELS["ib-xdr-144"], SWITCH_MODELS["eth-51t2"]
    assert (xdr.tech, xdr.radix, xdr.port_gbps) == ("infiniband", 144, 800.0)
    assert (eth.tech, eth.radix, eth.port_gbps) == ("ethernet", 64, 800.0)
    assert "Quantum-X800" in xdr.vendor_class and "Spectrum-X800" in eth.vendor_class
