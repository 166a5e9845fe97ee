"""Sweeps: candidates, ranking, exactness of reuse, chunk merging (hypothesis, small sizes).

Clusters are DGX-H100 hosts on a rail-optimized fabric (2–4 hosts, one or two leaves per rail,
two spines when there are two leaves)::

    [hX/gpuI]--[hX/pcieI]--[hX/nicI]==[leaf(I, block)]==[spine0|spine1]
"""
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from designer.engine.errors import InvalidScenario
from designer.engine.analysis.whatif import merge_sweeps, ranking_key, simulate_with_diff, sweep, sweep_candidates

PAIR = {"build": {"template": "dgx-h100", "hosts": 2, "fabric": "rail-optimized"}}
AR = {"id": "ar", "kind": "allreduce", "algorithm": "ring", "participants": {"kind": "gpu"}, "bytes": 1e9}


def scenario(hosts=2, lpr=1, policy="affinity", multipath="hash", seed=0, workload=(AR,), failures=()):
    topo = {"build": {"template": "dgx-h100", "hosts": hosts, "fabric": "rail-optimized", "leaves_per_rail": lpr}}
    return {"topology": topo, "workload": list(workload), "failures": list(failures),
            "routing": {"nic_policy": policy, "multipath": multipath, "seed": seed}}


def test_candidates_per_class_on_a_pair():
    sc = scenario()
    count = {c: len(sweep_candidates(sc, c)) for c in ("nic", "pcie_switch", "nvswitch", "gpu", "leaf-spine",
                                                       "nic-leaf", "host", "switch", "spine", "leaf")}
    # 10 NICs (8 compute + 2 storage), 8 PCIe switches, 4 NVSwitches, 8 GPUs per host; 8 leaves ×
    # 2 spines; the 16 compute NICs are wired to leaves.
    assert count == {"nic": 20, "pcie_switch": 16, "nvswitch": 8, "gpu": 16, "leaf-spine": 16, "nic-leaf": 16,
                     "host": 2, "switch": 10, "spine": 2, "leaf": 8}
    assert sweep_candidates(sc, "host", degrade=0.5) == [{"target": "h0", "mode": "degrade", "factor": 0.5},
                                                         {"target": "h1", "mode": "degrade", "factor": 0.5}]
    with pytest.raises(InvalidScenario) as err:
        sweep_candidates(sc, "nic,toaster")
    assert err.value.problems[0].path == "over[1]"


def test_ranking_puts_disconnections_first_and_untouched_last():
    out = sweep(scenario(), over="nic")
    assert out["format"] == "fabricscope.sweep/1" and out["candidates"] == 16 and out["chunk"] is None
    ranking = out["ranking"]
    assert ranking == sorted(ranking, key=ranking_key)
    # Every compute NIC carries two ring flows (one each way) under affinity: losing it cuts both,
    # so the ring never completes.
    assert [e["impact"]["disconnected_flows"] for e in ranking[:16]] == [2] * 16
    assert all(e["impact"]["broken"] == ["ar"] and e["impact"]["slowdown"] is None
               and e["impact"]["completion_unbounded"] for e in ranking)
    # The storage NICs have no uplink here: listed once, apart from the ranking.
    assert sorted(u["target"] for u in out["skipped"]["unwired"]) == ["h0/nic8", "h0/nic9", "h1/nic8", "h1/nic9"]
    # Each NIC only frees capacity its own two flows used: all 16 are re-solved locally.
    assert out["stats"] == {"solved": 16, "untouched": 0, "rerouted_flows": 32, "local_solves": 16, "whole_solves": 0}
    assert out["baseline"]["unroutable"] == 0 and out["baseline"]["patterns"]["ar"]["completion_s"] > 0


def test_degrade_sweep_ranks_the_pcie_bottleneck():
    """Halving one host's PCIe switch uplinks or NIC links slows a PCIe-bound ring."""
    out = sweep(scenario(), over="nic-leaf", degrade=0.5)
    top = out["ranking"][0]
    assert top["failure"]["mode"] == "degrade" and top["impact"]["disconnected_flows"] == 0
    assert top["impact"]["completion_increase_s"] > 0 and top["impact"]["slowdown"] > 1


def test_sweep_on_top_of_the_scenarios_own_failures():
    sc = scenario(failures=[{"target": "h0/nic0"}])
    out = sweep(sc, failures=[{"target": "h0/nic0"}, {"target": "h1/nic1"}])
    assert out["baseline"]["unroutable"] == 2 and out["scenario"]["failures"][0]["label"] == "h0/nic0 down"
    by = {e["label"]: e["impact"]["disconnected_flows"] for e in out["ranking"]}
    assert by == {"h1/nic1 down": 2} and out["skipped"]["already_failed"] == ["h0/nic0 down"]


def test_bad_sweeps_are_located():
    with pytest.raises(InvalidScenario) as err:
        sweep(scenario(), failures=[{"target": "h0/nic0"}, {"target": "h9/nic0"}])
    assert str(err.value.problems[0]).startswith('failures[1].target: unknown node or link "h9/nic0"')
    with pytest.raises(InvalidScenario) as err:
        sweep(scenario(), over="nic", chunk=(3, 3))
    assert err.value.problems[0].path == "chunk"
    part = sweep(scenario(), over="host", chunk="0/2")
    with pytest.raises(InvalidScenario) as err:
        merge_sweeps([part, part])
    assert "repeats" in err.value.problems[0].message


def _candidates_strategy():
    classes = st.lists(st.sampled_from(["nic", "pcie_switch", "leaf-spine", "nvswitch", "gpu", "spine", "host",
                                        "nic-leaf"]), min_size=1, max_size=3, unique=True)
    return st.fixed_dictionaries({
        "hosts": st.integers(2, 3), "lpr": st.sampled_from([1, 2]),
        "policy": st.sampled_from(["affinity", "pxn", "any"]), "multipath": st.sampled_from(["hash", "split"]),
        "seed": st.integers(0, 5), "classes": classes, "degrade": st.sampled_from([None, None, 0.5]),
        "pick": st.lists(st.integers(0, 10_000), min_size=1, max_size=3)})


WORKLOADS = [AR, {"id": "a2a", "kind": "alltoall", "participants": {"kind": "gpu", "every": 3}, "bytes": 1e8}]


def _close(a, b, where: str) -> None:
    """Equal, floats to 1e-9 (relative, or absolute where a figure cancels to about 0)."""
    if isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for k in a:
            _close(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, list):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _close(x, y, f"{where}[{i}]")
    elif isinstance(a, float) and isinstance(b, float):
        assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9), (where, a, b)
    else:
        assert a == b, (where, a, b)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_candidates_strategy(), st.booleans())
def test_sweep_entries_equal_each_failure_run_alone(p, local):
    """A sweep (reused routing context, untouched shortcut) gives, per failure, the impact and diff
    summary of ``simulate_with_diff`` on that failure alone (routing from scratch): exactly when it
    re-solves the whole problem per failure (``local=False``), to 1e-9 when it re-solves only what
    the failure reaches (the sums then run in another order: a last-digit difference)."""
    sc = scenario(p["hosts"], p["lpr"], p["policy"], p["multipath"], p["seed"], WORKLOADS)
    pool = sweep_candidates(sc, p["classes"], degrade=p["degrade"])
    chosen = list({k % len(pool): pool[k % len(pool)] for k in p["pick"]}.values())
    out = sweep(sc, failures=chosen, local=local)
    assert out["candidates"] == len(chosen)
    for entry in out["ranking"]:
        alone = simulate_with_diff({**sc, "failures": [chosen[entry["index"]]]})["diff"]
        if local:
            _close(entry["impact"], alone["impact"], entry["label"])
            _close(entry["diff_summary"], alone["summary"], entry["label"])
        else:
            assert entry["impact"] == alone["impact"], entry["label"]
            assert entry["diff_summary"] == alone["summary"], entry["label"]


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_candidates_strategy(), st.integers(1, 4), st.randoms(use_true_random=False))
def test_merged_chunks_equal_the_unchunked_sweep(p, n, rnd):
    sc = scenario(p["hosts"], p["lpr"], p["policy"], p["multipath"], p["seed"])
    whole = sweep(sc, over=p["classes"], degrade=p["degrade"])
    parts = [sweep(sc, over=p["classes"], degrade=p["degrade"], chunk=(i, n)) for i in range(n)]
    assert sum(x["evaluated"] for x in parts) == whole["candidates"]
    rnd.shuffle(parts)
    assert merge_sweeps(parts) == whole


@pytest.mark.parametrize("policy", ["affinity", "pxn", "any"])
def test_derived_routing_context_equals_routing_from_scratch(policy):
    sc = scenario(hosts=4, lpr=2, policy=policy, multipath="split", workload=WORKLOADS)
    over = "nic,pcie_switch,leaf-spine,nic-leaf,spine,leaf,host,nvswitch"
    assert sweep(sc, over=over) == sweep(sc, over=over, derive=False)


def _slow_rail_scenario(hosts=3, slow_rail=1):
    """DGX-H100 hosts whose rail ``slow_rail`` runs at 100 Gb/s instead of 400 (an older NIC)::

        [hX/gpu1]--[hX/pcie1]--[hX/nic1]==100G==[leaf1]      every other rail ==400G==
    """
    from designer.engine.model.fabrics import build_cluster

    doc = build_cluster("dgx-h100", hosts)
    for link in doc["links"]:
        if f"nic{slow_rail}" in link["a"] and link["b"] == f"leaf{slow_rail}":
            link["tech"], link["capacity_gbps"] = "eth100", 100.0
    auto = {**AR, "algorithm": "auto"}
    return {"topology": doc, "workload": [auto], "routing": {"nic_policy": "affinity"}}


def test_nic_sweep_ranks_by_the_job_after_nccls_fallback():
    """Every NIC down breaks the running ring (NCCL aborts), so "does not complete" and "whole
    throughput lost" are the same for all of them. What tells them apart is the job after NCCL
    re-initializes without that rail: losing a 400G rail leaves the 100G rail in the channels
    (slower), losing the 100G rail removes the bottleneck. The slow rail's NICs rank last, the
    fallback's job time orders the rows, and the loss is not the whole job's throughput."""
    out = sweep(_slow_rail_scenario(), over="nic")
    ranking = out["ranking"]
    assert all(e["impact"]["broken"] == ["ar"] for e in ranking)
    fb = [e["impact"]["fallback"] for e in ranking]
    slowdowns = [f["slowdown"] for f in fb]
    assert slowdowns == sorted(slowdowns, reverse=True) and len({round(s, 9) for s in slowdowns}) >= 2
    last = {e["failure"]["target"] for e in ranking[-3:]}
    assert last == {"h0/nic1", "h1/nic1", "h2/nic1"}
    assert fb[0]["slowdown"] > fb[-1]["slowdown"]
    whole = out["baseline"]["patterns"]["ar"]["throughput_gbps"]
    assert all(0 <= f["throughput_lost_gbps"] < whole for f in fb)
    ar = fb[0]["patterns"]["ar"]
    assert ar["algorithm"] and ar["busbw_gbs"] < ar["busbw_before_gbs"]
    assert ar["rails"] == ar["rails_total"] - 1   # the rail of the failed NIC is left out
    # busbw scales inversely with the time (same bytes)
    before = out["baseline"]["patterns"]["ar"]["completion_s"]
    assert ar["busbw_gbs"] * ar["completion_s"] == pytest.approx(ar["busbw_before_gbs"] * before)


def test_fallback_memo_is_exact():
    """The fallback shared by NICs of one rail (derive=True) equals recomputing it per failure."""
    sc = _slow_rail_scenario()
    fast, slow = sweep(sc, over="nic"), sweep(sc, over="nic", derive=False)
    assert [e["impact"] for e in fast["ranking"]] == [e["impact"] for e in slow["ranking"]]
