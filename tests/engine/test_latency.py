"""Latency breakdown of one message: propagation + forwarding + serialization + control path."""
import pytest

from designer.engine.errors import InvalidScenario
from designer.engine.latency import CONTROL_NS, FORWARDING_NS, path_latency
from tests.engine.test_routing import mini


def _path(topo, ids):
    return [topo.node_index[i] for i in ids]


def test_fabric_path_breakdown_by_hand():
    """[h0/gpu0]-[h0/pcie0]-[h0/nic0]==[leaf0]==[h1/nic0]-[h1/pcie0]-[h1/gpu0]: 6 links of 100 ns,
    400 Gb/s bottleneck, 64 KiB message."""
    topo = mini()
    nodes = _path(topo, ["h0/gpu0", "h0/pcie0", "h0/nic0", "leaf0", "h1/nic0", "h1/pcie0", "h1/gpu0"])
    cpu = path_latency(topo, nodes, 65536, initiator="cpu_proxy")
    gpu = path_latency(topo, nodes, 65536, initiator="gpu_initiated")
    assert cpu["propagation_ns"] == 600.0
    assert cpu["forwarding_ns"] == 2 * FORWARDING_NS["pcie_switch"] + 2 * FORWARDING_NS["nic"] + FORWARDING_NS["switch"]
    assert cpu["serialization_ns"] == pytest.approx(65536 * 8 / 400)
    # cpu proxy: notice + post + doorbell (cpu0 -> pcie0 -> nic0: 2 links + 1 switch hop) + fetch
    doorbell = CONTROL_NS["DOORBELL_ISSUE_NS"] + 200 + FORWARDING_NS["pcie_switch"]
    assert cpu["control"] == {"proxy_notice": CONTROL_NS["PROXY_NOTICE_NS"], "wqe_post": CONTROL_NS["CPU_WQE_POST_NS"],
                              "doorbell": doorbell, "wqe_fetch": CONTROL_NS["WQE_FETCH_NS"]}
    assert gpu["control"]["doorbell"] == doorbell  # gpu0 is as far from nic0 as cpu0 is
    assert "proxy_notice" not in gpu["control"]
    assert gpu["total_ns"] < cpu["total_ns"]
    assert cpu["total_ns"] == pytest.approx(cpu["control_ns"] + 600 + cpu["forwarding_ns"] + cpu["serialization_ns"])


def test_rate_and_overrides():
    topo = mini()
    nodes = _path(topo, ["h0/gpu0", "h0/nvs0", "h0/gpu1"])
    out = path_latency(topo, nodes, 1e6, rate_gbps=100.0, initiator="gpu_initiated",
                       overrides={"GPU_STORE_ISSUE_NS": 0})
    assert out["serialization_ns"] == pytest.approx(1e6 * 8 / 100)
    assert out["control_ns"] == 0
    with pytest.raises(InvalidScenario):
        path_latency(topo, nodes, 1, overrides={"NOPE": 1})
    with pytest.raises(InvalidScenario):
        path_latency(topo, nodes, 1, initiator="dpu")
