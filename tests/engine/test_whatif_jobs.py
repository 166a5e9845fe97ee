"""What-ifs, sweeps and NIC-policy comparisons on a job rank by **step-time** impact.

16 DGX-H100 (128 GPUs), rail-optimized (GPU k -- NIC k -- leaf k of every host), layout
tp 8 × pp 2 × dp 8 (Megatron order tp-cp-ep-dp-pp: stage 0 = hosts h0..h7, stage 1 = h8..h15;
a DP group is GPU k of the 8 hosts of one stage, so each DP ring runs on one rail)::

    fwd (1 ms) ──┬── dp0: ring all-reduce of 1 GB over each stage-0 DP group ────────────┬── opt (1 ms)
                 └── bwd (100 ms compute) ── dp1: ring all-reduce of 0.25 GB, stage 1 ───┘

A ring over 8 hosts on one rail is bounded by the NIC links (every hop GPU → NIC → leaf → NIC →
GPU carries the same bytes), so its time is L + D with D ∝ bytes (D0 ≈ 2·7/8·1 GB / 50 GB/s ≈
35 ms). The step is 1 ms + 100 ms + L1 + D1 + 1 ms: dp1 is on the critical path, dp0 overlaps
the 100 ms of compute.

- A stage-1 NIC at half rate halves its ring's rate: dp1 = L1 + 2·D1, the step grows by D1.
- A stage-0 NIC at half rate makes dp0 = L0 + 2·D0 ≈ 70 ms < 100 ms: its pattern is *more*
  slowed (×(L0 + 2·D0)/(L0 + D0), closer to 2 than dp1's, whose latency weighs more) but the
  **step does not change** — a pattern-slowdown ranking puts stage-0 NICs first, the step-time
  ranking must put stage-1 NICs first.
- A NIC down disconnects its GPU's ring hops (NIC affinity: no other way out): the step never
  completes and ranks first.
"""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from designer.engine.model.fabrics import build_cluster
from designer.engine.analysis.simulate import simulate
from designer.engine.model.topology import Topology
from designer.engine.analysis.whatif import compare_policies, merge_sweeps, ranking_key, sweep

ROOT = Path(__file__).resolve().parents[2]
C_S, BWD_S = 1e-3, 0.1


def _phases():
    def ring(pid, size, stage):
        return {"id": pid, "kind": "allreduce", "bytes": size, "algorithm": "ring", "protocol": "Simple",
                "groups": {"layout": "dp", "stage": stage}}
    return [{"id": "fwd", "compute_s": C_S},
            {"id": "dp0", "after": ["fwd"], "patterns": [ring("g0", 1e9, 0)]},
            {"id": "bwd", "after": ["fwd"], "compute_s": BWD_S},
            {"id": "dp1", "after": ["bwd"], "patterns": [ring("g1", 2.5e8, 1)]},
            {"id": "opt", "after": ["dp0", "dp1"], "compute_s": C_S}]


@pytest.fixture(scope="module")
def topo():
    return Topology.from_document(build_cluster("dgx-h100", 16))


@pytest.fixture(scope="module")
def scenario(topo):
    return {"topology": topo, "workload": {"job": {"layout": {"tp": 8, "pp": 2, "dp": 8}, "phases": _phases()}}}


@pytest.fixture(scope="module")
def baseline(scenario):
    r = simulate(scenario)
    pats = r["summary"]["patterns"]
    out = {"step": r["summary"]["job"]["step_time_s"]}
    for k in (0, 1):
        latency = pats[f"g{k}"]["latency_s"]
        out[f"L{k}"], out[f"D{k}"] = latency, pats[f"g{k}"]["completion_s"] - latency
    return out


@pytest.fixture(scope="module")
def half(scenario):
    """Every NIC at half rate, plus one NIC down (given by name, evaluated after the class)."""
    return sweep(scenario, over="nic", degrade=0.5, failures=[{"target": "h12/nic3", "mode": "down"}])


def _stage(label: str) -> int:
    return 0 if int(label.split("/")[0][1:]) < 8 else 1


def test_baseline_step_is_compute_plus_the_critical_dp_ring(baseline, half):
    b = baseline
    assert b["step"] == pytest.approx(2 * C_S + BWD_S + b["L1"] + b["D1"], rel=1e-9)
    assert b["D1"] == pytest.approx(b["D0"] / 4, rel=1e-9)             # same rings, a quarter of the bytes
    assert b["L0"] + 2 * b["D0"] < BWD_S                               # dp0 stays hidden even at half rate
    assert half["baseline"]["job"]["step_time_s"] == pytest.approx(b["step"], rel=1e-12)
    assert half["baseline"]["job"]["critical_path"] == ["fwd", "bwd", "dp1", "opt"]


def test_nic_sweep_ranks_by_step_time_not_by_pattern_slowdown(baseline, half):
    b, ranking = baseline, half["ranking"]
    # 8 rail NICs × 16 hosts at half rate (the 2 unwired NICs per host are not ranked) + 1 down.
    assert half["evaluated"] == 129 and len(half["skipped"]["unwired"]) == 32
    first = ranking[0]
    assert first["label"] == "h12/nic3 down" and first["impact"]["job"]["complete"]["after"] is False
    assert first["impact"]["job"]["step_time_s"]["after"] is None and "dp1" in first["impact"]["job"]["reason"]
    stage1, stage0 = ranking[1:65], ranking[65:]
    assert {_stage(e["label"]) for e in stage1} == {1} and {_stage(e["label"]) for e in stage0} == {0}
    slowed = b["step"] + b["D1"]                                       # stage-1 NIC: dp1 = L1 + 2·D1
    for e in stage1:
        job = e["impact"]["job"]
        assert job["step_time_s"]["after"] == pytest.approx(slowed, rel=1e-6)
        assert job["step_time_increase_s"] == pytest.approx(b["D1"], rel=1e-6)
        assert e["impact"]["slowdown"] == pytest.approx((b["L1"] + 2 * b["D1"]) / (b["L1"] + b["D1"]), rel=1e-6)
    for e in stage0:
        assert e["impact"]["job"]["slowdown"] == pytest.approx(1.0, rel=1e-9)    # the step does not move...
        ring = (b["L0"] + 2 * b["D0"]) / (b["L0"] + b["D0"])
        assert e["impact"]["slowdown"] == pytest.approx(ring, rel=1e-6)          # ...though its ring slows more
    assert stage0[0]["impact"]["slowdown"] > stage1[0]["impact"]["slowdown"]
    assert [ranking_key(e) for e in ranking] == sorted(ranking_key(e) for e in ranking)


def test_chunked_job_sweep_merges_to_the_same_ranking(scenario, half):
    parts = [sweep(scenario, over="nic", degrade=0.5, failures=[{"target": "h12/nic3", "mode": "down"}],
                   chunk=(i, 3)) for i in range(3)]
    merged = merge_sweeps(parts)
    assert [e["label"] for e in merged["ranking"]] == [e["label"] for e in half["ranking"]]


def test_policy_comparison_picks_the_shortest_step(scenario):
    """With h2/nic0 down, affinity cannot reach GPU 0 of h2 (the step hangs); the comparison's
    best policy is one whose step completes, and the headline speaks of step times."""
    sc = {**scenario, "failures": [{"target": "h2/nic0", "mode": "down"}]}
    doc = compare_policies(sc, policies="affinity,any")
    aff, any_ = doc["policies"]["affinity"], doc["policies"]["any"]
    assert aff["baseline"]["job"]["complete"] and aff["with_failures"]["job"]["complete"] is False
    assert aff["impact"]["job"]["broken"] is True
    assert any_["with_failures"]["job"]["complete"] is True
    assert doc["best"]["with_failures"] == "any"
    assert "any: step " in doc["headline"] and "affinity: does not complete" in doc["headline"]
    # Without failures both complete: the best baseline is the shorter step.
    steps = {p: v["baseline"]["job"]["step_time_s"] for p, v in doc["policies"].items()}
    assert doc["best"]["baseline"] == min(steps, key=steps.get)


def test_cli_sweep_of_a_job_ranks_by_step_time(tmp_path):
    """The same job on 2 hosts (tp 8 × dp 2, one DP ring per rail) through ``sweep`` on the
    command line: every rail NIC down hangs the step; its JSON carries ``impact.job``."""
    doc = {"format": "fabricscope.scenario/1",
           "topology": {"build": {"template": "dgx-h100", "hosts": 2, "fabric": "rail-optimized"}},
           "workload": {"job": {"layout": {"tp": 8, "dp": 2}, "phases": [
               {"id": "fwd", "compute_s": C_S},
               {"id": "dp", "after": ["fwd"], "patterns": [{"id": "g", "kind": "allreduce", "bytes": 1e8,
                                                            "groups": {"layout": "dp"}}]}]}}}
    path = tmp_path / "job.json"
    path.write_text(json.dumps(doc))
    r = subprocess.run([sys.executable, "-m", "designer.engine", "sweep", str(path), "--over", "nic",
                        "--degrade", "0.5", "--quiet"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["baseline"]["job"]["complete"] is True
    slow = [e["impact"]["job"]["slowdown"] for e in out["ranking"]]
    assert len(slow) == 16 and all(s > 1.2 for s in slow) and slow == sorted(slow, reverse=True)
