"""The job's event loop re-solving only the components that changed equals the full re-solve at
every event (``run_job(..., incremental=False)``), and it really skips what did not change.

Topologies::

    two DGX-H100, rail-optimized:  [h0/gpu0..7] [h1/gpu0..7], gpuI--nicI--leaf(rail I)--spines
    16 DGX-H100, rail-optimized (4 pipeline stages of 4 hosts), and 8 DGX-H100 on a 3:1
    oversubscribed leaf-spine (one ToR per 2 hosts): ECMP-hashed expert all-to-all (EP 16)
    through the spines.
"""
import numpy as np
import pytest

from designer.engine.analysis.simulate import prepare
from designer.engine.model.fabrics import build_cluster
from designer.engine.model.topology import Topology
from designer.engine.traffic.jobs.dag import run_job
from designer.engine.traffic.jobs.rates import ComponentRates

REL = 1e-9   # stated tolerance (rates differ by at most SNAP_RTOL = 1e-12 relative; rates.py says why)

DENSE = {"layout": {"tp": 8, "pp": 4, "dp": 4},
         "template": {"model": "llama3-70b", "seq_len": 8192, "micro_batch": 1, "microbatches": 8,
                      "gpu": "h100", "mfu": 0.4}}
MOE = {"layout": {"tp": 1, "ep": 16, "dp": 64},
       "template": {"model": "deepseek-v3", "microbatches": 1, "seq_len": 4096}}


def _both(doc, job):
    prep = prepare({"topology": Topology.from_document(doc), "workload": {"job": job}})
    return run_job(prep, prep.scenario.job, incremental=False), run_job(prep, prep.scenario.job)


def _assert_same(full, inc):
    assert inc["complete"] and full["complete"]
    assert inc["events"] == full["events"]
    assert inc["critical_path"] == full["critical_path"]
    for key in ("step_time_s", "compute_s", "communication_s", "exposed_communication_s"):
        assert inc[key] == pytest.approx(full[key], rel=REL, abs=1e-15), key
    for a, b in zip(full["phases"], inc["phases"]):
        assert a["id"] == b["id"]
        assert b["start_s"] == pytest.approx(a["start_s"], rel=REL, abs=1e-15)
        assert b["end_s"] == pytest.approx(a["end_s"], rel=REL, abs=1e-15)
        for pid, times in a["patterns"].items():
            assert b["patterns"][pid]["end_s"] == pytest.approx(times["end_s"], rel=REL, abs=1e-15)


@pytest.mark.parametrize("case, doc, job", [
    ("dense pipeline", lambda: build_cluster("dgx-h100", 16), DENSE),
    ("moe all-to-all, leaf-spine 3:1", lambda: build_cluster("dgx-h100", 8, fabric="leaf-spine",
                                                               oversubscription=3, hosts_per_rack=2), MOE),
    # EP 32 through the spines: a path's last bytes took less than a unit in the last place of the
    # time, the loop made zero-length events up to its limit and the step never completed.
    ("moe all-to-all EP 32, leaf-spine 3:1", lambda: build_cluster("dgx-h100", 8, fabric="leaf-spine",
                                                                   oversubscription=3, hosts_per_rack=2),
     {**MOE, "layout": {"tp": 1, "ep": 32, "dp": 64}}),
])
def test_incremental_step_equals_full_resolve(case, doc, job):
    full, inc = _both(doc(), job)
    _assert_same(full, inc)


@pytest.mark.parametrize("case, doc, job", [
    ("dense pipeline", lambda: build_cluster("dgx-h100", 16), DENSE),
    ("moe all-to-all EP 32, leaf-spine 3:1", lambda: build_cluster("dgx-h100", 8, fabric="leaf-spine",
                                                                   oversubscription=3, hosts_per_rack=2),
     {**MOE, "layout": {"tp": 1, "ep": 32, "dp": 64}}),
])
def test_local_event_resolves_equal_the_full_resolve(monkeypatch, case, doc, job):
    """From ``LOCAL_FROM_PATHS`` transferring paths up (after ``LOCAL_AFTER_EVENTS`` events), an
    event that only finishes or starts a few paths is re-solved under the max-min certificate
    (``solve.local``) instead of whole; forced on here from 0 paths and the first event, the step
    equals the full re-solve's, and most events were local."""
    import designer.engine.traffic.jobs.rates as rates_module

    counts = []
    real = rates_module.ComponentRates.solve

    def solve(self, active, idx=None, names=True):
        real(self, active, idx, names)
        counts[:] = [self.local_events]

    monkeypatch.setattr(rates_module, "LOCAL_FROM_PATHS", 0)
    monkeypatch.setattr(rates_module, "LOCAL_AFTER_EVENTS", 0)
    monkeypatch.setattr(rates_module.ComponentRates, "solve", solve)
    full, inc = _both(doc(), job)
    _assert_same(full, inc)
    assert counts[0] > inc["events"] // 4, (counts, inc["events"])


def test_shared_links_couple_components_and_disjoint_ones_are_left_alone():
    """Three patterns on a 3-resource line ``r0 = 10 Gb/s, r1 = 10 Gb/s, r2 = 40 Gb/s``::

        A: one path over r0          B: one path over r0 and r1        C: two paths over r2

    A and B share r0 (one component, 5 + 5 Gb/s); C is alone (20 + 20). When B stops, only A's
    component is re-solved (A alone on r0: 10 Gb/s) and C keeps its rates without a solve."""
    cap = np.array([10.0, 10.0, 40.0])
    ptr = np.array([0, 1, 3, 4, 5])
    res = np.array([0, 0, 1, 2, 2])
    pat_paths = [np.array([0]), np.array([1]), np.array([2, 3])]
    rates = ComponentRates(cap, ptr, res, np.full(4, np.inf), np.ones(4), pat_paths)
    active = np.ones(4, bool)
    for p in range(3):
        rates.add(p)
    assert rates.pat_comp[0] == rates.pat_comp[1] != rates.pat_comp[2]
    rates.solve(active)
    assert rates.rate.tolist() == [5.0, 5.0, 20.0, 20.0]
    assert rates.bneck.tolist() == [0, 0, 2, 2]
    assert rates.resolved_paths == 4
    active[1] = False
    rates.changed(1, still_sending=False)
    rates.solve(active)
    assert rates.rate[[0, 2, 3]].tolist() == [10.0, 20.0, 20.0]
    assert rates.resolved_paths == 5          # A alone was re-solved, C was not
    # One of C's two paths finishes: C is still sending, its other path takes all of r2.
    active[2] = False
    rates.changed(2, still_sending=True)
    rates.solve(active)
    assert rates.rate[[0, 3]].tolist() == [10.0, 40.0]
    assert rates.resolved_paths == 6


def test_a_pattern_bridging_two_components_merges_them():
    """``r0`` and ``r1`` (10 Gb/s each) carry patterns A and C apart; B crosses both and joins
    them: one component, re-solved together (A 5, B 5, C 5 on r1 with B)."""
    cap = np.array([10.0, 10.0])
    ptr = np.array([0, 1, 3, 4])
    res = np.array([0, 0, 1, 1])
    pat_paths = [np.array([0]), np.array([1]), np.array([2])]
    rates = ComponentRates(cap, ptr, res, np.full(3, np.inf), np.ones(3), pat_paths)
    rates.add(0)
    rates.add(2)
    assert rates.pat_comp[0] != rates.pat_comp[2]
    rates.add(1)
    assert len(set(rates.pat_comp.tolist())) == 1
    rates.solve(np.ones(3, bool))
    assert rates.rate.tolist() == [5.0, 5.0, 5.0]
    # B stops: the component splits back into two, each re-solved alone at 10 Gb/s.
    rates.changed(1, still_sending=False)
    assert rates.pat_comp[0] != rates.pat_comp[2] and rates.pat_comp[1] == -1
    rates.solve(np.array([True, False, True]))
    assert rates.rate[[0, 2]].tolist() == [10.0, 10.0]


def test_a_pattern_sending_alone_is_solved_whole_without_components():
    """``r0 = 10 Gb/s`` shared by A (paths 0, 1) and B (path 2); ``r1 = 40 Gb/s`` for C (path 3).

    A sends alone: no resource set, no component, the full solve (5 + 5 Gb/s). B starts: A gets
    its component and B joins it (10 / 3 each). A stops: B is re-solved alone in its component
    (10). C starts on its own resource: a second component, and B's is left alone."""
    cap = np.array([10.0, 40.0])
    ptr = np.array([0, 1, 2, 3, 4])
    res = np.array([0, 0, 0, 1])
    pat_paths = [np.array([0, 1]), np.array([2]), np.array([3])]
    rates = ComponentRates(cap, ptr, res, np.full(4, np.inf), np.ones(4), pat_paths)
    active = np.array([True, True, False, False])
    rates.add(0)
    assert rates.solo == 0 and rates.pat_comp[0] == -1 and not rates.members and not rates._uniq
    rates.solve(active, np.array([0, 1]))
    assert rates.rate[:2].tolist() == [5.0, 5.0] and rates.bneck[:2].tolist() == [0, 0]
    assert rates.resolved_paths == 2
    rates.changed(0, still_sending=True)      # nothing finished that matters: solved whole again
    rates.solve(active)
    assert rates.resolved_paths == 4
    active[2] = True
    rates.add(1)
    assert rates.solo == -1 and rates.pat_comp[0] == rates.pat_comp[1] >= 0
    rates.solve(active)
    assert rates.rate[:3].tolist() == pytest.approx([10 / 3] * 3, rel=1e-15)
    active[:2] = False
    rates.changed(0, still_sending=False)
    rates.solve(active)
    assert rates.rate[2] == 10.0 and rates.resolved_paths == 8
    active[3] = True
    rates.add(2)
    assert rates.pat_comp[2] >= 0 and rates.pat_comp[2] != rates.pat_comp[1]
    rates.solve(active)
    assert rates.rate[[2, 3]].tolist() == [10.0, 40.0] and rates.resolved_paths == 9   # B not re-solved
