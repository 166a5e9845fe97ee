"""simulate(): result format, hand-checked rates, contention, timeline, listing limits, errors."""
import json

import numpy as np
import pytest

from designer.engine.errors import InvalidScenario, InvalidWorkload, LimitExceeded
from designer.engine.analysis.simulate import prepare, resource_tier, simulate, solve_prepared
from designer.engine.model.topology import Topology
from tests.engine.test_routing import build, mini


def test_dgx_a100_pair_ring_allreduce_is_nic_bound():
    """Two DGX A100 on a rail-optimized fabric, ring all-reduce of 1 GB over 16 GPUs, 8 channels.

    Each inter-host ring hop runs GPU i → pcie → nic i ==200G== leaf i ==> nic i → GPU i, one per
    NIC and direction. Its rate is the smallest of: the GPU's PCIe link, the NIC's PCIe link and the
    NIC port (catalog figures, read from the topology). NVLink hops are far faster, so the pattern
    finishes when the NIC hops do: bytes per hop = 2 (n-1)/n x size / channels.
    """
    from designer.engine.model.fabrics import build_cluster

    topo = Topology.from_document(build_cluster("dgx-a100", 2, fabric="rail-optimized"))
    cap = lambda lid: float(topo.link_capacity_gbps[topo.link_index[lid]])  # noqa: E731
    expected = min(cap("h0/gpu0-pcie0"), cap("h0/nic0-pcie4"), cap("h0/nic0-leaf0"))
    result = simulate({"topology": topo, "workload": [{"id": "ar", "kind": "allreduce", "algorithm": "ring",
                                                        "bytes": 1e9}]})
    ar = result["summary"]["patterns"]["ar"]
    assert ar["flows"] == 16 * 8 and ar["unroutable"] == 0 and ar["algorithm"] == "ring"
    per_hop = 2 * 15 / 16 * 1e9 / 8
    # completion = latency + data time / protocol efficiency (designer.engine.analysis.completion)
    assert ar["completion_s"] == pytest.approx(ar["latency_s"] + per_hop * 8 / (expected * 1e9) / ar["efficiency"])
    net = [f for f in result["flows"] if f["class"] == "NET"]
    assert len(net) == 16 and all(f["rate_gbps"] == pytest.approx(expected) for f in net)
    assert all(resource_tier(topo, _rid(topo, f["bottleneck"])) in ("pcie", "nic-leaf") for f in net)


def _rid(topo, rid):
    link, d = rid.rsplit(":", 1)
    return 2 * topo.link_index[link] + (0 if d == "a>b" else 1)


def test_storage_read_contends_with_allreduce_on_a_pcie_switch():
    """The ring hop h1/gpu0 → h0/gpu0 and the NVMe read share pcie0 → gpu0 (100 Gb/s)::

        [h0/nvme0]--400--[h0/pcie0]--100--[h0/gpu0]
                             |--400--[h0/nic0]==400==[leaf0]==400==[h1/nic0]--[h1/pcie0]--[h1/gpu0]
    """
    nodes, links = [("leaf0", "switch", None, {"role": "leaf"})], []
    for h in ("h0", "h1"):
        nodes += [(f"{h}/gpu0", "gpu", h, {"index": 0}), (f"{h}/pcie0", "pcie_switch", h, {}),
                  (f"{h}/nic0", "nic", h, {"rail": 0})]
        links += [(f"{h}/gpu0", f"{h}/pcie0", 100), (f"{h}/nic0", f"{h}/pcie0", 400), (f"{h}/nic0", "leaf0", 400)]
    nodes.append(("h0/nvme0", "nvme", "h0", {}))
    links.append(("h0/nvme0", "h0/pcie0", 400))
    topo = build(nodes, links, ["h0", "h1"])
    result = simulate({"topology": topo, "workload": [
        {"id": "ar", "kind": "allreduce", "participants": {"kind": "gpu"}, "bytes": 1e9},
        {"id": "load", "kind": "storage_read", "source": {"ids": ["h0/nvme0"]},
         "participants": {"ids": ["h0/gpu0"]}, "bytes": 1e9}]})
    rates = {f["id"]: f["rate_gbps"] for f in result["flows"]}
    into_gpu0 = [f["id"] for f in result["flows"] if f["dst"] == "h0/gpu0"]
    assert sorted(rates[i] for i in into_gpu0) == [50.0, 50.0]
    assert result["summary"]["bottlenecks"][0] == "h0/gpu0-h0/pcie0:b>a"
    assert result["summary"]["bottlenecks_by_tier"]["pcie"][0] == "h0/gpu0-h0/pcie0:b>a"
    assert result["summary"]["patterns"]["load"]["completion_s"] == pytest.approx(1e9 * 8 / 50e9)


def test_result_format_and_invariants():
    topo = mini()
    result = simulate({"topology": topo, "workload": [
        {"id": "ar", "kind": "allreduce", "bytes": 1e9},
        {"id": "p", "kind": "p2p", "src": "h0/gpu0", "dst": "h1/gpu1", "bytes": 1e9, "demand_gbps": 10}],
        "latency": {"message_bytes": 4096}})
    json.dumps(result, allow_nan=False)
    assert result["format"] == "fabricscope.result/1" and result["diff"] is None
    assert set(result["summary"]) >= {"patterns", "max_utilization", "bottlenecks"}
    for key in ("completion_s", "throughput_gbps", "slowest_flow", "flows", "unroutable"):
        assert key in result["summary"]["patterns"]["ar"]
    for f in result["flows"]:
        assert set(f) >= {"id", "pattern", "src", "dst", "bytes", "path", "class", "rate_gbps", "bottleneck", "status"}
        assert f["path"][0] == f["src"] and f["path"][-1] == f["dst"]
    p = next(f for f in result["flows"] if f["id"] == "p#0")
    assert p["rate_gbps"] == 10.0 and p["bottleneck"] is None
    for r in result["resources"]:
        assert set(r) >= {"id", "link", "dir", "tech", "tier", "capacity_gbps", "load_gbps", "utilization"}
        assert r["load_gbps"] <= r["capacity_gbps"] * (1 + 1e-9)
    lat = result["latency"][0]
    assert set(lat["initiators"]) == {"cpu_proxy", "gpu_initiated"}


def test_unroutable_flows_are_reported_with_a_reason():
    topo = mini()
    result = simulate({"topology": topo, "workload": [{"id": "p", "kind": "p2p", "src": "h0/gpu0",
                                                       "dst": "h1/gpu0", "bytes": 1e9}],
                       "failures": [{"target": "h0/nic0", "mode": "down"}]})
    (f,) = result["flows"]
    assert f["status"] == "unroutable" and f["reason"] == "GPU h0/gpu0's only NIC under policy affinity is down"
    assert result["summary"]["patterns"]["p"]["unroutable"] == 1
    assert result["summary"]["patterns"]["p"]["completion_s"] is None


def test_degrade_halves_a_link():
    topo = mini()
    result = simulate({"topology": topo, "workload": [{"id": "p", "kind": "p2p", "src": "h0/gpu0",
                                                       "dst": "h1/gpu0", "bytes": 1e9}],
                       "failures": [{"target": "h0/nic0-leaf0", "mode": "degrade", "factor": 0.5}]})
    assert result["flows"][0]["rate_gbps"] == 200.0


def test_timeline_mode_completions():
    """Two flows share a 400 Gb/s NIC; one has half the bytes: it finishes at t1 = 2*0.5e9*8/400e9,
    then the other runs alone at 400: total = (1e9*8 - 400e9/2*t1)/400e9 + t1."""
    topo = mini(nic_per_gpu=False)
    result = simulate({"topology": topo, "mode": "timeline", "workload": [
        {"id": "a", "kind": "p2p", "src": "h0/gpu0", "dst": "h1/gpu0", "bytes": 0.5e9},
        {"id": "b", "kind": "p2p", "src": "h0/gpu1", "dst": "h1/gpu1", "bytes": 1e9}]})
    t1 = 0.5e9 * 8 / 200e9
    t2 = t1 + (1e9 * 8 - 200e9 * t1) / 400e9
    pats = result["summary"]["patterns"]
    assert pats["a"]["completion_s"] == pytest.approx(t1)
    assert pats["b"]["completion_s"] == pytest.approx(t2)
    tl = result["summary"]["timeline"]
    assert tl["t_s"][0] == 0.0 and tl["tiers"]["nic-leaf"]["max"][0] == pytest.approx(1.0)


def test_max_flows_listed_keeps_slowest_and_counts_the_rest():
    topo = mini(hosts=4)
    result = simulate({"topology": topo, "workload": [{"id": "a2a", "kind": "alltoall", "bytes": 1e9}],
                       "options": {"max_flows_listed": 10}})
    s = result["summary"]
    assert s["flows_total"] == 56 and s["flows_listed"] == 10 and s["flows_omitted"] == 46 and "note" in s
    listed = {f["id"] for f in result["flows"]}
    assert s["patterns"]["a2a"]["slowest_flow"] in listed


def test_prepare_and_solve_prepared_are_reusable():
    topo = mini()
    prep = prepare({"topology": topo, "workload": [{"id": "ar", "kind": "allreduce", "bytes": 1e9}]})
    solved = solve_prepared(prep)
    assert np.all(solved.flow_rate_gbps > 0) and len(solved.flow_rate_gbps) == len(prep.flows)


@pytest.mark.parametrize("scenario, error, path", [
    ({"workload": [{"kind": "allreduce", "participants": {"kind": "tpu"}, "bytes": 1}]}, InvalidWorkload,
     "workload[0].participants"),
    ({"routing": {"nic_policy": "nearest"}}, InvalidScenario, "routing.nic_policy"),
    ({"mode": "fast"}, InvalidScenario, "mode"),
    ({"failures": [{"target": "h0/nic0", "mode": "degrade", "factor": 2}]}, InvalidScenario, "failures[0].factor"),
    ({"failures": [{"target": "h9/nic0"}]}, InvalidScenario, "failures[0].target"),
    ({"workload": [{"kind": "p2p", "src": "h0/gpu0", "dst": "h1/gpu0", "bytes": -1}]}, InvalidWorkload,
     "workload[0].bytes"),
    ({"format": "other/1"}, InvalidScenario, "format"),
])
def test_bad_scenarios_are_located(scenario, error, path):
    with pytest.raises(error) as exc:
        simulate({"topology": mini(), **scenario})
    assert any(p.path == path for p in exc.value.problems), exc.value.problems


def test_flow_limit(monkeypatch):
    import designer.engine.traffic.scenario as scenario_module

    monkeypatch.setattr(scenario_module, "MAX_FLOWS", 5)
    with pytest.raises(LimitExceeded):
        simulate({"topology": mini(hosts=3), "workload": [{"kind": "alltoall", "bytes": 1}]})


def test_flow_limit_counts_the_planned_algorithm_not_the_worst_one(monkeypatch):
    """An ``auto`` collective is refused up front only when even its cheapest algorithm exceeds
    the limit; generation then holds the planned algorithm's flows to it before building them.

    Hand count: 4 groups of 2 GPUs (one per host of ``mini(hosts=8, gpus=1)``): per group ring
    2·ch = 16, tree 4·2·ch = 64, NVLS 2·2 = 4, ... so at least 4 × 4 = 16 and at most 4 × 64 = 256
    flows. The old bound (the worst algorithm, 256) refused it at a limit of 100; it makes
    4 × (planned bound) flows."""
    import designer.engine.traffic.scenario as scenario_module
    import designer.engine.traffic.workloads as workloads
    from designer.engine.traffic.collectives import flow_bound

    topo = mini(hosts=8, gpus=1)
    groups = [[f"h{2 * k}/gpu0", f"h{2 * k + 1}/gpu0"] for k in range(4)]
    work = [{"id": "ar", "kind": "allreduce", "bytes": 1e6, "groups": groups}]
    assert workloads.pattern_flow_count({"kind": "allreduce", "groups": [[0, 1]] * 4, "participants": [0, 1]}) == 256
    assert workloads.pattern_flow_count({"kind": "allreduce", "groups": [[0, 1]] * 4, "participants": [0, 1]}, min) == 16
    for module in (scenario_module, workloads):
        monkeypatch.setattr(module, "MAX_FLOWS", 100)
    result = simulate({"topology": topo, "workload": work})
    algorithm = result["summary"]["patterns"]["ar"]["algorithm"]
    assert result["summary"]["flows_total"] <= 4 * flow_bound("allreduce", algorithm, 2) <= 100
    for module in (scenario_module, workloads):      # planned bound above the limit, least below
        monkeypatch.setattr(module, "MAX_FLOWS", 4 * flow_bound("allreduce", algorithm, 2) - 1)
    with pytest.raises(LimitExceeded, match="planned algorithms"):
        simulate({"topology": topo, "workload": work})
    for module in (scenario_module, workloads):      # below the least: refused before any planning
        monkeypatch.setattr(module, "MAX_FLOWS", 15)
    with pytest.raises(LimitExceeded, match="at least 16 flows"):
        simulate({"topology": topo, "workload": work})


def test_failures_fill_the_diff_and_link_selectors_validate():
    """simulate() with failures is the what-if: result after the failures + diff against the
    baseline. A link selector degrade of h0's PCIe links halves gpu0's 400 Gb/s path."""
    topo = mini()
    work = [{"id": "p", "kind": "p2p", "src": "h0/gpu0", "dst": "h1/gpu0", "bytes": 1e9}]
    r = simulate({"topology": topo, "workload": work,
                  "failures": [{"target": {"kind": "link", "tech": "pcie", "group": "h0"}, "mode": "degrade",
                                "factor": 0.5}]})
    assert r["flows"][0]["rate_gbps"] == 200.0
    assert r["diff"]["summary"]["slower_flows"] == 1
    assert r["diff"]["summary"]["patterns"]["p"]["completion_s"] == {"before": 0.02, "after": 0.04}
    r = simulate({"topology": topo, "workload": work, "failures": [{"target": "h0/nic0"}]})
    assert r["diff"]["disconnected"][0]["failed_nic"] == "h0/nic0" and r["flows"][0]["failed_nic"] == "h0/nic0"
    with pytest.raises(InvalidScenario) as exc:
        simulate({"topology": topo, "workload": work, "failures": [{"target": {"kind": "link", "tier": "warp"}}]})
    assert exc.value.problems[0].path == "failures[0].target.tier"


def test_degrading_a_group_slows_each_link_once():
    """Degrading group h0 by 0.5 halves the links inside it once (not once per end node)."""
    topo = mini()
    work = [{"id": "p", "kind": "p2p", "src": "h0/gpu0", "dst": "h0/mem0", "bytes": 1e9}]
    r = simulate({"topology": topo, "workload": work, "failures": [{"target": "h0", "mode": "degrade", "factor": 0.5}]})
    assert r["flows"][0]["rate_gbps"] == 200.0


# ------------------------------------------------------------------------------ weighted sub-flows
def _weighted_and_repeated(scenario, mode):
    """Solve a scenario with weighted paths (what simulate does) and with every path of k stripes
    expanded into k sub-flows of one stripe, weight share/k each (``Routes.repeated``)."""
    import dataclasses

    prep = prepare(scenario)
    rep = dataclasses.replace(prep, routes=prep.routes.repeated())
    return prep, solve_prepared(prep, mode=mode), rep, solve_prepared(rep, mode=mode)


def _assert_same_outcome(prep, a, rep, b):
    """Same rates, completions and loads; same bottleneck, or a tie: where the two name different
    resources, both are saturated resources of the flow's paths in both solves. (Weights 5/18
    and 5 x 1/18 round differently, so which of two resources saturating at the same level is
    named first can differ; with the former integer weights the sums were exact.)"""
    np.testing.assert_allclose(a.flow_rate_gbps, b.flow_rate_gbps, rtol=1e-12)
    np.testing.assert_allclose(a.flow_completion_s, b.flow_completion_s, rtol=1e-12)
    np.testing.assert_allclose(a.load_gbps, b.load_gbps, rtol=1e-12, atol=1e-9)
    r = prep.routes
    for f in np.flatnonzero(a.flow_bottleneck != b.flow_bottleneck).tolist():
        on_path = set(r.flow_res[r.flow_ptr[r.first[f]]:r.flow_ptr[r.first[f] + r.count[f]]].tolist())
        for res in (int(a.flow_bottleneck[f]), int(b.flow_bottleneck[f])):
            assert res in on_path and min(a.utilization[res], b.utilization[res]) >= 1 - 1e-9, f
    assert rep.routes.num_paths > prep.routes.num_paths


@pytest.mark.parametrize("mode", ["steady", "timeline"])
@pytest.mark.parametrize("routing", [{}, {"nic_policy": "pxn"}, {"nic_policy": "any", "multipath": "split"}])
def test_weighted_paths_equal_repeated_sub_flows_on_a_dgx_h100_pair(mode, routing):
    """Two DGX H100 (NVLink 5/4/4/5 per GPU, so GPU pairs are 4 paths weighing 5/4/4/5): ring
    all-reduce, all-to-all and a demand-capped transfer give the same per-flow rates,
    bottlenecks, completions and loads whether solved as weighted paths (shares 5/18, 4/18, …)
    or as the 18 repeated sub-flows per GPU pair (1/18 each)."""
    from designer.engine.model.fabrics import build_cluster

    topo = Topology.from_document(build_cluster("dgx-h100", 2, fabric="rail-optimized"))
    workload = [{"id": "ar", "kind": "allreduce", "participants": {"kind": "gpu"}, "bytes": 1e9},
                {"id": "a2a", "kind": "alltoall", "participants": {"kind": "gpu"}, "bytes": 2e8},
                {"id": "p", "kind": "p2p", "src": "h0/gpu0", "dst": "h0/gpu5", "bytes": 1e9, "demand_gbps": 900}]
    scenario = {"topology": topo, "workload": workload, "routing": routing}
    prep, a, rep, b = _weighted_and_repeated(scenario, mode)
    _assert_same_outcome(prep, a, rep, b)
    assert set(prep.routes.stripes.tolist()) >= {4.0, 5.0}
    np.testing.assert_array_equal(prep.routes.weight, prep.routes.share)


@pytest.mark.parametrize("mode", ["steady", "timeline"])
def test_weighted_paths_equal_repeated_sub_flows_on_the_example_scenario(mode):
    """examples/scenario-dgx-h100.json (all-reduce, GPUDirect checkpoint load, capped transfer)."""
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[2] / "examples" / "scenario-dgx-h100.json"
    prep, a, rep, b = _weighted_and_repeated(json.loads(path.read_text()), mode)
    _assert_same_outcome(prep, a, rep, b)
    result = simulate(json.loads(path.read_text()))
    assert result["summary"]["paths"] == prep.routes.num_paths
    striped = [f for f in result["flows"] if "paths" in f]
    assert striped and all(len(f["paths"]) == 4 for f in striped)   # one per NVSwitch, not 18
    for f in striped:
        assert sum(p["share"] for p in f["paths"]) == pytest.approx(1.0)
        assert sum(p["rate_gbps"] for p in f["paths"]) == pytest.approx(f["rate_gbps"], rel=1e-12)
        pace = min(p["rate_gbps"] / p["share"] for p in f["paths"])   # the slowest sub-flow's level
        assert pace <= f["rate_gbps"] * (1 + 1e-12)
        if mode == "steady" and f["bytes"]:
            assert f["completion_s"] == pytest.approx(f["bytes"] * 8 / (pace * 1e9), rel=1e-12)


@pytest.mark.parametrize("mode", ["steady", "timeline"])
def test_sub_flows_freezing_at_different_levels(mode):
    """One 1 GB transfer x/gpu0 → y/gpu0, ``split`` over 2 spines; leafA→spine1 is only 100::

        [x/gpu0]-800-[x/pcie0]-800-[x/nic0]==400==[leafA]==400==[spine0]==400==[leafB]==400==[y/nic0]-800-..-[y/gpu0]
                                                       \\==100==[spine1]==400==//

    Two sub-flows, share = weight 1/2. At level λ each runs at λ/2: leafA→spine1 saturates at
    λ/2 = 100, λ1 = 200 (that sub-flow freezes at 100 Gb/s). The spine0 sub-flow keeps rising:
    x/nic0→leafA carries λ/2 + 100 ≤ 400 → λ0 = 600, 300 Gb/s (leafB→y/nic0 saturates too).
    Flow rate = Σ w·λ = 100 + 300 = 400 Gb/s (the NIC is full). Proportional striping: each
    half carries 0.5 GB; the spine1 half needs 0.5e9·8 / 100e9 = 0.04 s = bytes / λ1, so the
    flow completes at 0.04 s (not 8e9 / 400e9 = 0.02 s) and its bottleneck is the slow half's.
    Timeline: the spine0 half ends at 4e9 / 300e9 ≈ 0.0133 s, the spine1 half still crawls at
    100 (its own bottleneck) and ends at 0.04 s: same completion."""
    nodes = [("leafA", "switch", None, {"role": "leaf"}), ("leafB", "switch", None, {"role": "leaf"}),
             ("spine0", "switch", None, {"role": "spine"}), ("spine1", "switch", None, {"role": "spine"})]
    links = [("leafA", "spine0", 400, "eth400"), ("leafA", "spine1", 100, "eth100"),
             ("leafB", "spine0", 400, "eth400"), ("leafB", "spine1", 400, "eth400")]
    for h, leaf in (("x", "leafA"), ("y", "leafB")):
        nodes += [(f"{h}/gpu0", "gpu", h, {}), (f"{h}/pcie0", "pcie_switch", h, {}), (f"{h}/nic0", "nic", h, {})]
        links += [(f"{h}/gpu0", f"{h}/pcie0", 800), (f"{h}/nic0", f"{h}/pcie0", 800),
                  (f"{h}/nic0", leaf, 400, "eth400")]
    topo = build(nodes, links, ["x", "y"])
    result = simulate({"topology": topo, "mode": mode, "routing": {"multipath": "split"},
                       "workload": [{"id": "p", "kind": "p2p", "src": "x/gpu0", "dst": "y/gpu0", "bytes": 1e9}]})
    (f,) = result["flows"]
    by_spine = {p["path"][4]: p for p in f["paths"]}
    assert by_spine["spine0"]["rate_gbps"] == pytest.approx(300.0)
    assert by_spine["spine1"]["rate_gbps"] == pytest.approx(100.0)
    assert f["rate_gbps"] == pytest.approx(400.0)
    assert f["completion_s"] == pytest.approx(0.04)
    assert result["summary"]["patterns"]["p"]["completion_s"] == pytest.approx(0.04)
    if mode == "steady":
        assert f["bottleneck"] == "leafA-spine1:a>b"
