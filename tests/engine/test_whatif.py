"""What-if diffs: NIC failure per policy, PCIe x16→x8, spine failure, host failure.

DGX-H100 pair on a rail-optimized fabric (per direction: PCIe Gen5 x16 = 384 Gb/s effective,
ConnectX-7 port = 400 Gb/s, NVLink far above)::

    h0: [gpuI]--pcie 384--[pcieI]--pcie 384--[nicI]==400==[leafI]==400==[nicI]--[pcieI]--[gpuI] :h1
          \\__ NVLink (4 NVSwitches) __/        |                        (I = 0..7, rail I)
                 [pcieI]--[rcI]--[cpu0|cpu1]--upi--[cpu1]   (rc0-3 on socket 0, rc4-7 on socket 1)
"""
import pytest

from designer.engine.analysis.whatif import compare_policies, diff_results, simulate_with_diff

PAIR = {"build": {"template": "dgx-h100", "hosts": 2, "fabric": "rail-optimized"}}
PCIE = 384.0


def scenario(workload, failures=(), policy="affinity", topology=PAIR, multipath="hash"):
    return {"topology": topology, "workload": workload, "failures": list(failures),
            "routing": {"nic_policy": policy, "multipath": multipath, "seed": 1}}


def p2p(i, src, dst, demand=None):
    out = {"id": f"p{i}", "kind": "p2p", "src": src, "dst": dst, "bytes": 1e9}
    if demand:
        out["demand_gbps"] = demand
    return out


def flow(result, fid):
    return next(f for f in result["flows"] if f["id"] == fid)


def test_no_failures_means_no_diff():
    r = simulate_with_diff(scenario([p2p(0, "h0/gpu0", "h1/gpu0")]))
    assert r["diff"] is None and flow(r, "p0#0")["rate_gbps"] == PCIE


def test_nic_failure_under_affinity_disconnects_that_gpus_inter_host_flows():
    """h0/nic0 dies. gpu0's flow to h1 is lost (its only NIC under affinity); gpu1's flow and the
    NVLink flow gpu0→gpu1 inside h0 are untouched."""
    work = [p2p(0, "h0/gpu0", "h1/gpu0"), p2p(1, "h0/gpu1", "h1/gpu1"), p2p(2, "h0/gpu0", "h0/gpu1")]
    r = simulate_with_diff(scenario(work, [{"target": "h0/nic0", "mode": "down"}]))
    d = r["diff"]
    assert d["summary"]["disconnected"] == 1 and d["summary"]["rerouted"] == 0
    (lost,) = d["disconnected"]
    assert lost["flow"] == "p0#0" and lost["reason"] == "GPU h0/gpu0's only NIC under policy affinity is down"
    assert lost["old_path"][:3] == ["h0/gpu0", "h0/pcie0", "h0/nic0"]
    assert d["summary"]["patterns"]["p0"] == {"completion_s": {"before": 8e9 / 384e9, "after": None},
                                              "throughput_gbps": {"before": PCIE, "after": None},
                                              "disconnected": 1, "complete": False,
                                              "surviving_completion_s": None,
                                              "reason": "1 of 1 flows disconnected (p0#0): GPU h0/gpu0's only "
                                                        "NIC under policy affinity is down"}
    assert d["impact"]["disconnected_flows"] == 1 and d["impact"]["throughput_lost_gbps"] == pytest.approx(PCIE)
    assert flow(r, "p1#0")["rate_gbps"] == PCIE and flow(r, "p0#0")["status"] == "unroutable"


def test_nic_failure_under_any_reroutes_through_pcie_at_full_rate():
    """Under ``any`` gpu0's flow leaves by another NIC: through the PCIe switch, the root complex
    (and maybe the socket link), at the GPU's PCIe rate 384 Gb/s: nothing is lost."""
    work = [p2p(0, "h0/gpu0", "h1/gpu0")]
    base = simulate_with_diff(scenario(work, policy="any"))
    if "h0/nic0" not in flow(base, "p0#0")["path"]:
        pytest.skip("the ECMP hash did not put this flow on nic0 in the baseline")
    r = simulate_with_diff(scenario(work, [{"target": "h0/nic0"}], policy="any"))
    d = r["diff"]
    assert d["summary"]["disconnected"] == 0 and d["summary"]["rerouted"] == 1
    (moved,) = d["rerouted"]
    assert "h0/nic0" not in moved["new_path"] and moved["new_path"][1] == "h0/pcie0"
    assert moved["old_legs"]["src"] == "PIX" and moved["new_legs"]["src"] in ("NODE", "SYS")
    assert "source side PIX → " in moved["change"]
    assert moved["rate_gbps"] == {"before": PCIE, "after": PCIE}
    assert d["impact"]["completion_increase_s"] == 0.0


def test_nic_failure_under_pxn_reroutes_over_nvlink():
    """Under ``pxn`` gpu0 should hand its data over NVLink to a peer GPU whose NIC is alive."""
    work = [p2p(0, "h0/gpu0", "h1/gpu0")]
    d = simulate_with_diff(scenario(work, [{"target": "h0/nic0"}], policy="pxn"))["diff"]
    assert d["summary"]["disconnected"] == 0
    (moved,) = d["rerouted"]
    assert moved["new_legs"]["src"] == "PXN" and moved["rate_gbps"]["after"] == PCIE


def test_pcie_x8_halves_exactly_the_flows_bottlenecked_there():
    """All of h0's PCIe Gen5 x16 links train down to x8 (384 → 192 Gb/s). p0 was PCIe-bound (384)
    and halves; p1 is capped at 100 Gb/s by its demand and does not move."""
    work = [p2p(0, "h0/gpu0", "h1/gpu0"), p2p(1, "h0/gpu1", "h1/gpu1", demand=100)]
    sel = {"kind": "link", "tech": "pcie5x16", "group": "h0"}
    r = simulate_with_diff(scenario(work, [{"target": sel, "mode": "degrade", "factor": 0.5}]))
    d = r["diff"]
    assert flow(r, "p0#0")["rate_gbps"] == PCIE / 2 and flow(r, "p1#0")["rate_gbps"] == 100.0
    assert d["summary"]["slower_flows"] == 1 and d["summary"]["rerouted"] == 0
    assert d["summary"]["patterns"]["p0"]["completion_s"] == {"before": 8e9 / 384e9, "after": 8e9 / 192e9}
    assert d["summary"]["patterns"]["p1"]["completion_s"] == {"before": 0.08, "after": 0.08}
    assert d["impact"]["slowdown"] == pytest.approx(2.0) and d["impact"]["worst_pattern"] == "p0"
    assert d["rate_changes"][0] == {"flow": "p0#0", "before": PCIE, "after": PCIE / 2}
    shifted = {s["id"]: s for s in d["utilization_shifts"]}
    assert shifted["h0/gpu1-pcie1:a>b"]["before"] == pytest.approx(100 / 384)
    assert shifted["h0/gpu1-pcie1:a>b"]["after"] == pytest.approx(100 / 192)


def test_spine_failure_moves_ecmp_flows_to_the_surviving_spine():
    """Four hosts, two leaves per rail, two spines; ECMP split. On rail 0::

        h0/nic0,h1/nic0 ==[leaf0]==400==[spine0]==400==[leaf1]== h2/nic0,h3/nic0
                                 \\==400==[spine1]==400==//

    h0→h2 and h1→h3 (GPU0s) each split over both spines: 192 + 192 on each leaf0–spine link
    (≤ 400), so both run at their PCIe rate 384. With spine0 down both share leaf0–spine1:
    200 Gb/s each, completion 8e9/200e9 = 0.04 s instead of 0.0208 s."""
    topo = {"build": {"template": "dgx-h100", "hosts": 4, "fabric": "rail-optimized", "leaves_per_rail": 2}}
    work = [p2p(0, "h0/gpu0", "h2/gpu0"), p2p(1, "h1/gpu0", "h3/gpu0")]
    r = simulate_with_diff(scenario(work, [{"target": "spine0"}], topology=topo, multipath="split"))
    d = r["diff"]
    assert d["summary"]["disconnected"] == 0 and d["summary"]["rerouted"] == 2
    for moved in d["rerouted"]:
        assert "spine0" not in moved["new_path"] and "spine1" in moved["new_path"]
        assert moved["paths"] == {"before": 2, "after": 1}
        assert moved["rate_gbps"] == {"before": PCIE, "after": 200.0}
    assert d["summary"]["patterns"]["p0"]["completion_s"] == {"before": 8e9 / 384e9, "after": 0.04}
    assert "leaf0-spine1:a>b" in d["summary"]["new_bottlenecks"]
    shifts = {s["id"]: s for s in d["utilization_shifts"]}
    assert shifts["leaf0-spine0:a>b"]["before"] == pytest.approx(2 * 192 / 400)  # two half-flows
    assert shifts["leaf0-spine0:a>b"]["after"] == 0.0
    assert shifts["leaf0-spine1:a>b"]["after"] == pytest.approx(1.0)


def test_host_failure_disconnects_its_flows_and_the_collective_is_incomplete():
    """Ring all-reduce over both hosts; h1 dies. Every flow from or to an h1 GPU is disconnected
    (source/destination down): the all-reduce does not complete (completion null, with the
    reason); ``surviving_completion_s`` covers h0's surviving flows."""
    work = [{"id": "ar", "kind": "allreduce", "algorithm": "ring", "participants": {"kind": "gpu"}, "bytes": 1e9}]
    r = simulate_with_diff(scenario(work, [{"target": "h1", "mode": "down"}]))
    d = r["diff"]
    touching = [f for f in r["flows"] if f["src"].startswith("h1/") or f["dst"].startswith("h1/")]
    assert d["summary"]["disconnected"] == len(touching) > 0
    assert all(f["status"] == "unroutable" for f in touching)
    assert {x["reason"].split(" ")[0] for x in d["disconnected"]} == {"source", "destination"}
    ar = d["summary"]["patterns"]["ar"]
    assert ar["complete"] is False and ar["disconnected"] == len(touching)
    alive = [f["completion_s"] for f in r["flows"] if f["status"] == "ok"]
    # Completion = latency + data time / efficiency (designer.engine.analysis.completion).
    model = r["summary"]["patterns"]["ar"]
    assert ar["completion_s"]["after"] is None and ar["surviving_completion_s"] == pytest.approx(
        model["latency_s"] + max(alive) / model["efficiency"])
    assert ar["reason"].startswith(f"{len(touching)} of ") and "h1/gpu" in ar["reason"]
    summary = r["summary"]
    assert summary["patterns"]["ar"]["unroutable"] == len(touching)
    assert summary["patterns"]["ar"]["completion_s"] is None and summary["complete"] is False
    assert summary["headline"].startswith(f"does not complete — {len(touching)} flows of ar lost when h1 is down")
    assert d["impact"]["broken"] == ["ar"] and d["impact"]["slowdown"] is None


def test_diff_result_is_a_valid_allocation_and_echoes_failures():
    work = [{"id": "ar", "kind": "allreduce", "participants": {"kind": "gpu"}, "bytes": 1e9}]
    r = simulate_with_diff(scenario(work, [{"target": "h0/pcie3", "mode": "down"},
                                           {"target": "h1/nic5", "mode": "degrade", "factor": 0.5}]))
    assert [f["label"] for f in r["scenario"]["failures"]] == ["h0/pcie3 down", "h1/nic5 ×0.5"]
    assert r["diff"]["failures"] == r["scenario"]["failures"]
    caps = {x["id"]: x["capacity_gbps"] for x in r["resources"]}
    assert caps["h1/nic5-leaf5:a>b"] == 200.0
    assert all(x["load_gbps"] <= x["capacity_gbps"] * (1 + 1e-9) for x in r["resources"])


def test_stable_rerouting_keeps_untouched_flows_on_their_paths():
    work = [{"id": "a2a", "kind": "alltoall", "participants": {"kind": "gpu"}, "bytes": 1e8}]
    topo = {"build": {"template": "dgx-h100", "hosts": 4, "fabric": "rail-optimized", "leaves_per_rail": 2}}
    before = {f["id"]: f for f in simulate_with_diff(scenario(work, topology=topo))["flows"]}
    r = simulate_with_diff(scenario(work, [{"target": "leaf0-spine1"}], topology=topo))
    moved = {m["flow"] for m in r["diff"]["rerouted"]}
    assert moved and r["diff"]["summary"]["disconnected"] == 0
    for f in r["flows"]:
        crossed = any(a == "leaf0" and b == "spine1" or a == "spine1" and b == "leaf0"
                      for a, b in zip(before[f["id"]]["path"], before[f["id"]]["path"][1:]))
        assert (f["path"] != before[f["id"]]["path"]) == crossed == (f["id"] in moved)


def test_diff_results_and_compare_policies():
    work = [p2p(0, "h0/gpu0", "h1/gpu0")]
    d = diff_results(scenario(work), [{"target": "h0/nic0"}])
    assert d["summary"]["disconnected"] == 1
    c = compare_policies(scenario(work, [{"target": "h0/nic0"}]), policies="affinity,any")
    assert c["format"] == "fabricscope.compare/1" and list(c["policies"]) == ["affinity", "any"]
    assert c["policies"]["affinity"]["with_failures"]["unroutable"] == 1
    assert c["policies"]["affinity"]["baseline"]["unroutable"] == 0
    assert c["best"]["with_failures"] in ("any", "affinity") and "affinity" in c["headline"]
    if c["policies"]["any"]["with_failures"]["unroutable"] == 0:
        assert c["best"]["with_failures"] == "any"
