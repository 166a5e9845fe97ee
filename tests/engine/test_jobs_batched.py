"""Batched completions in the job's event loop (``event_quantum`` ε, dag.py "Batched completions").

Hand cases on one link ``r0`` of 8 Gb/s (10⁹ B/s), every path crossing it, no latency::

    pattern A: a1 = 1.00e9 B, a2 = 1.02e9 B        pattern B: b = 3e9 B        (one phase, both)

Exact: three paths at 1/3·10⁹ B/s; a1 ends at 3 s; then a2 and b at 0.5·10⁹: a2 ends at
3 + 0.02/0.5 = 3.04 s; b alone at 10⁹ (the link never idles): b ends at 5.02e9 / 10⁹ = 5.02 s.

ε = 0.05: the window from t1 = 3 s reaches 3 + 0.05·3 = 3.15 s; a2, at the rate in force, ends at
1.02e9 / (1/3·10⁹) = 3.06 s inside it, and with it pattern A, so the window ends there. The link
idles at 1/3·10⁹ B/s for 0.06 s (0.02e9 B = 0.02 s of its capacity): A ends at 3.06 s (0.02 late),
b at 3.06 + (3e9 − 1.02e9)/10⁹ = 5.04 s (late by exactly the idle 0.02 s).

ε = 0.01: the window reaches 3.03 s, before a2's 3.06 s: nothing to batch, the exact times.

The MoE cases: 8 DGX-H100 on a 3:1 leaf-spine (one ToR per 2 hosts), expert all-to-all EP 32
through the spines, ECMP-hashed: 316 exact events, 36 at ε = 0.05.
"""
from types import SimpleNamespace

import numpy as np
import pytest

from designer.engine.analysis.simulate import prepare
from designer.engine.errors import InvalidWorkload
from designer.engine.model.fabrics import build_cluster
from designer.engine.model.topology import Topology
from designer.engine.traffic.jobs import dag
from designer.engine.traffic.jobs.dag import run_job
from designer.engine.traffic.jobs.spec import JobSpec

MOE = {"layout": {"tp": 1, "ep": 32, "dp": 64},
       "template": {"model": "deepseek-v3", "microbatches": 1, "seq_len": 4096}}


def _one_link(paths_bytes, pattern_of, phases, cap_gbps=8.0):
    """A prepared scenario of paths that all cross one resource (SimpleNamespace: what run_job reads)."""
    n, n_pat = len(paths_bytes), max(pattern_of) + 1
    flows = SimpleNamespace(pattern=np.array(pattern_of), bytes=np.array(paths_bytes, float),
                            demand_gbps=np.full(n, np.inf), pattern_ids=[f"p{k}" for k in range(n_pat)],
                            pattern_efficiency=[1.0] * n_pat, pattern_latency_s=[0.0] * n_pat, pattern_kinds=[])
    routes = SimpleNamespace(flow_ptr=np.arange(n + 1), flow_res=np.zeros(n, dtype=np.int64),
                             owner=np.arange(n), share=np.ones(n), weight=np.ones(n), status=np.zeros(n, int))
    prep = SimpleNamespace(flows=flows, routes=routes, capacity_gbps=np.array([cap_gbps]), topology=None)
    return prep, JobSpec(None, phases)


def _hand(extra_phases=()):
    phases = [{"id": "step", "compute_s": 0.0, "patterns": [0, 1], "after": []}, *extra_phases]
    return _one_link([1.00e9, 1.02e9, 3e9], [0, 0, 1], phases)


def _ends(job):
    return {pid: t["end_s"] for ph in job["phases"] for pid, t in ph["patterns"].items()}


def test_a_completion_inside_the_quantum_finishes_at_its_own_time_and_frees_its_rate_at_the_end():
    prep, job = _hand()
    exact = run_job(prep, job, quantum=0)
    assert _ends(exact) == pytest.approx({"p0": 3.04, "p1": 5.02}, rel=1e-12)
    assert exact["events"] == 3 and exact["events_batched"] == 0 and exact["batching_idle_s"] == 0
    batched = run_job(prep, job, quantum=0.05)
    assert _ends(batched) == pytest.approx({"p0": 3.06, "p1": 5.04}, rel=1e-12)
    assert batched["events"] == 2 and batched["events_batched"] == 1
    # b is late by exactly the capacity-time the link idled (one resource, saturated to the end).
    assert batched["batching_idle_s"] == pytest.approx(0.02, rel=1e-9)
    assert batched["step_time_s"] - exact["step_time_s"] == pytest.approx(batched["batching_idle_s"], rel=1e-9)
    assert batched["event_quantum"] == 0.05


def test_a_completion_past_the_quantum_is_its_own_event():
    prep, job = _hand()
    small = run_job(prep, job, quantum=0.01)
    assert _ends(small) == pytest.approx({"p0": 3.04, "p1": 5.02}, rel=1e-12)
    assert small["events_batched"] == 0


def test_a_timer_inside_the_quantum_cuts_the_window():
    """A compute-only phase ending at 3.01 s: the window may not pass it, so a2 (3.06 s at the
    stale rate) is not batched and every time is exact."""
    prep, job = _hand([{"id": "compute", "compute_s": 3.01, "patterns": [], "after": []}])
    batched, exact = run_job(prep, job, quantum=0.05), run_job(prep, job, quantum=0)
    assert _ends(batched) == pytest.approx({"p0": 3.04, "p1": 5.02}, rel=1e-12)
    assert batched["phases"][1]["end_s"] == 3.01 == exact["phases"][1]["end_s"]


def test_a_pattern_that_finishes_inside_ends_the_window_at_its_end():
    """Pattern A = a1 alone (ends at 3 s, the earliest completion), C = 1.02e9 B: A ends at its exact
    time and the window stops there, so C and B are re-solved at once: all times exact."""
    prep, job = _one_link([1.00e9, 1.02e9, 3e9], [0, 2, 1],
                          [{"id": "step", "compute_s": 0.0, "patterns": [0, 1, 2], "after": []}])
    batched = run_job(prep, job, quantum=0.05)
    assert _ends(batched) == pytest.approx({"p0": 3.0, "p1": 5.02, "p2": 3.04}, rel=1e-12)
    assert batched["events_batched"] == 0


@pytest.fixture(scope="module")
def leaf_spine_moe():
    doc = build_cluster("dgx-h100", 8, fabric="leaf-spine", oversubscription=3, hosts_per_rack=2)
    return prepare({"topology": Topology.from_document(doc), "workload": {"job": MOE}})


def test_zero_quantum_is_the_reference_loop(leaf_spine_moe):
    prep = leaf_spine_moe
    full = run_job(prep, prep.scenario.job, incremental=False, quantum=0)
    inc = run_job(prep, prep.scenario.job, quantum=0)
    assert inc["events"] == full["events"] and inc["events_batched"] == 0 == full["events_batched"]
    for key in ("step_time_s", "exposed_communication_s"):
        assert inc[key] == pytest.approx(full[key], rel=1e-9)


def test_batched_leaf_spine_moe_step_takes_fewer_events_and_is_late_within_the_idle_bound(leaf_spine_moe):
    prep = leaf_spine_moe
    exact = run_job(prep, prep.scenario.job, quantum=0)
    batched = run_job(prep, prep.scenario.job, quantum=0.05)
    assert batched["complete"] and batched["events"] < exact["events"] / 2 and batched["events_batched"] > 0
    late = batched["step_time_s"] - exact["step_time_s"]
    assert -1e-12 * exact["step_time_s"] <= late <= batched["batching_idle_s"] + 1e-12 * exact["step_time_s"]
    assert batched["exposed_communication_s"] == pytest.approx(exact["exposed_communication_s"], rel=0.005)


def test_batched_paths_move_exactly_their_bytes(leaf_spine_moe, monkeypatch):
    """No path is marked done with bytes left, none moves more than it has: over the run, the bytes
    moved (each path at its rate until it finishes, inside or at the window's end) equal the bytes
    to send."""
    prep, moved, advance = leaf_spine_moe, [], dag._advance

    def counting(st, rates, t, t_next):
        left = st.left[st.idx].copy()
        idx = st.idx
        advance(st, rates, t, t_next)
        sent = left - st.left[idx]
        assert np.all(sent <= rates * (t_next - t) * dag.BYTES_PER_GBPS_S * (1 + 1e-9) + 1e-6)
        moved.append(sent.sum())
        if not hasattr(counting, "total"):
            counting.total = st.left[~st.lost[st.path_pattern]].sum()

    monkeypatch.setattr(dag, "_advance", counting)
    job = run_job(prep, prep.scenario.job, quantum=0.05)
    assert job["complete"] and job["events_batched"] > 0
    assert sum(moved) == pytest.approx(counting.total, rel=1e-9)


@pytest.mark.parametrize("value", [-0.01, 0.5, "0.01", float("nan")])
def test_a_bad_event_quantum_is_a_located_error(value):
    doc = build_cluster("dgx-h100", 2)
    job = {"layout": {"tp": 8, "dp": 2}, "template": MOE["template"] | {"model": "llama3-8b"}, "event_quantum": value}
    with pytest.raises(InvalidWorkload) as err:
        prepare({"topology": Topology.from_document(doc), "workload": {"job": job}})
    assert [p.path for p in err.value.problems] == ["workload.job.event_quantum"]


def test_the_job_document_sets_the_quantum_and_the_result_says_it(leaf_spine_moe):
    doc = build_cluster("dgx-h100", 8, fabric="leaf-spine", oversubscription=3, hosts_per_rack=2)
    prep = prepare({"topology": Topology.from_document(doc), "workload": {"job": {**MOE, "event_quantum": 0}}})
    assert prep.scenario.job.event_quantum == 0.0
    job = run_job(prep, prep.scenario.job)
    assert job["event_quantum"] == 0.0 and job["events_batched"] == 0
    assert run_job(leaf_spine_moe, leaf_spine_moe.scenario.job)["event_quantum"] == dag.EVENT_QUANTUM


def test_a_shared_cluster_runs_at_the_smallest_quantum_its_jobs_ask_for():
    from designer.engine.traffic.jobs.shared import PlacedJob, merged_spec

    def placed(name, quantum):
        spec = JobSpec(None, [{"id": "s", "compute_s": 0.0, "wait_s": 0.0, "patterns": [], "after": []}],
                       event_quantum=quantum)
        return PlacedJob(name, name, np.zeros(0, dtype=np.int64), {}, spec=spec)

    assert merged_spec([placed("a", 0.02), placed("b", None), placed("c", 0.0)]).event_quantum == 0.0
    assert merged_spec([placed("a", 0.02), placed("b", None)]).event_quantum == 0.02
    assert merged_spec([placed("a", None), placed("b", None)]).event_quantum is None
