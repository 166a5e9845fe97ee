"""Results tell the truth: a pattern with a lost flow does not complete, sweeps rank
broken jobs first, and the critical bottleneck is the resource that sets the job time.

Clusters are DGX-H100 hosts on a rail-optimized fabric, with an optional storage leaf::

    [hX/gpuI]--[hX/pcieI]--[hX/nicI]==[leafI]==[spine0|spine1]
                                                 ||
                                     [storage0]==[storage leaf]
"""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from designer.engine.analysis.simulate import prepare, simulate
from designer.engine.analysis.whatif import ranking_key, sweep, sweep_candidates

AR = {"id": "ar", "kind": "allreduce", "algorithm": "ring", "participants": {"kind": "gpu"}, "bytes": 1e9}


def scenario(hosts=2, policy="affinity", workload=(AR,), failures=(), storage=0, mode="steady", seed=0):
    build = {"template": "dgx-h100", "hosts": hosts, "fabric": "rail-optimized"}
    if storage:
        build["storage"] = storage
    return {"format": "fabricscope.scenario/1", "topology": {"build": build}, "workload": list(workload),
            "routing": {"nic_policy": policy, "seed": seed}, "failures": list(failures), "mode": mode}


# ------------------------------------------------------------------------------------ done-when
def test_every_compute_nic_failure_of_a_two_host_ring_ranks_first_as_not_completing():
    """2 × DGX-H100, ring all-reduce, affinity: each compute NIC carries two ring flows; losing
    it hangs the ring: broken, with no finite slowdown. Among broken failures, those NCCL cannot
    fall back from rank first: a PCIe switch down cuts its GPU from every NIC and is not re-planned
    (only NIC failures are), so the 16 PCIe switches lead, then the 16 NICs, whose fallback (the
    ring on the 7 rails left) runs."""
    out = sweep(scenario(), over="nic,pcie_switch")
    pcie, nics = out["ranking"][:16], out["ranking"][16:32]
    assert sorted(e["failure"]["target"] for e in pcie) == sorted(f"h{h}/pcie{i}" for h in (0, 1) for i in range(8))
    assert sorted(e["failure"]["target"] for e in nics) == sorted(f"h{h}/nic{i}" for h in (0, 1) for i in range(8))
    assert all("fallback" not in e["impact"] and e["impact"]["broken"] == ["ar"] for e in pcie)
    for e in nics:
        imp = e["impact"]
        assert imp["broken"] == ["ar"] and imp["broken_patterns"] == 1 and imp["complete"] is False
        assert imp["slowdown"] is None and imp["completion_increase_s"] is None and imp["completion_unbounded"]
        assert imp["job_completion_s"]["after"] is None and imp["job_completion_s"]["before"] > 0
        assert not imp["fallback"]["unbounded"] and imp["fallback"]["slowdown"] > 1


def test_simulate_with_a_compute_nic_down_reports_the_allreduce_as_not_complete():
    r = simulate(scenario(failures=[{"target": "h0/nic1", "mode": "down"}]))
    ar = r["summary"]["patterns"]["ar"]
    assert ar["complete"] is False and ar["completion_s"] is None and ar["throughput_gbps"] is None
    assert ar["unroutable"] == 2 and "h0/gpu1's only NIC under policy affinity is down" in ar["reason"]
    assert ar["surviving_completion_s"] > 0
    assert r["summary"]["complete"] is False and r["summary"]["job_completion_s"] is None
    assert r["summary"]["headline"] == "does not complete — 2 flows of ar lost when h0/nic1 is down"
    assert r["diff"]["impact"]["broken"] == ["ar"] and r["diff"]["impact"]["slowdown"] is None


def test_a_fabric_link_that_sets_the_job_time_is_the_critical_bottleneck():
    """A storage read over the storage leaf's uplinks is the slowest pattern: the critical
    bottleneck is a fabric link on its slowest flow, though NVLink links also run at 100 %."""
    work = [AR, {"id": "load", "kind": "storage_read", "source": {"kind": "storage"},
                 "participants": {"kind": "gpu"}, "bytes": 2e10, "via": "gpudirect"}]
    r = simulate(scenario(workload=work, storage=1))
    s = r["summary"]
    assert s["slowest_pattern"] == "load" and s["complete"]
    crit = s["critical_bottleneck"]
    assert crit["pattern"] == "load" and crit["tier"] not in ("nvlink", "pcie")
    slowest = next(f for f in r["flows"] if f["id"] == s["patterns"]["load"]["slowest_flow"])
    assert crit["id"] == slowest["bottleneck"] and crit["id"] == s["patterns"]["load"]["bottleneck"]
    assert s["bottlenecks"][0] == crit["id"] or crit["id"] in s["bottlenecks"]
    assert f"limited by {crit['id']}" in s["headline"]
    nvlink_saturated = [x["id"] for x in r["resources"] if x["tier"] == "nvlink" and x["utilization"] >= 1 - 1e-6]
    assert nvlink_saturated and not set(nvlink_saturated) & {crit["id"]}


def test_relief_is_the_completion_time_gained_by_doubling_one_resource():
    """One p2p over one path: doubling its bottleneck halves its time (until the next limit)."""
    work = [{"id": "p", "kind": "p2p", "src": "h0/gpu0", "dst": "h1/gpu0", "bytes": 1e9}]
    r = simulate(scenario(workload=work))
    s = r["summary"]
    crit = s["critical_bottleneck"]
    top = s["bottleneck_relief"][0]
    assert top["id"] == crit["id"] and top["limits"] == ["p"]
    t = s["job_completion_s"]
    # After doubling, the next resource on the path (≥ the old rate) limits: the gain is at most half.
    assert 0 <= top["gain_s"] <= t / 2 + 1e-12 and top["gain_fraction"] == pytest.approx(top["gain_s"] / t)


def test_timeline_delivered_bytes_are_the_integral_of_rates():
    work = [AR, {"id": "p", "kind": "p2p", "src": "h0/gpu0", "dst": "h1/gpu3", "bytes": 5e8}]
    r = simulate(scenario(workload=work, mode="timeline"))
    tl = r["summary"]["timeline"]
    t = np.array(tl["t_s"])
    for pid, series in tl["patterns"].items():
        d, rate = np.array(series["delivered_bytes"]), np.array(series["rate_gbps"])
        assert d[0] == 0 and np.all(np.diff(d) >= -1e-6)
        assert d[-1] == pytest.approx(r["summary"]["patterns"][pid]["bytes"], rel=1e-9)
        # Between two events the pattern runs at a constant rate: the curve is piecewise linear.
        assert np.allclose(np.diff(d), rate[:-1] * np.diff(t) * 1e9 / 8, rtol=1e-9, atol=1e-3)
        # The ring delivers bytes before its first flow finishes (not flat until then).
    first_done = min(f["completion_s"] for f in r["flows"] if f["pattern"] == "ar")
    ar = np.array(tl["patterns"]["ar"]["delivered_bytes"])
    assert t[1] <= first_done + 1e-12 and ar[1] > 0


def test_sweeps_skip_already_failed_and_unwired_candidates():
    out = sweep(scenario(failures=[{"target": "h0/nic0", "mode": "down"}]), over="nic")
    assert out["skipped"]["already_failed"] == ["h0/nic0 down"]
    assert {u["target"] for u in out["skipped"]["unwired"]} == {"h0/nic8", "h0/nic9", "h1/nic8", "h1/nic9"}
    assert all(u["reason"] == "no uplink out of its host" for u in out["skipped"]["unwired"])
    assert out["candidates"] == 15 and "h0/nic0" not in {e["failure"]["target"] for e in out["ranking"]}


# ------------------------------------------------------------------------------------ properties
def _scenarios():
    return st.fixed_dictionaries({
        "hosts": st.integers(2, 3), "policy": st.sampled_from(["affinity", "pxn", "any"]),
        "seed": st.integers(0, 3),
        "extra": st.sampled_from([None, "p2p", "a2a"]),
        "classes": st.lists(st.sampled_from(["nic", "pcie_switch", "nvswitch", "leaf-spine", "nic-leaf", "host"]),
                            min_size=1, max_size=2, unique=True),
        "pick": st.lists(st.integers(0, 10_000), min_size=1, max_size=3)})


def _build(p):
    work = [AR]
    if p["extra"] == "p2p":
        work.append({"id": "p", "kind": "p2p", "src": "h0/gpu2", "dst": f"h{p['hosts'] - 1}/gpu5", "bytes": 3e9})
    elif p["extra"] == "a2a":
        work.append({"id": "a2a", "kind": "alltoall", "participants": {"kind": "gpu", "every": 3}, "bytes": 1e8})
    return scenario(p["hosts"], p["policy"], work, seed=p["seed"])


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_scenarios())
def test_any_failure_that_disconnects_a_flow_marks_its_pattern_incomplete(p):
    sc = _build(p)
    pool = sweep_candidates(sc, p["classes"])
    chosen = [pool[k % len(pool)] for k in p["pick"]]
    r = simulate({**sc, "failures": chosen})
    prep = prepare({**sc, "failures": chosen})
    lost = {prep.flows.pattern_ids[int(k)] for k in prep.flows.pattern[prep.routes.status != 0]}
    for pid, pat in r["summary"]["patterns"].items():
        if pid in lost:
            assert pat["complete"] is False and pat["completion_s"] is None and pat["reason"]
            assert r["summary"]["complete"] is False and r["summary"]["job_completion_s"] is None
            assert r["summary"]["headline"].startswith("does not complete")
        else:
            assert pat["unroutable"] == 0
    if lost and r["diff"]["impact"]["broken"]:
        assert r["diff"]["impact"]["slowdown"] is None


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_scenarios(), st.sampled_from([None, 0.5]))
def test_sweep_ranking_puts_broken_first_then_disconnections_then_slowdown_then_throughput(p, degrade):
    out = sweep(_build(p), over=p["classes"], degrade=degrade)
    keys = []
    for e in out["ranking"]:
        imp = e["impact"]
        assert (imp["slowdown"] is None) == bool(imp["broken"])
        slow = imp["slowdown"] if imp["slowdown"] is not None else imp["slowdown_of_completing"]
        keys.append((-len(imp["broken"]), -imp["disconnected_flows"], -slow, -imp["throughput_lost_gbps"]))
    assert keys == sorted(keys)
    assert out["ranking"] == sorted(out["ranking"], key=ranking_key)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_scenarios(), st.booleans())
def test_critical_bottleneck_lies_on_the_slowest_patterns_slowest_flow(p, with_storage):
    sc = _build(p)
    if with_storage:
        sc["topology"]["build"]["storage"] = 1
        sc["workload"].append({"id": "load", "kind": "storage_read", "source": {"kind": "storage"},
                               "participants": {"kind": "gpu", "group": "h0"}, "bytes": 4e9, "via": "gpudirect"})
    r = simulate(sc)
    s = r["summary"]
    crit = s["critical_bottleneck"]
    times = {k: v["completion_s"] for k, v in s["patterns"].items() if v["complete"]}
    slowest = max(times, key=times.get)
    assert crit["pattern"] == slowest and times[slowest] == pytest.approx(s["job_completion_s"])
    flow = next(f for f in r["flows"] if f["id"] == crit["flow"])
    assert flow["id"] == s["patterns"][slowest]["slowest_flow"]
    # A pattern's completion is its slowest flow's, plus its latency, at its efficiency (1 and 0
    # for non-collectives; designer.engine.analysis.completion).
    model = s["patterns"][slowest]
    expected = model.get("latency_s", 0.0) + flow["completion_s"] / model.get("efficiency", 1.0)
    assert math.isclose(expected, times[slowest], rel_tol=1e-12)
    if crit["id"] is not None:
        # The critical resource is on one of that flow's (sub-)paths, saturated.
        prep = prepare(sc)
        f = next(i for i in range(len(prep.flows)) if prep.flows.flow_id(i) == crit["flow"])
        first, count = int(prep.routes.first[f]), int(prep.routes.count[f])
        crossed = {prep.topology.resource_id(int(x)) for q in range(first, first + count)
                   for x in prep.routes.path_resources(q)}
        assert crit["id"] in crossed and crit["id"] == flow["bottleneck"]
        assert next(x for x in r["resources"] if x["id"] == crit["id"])["utilization"] >= 1 - 1e-6
