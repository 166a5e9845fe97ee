"""Goodput planning (designer/engine/analysis/goodput/): rates × the design → interruptions,
checkpoint interval, ETTR, spares, Monte Carlo; docs/ENGINE.md, "Goodput".

The small hand-drawn host used below (``_host(k)``, k NICs per GPU)::

    [gpu0]--pcie--[pcie0]--pcie--[nic00 … nic0k]==400G==[leaf0]
    [gpu1]--pcie--[pcie0]--pcie--[nic10 … nic1k]==400G==[leaf0]
"""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from designer.engine.analysis.goodput import plan_goodput
from designer.engine.analysis.goodput.facts import CLASSES, LLAMA3_TABLE5, fitted_afr
from designer.engine.analysis.goodput.interval import (daly_interval_s, ettr, ettr_curve, poisson_quantile,
                                                       young_interval_s)
from designer.engine.analysis.goodput.montecarlo import Process, monte_carlo
from designer.engine.analysis.simulate import simulate
from designer.engine.errors import InvalidScenario, InvalidTopology
from designer.engine.model.fabrics import build_cluster

ZERO = {cls: {"afr": 0.0} for cls in CLASSES}


def _host(nics_per_gpu: int) -> dict:
    nodes = [{"id": "leaf0", "kind": "switch", "attrs": {"role": "leaf"}},
             {"id": "h0/pcie0", "kind": "pcie_switch", "group": "h0"}]
    links = []
    for g in range(2):
        nodes.append({"id": f"h0/gpu{g}", "kind": "gpu", "group": "h0"})
        links.append({"id": f"h0/gpu{g}-pcie", "a": f"h0/gpu{g}", "b": "h0/pcie0", "tech": "pcie5x16"})
        for k in range(nics_per_gpu):
            nic = f"h0/nic{g}{k}"
            nodes.append({"id": nic, "kind": "nic", "group": "h0"})
            links += [{"id": f"{nic}-pcie", "a": nic, "b": "h0/pcie0", "tech": "pcie5x16"},
                      {"id": f"{nic}-leaf", "a": nic, "b": "leaf0", "tech": "eth400"}]
    return {"format": "fabricscope.topology/1", "name": f"nics{nics_per_gpu}",
            "groups": [{"id": "h0", "kind": "host"}], "nodes": nodes, "links": links}


def _plan(topology, **extra) -> dict:
    base = {"topology": topology, "checkpoint": {"write_s": 60.0, "read_s": 60.0}, "monte_carlo": False}
    return plan_goodput({**base, **extra})


def _by_class(result: dict) -> dict:
    return {row["class"]: row for row in result["classes"]}


def test_the_llama3_table_is_given_back_for_16384_gpus_over_54_days():
    """Rates fitted to Table 5 of the Llama 3 paper, applied to a 2,048 × DGX-H100 design
    (16,384 GPUs, 8 rail NICs and 8 host⇄leaf cables a host), give back 419 interruptions in
    54 days within the table's precision (whole interruptions: ± 0.5).

    Per class: GPU = 148 + 19 + 17 + 6 + 6 = 196 over 16,384 GPUs → AFR = 196 / 16,384 × 365 / 54
    = 0.080858 /GPU-year, and 16,384 × 0.080858 × 54 / 365 = 196; likewise HBM 72, software
    54 + 7 + 2 = 63, NIC 7 (16,384 NICs), cable 35 (16,384 host⇄leaf cables), PSU 3 and host
    32 + 3 + 2 + 2 + 2 + 2 = 43 (2,048 hosts): 196 + 72 + 63 + 7 + 35 + 3 + 43 = 419.
    """
    assert sum(row[2] for row in LLAMA3_TABLE5) == 419
    assert fitted_afr("gpu") == pytest.approx(196 / 16384 * 365 / 54)
    result = _plan(build_cluster("dgx-h100", 2048))
    rows = _by_class(result)
    assert result["design"]["gpus"] == 16384
    assert (rows["nic"]["job_units"], rows["host_link"]["job_units"], rows["host"]["job_units"]) == (16384, 16384, 2048)
    per_54_days = {c: r["job_per_day"] * 54 for c, r in rows.items() if r["effect"] == "interrupt" and r["job_per_day"]}
    expected = {"gpu": 196, "hbm": 72, "software": 63, "nic": 7, "host_link": 35, "psu": 3, "host": 43}
    assert per_54_days == pytest.approx(expected)
    assert abs(result["job"]["interruptions_per_day"] * 54 - 419) < 0.5
    # 419 / 54 = 7.76 a day: job MTTF = 24 / 7.759 = 3.093 h
    assert result["job"]["mttf_hours"] == pytest.approx(24 * 54 / 419)


def test_young_and_daly_match_a_hand_calculation():
    """delta = 200 s, M = 10,000 s.

    Young: sqrt(2 × 200 × 10,000) = sqrt(4e6) = 2,000 s.
    Daly: x = 200 / 20,000 = 0.01, sqrt(x) = 0.1 → 2,000 × (1 + 0.1/3 + 0.01/9) − 200
    = 2,000 × 1.034444… − 200 = 1,868.89 s.
    ETTR at tau = 2,000, R = 0: 2,000 / (10,000 × (e^0.22 − 1)) = 2,000 / 2,460.77 = 0.81275.
    With R = 500: divided by e^0.05 = 1.051271 → 0.77312.
    delta ≥ 2M: Daly's interval is M.
    """
    assert young_interval_s(200.0, 10_000.0) == pytest.approx(2000.0)
    assert daly_interval_s(200.0, 10_000.0) == pytest.approx(2000.0 * (1 + 0.1 / 3 + 0.01 / 9) - 200.0)
    assert daly_interval_s(200.0, 10_000.0) == pytest.approx(1868.889, abs=1e-3)
    assert ettr(2000.0, 200.0, 0.0, 10_000.0) == pytest.approx(0.81275, abs=1e-5)
    assert ettr(2000.0, 200.0, 500.0, 10_000.0) == pytest.approx(0.81275 / math.exp(0.05), abs=1e-5)
    assert daly_interval_s(300.0, 100.0) == 100.0
    assert ettr(100.0, 0.0, 0.0, math.inf) == 1.0


def test_the_ettr_curve_peaks_near_dalys_interval():
    """The curve's best point lies within one grid step (10^(2/60) = 1.08×) of Daly's interval,
    and Daly's interval does at least as well as Young's (higher order)."""
    delta, restart, mttf = 300.0, 900.0, 3 * 3600.0
    daly = daly_interval_s(delta, mttf)
    curve = ettr_curve(daly, delta, restart, mttf)
    best = curve["interval_s"][int(np.argmax(curve["ettr"]))]
    assert daly / 1.08 <= best <= daly * 1.08
    assert ettr(daly, delta, restart, mttf) >= ettr(young_interval_s(delta, mttf), delta, restart, mttf)


def test_monte_carlo_of_10000_days_agrees_with_the_analytic_expectation():
    """8 interruptions a day (M = 10,800 s), delta = 300 s, R = 1,200 s, tau = Daly's interval,
    100 runs × 100 days = 10,000 simulated days: the mean interruptions per day and the mean
    ETTR are within 2 % of the analytic 8 and Daly's ETTR; one degradation class (2 a day, 1 h
    repair, 10 % slowdown) costs 2 × 1/24 × 0.1 = 0.833 % of the throughput."""
    lam = 8.0 / 86400.0
    tau = daly_interval_s(300.0, 1 / lam)
    p = Process(interrupts={"gpu": 6.0 / 86400.0, "host": 2.0 / 86400.0},
                degrades={"fabric_link": (2.0 / 86400.0, 3600.0, 0.1)}, tau_s=tau, delta_s=300.0, restart_s=1200.0)
    mc = monte_carlo(p, days_per_run=100.0, runs=100, seed=7, timeline_days=2.0)
    expected = ettr(tau, 300.0, 1200.0, 1 / lam)
    assert mc["simulated_days"] == 10_000
    assert mc["interruptions_per_day"]["mean"] == pytest.approx(8.0, rel=0.02)
    assert mc["ettr"]["mean"] == pytest.approx(expected, rel=0.02)
    assert mc["goodput"]["mean"] == pytest.approx(expected * (1 - 2 / 24 * 0.1), rel=0.02)
    assert mc["ettr"]["p5"] <= mc["ettr"]["mean"] <= mc["ettr"]["p95"]
    again = monte_carlo(p, days_per_run=100.0, runs=100, seed=7, timeline_days=2.0)
    assert again["ettr"] == mc["ettr"]  # seeded
    line = mc["timeline"]
    assert all(0 <= f["t_hours"] <= 48 for f in line["failures"])
    assert len(line["restarts_done_hours"]) == len(line["failures"]) + 1  # the start, then one per failure


def test_twice_the_nics_per_gpu_doubles_the_nic_interruptions():
    """Only GPUs and NICs fail, each at AFR 3.65 (0.01 a day). One NIC per GPU: 2 GPUs → 0.02
    a day, 2 NICs → 0.02 a day, NIC share 0.5. Two NICs per GPU: 4 NICs → 0.04 a day (doubled),
    share 0.04 / 0.06 = 2/3 (= 2s / (1 + s) with s = 0.5)."""
    rates = {**ZERO, "gpu": {"afr": 3.65}, "nic": {"afr": 3.65}}
    one, two = (_by_class(_plan(_host(k), rates=rates)) for k in (1, 2))
    assert (one["nic"]["job_units"], two["nic"]["job_units"]) == (2, 4)
    assert one["nic"]["job_per_day"] == pytest.approx(0.02)
    assert two["nic"]["job_per_day"] == pytest.approx(2 * one["nic"]["job_per_day"])
    assert one["nic"]["share"] == pytest.approx(0.5)
    assert two["nic"]["share"] == pytest.approx(2 / 3)


def test_the_checkpoint_write_time_is_the_storage_patterns_completion():
    """4 DGX-H100 (32 GPUs), 2 storage servers: a 64 GB checkpoint is 2 GB per GPU written with
    ``storage_write``; the plan's write time is that pattern's completion on the same fabric,
    and at least the time to push 64 GB through the storage servers' links (bytes × 8 / their
    capacity in Gb/s); the read-back is the ``storage_read`` of the same shards."""
    doc = build_cluster("dgx-h100", 4, storage=2)
    result = plan_goodput({"topology": doc, "checkpoint": {"bytes": 64e9}, "monte_carlo": False})
    ck = result["checkpoint"]
    gpus = [n["id"] for n in doc["nodes"] if n["kind"] == "gpu"]
    storage = [n["id"] for n in doc["nodes"] if n["kind"] == "storage"]
    for kind, key in (("storage_write", "write_s"), ("storage_read", "read_s")):
        scenario = {"format": "fabricscope.scenario/1", "topology": doc,
                    "workload": [{"id": "w", "kind": kind, "source": {"ids": storage},
                                  "participants": {"ids": gpus}, "bytes": 64e9 / 32, "via": "gpudirect"}]}
        assert ck[key] == simulate(scenario)["summary"]["patterns"]["w"]["completion_s"]
    storage_gbps = sum(l.get("capacity_gbps") or 400.0 for l in doc["links"] if l["a"] in storage or l["b"] in storage)
    assert ck["write_s"] >= 64e9 * 8 / (storage_gbps * 1e9) * (1 - 1e-9)
    assert (ck["write_source"], ck["restart_s"]) == ("simulated", 600.0 + ck["read_s"])


def test_checkpoint_size_from_the_model():
    """8e9 parameters × 14 bytes (bf16 weights + fp32 master, momentum, variance) = 112 GB."""
    result = _plan(_host(1), checkpoint={"parameters": 8e9, "write_s": 10.0, "read_s": 5.0})
    assert result["checkpoint"]["bytes"] == 112e9


def test_blast_radius_spares_and_goodput():
    """Host: AFR 36.5 (0.1 a day), 48 h repair, everything else 0; a cable AFR 3.65 (0.01 a day
    each, 2 cables) that degrades with 20 % slowdown and 10 h repair.

    Interruptions: 0.1 a day → M = 10 days = 864,000 s. Blast of a host failure: both GPUs stop.
    Spares for the host: mean failures in a repair = 0.1 × 2 = 0.2; Poisson(0.2): P(0) = 0.8187,
    P(≤1) = 0.9825, P(≤2) = 0.9989 → 2 spares at 99.5 %. Degradation loss: 0.02 a day × 10/24
    day × 0.2 = 0.001667; goodput = ETTR × (1 − 0.001667).
    """
    rates = {**ZERO, "host": {"afr": 36.5, "repair_hours": 48.0},
             "host_link": {"afr": 3.65, "effect": "degrade", "slowdown": 0.2, "repair_hours": 10.0}}
    result = _plan(_host(1), rates=rates, spares={"availability": 0.995})
    rows = _by_class(result)
    assert result["job"]["mttf_hours"] == pytest.approx(240.0)
    assert rows["host"]["blast"]["gpus_stopped"] == 2
    assert rows["host"]["spares"] == {"failures_in_repair": pytest.approx(0.2), "spares": 2}
    assert result["job"]["degraded_loss"] == pytest.approx(0.02 * 10 / 24 * 0.2)
    assert rows["host_link"]["blast"]["gpu_hours_lost_per_failure"] == pytest.approx(2 * 0.2 * 10)
    assert result["goodput"] == pytest.approx(result["checkpoint"]["ettr"] * (1 - 0.02 * 10 / 24 * 0.2))


def test_poisson_quantile_by_hand():
    """Poisson(2): P(≤5) = 0.9834, P(≤6) = 0.9955 → 6 at 99 %; mean 0 needs none."""
    assert poisson_quantile(2.0, 0.99) == 6
    assert poisson_quantile(0.0, 0.99) == 0


def test_a_per_model_rate_overrides_the_class_rate():
    """Two GPUs of model H100: a per-model AFR of 7.3 (0.02 a day) gives 0.04 a day."""
    doc = _host(1)
    for node in doc["nodes"]:
        if node["kind"] == "gpu":
            node["attrs"] = {"model": "H100"}
    result = _plan(doc, rates=ZERO, models={"H100": {"gpu": {"afr": 7.3}}})
    assert _by_class(result)["gpu"]["job_per_day"] == pytest.approx(0.04)


def test_a_job_on_part_of_the_design_counts_its_own_units():
    """8 DGX-H100 hosts, a job on the first 16 GPUs (hosts h0, h1): 16 GPUs, 2 hosts, 16 NICs."""
    rows = _by_class(_plan(build_cluster("dgx-h100", 8), job={"gpus": 16}))
    assert (rows["gpu"]["units"], rows["gpu"]["job_units"]) == (64, 16)
    assert (rows["host"]["job_units"], rows["nic"]["job_units"]) == (2, 16)
    assert rows["gpu"]["cluster_per_day"] == pytest.approx(4 * rows["gpu"]["job_per_day"])


@pytest.mark.parametrize("rates, where", [
    ({"nic": {"afr": -1}}, "rates.nic.afr: must be a finite number >= 0"),
    ({"gpu": {"afr": float("nan")}}, "rates.gpu.afr: must be a finite number >= 0"),
    ({"host": {"repair_hours": 0}}, "rates.host.repair_hours: must be a finite number > 0"),
    ({"gpu": {"slowdown": 2}}, "rates.gpu.slowdown: must be a finite number >= 0 and <= 1"),
    ({"gpus": {}}, "rates.gpus: unknown failure class"),
])
def test_bad_rates_are_located(rates, where):
    with pytest.raises(InvalidScenario) as err:
        _plan(_host(1), rates=rates)
    assert any(line.startswith(where) for line in err.value.lines()), err.value.lines()


def test_a_monte_carlo_too_large_and_bad_shapes_are_located():
    """AFR 3.65e6 on 2 GPUs: 20,000 failures a day × 200 runs × 54 days = 2.16e8 > 1e7."""
    from designer.engine.errors import LimitExceeded

    with pytest.raises(LimitExceeded) as err:
        plan_goodput({"topology": _host(1), "rates": {**ZERO, "gpu": {"afr": 3.65e6}},
                      "checkpoint": {"write_s": 1.0, "read_s": 1.0}})
    assert err.value.lines()[0].startswith("monte_carlo.runs: 216,000,000 failures to draw")
    with pytest.raises(InvalidScenario) as err:
        _plan(_host(1), models=5, checkpoint={"bytes": 0, "write_s": 1.0, "read_s": 1.0})
    assert set(err.value.lines()) == {"models: must be an object",
                                      "checkpoint.bytes: must be a finite number > 0 and <= 1e+18, got 0"}


def test_failures_much_faster_than_a_restart_give_zero_not_an_overflow():
    """AFR 3.65e5 on 2 GPUs: 2,000 interruptions a day, M = 43.2 s; a 600 s restart is ~14 M:
    e^(R/M) = e^13.9 is finite, but with R = 3e7 s it overflows; the ETTR is then 0."""
    result = _plan(_host(1), rates={**ZERO, "gpu": {"afr": 3.65e5}},
                   checkpoint={"write_s": 1.0, "read_s": 1.0, "restart_overhead_s": 3e7})
    assert result["checkpoint"]["ettr"] == 0.0 and result["goodput"] == 0.0
    assert ettr(10.0, 1.0, 600.0, 43.2) == pytest.approx(10.0 / (43.2 * math.exp(600 / 43.2) * math.expm1(11 / 43.2)))


def test_an_empty_design_and_a_missing_size_are_located():
    empty = {"format": "fabricscope.topology/1", "name": "e", "nodes": [{"id": "s", "kind": "switch"}], "links": []}
    with pytest.raises(InvalidTopology) as err:
        _plan(empty)
    assert err.value.lines() == ["topology.nodes: the design has no GPU"]
    with pytest.raises(InvalidScenario) as err:
        plan_goodput({"topology": _host(1), "checkpoint": {}, "monte_carlo": False})
    assert err.value.lines()[0].startswith("checkpoint.write_s: give it")
    with pytest.raises(InvalidScenario) as err:
        _plan(_host(1), job={"hosts": ["h9"]})
    assert err.value.lines() == ['job.hosts: unknown host group "h9"']
    with pytest.raises(InvalidScenario) as err:
        _plan(_host(1), job={"gpus": 3})
    assert err.value.lines() == ["job.gpus: 3 GPUs asked; the design has 2"]


def test_the_cli_writes_the_plan_and_locates_errors(tmp_path, capsys):
    from designer.engine.cli import main

    (tmp_path / "t.json").write_text(json.dumps(_host(1)))
    (tmp_path / "plan.json").write_text(json.dumps({"format": "fabricscope.goodput-plan/1", "topology": "t.json",
                                                    "checkpoint": {"write_s": 30, "read_s": 30},
                                                    "monte_carlo": {"runs": 2, "days_per_run": 10}}))
    assert main(["goodput", str(tmp_path / "plan.json")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["format"] == "fabricscope.goodput/1" and out["monte_carlo"]["simulated_days"] == 20
    assert main(["goodput", str(tmp_path / "plan.json"), "--against", str(tmp_path / "t.json"), "--table"]) == 0
    assert "design B" in capsys.readouterr().out
    (tmp_path / "bad.json").write_text('{"topology": "t.json", "rates": {"nic": {"afr": -1}}}')
    assert main(["goodput", str(tmp_path / "bad.json")]) == 1
    assert "error: rates.nic.afr: must be a finite number >= 0" in capsys.readouterr().err


def test_degradation_slowdowns_come_from_the_design():
    """8 DGX-H100, rail-optimized: each leaf has 8 host ports and 2 × 4 = 8 uplink ports to
    2 spines; exposed communication f = 0.1.

    A fabric cable down: the leaf keeps 7 of 8 uplinks → communication stretches g = 8/7,
    loss = f(g − 1) / (1 + f(g − 1)) = (0.1/7) / (1 + 0.1/7) = 0.0140845.
    A spine down: 1 of 2 left → g = 2, loss = 0.1 / 1.1 = 0.0909091. A NIC at half rate: g = 2, the same.
    """
    rows = _by_class(_plan(build_cluster("dgx-h100", 8)))
    assert rows["fabric_link"]["slowdown"] == pytest.approx((0.1 / 7) / (1 + 0.1 / 7))
    assert rows["spine"]["slowdown"] == pytest.approx(0.1 / 1.1)
    assert rows["nic_half_rate"]["slowdown"] == pytest.approx(0.1 / 1.1)
    assert (rows["fabric_link"]["job_units"], rows["leaf"]["job_units"], rows["spine"]["job_units"]) == (64, 8, 2)


# ================================================================ blast radius from the N-1 sweep
def _two_leaves(spines: int = 4, hosts_per_leaf: int = 2) -> dict:
    """Two leaves, ``spines`` spines, one 100G cable from each leaf to each spine; hosts of one
    GPU and one 400G NIC (behind a PCIe Gen5 x16 switch: 384 Gb/s effective), ``hosts_per_leaf``
    a leaf."""
    nodes = [{"id": f"leaf{k}", "kind": "switch", "attrs": {"role": "leaf"}} for k in range(2)]
    nodes += [{"id": f"spine{s}", "kind": "switch", "attrs": {"role": "spine"}} for s in range(spines)]
    links = [{"id": f"leaf{k}-spine{s}", "a": f"leaf{k}", "b": f"spine{s}", "tech": "eth100"}
             for k in range(2) for s in range(spines)]
    groups = []
    for h in range(2 * hosts_per_leaf):
        groups.append({"id": f"h{h}", "kind": "host"})
        nodes += [{"id": f"h{h}/gpu0", "kind": "gpu", "group": f"h{h}"},
                  {"id": f"h{h}/pcie0", "kind": "pcie_switch", "group": f"h{h}"},
                  {"id": f"h{h}/nic0", "kind": "nic", "group": f"h{h}"}]
        links += [{"id": f"h{h}/gpu0-pcie", "a": f"h{h}/gpu0", "b": f"h{h}/pcie0", "tech": "pcie5x16"},
                  {"id": f"h{h}/nic0-pcie", "a": f"h{h}/nic0", "b": f"h{h}/pcie0", "tech": "pcie5x16"},
                  {"id": f"h{h}/nic0-leaf", "a": f"h{h}/nic0", "b": f"leaf{h // hosts_per_leaf}", "tech": "eth400"}]
    return {"format": "fabricscope.topology/1", "name": "two-leaves", "groups": groups, "nodes": nodes,
            "links": links}


_SPLIT = {"bytes": 1e9, "algorithm": "ring", "routing": {"multipath": "split", "nic_policy": "affinity"}}


def test_a_nic_failure_under_affinity_breaks_the_all_reduce_and_interrupts():
    """4 DGX-H100 under NCCL's affinity: GPU k sends through NIC k only, so NIC 0 down leaves
    h0/gpu0's ring flows with no NIC: the all-reduce does not complete → the NIC class
    interrupts the job, measured (``blast.source: simulated``), whatever the rule table says."""
    rows = _by_class(_plan(build_cluster("dgx-h100", 4), traffic={
        "bytes": 1e9, "routing": {"nic_policy": "affinity"}}))
    nic = rows["nic"]
    assert nic["effect"] == "interrupt" and nic["blast"]["source"] == "simulated"
    assert nic["blast"]["failures"][0] == "h0/nic0 down" and nic["blast"]["broken"] == nic["blast"]["sampled"] == 2
    assert nic["blast"]["gpus_stopped"] == 32
    assert rows["software"]["blast"]["source"] == "rule"  # nothing in the fabric to fail


def test_a_leaf_spine_cable_down_of_four_slows_the_ring_by_the_hand_computed_factor():
    """Two leaves, 4 spines, 100G each; a ring all-reduce of 1 GB over 4 GPUs (1.5 GB a ring
    edge, 2(n−1)/n). Even split over the 4 uplinks: the two leaf-crossing edges get min(PCIe
    384, 4 × 100) = 384 Gb/s, 12 Gb / 384 = 31.25 ms; one cable down: 3 × 100 = 300 Gb/s, 40 ms.
    With the ring's latency L (baseline − 31.25 ms) g = (40 + L) / (31.25 + L) ≈ 1.28, and with
    f = 0.1 the throughput lost is f(g − 1) / (1 + f(g − 1)). A spine down is the same cable
    lost from each leaf: the same g."""
    result = _plan(_two_leaves(), traffic=_SPLIT)
    rows = _by_class(result)
    latency = result["traffic"]["baseline_completion_s"] - 12e9 / 384e9
    assert 0.0 < latency < 1e-3
    g = (12e9 / 300e9 + latency) / (12e9 / 384e9 + latency)
    for cls in ("fabric_link", "spine"):
        blast = rows[cls]["blast"]
        assert rows[cls]["effect"] == "degrade" and blast["source"] == "simulated" and blast["broken"] == 0
        assert blast["completion_ratio"] == pytest.approx(g, rel=1e-9)
        assert rows[cls]["slowdown"] == pytest.approx(0.1 * (g - 1) / (1 + 0.1 * (g - 1)), rel=1e-9)
    assert rows["fabric_link"]["blast"]["failures"] == ["leaf0-spine0 down", "leaf0-spine1 down"]
    assert rows["leaf"]["effect"] == "interrupt" and rows["leaf"]["blast"]["source"] == "simulated"


def test_without_traffic_the_blast_radius_is_the_rule_and_a_given_effect_wins():
    """No model size and no ``traffic``: the rule (``blast.source: rule``); a ``traffic`` with
    a size but the class's effect set in the plan: ``given``."""
    rows = _by_class(_plan(_two_leaves()))
    assert {r["blast"]["source"] for r in rows.values()} == {"rule"}
    assert rows["fabric_link"]["slowdown"] == pytest.approx((0.1 / 3) / (1 + 0.1 / 3))  # 4 uplinks: g = 4/3
    rows = _by_class(_plan(_two_leaves(), traffic=_SPLIT, rates={"spine": {"effect": "interrupt"}}))
    assert rows["spine"]["blast"]["source"] == "given" and rows["spine"]["effect"] == "interrupt"
    assert rows["fabric_link"]["blast"]["source"] == "simulated"


def test_the_reduced_scale_measures_what_the_full_design_gives():
    """8 DGX-H100 with 2 leaves a rail (4 hosts each): 4 hosts kept (2 of each leaf group); the
    cut document gives the same completion with and without a failure as the whole design
    with the same participants (no path between kept hosts crosses a dropped host)."""
    from designer.engine.analysis.goodput.blast import reduced_document, representative_hosts
    from designer.engine.document import load

    doc = load(build_cluster("dgx-h100", 8, leaves_per_rail=2))
    gpus = [n["id"] for n in doc["nodes"] if n["kind"] == "gpu"]
    hosts = representative_hosts(doc, gpus, 4)
    assert hosts == ["h0", "h1", "h4", "h5"]
    kept = [g for g in gpus if g.split("/")[0] in hosts]
    for failures in ([], [{"target": "spine0", "mode": "down"}]):
        times = []
        for topology in (doc, reduced_document(doc, hosts)):
            scenario = {"format": "fabricscope.scenario/1", "topology": topology, "failures": failures,
                        "workload": [{"id": "ar", "kind": "allreduce", "participants": {"ids": kept}, "bytes": 1e9}]}
            times.append(simulate(scenario)["summary"]["patterns"]["ar"]["completion_s"])
        assert times[0] == pytest.approx(times[1], rel=1e-12)


@pytest.mark.parametrize("traffic, where", [
    ({"pattern": "p2p", "bytes": 1.0}, "traffic.pattern"),
    ({"bytes": -1.0}, "traffic.bytes"),
    ({"max_hosts": 1, "bytes": 1.0}, "traffic.max_hosts"),
    ({"samples": 0, "bytes": 1.0}, "traffic.samples"),
    ({}, "traffic.bytes: give it"),
    ({"bytes": 1.0, "routing": {"nic_policy": "bogus"}}, "traffic.routing.nic_policy: unknown policy"),
    ({"bytes": 1.0, "algorithm": "bogus"}, "traffic.algorithm: unknown algorithm"),
])
def test_bad_traffic_is_located(traffic, where):
    with pytest.raises(InvalidScenario) as err:
        _plan(_host(1), traffic=traffic)
    assert any(line.startswith(where) for line in err.value.lines()), err.value.lines()


def test_the_cli_compares_two_designs_with_the_swept_blast_radius(tmp_path, capsys):
    """``--compare`` (= ``--against``): two-leaf designs with 4 and 2 spines under the same plan;
    the table's blast rows say where each class's effect comes from."""
    from designer.engine.cli import main

    (tmp_path / "a.json").write_text(json.dumps(_two_leaves(4)))
    (tmp_path / "b.json").write_text(json.dumps(_two_leaves(2)))
    plan = {"topology": "a.json", "checkpoint": {"write_s": 30, "read_s": 30}, "monte_carlo": False,
            "traffic": _SPLIT}
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    assert main(["goodput", str(tmp_path / "plan.json"), "--compare", str(tmp_path / "b.json")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["format"] == "fabricscope.goodput-compare/1"
    ratio = [_by_class(out[k])["fabric_link"]["blast"]["completion_ratio"] for k in "ab"]
    assert ratio[1] > ratio[0] > 1.0  # 1 of 2 uplinks lost hurts more than 1 of 4
    assert main(["goodput", str(tmp_path / "plan.json"), "--compare", str(tmp_path / "b.json"), "--table"]) == 0
    table = capsys.readouterr().out
    assert "interrupt (sim)" in table and "(rule)" in table
