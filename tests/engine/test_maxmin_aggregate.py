"""Aggregating provably identical flows (``maxmin(..., aggregate=True)``): same rates, levels and
a valid allocation as the un-aggregated solve; only flows with equal paths, demands and weights
are merged, whatever the hash says.
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from designer.engine.solve import aggregate as maxmin_module
from designer.engine.solve.solver import assert_valid_allocation, maxmin


def csr(paths):
    ptr = np.concatenate([[0], np.cumsum([len(p) for p in paths])]).astype(np.int64)
    return ptr, np.array([r for p in paths for r in p], dtype=np.int64)


def both(cap, paths, demand=None, weights=None):
    """(plain, aggregated) allocations of one instance, the aggregated one validated."""
    ptr, res = csr(paths)
    plain = maxmin(cap, ptr, res, demand, weights=weights)
    agg = maxmin(cap, ptr, res, demand, weights=weights, aggregate=True)
    assert_valid_allocation(cap, ptr, res, demand, agg, weights=weights)
    return plain, agg


def assert_same(plain, agg):
    np.testing.assert_allclose(agg.rates_gbps, plain.rates_gbps, rtol=1e-12, atol=0)
    np.testing.assert_allclose(agg.flow_level, plain.flow_level, rtol=1e-12, atol=0)
    np.testing.assert_allclose(agg.load_gbps, plain.load_gbps, rtol=1e-12, atol=1e-12)
    assert agg.levels == plain.levels


def test_three_identical_flows_and_one_longer():
    """Flows f0, f1, f2 cross l0 only; f3 crosses l0 and l1.

        f0, f1, f2, f3: [A]==l0 90G==[B]      f3 continues: [B]--l1 100G--[C]

    All four share l0: 90 / 4 = 22.5 each. f0..f2 merge into one flow of weight 3 (22.5 · 3 =
    67.5), f3 stays alone: 2 aggregate flows.
    """
    paths = [[0], [0], [0], [0, 1]]
    ptr, res = csr(paths)
    agg = maxmin_module.aggregate_identical(ptr, res, np.full(4, np.inf), np.ones(4), min_gain=0.0)
    assert agg.group.tolist() == [0, 0, 0, 1]
    assert agg.weights.tolist() == [3.0, 1.0]
    plain, a = both([90.0, 100.0], paths)
    assert a.rates_gbps.tolist() == [22.5] * 4
    assert a.bottleneck.tolist() == [0, 0, 0, 0]
    assert_same(plain, a)


def test_demand_and_weight_must_match_to_merge():
    """Same path l0 (100G) for all: f0, f1 demand 10; f2 demand 10 weight 2; f3 no demand.

    Only f0 and f1 merge (f2 has another weight, f3 another demand). f2 reaches its demand at
    level 10 / 2 = 5, f0 and f1 at level 10; f3 takes the rest: 100 - 3 · 10 = 70.
    """
    paths = [[0], [0], [0], [0]]
    dem = np.array([10.0, 10.0, 10.0, np.inf])
    w = np.array([1.0, 1.0, 2.0, 1.0])
    ptr, res = csr(paths)
    agg = maxmin_module.aggregate_identical(ptr, res, dem, w, min_gain=0.0)
    assert agg.group.tolist() == [0, 0, 1, 2]
    plain, a = both([100.0], paths, dem, w)
    assert a.rates_gbps.tolist() == [10.0, 10.0, 10.0, 70.0]
    assert a.bottleneck.tolist() == [-1, -1, -1, 0]
    assert_same(plain, a)


def test_same_resources_in_another_order_are_not_merged():
    """[0, 1] and [1, 0] cross the same links but are not the same row: kept apart (still exact)."""
    ptr, res = csr([[0, 1], [1, 0], [0, 1]])
    agg = maxmin_module.aggregate_identical(ptr, res, np.full(3, np.inf), np.ones(3), min_gain=0.0)
    assert agg.group.tolist() == [0, 1, 0]


def test_nothing_to_merge_returns_none():
    """All-to-all-like: every path distinct → no aggregation (the plain kernel runs)."""
    ptr, res = csr([[0, 1], [1, 2], [2, 0]])
    assert maxmin_module.aggregate_identical(ptr, res, np.full(3, np.inf), np.ones(3)) is None


def test_hash_collisions_never_merge_different_flows(monkeypatch):
    """With a hash that sends every row to one bucket, only truly equal flows merge."""
    monkeypatch.setattr(maxmin_module, "_row_hash", lambda ptr, res: np.zeros(len(ptr) - 1, dtype=np.uint64))
    rng = np.random.default_rng(5)
    base = [list(rng.integers(0, 6, rng.integers(1, 4))) for _ in range(6)]
    paths = [base[k] for k in rng.integers(0, 6, 60)]
    cap = rng.uniform(10, 100, 6)
    plain, a = both(cap, paths)
    assert_same(plain, a)
    ptr, res = csr(paths)
    agg = maxmin_module.aggregate_identical(ptr, res, np.full(60, np.inf), np.ones(60), min_gain=0.0)
    for g in range(len(agg.weights)):
        members = np.flatnonzero(agg.group == g)
        assert len({tuple(paths[m]) for m in members}) == 1


@st.composite
def duplicated_instances(draw):
    """A few distinct (path, demand, weight) rows, each repeated 1–6 times, shuffled."""
    n_res = draw(st.integers(1, 6))
    cap = draw(st.lists(st.sampled_from([0.0, 1.0, 10.0, 25.0, 100.0, np.inf]), min_size=n_res, max_size=n_res))
    rows = draw(st.lists(st.tuples(
        st.lists(st.integers(0, n_res - 1), min_size=0, max_size=4),
        st.sampled_from([np.inf, 0.0, 1.0, 5.0, 40.0]),
        st.sampled_from([1.0, 0.5, 2.0, 5 / 18])), min_size=1, max_size=6))
    reps = draw(st.lists(st.integers(1, 6), min_size=len(rows), max_size=len(rows)))
    flows = [row for row, k in zip(rows, reps) for _ in range(k)]
    order = draw(st.permutations(range(len(flows))))
    flows = [flows[i] for i in order]
    # Flows crossing no resource (or only unlimited ones) without a demand are unbounded (rate
    # inf) in both forms: kept in on purpose.
    return cap, [f[0] for f in flows], np.array([f[1] for f in flows]), np.array([f[2] for f in flows])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(duplicated_instances())
def test_aggregated_solve_equals_plain_solve(instance):
    cap, paths, dem, w = instance
    plain, a = both(cap, paths, dem, w)
    np.testing.assert_allclose(a.rates_gbps, plain.rates_gbps, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(a.flow_level, plain.flow_level, rtol=1e-12, atol=1e-300)
    # ``levels`` (the solver's round count, a diagnostic) is not compared: Hypothesis found
    # instances where grouping saves a round (demand-0 and unbounded flows) and where rounding of
    # k·demand / (k·weight) adds one, with rates and levels per flow equal in both.


@pytest.mark.parametrize("seed", [0, 1])
def test_large_duplicated_instance(seed):
    """2,000 distinct random paths over 500 resources, each repeated 1–20 times (~21k flows)."""
    rng = np.random.default_rng(seed)
    distinct = [list(rng.integers(0, 500, rng.integers(2, 8))) for _ in range(2000)]
    k = rng.integers(1, 21, 2000)
    paths = [p for p, n in zip(distinct, k) for _ in range(n)]
    perm = rng.permutation(len(paths))
    paths = [paths[i] for i in perm]
    dem = np.repeat(np.where(rng.random(2000) < 0.1, rng.uniform(1, 50, 2000), np.inf), k)[perm]
    cap = rng.choice([25.0, 100.0, 400.0], 500) * rng.uniform(0.5, 1.5, 500)
    plain, a = both(cap, paths, dem)
    assert_same(plain, a)
