"""Latency breakdown of one message (propagation + forwarding + serialization + control path), of a
collective step (+ payload read + receive completion) and of a ping-pong round trip."""
import pytest

from designer.engine.errors import InvalidScenario
from designer.engine.model.hop_latency import (
    COMPLETION_NS,
    CONTROL_NS,
    FORWARDING_NS,
    kernel_launch_s,
    path_latency,
    round_trip,
    step_latency,
    step_latency_s,
)
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
    # the GPU's post: WQE stores, two system-scope fences (WQE before doorbell record, record
    # before the MMIO doorbell, as mlx5's post_send_db), the doorbell, the NIC's WQE fetch
    assert gpu["control"] == {"wqe_post": CONTROL_NS["GPU_WQE_POST_NS"], "fences": 2 * CONTROL_NS["GPU_FENCE_NS"],
                              "doorbell": doorbell, "wqe_fetch": CONTROL_NS["WQE_FETCH_NS"]}
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


# ---------------------------------------------------------------- collective steps and round trips

_FABRIC = ["h0/gpu0", "h0/pcie0", "h0/nic0", "leaf0", "h1/nic0", "h1/pcie0", "h1/gpu0"]


def test_step_over_the_fabric_adds_payload_read_and_receive_completion():
    """[h0/gpu0]-[pcie0]-[nic0]==[leaf0]==[h1/nic0]-[pcie0]-[h1/gpu0], [h1/cpu0] on h1/pcie0; every
    link 100 ns. cpu_proxy receive side: CQE write (300 + nic0→pcie0→cpu0: 2 links + 1 switch hop
    = 320), proxy CQ poll 1500, flag write (100 + cpu0→pcie0→gpu0: 320), GPU poll 200."""
    topo = mini()
    nodes = _path(topo, _FABRIC)
    send = path_latency(topo, nodes, 0, initiator="cpu_proxy")
    step = step_latency(topo, nodes, initiator="cpu_proxy")
    hop = 200 + FORWARDING_NS["pcie_switch"]
    assert step["completion"] == {"cqe_write": COMPLETION_NS["CQE_WRITE_NS"] + hop,
                                  "cq_poll": COMPLETION_NS["CQ_POLL_NS"],
                                  "flag_write": CONTROL_NS["DOORBELL_ISSUE_NS"] + hop,
                                  "gpu_poll": COMPLETION_NS["GPU_FLAG_POLL_NS"]}
    assert step["completion_ns"] == 620 + 1500 + 420 + 200
    assert step["payload_read_ns"] == COMPLETION_NS["PAYLOAD_READ_NS"]
    # The step is the send path of path_latency (same control, flight) plus payload read and completion.
    assert step["total_ns"] == pytest.approx(send["total_ns"] + step["payload_read_ns"] + step["completion_ns"])
    assert step_latency_s(topo, nodes, initiator="cpu_proxy") == pytest.approx(step["total_ns"] * 1e-9)


def test_gpu_initiated_and_flag_in_data_skip_the_receiving_proxy():
    """LL data carries its flag: the GPU polls the data. A GPU-initiated put is followed by its
    signal atomic (one PCIe read round trip after the data), which the GPU polls. Neither goes
    through a CQE and the receiving proxy. The put with its signal is two work requests the GPU
    builds (RDMA write + atomic fetch-add: DOCA GPUNetIO's put_signal, NCCL GIN GDAKI)."""
    topo = mini()
    nodes = _path(topo, _FABRIC)
    cpu = step_latency(topo, nodes, initiator="cpu_proxy")
    gpu = step_latency(topo, nodes, initiator="gpu_initiated")
    ll = step_latency(topo, nodes, initiator="cpu_proxy", flag_in_data=True)
    assert ll["completion"] == {"gpu_poll": COMPLETION_NS["GPU_FLAG_POLL_NS"]}
    assert gpu["completion"] == {"signal_atomic": COMPLETION_NS["SIGNAL_ATOMIC_READ_NS"],
                                 "gpu_poll": COMPLETION_NS["GPU_FLAG_POLL_NS"]}
    gpu_ll = step_latency(topo, nodes, initiator="gpu_initiated", flag_in_data=True)
    assert gpu_ll["completion"] == ll["completion"]
    assert gpu["control"]["signal_wqe_post"] == CONTROL_NS["GPU_WQE_POST_NS"] and "signal_wqe_post" not in gpu_ll["control"]
    assert gpu["total_ns"] - gpu_ll["total_ns"] == pytest.approx(COMPLETION_NS["SIGNAL_ATOMIC_READ_NS"]
                                                                 + CONTROL_NS["GPU_WQE_POST_NS"])
    assert ll["control"] == cpu["control"]  # the sender's proxy still posts the WQE
    assert gpu_ll["total_ns"] < ll["total_ns"] < cpu["total_ns"]  # same completion: no proxy notice
    assert gpu["total_ns"] < cpu["total_ns"]
    assert cpu["total_ns"] - ll["total_ns"] == pytest.approx(cpu["completion_ns"] - ll["completion_ns"])


def test_intra_host_step_is_the_kernels_own_stores_whatever_the_initiator():
    """[h0/gpu0]==nvlink==[h0/nvs0]==nvlink==[h0/gpu1]: store issue 100 + 2 links of 100 ns +
    NVSwitch hop 150 + GPU poll 200 = 650 ns (NCCL's NVLink ring LL step is 0.47-0.6 µs)."""
    topo = mini()
    nodes = _path(topo, ["h0/gpu0", "h0/nvs0", "h0/gpu1"])
    a = step_latency(topo, nodes, initiator="cpu_proxy")
    b = step_latency(topo, nodes, initiator="gpu_initiated")
    assert a == b and a["initiator"] == "gpu_initiated" and not a["via_nic"]
    assert a["total_ns"] == CONTROL_NS["GPU_STORE_ISSUE_NS"] + 200 + FORWARDING_NS["nvswitch"] + 200 == 650
    assert a["payload_read_ns"] == 0


def test_serialization_only_of_the_given_bytes():
    topo = mini()
    nodes = _path(topo, _FABRIC)
    zero = step_latency(topo, nodes, initiator="gpu_initiated")
    big = step_latency(topo, nodes, initiator="gpu_initiated", message_bytes=1e6)
    assert zero["serialization_ns"] == 0
    assert big["total_ns"] - zero["total_ns"] == pytest.approx(1e6 * 8 / 400)


def test_round_trip_is_a_step_there_and_a_step_back():
    topo = mini()
    nodes = _path(topo, _FABRIC)
    rt = round_trip(topo, nodes, 8, initiator="gpu_initiated")
    there = step_latency(topo, nodes, initiator="gpu_initiated", message_bytes=8)
    back = step_latency(topo, nodes[::-1], initiator="gpu_initiated", message_bytes=8)
    assert rt["total_ns"] == pytest.approx(there["total_ns"] + back["total_ns"])
    assert rt["total_s"] == pytest.approx(rt["total_ns"] * 1e-9)
    assert rt["ping"]["total_ns"] == pytest.approx(rt["pong"]["total_ns"])  # symmetric hosts
    assert round_trip(topo, nodes, 8, initiator="cpu_proxy")["total_ns"] > rt["total_ns"]


def test_launch_and_new_constants_are_overridable():
    topo = mini()
    nodes = _path(topo, _FABRIC)
    assert kernel_launch_s() == pytest.approx(COMPLETION_NS["KERNEL_LAUNCH_NS"] * 1e-9)
    assert kernel_launch_s({"KERNEL_LAUNCH_NS": 1000}) == pytest.approx(1e-6)
    base = step_latency(topo, nodes, initiator="cpu_proxy")
    cheaper = step_latency(topo, nodes, initiator="cpu_proxy", overrides={"CQ_POLL_NS": 0, "PAYLOAD_READ_NS": 0})
    assert base["total_ns"] - cheaper["total_ns"] == pytest.approx(COMPLETION_NS["CQ_POLL_NS"]
                                                                     + COMPLETION_NS["PAYLOAD_READ_NS"])
    with pytest.raises(InvalidScenario):
        step_latency(topo, nodes, overrides={"CQ_POLL": 1})
    with pytest.raises(InvalidScenario):
        step_latency(topo, nodes, initiator="dpu")
    with pytest.raises(InvalidScenario):
        step_latency(topo, _path(topo, ["h0/gpu0", "h1/gpu0"]))


def test_infiniband_switch_forwards_faster_than_ethernet():
    """The same fabric path with the NIC⇄leaf links as ``ib-ndr`` instead of ``eth400``: the leaf
    hop costs FORWARD_SWITCH_IB_NS instead of FORWARD_SWITCH_NS."""
    eth, ib = mini(), mini()
    ib.link_tech = ["ib-ndr" if t == "eth400" else t for t in ib.link_tech]
    a = path_latency(eth, _path(eth, _FABRIC), 0)["forwarding_ns"]
    b = path_latency(ib, _path(ib, _FABRIC), 0)["forwarding_ns"]
    assert a - b == pytest.approx(FORWARDING_NS["switch"] - FORWARDING_NS["switch_ib"])


def test_network_step_follows_nccls_buffer_placement_per_protocol():
    """NCCL's network transport keeps LL buffers in host memory even with GPUDirect RDMA
    (src/transport/net.cc): an LL step lands in host memory (the NIC's write to the CPU) and the
    GPU polls it there, one PCIe read round trip; LL128 lands in GPU memory and carries its flag;
    Simple completes through a CQE, the receiving proxy's poll and a flag. All three are posted
    by the sending CPU proxy."""
    from designer.engine.model.hop_latency import HOST_BUFFER_PROTOCOLS, network_step

    topo = mini()
    nodes = _path(topo, _FABRIC)
    ll, ll128, simple = (network_step(topo, nodes, p) for p in ("LL", "LL128", "Simple"))
    assert HOST_BUFFER_PROTOCOLS == ("LL",)
    assert set(ll["completion"]) == {"host_write", "host_poll"} and ll["completion"]["host_write"] > 0
    assert ll["completion"]["host_poll"] == COMPLETION_NS["HOST_POLL_READ_NS"]
    assert ll128["completion"] == {"gpu_poll": COMPLETION_NS["GPU_FLAG_POLL_NS"]}
    assert simple["completion"] == step_latency(topo, nodes, initiator="cpu_proxy")["completion"]
    assert ll["control"] == ll128["control"] == simple["control"] and "proxy_notice" in ll["control"]
    assert ll128["total_ns"] < ll["total_ns"] < simple["total_ns"]


def test_the_result_latency_section_is_the_benchmarks_round_trip():
    """One latency function: the result's ``latency`` section (page, API) carries, per initiator,
    the one-way step as the far GPU sees it and ``round_trip_ns`` — the same :func:`round_trip`
    the fidelity benchmark reads from this section — not a one-way path sum."""
    from designer.engine.analysis.simulate import simulate
    from designer.engine.benchmarks.fidelity import build_topology, predict
    from designer.engine.model.hop_latency import round_trip, step_latency

    topo = build_topology({"template": "dgx-h100", "hosts": 2})
    result = simulate({"topology": topo, "workload": [{"id": "p", "kind": "p2p", "src": "h0/gpu0",
                                                       "dst": "h1/gpu0", "bytes": 8}],
                       "latency": {"message_bytes": 8, "initiators": ["cpu_proxy", "gpu_initiated"]}})
    (entry,) = result["latency"]
    nodes = [topo.node_index[n] for n in entry["path"]]
    rate = next(f["rate_gbps"] for f in result["flows"] if f["id"] == "p#0")
    for init, lat in entry["initiators"].items():
        one_way = step_latency(topo, nodes, initiator=init, message_bytes=8, rate_gbps=rate)
        assert lat["total_ns"] == pytest.approx(one_way["total_ns"])
        assert lat["completion_ns"] > 0 and lat["payload_read_ns"] > 0      # the receiver's view, not a path sum
        assert lat["round_trip_ns"] == pytest.approx(round_trip(topo, nodes, 8, initiator=init,
                                                                rate_gbps=rate)["total_ns"])
    case = {"metric": "round_trip_us", "initiator": "gpu_initiated", "topology": {"template": "dgx-h100", "hosts": 2},
            "pattern": {"kind": "p2p", "src": "h0/gpu0", "dst": "h1/gpu0", "bytes": 8}}
    assert predict(case, topo=topo)["predicted"] == pytest.approx(
        entry["initiators"]["gpu_initiated"]["round_trip_ns"] * 1e-3)


def test_latency_request_is_checked_when_the_scenario_is_read_not_when_it_runs():
    """An unknown latency constant, a negative one or an unknown key is a located problem of
    the scenario itself (the API answers 400 on save), not an error at simulation time."""
    from designer.engine.errors import InvalidScenario
    from designer.engine.traffic.scenario import normalize_scenario

    base = {"topology": {"build": {"template": "dgx-h100", "hosts": 1}},
            "workload": [{"id": "ar", "kind": "allreduce", "participants": {"kind": "gpu"}, "bytes": 1e6}]}
    bad = {"message_bytes": 8, "overrides": {"WARP_NS": 1, "PROXY_NOTICE_NS": -5}, "size": 3}
    with pytest.raises(InvalidScenario) as err:
        normalize_scenario({**base, "latency": bad})
    assert {p.path for p in err.value.problems} == {"latency.overrides.WARP_NS",
                                                    "latency.overrides.PROXY_NOTICE_NS", "latency"}
    ok = normalize_scenario({**base, "latency": {"message_bytes": 8, "overrides": {"PROXY_NOTICE_NS": 0}}})
    assert ok.latency["overrides"] == {"PROXY_NOTICE_NS": 0}
