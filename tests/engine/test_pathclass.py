"""Path classes on hand-built hosts and routed paths.

Two-socket host with several root complexes (rc) per socket::

    [g0]--[sw0]--[rc0]--[cpu0]--[rc1]--[sw1]--[n1]          [cpu0]==upi==[cpu1]--[rc2]--[n2]
      |     +--[sw2]--[n0]        +--[mem0]
    nvlink4x6
      |
    [g1]--[sw0]
"""
import pytest

from designer.engine.document import FORMAT
from designer.engine.errors import InvalidTopology
from designer.engine.model.fabrics import build_cluster
from designer.engine.model.pathclass import classify, classify_path, nvlink_count, topo_matrix
from designer.engine.model.templates import host_document
from designer.engine.model.topology import Topology


def host():
    nodes = [("g0", "gpu", {}), ("g1", "gpu", {}), ("sw0", "pcie_switch", {}), ("sw1", "pcie_switch", {}),
             ("sw2", "pcie_switch", {}), ("rc0", "cpu", {"socket": 0}), ("rc1", "cpu", {"socket": 0}),
             ("cpu0", "cpu", {"socket": 0}), ("cpu1", "cpu", {"socket": 1}), ("rc2", "cpu", {"socket": 1}),
             ("mem0", "memory", {}), ("n0", "nic", {}), ("n1", "nic", {}), ("n2", "nic", {})]
    links = [("g0", "sw0", "pcie5x16"), ("g1", "sw0", "pcie5x16"), ("g0", "g1", "nvlink4x6"),
             ("sw0", "rc0", "pcie5x16"), ("sw0", "sw2", "pcie5x16"), ("sw2", "n0", "pcie5x16"),
             ("rc0", "cpu0", None), ("cpu0", "rc1", None), ("rc1", "sw1", "pcie5x16"), ("sw1", "n1", "pcie5x16"),
             ("cpu0", "cpu1", "upi-spr"), ("cpu1", "rc2", None), ("rc2", "n2", "pcie5x16"), ("cpu0", "mem0", "ddr5x8")]
    doc = {"format": FORMAT, "groups": [{"id": "h", "kind": "host"}],
           "nodes": [{"id": i, "kind": k, "group": "h", "attrs": a} for i, k, a in nodes],
           "links": [{"a": a, "b": b, **({"tech": t} if t else {"capacity_gbps": 1000})} for a, b, t in links]}
    return Topology.from_document(doc)


@pytest.mark.parametrize("a, b, expected", [
    ("g0", "g0", "X"), ("g0", "g1", "NV6"), ("g0", "n0", "PXB"), ("n0", "g1", "PXB"),
    ("g0", "n1", "NODE"), ("g0", "n2", "SYS"), ("g0", "mem0", "NODE"), ("sw0", "n0", "PIX"),
])
def test_classify_hand_checked(a, b, expected):
    assert classify(host(), a, b) == expected


def test_classify_path_variants():
    t = host()
    ix = lambda *ids: [t.node_index[i] for i in ids]
    assert classify_path(t, ix("g0", "g1")) == "NVL"
    assert classify_path(t, ix("g0", "sw0", "g1")) == "PIX"
    assert classify_path(t, ix("g0", "sw0", "sw2", "n0")) == "PXB"
    assert classify_path(t, ix("g0", "sw0", "rc0", "cpu0", "mem0")) == "NODE"
    assert classify_path(t, ix("g1", "g0", "sw0", "sw2", "n0")) == "PXN"
    assert classify_path(t, ["g0", "sw0", "rc0", "cpu0", "cpu1", "rc2", "n2"]) == "SYS"
    assert classify_path(t, ix("g0")) == "X"


def test_pcie_commodity_gpu_to_nic_is_phb():
    t = Topology.from_document(host_document("pcie-commodity"))
    assert classify(t, "h0/gpu0", "h0/nic0") == "PHB"
    assert classify(t, "h0/gpu0", "h0/gpu1") == "PHB"


def test_cluster_paths_net_and_pxn():
    """h0/gpu1 -NVLink- h0/nvswitch0 - h0/gpu0 - pcie0 - nic0 - leaf0 - h1/nic0 ... is PXN; plain is NET."""
    t = Topology.from_document(build_cluster("dgx-h100", 2))
    ids = lambda *x: [t.node_index[i] for i in x]
    net = ids("h0/gpu0", "h0/pcie0", "h0/nic0", "leaf0", "h1/nic0", "h1/pcie0", "h1/gpu0")
    assert classify_path(t, net) == "NET"
    pxn = ids("h0/gpu1", "h0/nvswitch0", "h0/gpu0", "h0/pcie0", "h0/nic0", "leaf0", "h1/nic0",
              "h1/pcie0", "h1/gpu0")
    assert classify_path(t, pxn) == "PXN"
    assert classify_path(t, ids("h0/gpu1", "h0/nvswitch2", "h0/gpu5")) == "NVL"
    assert classify(t, "h0/gpu0", "h1/gpu0") == "NET" and classify(t, "h0/nic0", "leaf0") == "NET"
    assert nvlink_count(t, "h0/gpu0", "h0/gpu7") == 18


def test_bad_arguments_raise_engine_errors():
    t = host()
    with pytest.raises(InvalidTopology):
        classify(t, "nope", "g0")
    with pytest.raises(InvalidTopology):
        classify(t, 999, 0)
    with pytest.raises(InvalidTopology):
        topo_matrix(t, "h9")
