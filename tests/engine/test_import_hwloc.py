"""hwloc XML import: packages, NUMA nodes, host bridges, nested PCI bridges, OS devices."""
from __future__ import annotations

from designer.engine.io import import_text
from designer.engine.io.hwloc import speed_to_pcie
from tests.engine._import_helpers import kinds, matrix_by_id, read


def test_two_socket_file_with_nested_bridges():
    """Socket 0 (SPR, NUMA 0)::

        hostbridge[15-1a]--rootport 15:01.0--switch 16:00.0--dsp 17:00.0--[cuda0 A100]
                                                          |--dsp 17:01.0--[cuda1]
                                                          \\--dsp 17:02.0--[mlx5_0] (15.75 GB/s)
        hostbridge[30-31]--rootport--[nvme0n1];  BMC VGA 1a03:2000 skipped
    Socket 1 (NUMA 1): hostbridge[97-99]--rootport--[cuda2], --rootport--[ens3f0]
    Root ports and downstream ports fold away, so the switch is one pcie_switch (PIX).
    """
    result = import_text(read("two-socket-hwloc.xml"))
    assert result.format == "hwloc"
    doc = result.document
    assert kinds(doc) == {"gpu": 3, "nic": 2, "nvme": 1, "pcie_switch": 1, "cpu": 2 + 2}
    got = matrix_by_id(doc)
    ids = result.ids
    g0, g1, g2 = ids["0000:18:00.0"], ids["0000:19:00.0"], ids["0000:98:00.0"]
    n0, n1 = ids["0000:1a:00.0"], ids["0000:99:00.0"]
    assert [got[(g0, x)] for x in (g0, g1, g2, n0, n1)] == ["X", "PIX", "SYS", "PIX", "SYS"]
    assert [got[(g2, x)] for x in (g0, n0, n1)] == ["SYS", "SYS", "PHB"]
    nodes = {n["id"]: n for n in doc["nodes"]}
    assert nodes[g0]["attrs"]["model"] == "NVIDIA A100 80GB PCIe"
    assert nodes[n0]["attrs"]["name"] == "mlx5_0"
    assert nodes[ids["numa:1"]]["attrs"]["package"] == 1
    links = {(l["a"], l["b"]): l for l in doc["links"]}
    assert links[(g0, ids["0000:16:00.0"])]["tech"] == "pcie4x16"
    assert links[(ids["0000:31:00.0"], ids["hb:0000:[30-31]"])]["tech"] == "pcie3x8"
    assert any("upi-spr" == l.get("tech") for l in doc["links"])
    assert any("pci_link_speed '0.000000'" in w for w in result.warnings)


def test_speed_to_pcie_prefers_wide_links():
    assert speed_to_pcie(31.507692) == (4, 16)
    assert speed_to_pcie(63.015385) == (5, 16)
    assert speed_to_pcie(7.876923) == (3, 8)
    assert speed_to_pcie(0.25) == (1, 1)
    assert speed_to_pcie(3.3) is None
