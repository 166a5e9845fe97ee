"""Catalog figures against REFERENCE.md (GB/s × 8 = Gb/s per direction)."""
import json

import pytest

from designer.engine.catalog import NODE_KINDS, TECHS, catalog_as_dict, tech_info


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
