"""Shortcuts of the 16,384-GPU ring's ``simulate`` change nothing:

- the planner keeps its last ``_reasons`` on the topology: validation and planning of the same
  group ask once; another group (or protocol) is answered afresh, and callers get copies;
- planning runs no full solve: every candidate's prediction is a fill stopped at its slowest
  flow, and the main solve is the simulation's only full one;
- the listed flows' paths, found for all at once in numpy, equal ``Routes.path_nodes`` path by
  path, and the records equal the one-flow-at-a-time construction (unroutable flows included).

Cluster: 8 DGX-H100, rail-optimized, 2 leaves per rail (64 GPUs).
"""
import numpy as np
import pytest

from designer.engine.analysis import simulate as sim
from designer.engine.solve import solver
from designer.engine.traffic.collectives import select
from designer.engine.model.fabrics import build_cluster
from designer.engine.analysis.listed_flows import path_node_ids
from designer.engine.model.topology import Topology

RING = [{"id": "ar", "kind": "allreduce", "algorithm": "ring", "participants": {"kind": "gpu"}, "bytes": 1e8}]


@pytest.fixture()
def topo():
    return Topology.from_document(build_cluster("dgx-h100", 8, fabric="rail-optimized", leaves_per_rail=2))


def _strip(result):
    return {k: v for k, v in result.items() if k != "timings_s"}


def test_reasons_asked_once_per_group_and_copied(topo, monkeypatch):
    calls = []
    real = select._reasons_uncached
    monkeypatch.setattr(select, "_reasons_uncached", lambda *a: calls.append(a[1].n) or real(*a))
    pattern = sim.prepare({"topology": topo, "workload": RING}).scenario.patterns[0]
    assert len(calls) == 1                       # validation and planning: one computation
    group = select.group_of(topo, pattern)
    first = select._reasons(topo, group, "auto")
    first["ring"] = "tampered"
    assert select._reasons(topo, group, "auto")["ring"] is None     # a copy was handed out
    assert select._reasons(topo, group, "LL") == real(topo, group, "LL")
    half = select.group_of(topo, {**pattern, "participants": pattern["participants"][:8]})
    assert select._reasons(topo, half, "auto") == real(topo, half, "auto")
    assert len(calls) == 3


def test_planning_runs_no_full_solve(topo, monkeypatch):
    """Every candidate's prediction (ring, tree, NVLS-tree) is a fill stopped at its slowest
    flow (here its first level: the flows move equal bytes; the NVLS-tree's two byte sizes
    cross separate resources, each size's first level); the only full solve of a simulation is
    the main one."""
    full, fills = [], []
    real_maxmin, real_fill = solver.maxmin, solver.maxmin_levels_until
    monkeypatch.setattr(solver, "maxmin", lambda *a, **k: full.append(len(a[1]) - 1) or real_maxmin(*a, **k))
    monkeypatch.setattr(solver, "maxmin_levels_until",
                        lambda *a, **k: fills.append(len(a[1]) - 1) or real_fill(*a, **k))
    real_first, real_sizes = select._first_level, select._separate_sizes_time
    monkeypatch.setattr(select, "_first_level", lambda *a: fills.append(a[1].num_paths) or real_first(*a))

    def separate_sizes(*a):   # the NVLS-tree: each byte size's first level, no fill at all
        time = real_sizes(*a)
        if time is not None:
            fills.append(a[1].num_paths)
        return time

    monkeypatch.setattr(select, "_separate_sizes_time", separate_sizes)
    prep = sim.prepare({"topology": topo, "workload": RING})
    plan = prep.flows.pattern_plans[0]
    assert plan.algorithm == "ring" and plan.alternatives["tree"]["time_s"] is not None
    assert full == [] and len(fills) >= 3
    sim.solve_prepared(prep)
    assert full == [prep.routes.num_paths]


def test_listed_flows_equal_path_nodes(topo):
    prep = sim.prepare({"topology": topo, "workload": RING, "failures": [{"target": "h0/nic3", "mode": "down"}]})
    routes = prep.routes
    names = path_node_ids(topo, routes, np.arange(routes.num_paths)[::-1])
    assert len(names) == routes.num_paths
    for p in range(routes.num_paths):
        assert names[p] == [topo.node_ids[n] for n in routes.path_nodes(p)]
    assert path_node_ids(topo, routes, []) == {}


def test_flow_records_equal_one_at_a_time(topo):
    a2a = [{"id": "a2a", "kind": "alltoall", "participants": {"kind": "gpu"}, "bytes": 1e6},
           {"id": "capped", "kind": "alltoall", "participants": {"kind": "gpu", "every": 8}, "bytes": 1e6,
            "demand_gbps": 5.0}]
    prep = sim.prepare({"topology": topo, "workload": a2a, "failures": [{"target": "h1/nic2", "mode": "down"}]})
    solved = sim.solve_prepared(prep)
    assert (prep.routes.status != 0).any()           # unroutable flows are listed too
    assert np.isfinite(prep.flows.demand_gbps).any() and (prep.routes.count > 1).any()
    listed = np.arange(len(prep.flows))
    one = [_one_flow_record(topo, prep.flows, prep.routes, solved, int(i)) for i in listed]
    assert sim._flow_records(topo, prep.flows, prep.routes, solved, listed) == one


def _one_flow_record(topo, flows, routes, solved, i):
    """The record of one flow built field by field (the construction simulate used before the
    batched one): the reference the batched records must equal."""
    if routes.status[i] != 0:
        return sim._unroutable_record(topo, flows, routes, i)
    ids, num = topo.node_ids, sim._num
    first, count, b = int(routes.first[i]), int(routes.count[i]), int(solved.flow_bottleneck[i])
    rec = {"id": flows.flow_id(i), "pattern": flows.pattern_ids[int(flows.pattern[i])],
           "src": ids[int(flows.src[i])], "dst": ids[int(flows.dst[i])], "bytes": float(flows.bytes[i]),
           "path": [ids[n] for n in routes.path_nodes(first)], "class": routes.path_class(i),
           "rate_gbps": num(solved.flow_rate_gbps[i]), "bottleneck": topo.resource_id(b) if b >= 0 else None,
           "status": "ok", "completion_s": num(solved.flow_completion_s[i])}
    if np.isfinite(flows.demand_gbps[i]):
        rec["demand_gbps"] = float(flows.demand_gbps[i])
    if count > 1:
        rec["paths"] = [{"path": [ids[n] for n in routes.path_nodes(p)], "share": float(routes.share[p]),
                         "rate_gbps": num(solved.path_rate_gbps[p])} for p in range(first, first + count)]
    return rec


def test_link_tiers_memo_equals_link_by_link(topo):
    from designer.engine.model import tiers

    expected = [tiers._link_tier(topo, link) for link in range(topo.num_links)]
    assert tiers._link_tiers(topo) == expected
    assert {"inter-socket", "nvlink", "pcie", "nic-leaf", "leaf-spine"} <= set(expected)
