"""Diagnosis from measured nccl-tests curves (designer/engine/analysis/diagnose.py).

Honest diagnosis: each "measured" run is the faulty design simulated by the same engine —
``simulate`` with the fault as a scenario failure, its pattern's ``fallback`` (what NCCL
re-initialized on the faulty machine runs) — times seeded uniform noise of ±3 %, diagnosed against
the *healthy* design. The injected fault must come first; with runs over subsets (node pairs, a
rail, GPU groups) its member too. Where two faults give the same curve on every run (a NIC at a
quarter of its rate and its PCIe link at a quarter) the diagnosis says so (``equally``) and the
injected part must be among the first explanation's ``members``.

Designs (small, so a diagnosis takes a second or two)::

    GH200 ×3, rail-optimized:   [gpu0]-c2c-[cpu0]-pcie-[nic0]==400G==[leaf0]   (per host: 2 of these,
                                [gpu1]-c2c-[cpu1]-pcie-[nic1]==400G==[leaf1]    gpu0==nvlink==gpu1)
    GH200 ×4, leaf-spine, 2 hosts per ToR, 2:1: [h0,h1]--tor0=={spine0,spine1}==tor1--[h2,h3]
    DGX H100 ×1: 8 GPUs on 4 NVSwitches (NVLink faults; runs over GPU subsets)
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from designer.engine.analysis.diagnose import diagnose, diagnosis_plan, runs_from_logs
from designer.engine.analysis.diagnose_search import fit_error_pct
from designer.engine.analysis.nccl_tests import compile_topology
from designer.engine.analysis.simulate import simulate
from designer.engine.errors import InvalidScenario
from designer.engine.io.nccl_tests_log import parse_log
from designer.engine.routing import route
from designer.engine.traffic.collectives import fallback_fields
from designer.engine.traffic.collectives.staging import stage_through_memory
from designer.engine.traffic.flows import Flows
from designer.engine.traffic.scenario import normalize_scenario

SIZES = [1 << k for k in range(16, 33, 2)]      # 64 KiB … 4 GiB
NOISE = 0.03


@pytest.fixture(scope="module")
def rail():
    return compile_topology({"build": {"template": "gh200", "hosts": 3}})


@pytest.fixture(scope="module")
def spine():
    return compile_topology({"build": {"template": "gh200", "hosts": 4, "fabric": "leaf-spine",
                                       "hosts_per_rack": 2, "oversubscription": 2}})


@pytest.fixture(scope="module")
def dgx():
    return compile_topology({"build": {"template": "dgx-h100", "hosts": 1}})


def _busbw(topo, ranks, size, failures, gdr_off):
    scenario = {"topology": topo, "options": {"max_flows_listed": 0}, "failures": list(failures),
                "workload": [{"id": "nccl", "kind": "allreduce", "participants": {"ids": ranks}, "bytes": size}]}
    if gdr_off:   # a routing setting, not a scenario failure: ask the planner as NCCL re-initialized
        sc = normalize_scenario(scenario)
        return fallback_fields(topo, sc.patterns[0], {**sc.routing, "gdr_off": list(gdr_off)}, None, None)["busbw_gbs"]
    pattern = simulate(scenario)["summary"]["patterns"]["nccl"]
    return (pattern.get("fallback") or pattern)["busbw_gbs"]


def measured(topo, label, *, failures=(), gdr_off=(), hosts=None, gpus=None, seed=0, noise=NOISE):
    """One "measured" run: the faulty design's busbw × (1 ± noise), seeded."""
    rng = np.random.default_rng(seed)
    ranks = gpus or [topo.node_ids[i] for i in topo.nodes_of_kind("gpu") if hosts is None or topo.node_host[i] in hosts]
    rows = [{"bytes": s, "busbw_gbps": _busbw(topo, ranks, s, failures, gdr_off) * (1 + rng.uniform(-noise, noise)),
             "time_us": None} for s in SIZES]
    return {"label": label, "hosts": hosts, "gpus": gpus, "rows": rows}


def host_runs(topo, rail_gpus=None, **fault):
    """The whole design, every neighbouring host pair and, optionally, one rail's GPUs."""
    hosts = topo.hosts()
    runs = [measured(topo, "all", seed=1, **fault)]
    runs += [measured(topo, f"{a}+{b}", hosts=[a, b], seed=2 + k, **fault)
             for k, (a, b) in enumerate(zip(hosts, hosts[1:]))]
    if rail_gpus:
        runs.append(measured(topo, "rail", gpus=rail_gpus, seed=9, **fault))
    return runs


def _kinds(entry):
    return {entry["kind"]} | {e["kind"] for e in entry["equally"]}


# ============================================================================ healthy
def test_healthy_runs_flag_nothing(rail):
    out = diagnose(rail, host_runs(rail))
    assert out["healthy"] is True
    assert out["explanations"] == []
    assert all(r["healthy"] and r["outside"] == [] for r in out["runs"])
    assert out["summary"].startswith("Healthy")
    # the band is the healthy prediction ± the fidelity tolerance (10 %)
    band = out["expected"][0]
    assert band["low_gbps"] == pytest.approx(band["busbw_gbps"] * 0.9)
    assert band["high_gbps"] == pytest.approx(band["busbw_gbps"] * 1.1)


def test_fit_error_is_rms_of_log_ratio():
    # ln(2) on one size of two, 0 on the other: rms = ln2/√2 → e^0.4901 − 1 = 63.25 %
    assert fit_error_pct(np.array([2.0, 1.0]), np.array([1.0, 1.0])) == pytest.approx(100 * (2 ** (1 / 2 ** 0.5) - 1))
    assert fit_error_pct(np.array([1.0]), np.array([np.nan])) == float("inf")


# ============================================================================ one fault each
def test_nic_degraded_localized_to_host_and_rail(rail):
    runs = host_runs(rail, rail_gpus=["h0/gpu1", "h1/gpu1", "h2/gpu1"],
                     failures=[{"target": "h1/nic1", "mode": "degrade", "factor": 0.5}])
    out = diagnose(rail, runs)
    best = out["explanations"][0]
    assert (best["kind"], best["target"]) == ("nic_degraded", "h1/nic1")
    assert best["failures"] == [{"target": "h1/nic1", "mode": "degrade", "factor": 0.5}]
    assert best["fit_error_pct"] < 2 * NOISE * 100
    assert best["fit_error_pct"] < out["healthy_fit_error_pct"]
    assert "h0+h1" in best["runs"] and "h1+h2" in best["runs"]


def test_nic_down_localized_to_its_host(rail):
    # No rail run here: with h2/nic1 down, NCCL re-initialized has no live rail 1 for a run of
    # one GPU per host (it would not run at all). The host pairs still find the host.
    best = diagnose(rail, host_runs(rail, failures=[{"target": "h2/nic1", "mode": "down"}]))["explanations"][0]
    assert best["kind"] == "nic_down" and best["target"].startswith("h2/") and "h2/nic1" in best["members"]
    # its cable down is the same fault as far as any run can tell
    assert "fabric_link_down" in _kinds(best) and "h2/nic1-leaf1" in best["members"]


def test_pcie_degraded_is_first_with_what_fits_equally(rail):
    runs = host_runs(rail, rail_gpus=["h0/gpu1", "h1/gpu1", "h2/gpu1"],
                     failures=[{"target": "h0/nic1-cpu1", "mode": "degrade", "factor": 0.25}])
    best = diagnose(rail, runs)["explanations"][0]
    assert "h0/nic1-cpu1" in best["members"] and "pcie_degraded" in _kinds(best)
    assert best["target"] in ("h0/nic1", "h0/nic1-cpu1")


def test_fabric_link_down_between_racks(spine):
    runs = host_runs(spine, failures=[{"target": "tor1-spine0", "mode": "down"}])
    out = diagnose(spine, runs)
    assert not out["healthy"]
    best = out["explanations"][0]
    assert best["kind"] == "fabric_link_down" and "tor1-spine0" in best["members"]
    # runs inside one rack never cross a spine: they stay healthy, and explained
    assert [r["healthy"] for r in out["runs"]] == [False, True, False, True]


def test_fabric_link_degraded_between_racks(spine):
    runs = host_runs(spine, failures=[{"target": "tor0-spine1", "mode": "degrade", "factor": 0.25}])
    best = diagnose(spine, runs)["explanations"][0]
    assert best["kind"] == "fabric_link_degraded" and "tor0-spine1" in best["members"]
    assert best["failures"][0]["factor"] == 0.25


def _gpu_runs(topo, **fault):
    g = [f"h0/gpu{k}" for k in range(8)]
    return [measured(topo, "all", seed=1, **fault), measured(topo, "0-3", gpus=g[:4], seed=2, **fault),
            measured(topo, "0,1,4,5", gpus=[g[0], g[1], g[4], g[5]], seed=3, **fault),
            measured(topo, "even", gpus=g[0::2], seed=4, **fault)]


def test_nvlink_degraded_localized_by_gpu_subsets(dgx):
    target = {"kind": "link", "node": "h0/gpu5", "tier": "nvlink"}
    out = diagnose(dgx, _gpu_runs(dgx, failures=[{"target": target, "mode": "degrade", "factor": 0.5}]))
    best = out["explanations"][0]
    assert (best["kind"], best["target"]) == ("nvlink_degraded", "h0/gpu5")
    assert best["failures"] == [{"target": target, "mode": "degrade", "factor": 0.5}]


def test_gpu_nvlink_down_localized(dgx):
    target = {"kind": "link", "node": "h0/gpu2", "tier": "nvlink"}
    best = diagnose(dgx, _gpu_runs(dgx, failures=[{"target": target, "mode": "down"}]))["explanations"][0]
    assert (best["kind"], best["target"]) == ("gpu_nvlink_down", "h0/gpu2")


@pytest.mark.slow
def test_gdr_off_is_first():
    topo = compile_topology({"build": {"template": "dgx-h100", "hosts": 3}})
    out = diagnose(topo, host_runs(topo, gdr_off=["h1"]))
    best = out["explanations"][0]
    assert "gdr_off" in _kinds(best) and "h1" in best["members"]
    gdr = best if best["kind"] == "gdr_off" else next(e for e in best["equally"] if e["kind"] == "gdr_off")
    assert gdr["target"] == "h1"


# ============================================================================ two at once
def test_two_faults_both_in_top_five():
    topo = compile_topology({"build": {"template": "gh200", "hosts": 4}})
    runs = host_runs(topo, failures=[{"target": "h0/nic0", "mode": "degrade", "factor": 0.5},
                                     {"target": "h3/nic1-cpu1", "mode": "degrade", "factor": 0.25}])
    top5 = diagnose(topo, runs)["explanations"][:5]
    members = {m for e in top5 for m in e["members"]}
    assert {"h0/nic0", "h3/nic1-cpu1"} <= members
    assert "+" in top5[0]["kind"]        # the pair explains more than either fault alone


# ============================================================================ mechanisms
def test_staging_legs_through_host_memory_and_own_nic(dgx):
    """h0/gpu0 → h1/gpu0 with GDR off on h0 (DGX H100: gpu0 and nic0 under pcie0, rc0, cpu0):
    legs gpu0 → mem0, mem0 → nic0, nic0 → h1/gpu0, each the flow's bytes; with h1 off too the
    receiving side adds h1/nic0 → h1/mem0 → h1/gpu0. A same-host flow is kept."""
    topo = compile_topology({"build": {"template": "dgx-h100", "hosts": 2}})
    ix = topo.node_index
    src, dst, size = stage_through_memory(topo, [ix["h0/gpu0"], ix["h0/gpu0"]], [ix["h1/gpu0"], ix["h0/gpu1"]],
                                          8.0, ["h0"])
    legs = [(topo.node_ids[a], topo.node_ids[b]) for a, b in zip(src, dst)]
    assert legs == [("h0/gpu0", "h0/mem0"), ("h0/mem0", "h0/nic0"), ("h0/nic0", "h1/gpu0"), ("h0/gpu0", "h0/gpu1")]
    assert size.tolist() == [8.0] * 4
    src, dst, _ = stage_through_memory(topo, [ix["h0/gpu0"]], [ix["h1/gpu0"]], 8.0, ["h0", "h1"])
    assert [(topo.node_ids[a], topo.node_ids[b]) for a, b in zip(src, dst)] == [
        ("h0/gpu0", "h0/mem0"), ("h0/mem0", "h0/nic0"), ("h0/nic0", "h1/nic0"), ("h1/nic0", "h1/mem0"),
        ("h1/mem0", "h1/gpu0")]
    routes = route(topo, Flows.from_pairs([ix["h0/gpu0"]], [ix["h0/mem0"]], 8.0))
    assert [topo.node_ids[n] for n in routes.path_nodes(0)] == ["h0/gpu0", "h0/pcie0", "h0/rc0", "h0/cpu0", "h0/mem0"]


def test_gdr_off_slows_the_planned_collective(rail):
    topo = compile_topology({"build": {"template": "dgx-h100", "hosts": 2}})
    sc = normalize_scenario({"topology": topo, "workload": [{"id": "x", "kind": "allreduce",
                                                             "participants": {"kind": "gpu"}, "bytes": 1 << 30}]})
    on = fallback_fields(topo, sc.patterns[0], sc.routing, None, None)["busbw_gbs"]
    off = fallback_fields(topo, sc.patterns[0], {**sc.routing, "gdr_off": ["h1"]}, None, None)["busbw_gbs"]
    assert off < 0.9 * on


def test_plan_counts_and_estimate(rail):
    plan = diagnosis_plan(rail, host_runs(rail, noise=0.0)[:1])
    assert plan["runs"] == 1 and plan["sizes"] == len(SIZES)
    assert plan["candidates"] > plan["classes"] > 0 and plan["estimate_s"] > 0


# ============================================================================ bad input
def _run(rows=None, **extra):
    rows = rows if rows is not None else [{"bytes": 1024, "busbw_gbps": 1.0}, {"bytes": 4096, "busbw_gbps": 2.0}]
    return {"label": "r", "hosts": None, "gpus": None, "rows": rows, **extra}


@pytest.mark.parametrize("runs, where", [
    ([], "runs"),
    ([_run([])], "runs[0].rows"),
    ([_run([{"bytes": 4096, "busbw_gbps": 1.0}, {"bytes": 1024, "busbw_gbps": 2.0}])], "runs[0].rows[1].bytes"),
    ([_run([{"bytes": 1024, "busbw_gbps": -1.0}])], "runs[0].rows[0].busbw_gbps"),
    ([_run(hosts=["h0", "h9"])], "runs[0].hosts[1]"),
    ([_run(gpus=["h0/gpu0", "h0/gpu7"])], "runs[0].gpus[1]"),
    ([_run(op="all_gather")], "runs[0].op"),
    ([_run(ranks=4)], "runs[0].ranks"),
])
def test_bad_runs_are_located(rail, runs, where):
    with pytest.raises(InvalidScenario) as info:
        diagnose(rail, runs)
    assert where in [p.path for p in info.value.problems]
    with pytest.raises(InvalidScenario):
        diagnosis_plan(rail, runs)


@pytest.mark.parametrize("kwargs, where", [
    ({"op": "sendrecv"}, "op"),
    ({"options": {"protocol": "LL64"}}, "options.protocol"),
    ({"options": {"nic_policy": "nearest"}}, "options.nic_policy"),
    ({"options": {"colour": 1}}, "options"),
    ({"top": 0}, "top"),
])
def test_bad_options_are_located(rail, kwargs, where):
    with pytest.raises(InvalidScenario) as info:
        diagnose(rail, [_run()], **kwargs)
    assert where in [p.path for p in info.value.problems]


def test_runs_from_logs_keeps_op_ranks_and_out_of_place():
    log = """# nThread 1 nGpus 1 minBytes 1024 maxBytes 4096 step: 4(factor) warmup iters: 5 iters: 20
#  Rank  0 Group  0 Pid  1 on a device  0 [0x18] NVIDIA H100
#  Rank  1 Group  0 Pid  2 on b device  0 [0x18] NVIDIA H100
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
        1024           256     float     sum      -1    20.00    0.05    0.05      0    21.00    0.05    0.05      0
        4096          1024     float     sum      -1    22.00    0.19    0.19      0    23.00    0.18    0.18      0
"""
    (run,) = runs_from_logs([("r.log", parse_log(log, op="all_reduce"))])
    assert run["label"] == "r.log" and run["ranks"] == 2
    assert run["rows"] == [{"bytes": 1024, "busbw_gbps": 0.05, "time_us": 20.0},
                           {"bytes": 4096, "busbw_gbps": 0.19, "time_us": 22.0}]


# ============================================================================ CLI
def _log_text(run: dict, ranks: int) -> str:
    """A run as nccl-tests prints it (13 columns; busbw two decimals, time from busbw)."""
    lines = ["# nThread 1 nGpus 1 minBytes 65536 maxBytes 4294967296 step: 4(factor) warmup iters: 5 iters: 20"]
    lines += [f"#  Rank {k:2d} Group  0 Pid {k} on node device  0 [0x18] GH200" for k in range(ranks)]
    lines.append("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   "
                 "algbw   busbw #wrong")
    for row in run["rows"]:
        busbw = row["busbw_gbps"]
        algbw = busbw / (2 * (ranks - 1) / ranks)
        time_us = row["bytes"] / (algbw * 1e3)
        figures = f"{time_us:8.2f} {algbw:7.2f} {busbw:7.2f}      0"
        lines.append(f"{row['bytes']:>12} {row['bytes'] // 4:>13}     float     sum      -1 {figures} {figures}")
    return "\n".join(lines) + "\n"


def test_cli_diagnose_names_the_host(tmp_path, rail, capsys):
    from designer.engine.cli import main

    fault = {"failures": [{"target": "h2/nic0", "mode": "degrade", "factor": 0.25}]}
    paths = []
    for run in host_runs(rail, **fault):
        path = tmp_path / f"{run['label']}.log"
        path.write_text(_log_text(run, 2 * len(run["hosts"] or rail.hosts())))
        paths.append((str(path), run["hosts"]))
    argv = ["diagnose", "--template", "gh200", "--hosts", "3", *[p for p, _ in paths]]
    for path, hosts in paths:
        if hosts:
            argv += ["--hosts-of", f"{path}={','.join(hosts)}"]
    assert main(argv + ["--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    best = out["explanations"][0]
    assert "h2/nic0" in best["members"] and best["target"].startswith("h2/")
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "# explanations" in text and " 1. " in text
