"""A shared cluster: many jobs with placements on one fabric, solved together (issue: shared cluster).

The small fabric drawn by hand (one GPU per host, capacities per direction in Gb/s)::

    [h0/gpu0]--pcie 400--[h0/nic0]==400==[leaf0]==100==[spine0]==100==[leaf1]==400==[h2/nic0]--[h2/gpu0]
    [h1/gpu0]--pcie 400--[h1/nic0]==400=='                                '==400==[h3/nic0]--[h3/gpu0]

Job A all-reduces over h0 and h2, job B over h1 and h3: a two-rank ring sends one flow each
way, so leaf0 → spine0 carries A's h0→h2 and B's h1→h3 and max-min gives each 100 / 2 = 50 Gb/s
(alone: 100 Gb/s); the other direction likewise.
"""
import copy
import json

import numpy as np
import pytest

from designer.engine.analysis.place import rank_placements
from designer.engine.analysis.simulate import prepare, simulate, solve_prepared
from designer.engine.errors import InvalidScenario, InvalidWorkload, LimitExceeded
from designer.engine.model.fabrics import build_cluster
from designer.engine.traffic.jobs.shared import MAX_JOBS


def spine_fabric(spine_gbps=100.0):
    nodes, links = [{"id": "leaf0", "kind": "switch"}, {"id": "leaf1", "kind": "switch"},
                    {"id": "spine0", "kind": "switch"}], []
    groups = []
    for h in range(4):
        groups.append({"id": f"h{h}", "kind": "host"})
        nodes += [{"id": f"h{h}/gpu0", "kind": "gpu", "group": f"h{h}", "attrs": {"index": 0}},
                  {"id": f"h{h}/nic0", "kind": "nic", "group": f"h{h}"}]
        links += [{"id": f"h{h}/pcie", "a": f"h{h}/gpu0", "b": f"h{h}/nic0", "tech": "pcie5x16", "capacity_gbps": 400.0},
                  {"id": f"h{h}/up", "a": f"h{h}/nic0", "b": f"leaf{h // 2}", "tech": "eth400", "capacity_gbps": 400.0}]
    links += [{"id": f"leaf{k}-spine0", "a": f"leaf{k}", "b": "spine0", "tech": "eth400", "capacity_gbps": spine_gbps}
              for k in range(2)]
    return {"format": "fabricscope.topology/1", "name": "spine", "groups": groups, "nodes": nodes, "links": links}


AR = {"id": "ar", "kind": "allreduce", "bytes": 1e9, "algorithm": "ring"}


def two_jobs(**extra):
    return {"topology": spine_fabric(), "jobs": [
        {"id": "A", "patterns": [AR], "placement": {"gpus": ["h0/gpu0", "h2/gpu0"]}, **extra},
        {"id": "B", "patterns": [AR], "placement": {"gpus": ["h1/gpu0", "h3/gpu0"]}}]}


def test_two_allreduces_through_one_spine_link_get_hand_computed_rates():
    result = simulate(two_jobs())
    rates = {f["id"]: f["rate_gbps"] for f in result["flows"]}
    assert rates == {"A/ar#0": 50.0, "A/ar#1": 50.0, "B/ar#0": 50.0, "B/ar#1": 50.0}
    spine = {r["id"]: r["load_gbps"] for r in result["resources"] if r["link"] == "leaf0-spine0"}
    assert spine == {"leaf0-spine0:a>b": 100.0, "leaf0-spine0:b>a": 100.0}
    jobs = {j["id"]: j for j in result["jobs"]["jobs"]}
    a = jobs["A"]
    assert a["bottleneck"]["resource"].startswith("leaf") and a["bottleneck"]["shared_with"] == ["B"]
    # Alone each flow has the spine's 100 Gb/s: the data part of the step doubles, latency does not.
    lat = result["summary"]["patterns"]["A/ar"].get("latency_s", 0.0)
    assert a["slowdown"] > 1.0 and a["step_time_s"] - lat == pytest.approx(2 * (a["alone_step_time_s"] - lat), rel=1e-9)
    i = result["jobs"]["interference"]
    assert i["jobs"] == ["A", "B"] and i["pairs_solved"] == 1
    assert i["matrix"][0][1] == pytest.approx(a["slowdown"] - 1.0, rel=1e-12)
    assert {r["resource"] for r in result["jobs"]["shared_resources"]} >= {"leaf0-spine0:a>b", "leaf0-spine0:b>a"}


def test_jobs_on_disjoint_rails_interfere_zero():
    """Rail-optimized, 4 hosts × 8 GPUs: spread puts job a on local GPUs 0-3 and b on 4-7 of
    every host, so their NICs sit on different rail leaves and share no resource."""
    doc = build_cluster("dgx-h100", 4, fabric="rail-optimized", leaves_per_rail=2)
    job = {"patterns": [{"id": "ar", "kind": "allreduce", "bytes": 1e9}], "placement": {"policy": "spread", "gpus": 16}}
    result = simulate({"topology": doc, "jobs": [{"id": "a", **job}, {"id": "b", **job}]})
    section = result["jobs"]
    assert [j["slowdown"] for j in section["jobs"]] == [1.0, 1.0]
    assert section["interference"]["matrix"] == [[0.0, 0.0], [0.0, 0.0]]
    assert section["shared_resources_total"] == 0
    rails = [{g.split("/")[1] for g in j["placement"]["gpus"]} for j in section["jobs"]]
    assert rails == [{f"gpu{k}" for k in range(4)}, {f"gpu{k}" for k in range(4, 8)}]


def _strip(result):
    out = copy.deepcopy(result)
    out.pop("timings_s")
    out.pop("jobs", None)
    return out


def test_one_job_in_the_new_form_gives_todays_result_to_the_last_bit():
    doc = build_cluster("dgx-h100", 2, fabric="rail-optimized")
    patterns = [{"id": "ar", "kind": "allreduce", "bytes": 2e8}, {"id": "a2a", "kind": "alltoall", "bytes": 1e8}]
    today = simulate({"topology": copy.deepcopy(doc), "workload": patterns})
    new = simulate({"topology": copy.deepcopy(doc), "jobs": [
        {"id": "only", "patterns": patterns, "placement": {"hosts": ["h0", "h1"]}}]})
    assert json.dumps(_strip(today), sort_keys=True) == json.dumps(_strip(new), sort_keys=True)
    step = {"layout": {"tp": 8, "dp": 2}, "phases": [
        {"id": "fwd", "compute_s": 0.001},
        {"id": "grad", "after": ["fwd"], "patterns": [{"id": "g", "kind": "allreduce", "bytes": 1e8,
                                                       "groups": {"layout": "dp"}}]}]}
    today = simulate({"topology": copy.deepcopy(doc), "workload": {"job": step}})
    new = simulate({"topology": copy.deepcopy(doc), "jobs": [
        {"id": "t", "job": step, "placement": {"policy": "packed", "gpus": 16}}]})
    assert json.dumps(_strip(today), sort_keys=True) == json.dumps(_strip(new), sort_keys=True)
    assert new["jobs"]["jobs"][0]["step_time_s"] == today["summary"]["job"]["step_time_s"]


def _progressive_filling(capacity, ptr, res, demand, weight):
    """Weighted max-min by progressive filling, written independently of the solver: raise
    every unfrozen path's rate as w·t; freeze the paths of the first resource to fill, or a
    path reaching its demand; repeat."""
    n = len(ptr) - 1
    rate = np.zeros(n)
    frozen = np.zeros(n, bool)
    cap = capacity.astype(float).copy()
    members = [res[ptr[p]:ptr[p + 1]] for p in range(n)]
    while not frozen.all():
        wsum = np.zeros(len(cap))
        for p in np.flatnonzero(~frozen):
            np.add.at(wsum, members[p], weight[p])
        with np.errstate(divide="ignore", invalid="ignore"):
            t_res = np.where(wsum > 0, cap / wsum, np.inf)
        t_dem = np.where(~frozen, (demand - rate) / weight, np.inf)
        t = min(t_res.min(), t_dem.min())
        live = np.flatnonzero(~frozen)
        for p in live:
            np.add.at(cap, members[p], -weight[p] * t)
            rate[p] += weight[p] * t
        full = set(np.flatnonzero((wsum > 0) & (cap <= 1e-9 * capacity)).tolist())
        for p in live:
            if rate[p] >= demand[p] * (1 - 1e-12) or full.intersection(members[p].tolist()):
                frozen[p] = True
    return rate


def test_multi_job_solve_matches_independent_progressive_filling():
    """The multi-job solve against the progressive filling above (the definition SimGrid's LMM
    solver implements), to 1e-9. The same instance agreed with SimGrid 4.1 itself to 2.4e-13
    (tools/simgrid_shared_cluster.py; SimGrid is not installed in CI)."""
    doc = build_cluster("dgx-h100", 4, fabric="rail-optimized", leaves_per_rail=2, oversubscription=2.0)
    sc = {"topology": doc, "routing": {"multipath": "split"}, "jobs": [
        {"id": "a", "patterns": [{"id": "ar", "kind": "allreduce", "bytes": 1e9}],
         "placement": {"policy": "random", "gpus": 12, "seed": 3}},
        {"id": "b", "patterns": [{"id": "x", "kind": "alltoall", "bytes": 1e8}],
         "placement": {"policy": "random", "gpus": 10, "seed": 4}},
        {"id": "c", "patterns": [{"id": "ag", "kind": "allgather", "bytes": 5e8}],
         "placement": {"policy": "spread", "gpus": 8}}]}
    prep = prepare(sc)
    solved = solve_prepared(prep)
    r = prep.routes
    demand = prep.flows.demand_gbps[r.owner] * r.share
    want = _progressive_filling(prep.capacity_gbps, r.flow_ptr, r.flow_res, demand, r.weight)
    assert len(set(prep.flows.pattern.tolist())) == 3
    assert len(np.unique(np.round(want, 6))) >= 5      # several fill levels, not one shared rate
    np.testing.assert_allclose(solved.path_rate_gbps, want, rtol=1e-9, atol=1e-9)


def test_ranking_puts_rail_aligned_packed_ahead_of_scattered_and_says_why():
    """Rail-optimized, 8 hosts in two leaf blocks, 4:1 oversubscribed spine: the running job
    holds 2 GPUs of every host; the new 16-GPU job fits in one leaf block (rail-aligned,
    packed) or scatters over both (crossing the spine)."""
    doc = build_cluster("dgx-h100", 8, fabric="rail-optimized", leaves_per_rail=2, oversubscription=4.0)
    running = {"id": "run", "patterns": [{"id": "ar", "kind": "allreduce", "bytes": 1e9}],
               "placement": {"gpus": [f"h{h}/gpu{g}" for h in range(8) for g in (6, 7)]}}
    new = {"id": "next", "patterns": [{"id": "ar", "kind": "allreduce", "bytes": 1e9}], "placement": {"gpus": 16}}
    ranked = rank_placements({"topology": doc, "jobs": [running]}, new)
    names = [[c["candidate"], *c["same_as"]] for c in ranked["candidates"]]
    rank = {name: k for k, group in enumerate(names) for name in group}
    assert rank["rail-aligned"] == 0 and rank["rail-aligned"] < rank["spread"]
    best, spread = ranked["candidates"][0], ranked["candidates"][rank["spread"]]
    assert best["fragmentation"]["leaf_blocks"] == 1 and spread["fragmentation"]["leaf_blocks"] == 2
    assert best["step_time_s"] < spread["step_time_s"]
    assert "leaf block" in spread["why"] and "slower" in spread["why"]
    assert ranked["best"] == names[0][0]
    assert spread["harm"] >= best["harm"] >= 0.0


def test_located_errors():
    sc = two_jobs()
    sc["jobs"][1]["placement"] = {"gpus": ["h1/gpu0", "h2/gpu0"]}
    with pytest.raises(InvalidScenario) as e:
        simulate(sc)
    assert e.value.problems[0].path == "jobs[1].placement.gpus[1]"
    assert 'h2/gpu0 is already claimed by job "A"' in e.value.problems[0].message.replace("'", '"')
    sc["jobs"][1]["placement"] = {"gpus": ["h1/gpu0", "h9/gpu2"]}
    with pytest.raises(InvalidScenario) as e:
        simulate(sc)
    assert (e.value.problems[0].path, "unknown GPU" in e.value.problems[0].message) == ("jobs[1].placement.gpus[1]", True)
    sc["jobs"][1]["placement"] = {"policy": "packed", "gpus": 3}
    with pytest.raises(InvalidScenario) as e:
        simulate(sc)
    assert e.value.problems[0].path == "jobs[1].placement.gpus" and "only 2 are free" in e.value.problems[0].message
    many = {"topology": spine_fabric(), "jobs": [{"id": f"j{k}"} for k in range(10_000)]}
    with pytest.raises(LimitExceeded) as e:
        simulate(many)
    assert e.value.problems[0].path == "jobs" and "10,000 jobs" in e.value.problems[0].message
    with pytest.raises(InvalidScenario) as e:
        simulate({**two_jobs(), "workload": [AR]})
    assert e.value.problems[0].path == "jobs"


def test_a_job_selecting_a_gpu_outside_its_placement_is_located():
    sc = two_jobs()
    sc["jobs"][0]["patterns"] = [{**AR, "participants": {"ids": ["h0/gpu0", "h1/gpu0"]}}]
    with pytest.raises(InvalidWorkload) as e:
        simulate(sc)
    assert e.value.problems[0].path == "jobs[0].patterns[0].participants.ids[1]"


def test_period_shorter_than_the_step_is_located():
    alone = simulate(two_jobs())["jobs"]["jobs"][0]["alone_step_time_s"]
    with pytest.raises(InvalidScenario) as e:
        simulate(two_jobs(period_s=alone / 2))
    assert e.value.problems[0].path == "jobs[0].period_s" and "shorter than the job's step" in e.value.problems[0].message
    ok = simulate(two_jobs(period_s=alone * 4))["jobs"]["jobs"][0]
    assert ok["duty_cycle"] == pytest.approx(ok["step_time_s"] / (alone * 4))


def test_a_later_start_avoids_the_overlap():
    """B starts once A is done: nothing shared in time, so neither is slowed."""
    alone = simulate(two_jobs())["jobs"]["jobs"][0]["alone_step_time_s"]
    sc = two_jobs()
    sc["jobs"][1]["start_s"] = alone * 1.5
    jobs = simulate(sc)["jobs"]["jobs"]
    assert [j["slowdown"] for j in jobs] == [1.0, 1.0]
    assert jobs[1]["step_time_s"] == pytest.approx(alone, rel=1e-12)


def test_policies_place_in_order_on_free_gpus():
    from designer.engine.traffic.scenario import normalize_scenario

    doc = build_cluster("dgx-h100", 4, fabric="rail-optimized", leaves_per_rail=2)
    free = [f"h{h}/gpu{g}" for h in (1, 3) for g in range(8)]
    sc = normalize_scenario({"topology": doc, "jobs": [
        {"id": "a", "patterns": [AR], "placement": {"policy": "packed", "gpus": 12, "free": free}},
        {"id": "b", "patterns": [AR], "placement": {"policy": "packed", "gpus": 4, "free": free}}]})
    a, b = sc.jobs
    ids = sc.topology.node_ids
    assert [ids[g] for g in a.gpus] == free[:12]
    assert [ids[g] for g in b.gpus] == free[12:]
    assert a.fragmentation["hosts"] == 2 and a.fragmentation["min_hosts"] == 2


def test_n1_sweep_reports_which_jobs_break_and_which_slow_down():
    from designer.engine.analysis.whatif import sweep

    out = sweep(two_jobs(), failures=[{"target": "h0/nic0", "mode": "down"},
                                      {"target": "leaf0-spine0", "mode": "degrade", "factor": 0.5}])
    by = {e["label"]: e["impact"]["jobs"] for e in out["ranking"]}
    nic = next(v for k, v in by.items() if "h0/nic0" in k)
    spine = next(v for k, v in by.items() if "leaf0-spine0" in k)
    assert nic["broken"] == ["A"] and nic["slowed"] == []        # B alone on the spine: faster, not slower
    assert spine["broken"] == [] and {s["id"] for s in spine["slowed"]} == {"A", "B"}
    assert all(s["slowdown"] > 1.0 for s in spine["slowed"])


def test_timeline_mode_and_compare_policies():
    from designer.engine.analysis.place import compare_policies

    result = simulate({**two_jobs(), "mode": "timeline"})
    assert [j["slowdown"] > 1.0 for j in result["jobs"]["jobs"]] == [True, True]
    doc = build_cluster("dgx-h100", 4, fabric="rail-optimized", leaves_per_rail=2, oversubscription=4.0)
    mix = {"topology": doc, "jobs": [{"id": f"j{k}", "patterns": [{"id": "ar", "kind": "allreduce", "bytes": 1e9}],
                                      "placement": {"policy": "packed", "gpus": 8}} for k in range(3)]}
    out = compare_policies(mix)
    assert out["best"] in ("packed", "rail-aligned")
    assert out["policies"]["packed"]["slowdown_sum"] <= out["policies"]["random"]["slowdown_sum"]
    assert out["policies"]["packed"]["fragmentation"] == 0.0 < out["policies"]["spread"]["fragmentation"]


TINY = {"kind": "inference", "layers": 2, "kv_heads": 2, "head_dim": 64, "dtype_bytes": 2, "prompt_tokens": 1000,
        "request_rate": 100, "prefill_s": 0.01, "prefill": {"group": "h2", "kind": "gpu"},
        "decode": {"group": "h3", "kind": "gpu"}}


def test_inference_fleet_and_periodic_checkpoint_are_jobs_too():
    doc = build_cluster("dgx-h100", 5, fabric="rail-optimized", storage=2)
    jobs = [{"id": "train", "patterns": [{"id": "ar", "kind": "allreduce", "bytes": 5e8}],
             "placement": {"hosts": ["h0", "h1"]}},
            {"id": "serve", "job": {"template": TINY}, "placement": {"hosts": ["h2", "h3"]}},
            {"id": "ckpt", "patterns": [{"id": "w", "kind": "storage_write", "bytes": 1e9,
                                         "source": {"kind": "storage"}}],
             "placement": {"hosts": ["h0", "h1"]}, "period_s": 3600.0}]
    with pytest.raises(InvalidScenario) as e:   # ckpt wants train's GPUs
        simulate({"topology": copy.deepcopy(doc), "jobs": jobs})
    assert e.value.problems[0].path == "jobs[2].placement.hosts[0]"
    jobs[2]["placement"] = {"policy": "packed", "gpus": 4}
    result = simulate({"topology": copy.deepcopy(doc), "jobs": jobs})
    by = {j["id"]: j for j in result["jobs"]["jobs"]}
    assert by["serve"]["kind"] == "inference" and by["serve"]["complete"]
    assert by["ckpt"]["duty_cycle"] == pytest.approx(by["ckpt"]["step_time_s"] / 3600.0)
    assert by["ckpt"]["placement"]["gpus"] == [f"h4/gpu{g}" for g in range(4)]   # the only free host
    bad = copy.deepcopy(jobs)
    bad[1]["job"]["template"]["prefill"] = {"group": "h0", "kind": "gpu"}
    with pytest.raises(InvalidWorkload) as e:    # h0 is not the fleet's
        simulate({"topology": copy.deepcopy(doc), "jobs": bad})
    assert e.value.problems[0].path.startswith("jobs[1].job.template.prefill")


def test_move_a_running_job_and_the_cli(tmp_path):
    import subprocess
    import sys

    from designer.engine.analysis.place import move_job

    doc = build_cluster("dgx-h100", 8, fabric="rail-optimized", leaves_per_rail=2, oversubscription=4.0)
    sc = {"topology": doc, "jobs": [
        {"id": "run", "patterns": [{"id": "ar", "kind": "allreduce", "bytes": 1e9}], "placement": {"policy": "packed", "gpus": 16}},
        {"id": "scattered", "patterns": [{"id": "ar", "kind": "allreduce", "bytes": 1e9}],
         "placement": {"policy": "random", "gpus": 16, "seed": 1}}]}
    moved = move_job(sc, "scattered")
    names = [[c["candidate"], *c["same_as"]] for c in moved["candidates"]]
    current = next(k for k, n in enumerate(names) if "current" in n)
    assert current > 0 and moved["candidates"][0]["step_time_s"] < moved["candidates"][current]["step_time_s"]
    (tmp_path / "topo.json").write_text(json.dumps(doc))
    (tmp_path / "sc.json").write_text(json.dumps({**sc, "topology": "topo.json"}))
    (tmp_path / "new.json").write_text(json.dumps({"id": "next", "patterns": [{"id": "ar", "kind": "allreduce",
                                                                                "bytes": 1e9}], "placement": {"gpus": 8}}))
    root = __import__("pathlib").Path(__file__).resolve().parents[2]
    run = subprocess.run([sys.executable, "-m", "designer.engine", "place", str(tmp_path / "sc.json"), "--job",
                          str(tmp_path / "new.json"), "--json", "--quiet"], cwd=root, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    doc_out = json.loads(run.stdout)
    assert doc_out["format"] == "fabricscope.place/1" and doc_out["best"] == doc_out["candidates"][0]["candidate"]
    bad = subprocess.run([sys.executable, "-m", "designer.engine", "place", str(tmp_path / "sc.json"), "--move", "nope"],
                         cwd=root, capture_output=True, text=True)
    assert bad.returncode == 1 and "--move: no job 'nope'" in bad.stderr
