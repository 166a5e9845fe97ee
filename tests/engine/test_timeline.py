"""Timeline (fluid) mode: completion times by hand, and the warm-started kernel against a brute-force
event-by-event reference that re-solves from scratch with ``maxmin_reference`` at each completion."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from designer.engine.errors import InvalidWorkload
from designer.engine.solve.solver import timeline as timeline_from_solver
from designer.engine.solve.timeline import timeline, timeline_reference

GB = 1e9 / 8  # bytes sent in one second at 1 Gb/s


def test_short_flow_finishes_then_long_flow_takes_the_link():
    """Two flows on one 100G link: 50G each until the short one is done.

        f0 (25 Gb), f1 (100 Gb): [h0]==l0 100G==[h1]

    f0 finishes at 25/50 = 0.5 s; f1 has sent 25 Gb, its last 75 Gb go at 100G: 0.75 s more.
    """
    seen = []

    def record(t, active, rates, load):
        seen.append((t, active.tolist(), rates.tolist(), load.tolist()))

    result = timeline([100.0], [0, 1, 2], [0, 0], [25 * GB, 100 * GB], on_event=record)
    np.testing.assert_allclose(result.completion_s, [0.5, 1.25])
    np.testing.assert_allclose(result.events_s, [0.0, 0.5, 1.25])
    assert seen[0] == (0.0, [True, True], [50.0, 50.0], [100.0])
    assert seen[1] == (0.5, [False, True], [0.0, 100.0], [100.0])
    assert seen[2][1] == [False, False]


def test_demand_capped_and_chained_flows():
    """Three flows; the long one's bottleneck moves when the others finish.

        f0 (10G demand, 10 Gb): l0 100G           f0 at 10 -> done at 1 s
        f1 (60 Gb):             l0, l1 40G        f1, f2 share l1: 20 each
        f2 (20 Gb):             l1                f2 done at 1 s; f1 then 40G on l1:
                                                   40 Gb left / 40 -> done at 2 s
    """
    result = timeline([100.0, 40.0], [0, 1, 3, 4], [0, 0, 1, 1], [10 * GB, 60 * GB, 20 * GB],
                      demand_gbps=[10.0, np.inf, np.inf])
    np.testing.assert_allclose(result.completion_s, [1.0, 2.0, 1.0])


def test_zero_bytes_zero_capacity_and_start_time():
    """f0 has 0 bytes (done at start), f1 crosses a failed link (never done), f2 runs alone.

        f0: l1 (0 bytes)   f1: l0 0G   f2: l1 10G, 10 Gb, start at 5 s -> done at 6 s
    """
    result = timeline([0.0, 10.0], [0, 1, 2, 3], [1, 0, 1], [0.0, GB, 10 * GB], start_s=5.0)
    assert result.completion_s[0] == 5.0 and np.isinf(result.completion_s[1])
    np.testing.assert_allclose(result.completion_s[2], 6.0)
    assert not result.truncated


def test_max_events_truncates():
    result = timeline([10.0], [0, 1, 2, 3], [0, 0, 0], [GB, 2 * GB, 3 * GB], max_events=1)
    assert result.truncated and np.isnan(result.completion_s[1:]).all()
    assert np.isfinite(result.completion_s[0])


def test_re_exported_from_solver_and_validates_bytes():
    assert timeline_from_solver is timeline
    with pytest.raises(InvalidWorkload) as err:
        timeline([1.0], [0, 1], [0], [-1.0])
    assert err.value.problems[0].path == "bytes[0]"


@st.composite
def fluid_instances(draw):
    n_res = draw(st.integers(1, 5))
    cap = np.array(draw(st.lists(st.sampled_from([0.0, 10.0, 25.0, 40.0, 100.0, np.inf]),
                                 min_size=n_res, max_size=n_res)))
    paths = draw(st.lists(st.lists(st.integers(0, n_res - 1), min_size=1, max_size=4), max_size=10))
    n = len(paths)
    demand = np.array(draw(st.lists(st.sampled_from([np.inf, np.inf, 5.0, 20.0]), min_size=n, max_size=n)))
    size = np.array(draw(st.lists(st.one_of(st.sampled_from([0.0, 1e9, 2e9, 5e9]), st.floats(1e6, 1e10)),
                                  min_size=n, max_size=n)))
    ptr = np.concatenate([[0], np.cumsum([len(p) for p in paths])]).astype(np.int64)
    res = np.array([r for p in paths for r in p], dtype=np.int64)
    return cap, ptr, res, size, demand


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fluid_instances())
def test_warm_started_timeline_matches_reference(instance):
    cap, ptr, res, size, demand = instance
    fast = timeline(cap, ptr, res, size, demand)
    slow = timeline_reference(cap, ptr, res, size, demand)
    np.testing.assert_allclose(fast.completion_s, slow.completion_s, rtol=1e-7)
    np.testing.assert_allclose(fast.events_s, slow.events_s, rtol=1e-7)
    assert fast.flows_resolved <= slow.flows_resolved


def test_larger_timeline_matches_reference_and_saves_work():
    """300 flows over 40 resources with varied sizes: warm start re-solves far fewer flows."""
    from designer.engine.benchmarks.solver import random_instance

    cap, ptr, res, dem = random_instance(300, 40, seed=5)
    size = np.random.default_rng(6).lognormal(np.log(1e9), 1.0, 300)
    fast = timeline(cap, ptr, res, size, dem)
    slow = timeline_reference(cap, ptr, res, size, dem)
    np.testing.assert_allclose(fast.completion_s, slow.completion_s, rtol=1e-7)
    assert fast.flows_resolved < slow.flows_resolved


def test_on_event_contract():
    """``on_event`` runs after the first solve and after every re-solve, with the live state.

    120 flows of varied sizes over 12 resources (random paths), finishing one by one (simulate.py
    aggregates utilization over time through this callback). At every
    call: inactive flows have rate 0, ``load`` is the sum of the active rates on each resource,
    and no resource is over capacity; completion times still match the brute-force reference.
    """
    from designer.engine.benchmarks.solver import random_instance

    cap, ptr, res, dem = random_instance(120, 12, seed=7)
    size = np.random.default_rng(8).lognormal(np.log(1e9), 1.0, 120)
    owner = np.repeat(np.arange(120), np.diff(ptr))
    calls = []

    def record(t, active, rates, load):
        assert not (active.flags.writeable or rates.flags.writeable or load.flags.writeable)
        assert (rates[~active] == 0).all() and (rates[active] > 0).all()
        np.testing.assert_allclose(load, np.bincount(res, weights=rates[owner], minlength=len(cap)),
                                   rtol=1e-9, atol=1e-9)
        assert (load <= cap * (1 + 1e-9)).all()
        calls.append((t, int(active.sum())))

    result = timeline(cap, ptr, res, size, dem, on_event=record)
    assert [t for t, _ in calls] == result.events_s.tolist()
    assert calls[0][1] == 120 and calls[-1][1] == 0
    assert [n for _, n in calls] == sorted((n for _, n in calls), reverse=True)
    slow = timeline_reference(cap, ptr, res, size, dem)
    np.testing.assert_allclose(result.completion_s, slow.completion_s, rtol=1e-9)


# ------------------------------------------------------------------------------ weighted timeline
def test_weighted_flows_then_the_survivor_takes_the_link():
    """Weights 3 and 1 on one 100G link, 75 Gb each.

        f0 (w=3, 75 Gb), f1 (w=1, 75 Gb): [h0]==l0 100G==[h1]

    75 / 25 until f0 is done at 1 s; f1 has sent 25 Gb, its last 50 Gb go at 100G: 0.5 s more.
    """
    seen = []
    result = timeline([100.0], [0, 1, 2], [0, 0], [75 * GB, 75 * GB], weights=[3.0, 1.0],
                      on_event=lambda t, a, r, l: seen.append(r.tolist()))
    np.testing.assert_allclose(result.completion_s, [1.0, 1.5])
    assert seen[0] == [75.0, 25.0] and seen[1] == [0.0, 100.0]
    slow = timeline_reference([100.0], [0, 1, 2], [0, 0], [75 * GB, 75 * GB], weights=[3.0, 1.0])
    np.testing.assert_allclose(slow.completion_s, [1.0, 1.5])


def test_timeline_validates_weights():
    with pytest.raises(InvalidWorkload) as err:
        timeline([1.0], [0, 1], [0], [GB], weights=[0.0])
    assert err.value.problems[0].path == "weights[0]"


@st.composite
def weighted_fluid_instances(draw, integer=False):
    cap, ptr, res, size, demand = draw(fluid_instances())
    n = len(ptr) - 1
    weight = st.integers(1, 5).map(float) if integer else st.one_of(
        st.sampled_from([0.5, 1.0, 2.0, 5.0]), st.floats(0.1, 10.0))
    return cap, ptr, res, size, demand, np.array(draw(st.lists(weight, min_size=n, max_size=n)), dtype=float)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(weighted_fluid_instances())
def test_weighted_warm_started_timeline_matches_reference(instance):
    cap, ptr, res, size, demand, w = instance
    fast = timeline(cap, ptr, res, size, demand, weights=w)
    slow = timeline_reference(cap, ptr, res, size, demand, weights=w)
    np.testing.assert_allclose(fast.completion_s, slow.completion_s, rtol=1e-7)
    np.testing.assert_allclose(fast.events_s, slow.events_s, rtol=1e-7)
    assert fast.flows_resolved <= slow.flows_resolved


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fluid_instances())
def test_unit_weights_timeline_is_the_unweighted_one_bit_for_bit(instance):
    cap, ptr, res, size, demand = instance
    plain = timeline(cap, ptr, res, size, demand)
    ones = timeline(cap, ptr, res, size, demand, weights=np.ones(len(ptr) - 1))
    assert np.array_equal(plain.completion_s, ones.completion_s)
    assert np.array_equal(plain.events_s, ones.events_s)
    assert (plain.levels, plain.flows_resolved) == (ones.levels, ones.flows_resolved)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(weighted_fluid_instances(integer=True))
def test_integer_weight_k_timeline_is_k_repeated_unit_flows(instance):
    """A flow of weight k and B bytes finishes when its k unit copies of B / k bytes each do."""
    cap, ptr, res, size, demand, w = instance
    weighted = timeline(cap, ptr, res, size, demand, weights=w)
    k = w.astype(np.int64)
    copy_of = np.repeat(np.arange(len(k)), k)
    rptr = np.concatenate([[0], np.cumsum(np.diff(ptr)[copy_of])]).astype(np.int64)
    rres = np.concatenate([res[ptr[f]:ptr[f + 1]] for f in copy_of] + [np.zeros(0, np.int64)])
    repeated = timeline(cap, rptr, rres, (size / w)[copy_of], (demand / w)[copy_of])
    done = np.full(len(k), -np.inf)
    np.maximum.at(done, copy_of, repeated.completion_s)
    np.testing.assert_allclose(weighted.completion_s, done, rtol=1e-7)


def test_larger_weighted_timeline_matches_reference():
    """300 flows over 40 resources, weights 1-18: warm start stays exact with weights."""
    from designer.engine.benchmarks.solver import random_instance

    cap, ptr, res, dem = random_instance(300, 40, seed=9)
    size = np.random.default_rng(10).lognormal(np.log(1e9), 1.0, 300)
    w = np.random.default_rng(11).integers(1, 19, 300).astype(float)
    fast = timeline(cap, ptr, res, size, dem, weights=w)
    slow = timeline_reference(cap, ptr, res, size, dem, weights=w)
    np.testing.assert_allclose(fast.completion_s, slow.completion_s, rtol=1e-7)
    assert fast.flows_resolved < slow.flows_resolved
