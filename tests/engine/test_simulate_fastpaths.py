"""Shortcuts of the whole ``simulate`` path change nothing in the result:

- the planner's prediction fills the max-min solve only up to its slowest flow: the same
  document as with the whole fill;
- ``gc_paused`` turns the cyclic collector off inside a simulation and restores it, nested or not;
- the result's ``resources`` records, built from arrays, equal the per-resource construction.

Cluster: 8 DGX-H100, rail-optimized, 2 leaves per rail (64 GPUs)::

    h0..h7 [8 GPUs, NVSwitch, 8 NICs] --nic i--> rail i: leaf(i,0) leaf(i,1) ==> spines
"""
import gc

import numpy as np
import pytest

from designer.engine.analysis import simulate as sim
from designer.engine.model.fabrics import build_cluster
from designer.engine.numbers import json_float
from designer.engine.model.topology import Topology

ALLTOALL = [{"id": "a2a", "kind": "alltoall", "participants": {"kind": "gpu"}, "bytes": 1e8}]


@pytest.fixture(scope="module")
def topo():
    return Topology.from_document(build_cluster("dgx-h100", 8, fabric="rail-optimized", leaves_per_rail=2))


def _strip(result):
    return {k: v for k, v in result.items() if k != "timings_s"}


def test_a_prediction_stopped_at_its_first_level_gives_the_full_fills_document(topo, monkeypatch):
    """All-to-all on 64 GPUs (4,032 flows of equal bytes): the planner's prediction stops at the
    first flow it freezes; the document equals the one whose prediction ran the whole fill."""
    from designer.engine.solve import solver
    from designer.engine.traffic.collectives import select

    first = []
    real_first = select._first_level
    monkeypatch.setattr(select, "_first_level", lambda *a: first.append(real_first(*a)) or first[-1])
    stopped = sim.simulate({"topology": topo, "workload": ALLTOALL})
    assert first and first[0] > 0              # equal bytes: settled by the first level alone
    monkeypatch.setattr(select, "_levels", lambda capacity, routes, flows, demand: solver.maxmin(
        capacity, routes.flow_ptr, routes.flow_res, demand, weights=routes.weight).flow_level)
    assert _strip(sim.simulate({"topology": topo, "workload": ALLTOALL})) == _strip(stopped)


def test_gc_paused_restores_the_collector():
    was = gc.isenabled()
    try:
        gc.enable()
        with sim.gc_paused():
            assert not gc.isenabled()
            with sim.gc_paused():
                assert not gc.isenabled()
            assert not gc.isenabled()            # the outer block still runs
        assert gc.isenabled()
        gc.disable()
        with sim.gc_paused():
            pass
        assert not gc.isenabled()                # off before: stays off
        gc.enable()
        with pytest.raises(ValueError), sim.gc_paused():
            raise ValueError("an error inside")
        assert gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()


def _resources_one_by_one(topo, solved, tiers, capacity):
    """The per-resource construction the array version replaced."""
    out = []
    two_l = 2 * topo.num_links
    for r in np.flatnonzero(solved.load_gbps > 0).tolist():
        link = r // 2 if r < two_l else None
        out.append({"id": topo.resource_id(r), "link": topo.link_ids[link] if link is not None else None,
                    "dir": ("a>b" if r % 2 == 0 else "b>a") if link is not None else None,
                    "tech": topo.link_tech[link] if link is not None else None, "tier": tiers[r],
                    "capacity_gbps": float(capacity[r]), "load_gbps": float(solved.load_gbps[r]),
                    "utilization": json_float(solved.utilization[r])})
    return out


def test_resource_records_equal_the_per_resource_construction():
    """The same cluster with a throughput limit on every NVSwitch, so node resources are loaded too."""
    doc = build_cluster("dgx-h100", 8, fabric="rail-optimized", leaves_per_rail=2)
    for node in doc["nodes"]:
        if node["kind"] == "nvswitch":
            node["capacity_gbps"] = 2000.0
    topo = Topology.from_document(doc)
    prep = sim.prepare({"topology": topo, "workload": ALLTOALL})
    solved = sim.solve_prepared(prep)
    tiers = sim.resource_tiers(topo)
    got = sim._resources(topo, solved, tiers, prep.capacity_gbps)
    assert got == _resources_one_by_one(topo, solved, tiers, prep.capacity_gbps)
    assert any(r["link"] is None for r in got) and any(r["link"] is not None for r in got)
    assert [list(r) for r in got[:1]] == [["id", "link", "dir", "tech", "tier", "capacity_gbps", "load_gbps",
                                           "utilization"]]
