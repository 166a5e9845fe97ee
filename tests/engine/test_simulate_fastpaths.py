"""Shortcuts of the whole ``simulate`` path (issue #20) change nothing in the result:

- the last large max-min solve is remembered inside ``simulate`` (the planner solves the chosen
  algorithm's flows alone, then simulate solves the same problem): answered only when every
  input is equal, equal to a fresh solve, and forgotten when the simulation ends;
- ``gc_paused`` turns the cyclic collector off inside a simulation and restores it, nested or not;
- the result's ``resources`` records, built from arrays, equal the per-resource construction.

Cluster: 8 DGX-H100, rail-optimized, 2 leaves per rail (64 GPUs)::

    h0..h7 [8 GPUs, NVSwitch, 8 NICs] --nic i--> rail i: leaf(i,0) leaf(i,1) ==> spines
"""
import gc

import numpy as np
import pytest

from designer.engine import maxmin as mm
from designer.engine import simulate as sim
from designer.engine.fabrics import build_cluster
from designer.engine.numbers import json_float
from designer.engine.topology import Topology

ALLTOALL = [{"id": "a2a", "kind": "alltoall", "participants": {"kind": "gpu"}, "bytes": 1e8}]


@pytest.fixture(scope="module")
def topo():
    return Topology.from_document(build_cluster("dgx-h100", 8, fabric="rail-optimized", leaves_per_rail=2))


def _strip(result):
    return {k: v for k, v in result.items() if k != "timings_s"}


def test_remembered_solve_equals_a_fresh_one(topo, monkeypatch):
    """All-to-all on 64 GPUs (4,032 flows): with the memo threshold at 0 the main solve is answered
    from the planner's; the document equals the one computed with the memo off."""
    monkeypatch.setattr(mm, "_REMEMBER_MIN_PATHS", 0)
    mm._remembered[0] = None
    calls = []
    real = mm._solve_remembered

    def spy(kernels, *args):
        before = mm._remembered[0]
        out = real(kernels, *args)
        calls.append(before is not None and mm._remembered[0] is before)   # True: answered from memory
        return out

    monkeypatch.setattr(mm, "_solve_remembered", spy)
    remembered = sim.simulate({"topology": topo, "workload": ALLTOALL})
    assert True in calls                   # the planner's solve answered simulate's
    monkeypatch.setattr(mm, "_REMEMBER_MIN_PATHS", 10**12)
    mm._remembered[0] = None
    fresh = sim.simulate({"topology": topo, "workload": ALLTOALL})
    assert _strip(remembered) == _strip(fresh)


def test_a_changed_input_is_solved_again(monkeypatch):
    """Two flows on one 10 Gb/s link, then the same with the link at 20 Gb/s: the second is not
    the first's answer; the arrays handed out are copies (mutating one does not leak)."""
    monkeypatch.setattr(mm, "_REMEMBER_MIN_PATHS", 0)
    mm._remembered[0] = None
    ptr, res = np.array([0, 1, 2]), np.array([0, 0])
    with mm.remembering_solves():
        a = mm.maxmin(np.array([10.0]), ptr, res)
        assert a.rates_gbps.tolist() == [5.0, 5.0] and mm._remembered[0] is not None
        a.rates_gbps[:] = -1.0
        assert mm.maxmin(np.array([10.0]), ptr, res).rates_gbps.tolist() == [5.0, 5.0]
        assert mm.maxmin(np.array([20.0]), ptr, res).rates_gbps.tolist() == [10.0, 10.0]
        assert mm.maxmin(np.array([20.0]), ptr, res, np.array([1.0, np.inf])).rates_gbps.tolist() == [1.0, 19.0]
    assert mm._remembered[0] is None           # dropped when the block ends
    mm.maxmin(np.array([10.0]), ptr, res)
    assert mm._remembered[0] is None           # nothing kept outside a block


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
