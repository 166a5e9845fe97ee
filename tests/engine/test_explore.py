"""The design-space explorer (designer/engine/analysis/explore.py) and the rail-only fabric."""
from __future__ import annotations

import json

import pytest

from designer.engine.analysis.explore import explore, explore_points, merge_explore, pareto_front
from designer.engine.analysis.simulate import simulate
from designer.engine.errors import InvalidScenario, InvalidTopology, LimitExceeded
from designer.engine.model.fabrics import build_cluster, fabric_summary
from tests.engine.storage_support import without_storage_nics

MOE = {"job": {"layout": {"tp": 1, "ep": 16, "dp": 128},
               "template": {"model": "deepseek-v3", "microbatches": 1, "seq_len": 4096}}}


def _grid(**over) -> dict:
    return {"base": {"template": "dgx-h100", "hosts": 16},
            "grid": {"fabric": ["rail-optimized", "rail-only"], "oversubscription": [1, 2]},
            "workload": MOE, **over}


# ------------------------------------------------------------------------------------ frontier
def test_pareto_front_on_a_hand_made_set():
    """Cost/score pairs drawn by hand (cost →, score ↑)::

        score 3 |  a(1,3)
              2 |        b(2,2)   d(3,2.5)
              1 |                 c(3,1)  e(3,1)   f(4,1)
                +---------------------------------- cost

    a, b, c, e are not beaten on both (c and e tie: both kept); d is beaten by b (cheaper and
    faster), f by c (same score, cheaper); g has no score and is never on the frontier."""
    pts = [{"usd_per_gpu": 1, "step_score": 3}, {"usd_per_gpu": 2, "step_score": 2},
           {"usd_per_gpu": 3, "step_score": 1}, {"usd_per_gpu": 3, "step_score": 2.5},
           {"usd_per_gpu": 3, "step_score": 1}, {"usd_per_gpu": 4, "step_score": 1},
           {"usd_per_gpu": 0.5, "step_score": None}]
    assert pareto_front(pts) == [0, 1, 2, 4]


def test_pareto_front_single_and_empty():
    assert pareto_front([]) == []
    assert pareto_front([{"usd_per_gpu": 5, "step_score": 1.0}]) == [0]


# ------------------------------------------------------------------------------------ rail-only
def test_rail_only_has_no_spine_and_one_full_switch_per_rail():
    """128 DGX-H100 (8 rails) on 128-port 400G switches: a rail's 128 NIC ports fill one switch
    (no uplink reserved) → 8 switches; rail-optimized at 1:1 keeps 64 host ports a leaf → 2
    leaves a rail + 8 spines (16 leaves × 64 uplinks / 128 ports) = 24 switches."""
    ro = fabric_summary(build_cluster("dgx-h100", 128, fabric="rail-only"))
    opt = fabric_summary(build_cluster("dgx-h100", 128, fabric="rail-optimized"))
    assert ro["switches"] == {"leaf": 8} and ro["fabric"]["planes"] == 8
    assert opt["switches"] == {"leaf": 16, "spine": 8}


def test_rail_only_larger_than_a_switch_is_a_clos_per_rail():
    """256 hosts: 256 ports a rail exceed one 128-port switch → each rail its own two-tier Clos
    (4 leaves of 64 host ports, 2 spines of that rail only): no link joins two rails."""
    doc = build_cluster("dgx-h100", 256, fabric="rail-only")
    rail = {n["id"]: (n.get("attrs") or {}).get("rail", (n.get("attrs") or {}).get("plane"))
            for n in doc["nodes"] if n["kind"] == "switch"}
    assert fabric_summary(doc)["switches"] == {"leaf": 32, "spine": 16}
    for link in doc["links"]:
        if link["a"] in rail and link["b"] in rail:
            assert rail[link["a"]] == rail[link["b"]], link["id"]


def test_rail_only_cross_rail_goes_over_nvlink_with_pxn_and_nowhere_without():
    """[h0/gpu0]--nvswitch--[h0/gpu1]--pcie--[h0/nic1]==[leaf1]==[h1/nic1]--[h1/gpu1]: GPU 0 to a
    GPU on rail 1 relays through h0/gpu1 (PXN); under affinity its own NIC (rail 0) reaches no
    rail-1 NIC: unroutable, named."""
    doc = build_cluster("dgx-h100", 2, fabric="rail-only")
    p2p = [{"id": "p", "kind": "p2p", "bytes": 1e9, "src": "h0/gpu0", "dst": "h1/gpu1"}]
    pxn = simulate({"topology": doc, "workload": p2p, "routing": {"nic_policy": "pxn"}})["flows"][0]
    assert pxn["status"] == "ok" and pxn["path"][:5] == ["h0/gpu0", "h0/nvswitch0", "h0/gpu1", "h0/pcie1", "h0/nic1"]
    assert "leaf1" in pxn["path"] and "leaf0" not in pxn["path"]
    aff = simulate({"topology": doc, "workload": p2p, "routing": {"nic_policy": "affinity"}})["flows"][0]
    assert aff["status"] == "unroutable" and "no fabric path" in aff["reason"]


@pytest.mark.parametrize("kwargs, path", [({"planes": 2}, "planes"), ({"storage": 2}, "storage")])
def test_rail_only_refuses_what_it_cannot_wire(kwargs, path):
    # Storage servers need a spine to reach the rails, unless the hosts have storage NICs for a
    # storage fabric of its own (storage_fabric.py): refused only without them.
    with pytest.raises(InvalidTopology) as exc:
        build_cluster(without_storage_nics(), 4, fabric="rail-only", **kwargs)
    assert exc.value.problems[0].path == path


# ------------------------------------------------------------------------------------ explorer
def test_rail_only_paper_direction_at_1024_gpus():
    """arXiv 2307.12169 claims 38-77 % of the network cost saved for an 8-11 % all-to-all
    overhead. 1,024 H100 (128 DGX) running a DeepSeek-V3-shaped MoE step with EP 64 across hosts:
    rail-only must save a share of the network cost in that range, and never be faster."""
    grid = {"base": {"template": "dgx-h100", "gpus": 1024},
            "grid": {"fabric": ["rail-optimized", "rail-only"]},
            "workload": {"job": {"layout": {"tp": 1, "ep": 64, "dp": 1024},
                                 "template": {"model": "deepseek-v3", "microbatches": 1, "seq_len": 4096}}}}
    opt, ro = explore(grid)["points"]
    saved = 1 - ro["network_usd_per_gpu"] / opt["network_usd_per_gpu"]
    assert 0.38 <= saved <= 0.77, saved
    assert ro["usd_per_gpu"] < opt["usd_per_gpu"] and ro["w_per_gpu"] < opt["w_per_gpu"]
    assert ro["step_s"] >= opt["step_s"] * (1 - 1e-9)
    assert ro["blast_radius"]["fraction"] == pytest.approx(1 / 8)  # one rail switch = a NIC of every host
    assert opt["blast_radius"]["fraction"] == pytest.approx(1 / 16)


def test_explore_points_score_and_frontier_are_consistent():
    doc = explore(_grid())
    pts = doc["points"]
    assert [p["index"] for p in pts] == [0, 1, 2, 3] and doc["points_total"] == 4
    assert [p["axes"] for p in pts][:2] == [{"fabric": "rail-optimized", "oversubscription": 1},
                                            {"fabric": "rail-optimized", "oversubscription": 2}]
    assert min(p["step_score"] for p in pts) == pytest.approx(1.0)
    for p in pts:
        assert p["feasible"] and p["gpus"] == 128 and p["jobs"][0]["id"] == "job"
        assert p["step_score"] == pytest.approx(p["step_s"] / min(q["step_s"] for q in pts), rel=1e-5)
        beaten = any(q["usd_per_gpu"] <= p["usd_per_gpu"] and q["step_score"] <= p["step_score"]
                     and (q["usd_per_gpu"], q["step_score"]) != (p["usd_per_gpu"], p["step_score"]) for q in pts)
        assert p["frontier"] is not beaten
    assert doc["frontier"] == sorted(doc["frontier"], key=lambda i: pts[i]["usd_per_gpu"])


def test_chunks_merge_to_the_unchunked_run_in_any_order():
    whole = explore(_grid())
    parts = [explore(_grid(), chunk=(i, 3)) for i in range(3)]
    assert sum(len(p["points"]) for p in parts) == 4
    # Strided, not blocks: chunk i holds points i, i + 3, … (one fabric kind's neighbours spread out).
    assert [[q["index"] for q in p["points"]] for p in parts] == [[0, 3], [1], [2]]
    assert merge_explore(parts[::-1]) == whole
    with pytest.raises(InvalidScenario) as exc:
        merge_explore(parts[:2])
    assert "missing chunk(s) [2]" in exc.value.problems[0].message
    # A part chunked another way (contiguous blocks: a worker of an older version) is refused,
    # not merged into a grid with one point twice and another missing.
    blocks = [dict(parts[0], points=whole["points"][:2]), parts[1], parts[2]]
    with pytest.raises(InvalidScenario) as exc:
        merge_explore(blocks)
    assert [str(p) for p in exc.value.problems] == ["parts[0].points: are not chunk 0 of 3's points (0, 3, 6, …)"]


def test_a_job_mix_gives_a_step_per_job():
    mix = [{"id": "a", "patterns": [{"id": "ar", "kind": "allreduce", "bytes": 1e9}],
            "placement": {"policy": "packed", "gpus": 64}},
           {"id": "b", "patterns": [{"id": "a2a", "kind": "alltoall", "bytes": 1e8}],
            "placement": {"policy": "packed", "gpus": 64}}]
    req = {"base": {"template": "dgx-h100", "hosts": 16}, "grid": {"fabric": ["rail-only", "leaf-spine"]}, "jobs": mix}
    pts = explore(req)["points"]
    for p in pts:
        assert [j["id"] for j in p["jobs"]] == ["a", "b"] and all(j["complete"] for j in p["jobs"])
        assert p["step_s"] == max(j["step_time_s"] for j in p["jobs"])


def test_an_infeasible_combination_is_a_point_with_its_reason_not_an_error():
    """3 planes do not split 8 rails: that point is infeasible (located by the builder), the
    others run."""
    doc = explore(_grid(grid={"planes": [1, 3]}))
    ok, bad = doc["points"]
    assert ok["feasible"] and not bad["feasible"] and bad["stage"] == "build"
    assert bad["error"].startswith("planes:") and not bad["frontier"]
    assert doc["frontier"] == [0]


@pytest.mark.parametrize("change, path, words", [
    ({"base": {"template": "dgx-h100", "hosts": 0}}, "base.hosts", "integer ≥ 1"),
    ({"grid": {"switch": ["eth-51t2", "sw-9000"]}}, "grid.switch[1]", "unknown switch model"),
    ({"grid": {"fabric": ["torus"]}}, "grid.fabric[0]", "unknown fabric"),
    ({"grid": {"colour": ["red"]}}, "grid.colour", "not an axis"),
    ({"grid": {"oversubscription": [0.5]}}, "grid.oversubscription[0]", "from 1 to 64"),
    ({"grid": {"hosts": [4, 4]}}, "grid.hosts", "repeats a value"),
    ({"workload": None}, "jobs", "exactly one"),
    ({"jobs": [], "workload": None}, "jobs", "non-empty list"),
    ({"plan": {"rack": {"power_kw": -5}}}, "plan.rack.power_kw", "must be"),
    ({"bogus": 1}, "bogus", "unknown key"),
])
def test_bad_requests_are_located_and_nothing_runs(change, path, words):
    req = {**_grid(), **change}
    req = {k: v for k, v in req.items() if v is not None}
    with pytest.raises(InvalidScenario) as exc:
        explore(req)
    found = {p.path: p.message for p in exc.value.problems}
    assert path in found and words in found[path], found


def test_ten_thousand_points_are_refused_before_any_work():
    grid = {"oversubscription": list(range(1, 26)), "hosts": list(range(1, 21)), "planes": list(range(1, 21))}
    with pytest.raises(LimitExceeded) as exc:
        explore_points(_grid(grid=grid))
    assert exc.value.problems[0].path == "grid" and "10,000 points" in exc.value.problems[0].message


def test_cli_explore_table_and_json(tmp_path, capsys):
    from designer.engine.cli import main

    path = tmp_path / "grid.json"
    path.write_text(json.dumps(_grid(grid={"fabric": ["rail-only", "rail-optimized"]})))
    assert main(["explore", str(path)]) == 0
    out = capsys.readouterr().out
    assert "Pareto frontier" in out and "rail-only" in out
    assert main(["explore", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["format"] == "fabricscope.explore/1"
    path.write_text(json.dumps(_grid(grid={"switch": ["nope"]})))
    assert main(["explore", str(path)]) == 1
    assert "grid.switch[0]: unknown switch model 'nope'" in capsys.readouterr().err
