"""Max-min fair solver: hand-checkable cases, and the compiled solver against the reference.

Every test checks the allocation with ``assert_valid_allocation`` (capacity never exceeded, rates
within demand, every unsatisfied flow has a saturated bottleneck on which it is among the largest).
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from designer.engine.errors import InvalidWorkload
from designer.engine.solve.solver import Allocation, assert_valid_allocation, maxmin, maxmin_reference

METHODS = ["auto", "reference"]


def solve(capacity, paths, demand=None, method="auto") -> Allocation:
    """Solve with paths given as lists of resource indices; validate the result."""
    ptr = np.concatenate([[0], np.cumsum([len(p) for p in paths])]).astype(np.int64)
    res = np.array([r for p in paths for r in p], dtype=np.int64)
    alloc = maxmin(capacity, ptr, res, demand, method=method)
    assert_valid_allocation(capacity, ptr, res, demand, alloc)
    return alloc


@pytest.mark.parametrize("method", METHODS)
def test_two_flows_share_a_link(method):
    """Two flows on one 100G link split it evenly.

        f0, f1: [h0]==l0 100G==[h1]
    """
    a = solve([100.0], [[0], [0]], method=method)
    assert a.rates_gbps.tolist() == [50.0, 50.0]
    assert a.bottleneck.tolist() == [0, 0]
    assert a.load_gbps.tolist() == [100.0] and a.utilization.tolist() == [1.0]
    assert a.levels == 1


@pytest.mark.parametrize("method", METHODS)
def test_three_flows_on_two_links_classic(method):
    """The classic max-min example: the long flow crosses both links.

        f0: [A]--l0 10G--[B]--l1 10G--[C]      (long flow, both links)
        f1: [A]--l0--[B]                         f2: [B]--l1--[C]

    Both links saturate at 10/2 = 5 each: everyone gets 5 (not 10/3 for the long one).
    Then with l1 = 4G: l1 saturates first at 2 (f0, f2), f1 takes what is left of l0: 8.
    """
    a = solve([10.0, 10.0], [[0, 1], [0], [1]], method=method)
    np.testing.assert_allclose(a.rates_gbps, [5.0, 5.0, 5.0])
    b = solve([10.0, 4.0], [[0, 1], [0], [1]], method=method)
    np.testing.assert_allclose(b.rates_gbps, [2.0, 8.0, 2.0])
    assert b.bottleneck.tolist() == [1, 0, 1]
    assert b.levels == 2


@pytest.mark.parametrize("method", METHODS)
def test_demand_capped_flow_leaves_room(method):
    """A 10G-capped flow on a 100G link leaves 90G for the other two (45 each).

        f0 (demand 10G), f1, f2: [h0]==l0 100G==[h1]
    """
    a = solve([100.0], [[0], [0], [0]], demand=[10.0, np.inf, np.inf], method=method)
    np.testing.assert_allclose(a.rates_gbps, [10.0, 45.0, 45.0])
    assert a.bottleneck.tolist() == [-1, 0, 0]


@pytest.mark.parametrize("method", METHODS)
def test_demand_equal_to_fair_share_counts_as_demand_limited(method):
    """Demand exactly equal to the fair share: the flow runs at its demand (bottleneck -1 or the
    link are both valid; the compiled solver prefers the demand on ties).

        f0 (demand 50G), f1: [h0]==l0 100G==[h1]
    """
    a = solve([100.0], [[0], [0]], demand=[50.0, np.inf], method=method)
    np.testing.assert_allclose(a.rates_gbps, [50.0, 50.0])


@pytest.mark.parametrize("method", METHODS)
def test_zero_capacity_resource(method):
    """A failed (0G) link stops the flow crossing it; the other flow gets its whole link.

        f0: [A]--l0 0G (failed)--[B]--l1 40G--[C]
        f1:                      [B]--l1 40G--[C]
    """
    a = solve([0.0, 40.0], [[0, 1], [1]], method=method)
    assert a.rates_gbps.tolist() == [0.0, 40.0]
    assert a.bottleneck.tolist() == [0, 1]
    assert a.utilization.tolist() == [0.0, 1.0]


@pytest.mark.parametrize("method", METHODS)
def test_clos_2x2_with_ecmp_hash_collision(method):
    """A 2-leaf, 2-spine Clos; ECMP hashes both cross-leaf flows onto spine0.

               [spine0]        [spine1]
              //  u0  \\\\ d0     /    \\
        [leaf0]          [leaf1]          (all uplinks/downlinks 100G,
         |  |               |  |           host links 400G, never the bottleneck)
        h0  h1             h2  h3

        resources: 0 leaf0>spine0, 1 spine0>leaf1, 2 leaf0>spine1, 3 spine1>leaf1,
                   4 h0>leaf0, 5 h1>leaf0, 6 leaf1>h2, 7 leaf1>h3
        f0: h0->h2 via spine0 [4, 0, 1, 6]      f1: h1->h3 via spine0 [5, 0, 1, 7]
        f2: h1->h3 via spine1 [5, 2, 3, 7]      (the second flow of the same pair, other spine)

    f0 and f1 collide on spine0's links (50G each) although spine1 carries only f2 (100G).
    """
    cap = [100.0, 100.0, 100.0, 100.0, 400.0, 400.0, 400.0, 400.0]
    a = solve(cap, [[4, 0, 1, 6], [5, 0, 1, 7], [5, 2, 3, 7]], method=method)
    np.testing.assert_allclose(a.rates_gbps, [50.0, 50.0, 100.0])
    assert a.bottleneck[0] in (0, 1) and a.bottleneck[1] in (0, 1) and a.bottleneck[2] in (2, 3)
    np.testing.assert_allclose(a.load_gbps[[4, 5]], [50.0, 150.0])


@pytest.mark.parametrize("method", METHODS)
def test_resource_listed_twice_counts_twice(method):
    """A path that crosses l0 twice consumes twice its rate there.

        f0: l0, l0 (out and back)     f1: l0       l0 = 90G -> 3 shares of 30
    """
    a = solve([90.0], [[0, 0], [0]], method=method)
    np.testing.assert_allclose(a.rates_gbps, [30.0, 30.0])
    np.testing.assert_allclose(a.load_gbps, [90.0])


@pytest.mark.parametrize("method", METHODS)
def test_unlimited_resources_and_empty_paths(method):
    """np.inf capacity never limits; a flow with no finite resource and no demand is unbounded.

        f0: l0 (inf)            -> inf, bottleneck -1
        f1: l0 (inf), l1 (10G)  -> 10
        f2: no resources, demand 3 -> 3
    """
    a = solve([np.inf, 10.0], [[0], [0, 1], []], demand=[np.inf, np.inf, 3.0], method=method)
    assert a.rates_gbps.tolist() == [np.inf, 10.0, 3.0]
    assert a.bottleneck.tolist() == [-1, 1, -1]
    assert a.utilization.tolist() == [0.0, 1.0]


def test_no_flows_and_no_resources():
    a = solve(np.zeros(0), [])
    assert a.rates_gbps.shape == (0,) and a.levels == 0


@pytest.mark.parametrize("bad, where", [
    (dict(capacity_gbps=[-1.0]), "capacity_gbps[0]"),
    (dict(capacity_gbps=[np.nan]), "capacity_gbps[0]"),
    (dict(flow_res=[3]), "flow_res[0]"),
    (dict(demand_gbps=[-2.0]), "demand_gbps[0]"),
    (dict(flow_ptr=[0, 2]), "flow_ptr"),
    (dict(capacity_gbps=["x"]), "capacity_gbps"),
])
def test_bad_input_is_located(bad, where):
    args = dict(capacity_gbps=[1.0], flow_ptr=[0, 1], flow_res=[0], demand_gbps=[np.inf]) | bad
    with pytest.raises(InvalidWorkload) as err:
        maxmin(**args)
    assert err.value.problems[0].path == where


def test_unknown_method():
    with pytest.raises(ValueError):
        maxmin([1.0], [0, 1], [0], method="simplex")


def test_invariant_checker_rejects_a_wrong_allocation():
    """f0, f1 on one 10G link at (3, 7): not fair (f0 crosses a saturated link where f1 is larger)."""
    cap, ptr, res = np.array([10.0]), np.array([0, 1, 2]), np.array([0, 0])
    wrong = Allocation(np.array([3.0, 7.0]), np.array([0, 0]), np.array([10.0]), np.array([1.0]), 1)
    with pytest.raises(AssertionError, match="flow 0"):
        assert_valid_allocation(cap, ptr, res, None, wrong)
    over = Allocation(np.array([6.0, 6.0]), np.array([0, 0]), np.array([12.0]), np.array([1.2]), 1)
    with pytest.raises(AssertionError, match="exceeds capacity"):
        assert_valid_allocation(cap, ptr, res, None, over)


@st.composite
def instances(draw):
    """Small random instances, with ties made likely: capacities and demands from short lists."""
    n_res = draw(st.integers(1, 7))
    pool = draw(st.sampled_from([[0.0, 10.0, 25.0, 40.0, 100.0, np.inf], [1.0, 3.0, 7.0, 11.0]]))
    cap = np.array(draw(st.lists(st.one_of(st.sampled_from(pool), st.floats(0.01, 1e4)),
                                 min_size=n_res, max_size=n_res)))
    paths = draw(st.lists(st.lists(st.integers(0, n_res - 1), min_size=0, max_size=5), max_size=14))
    demand = np.array(draw(st.lists(st.one_of(st.just(np.inf), st.sampled_from([0.0, 2.5, 5.0, 20.0]),
                                              st.floats(0.0, 500.0)),
                                    min_size=len(paths), max_size=len(paths))))
    ptr = np.concatenate([[0], np.cumsum([len(p) for p in paths])]).astype(np.int64)
    res = np.array([r for p in paths for r in p], dtype=np.int64)
    return cap, ptr, res, demand


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances())
def test_compiled_matches_reference(instance):
    cap, ptr, res, demand = instance
    fast = maxmin(cap, ptr, res, demand)
    slow = maxmin_reference(cap, ptr, res, demand)
    assert_valid_allocation(cap, ptr, res, demand, fast)
    assert_valid_allocation(cap, ptr, res, demand, slow)
    np.testing.assert_allclose(fast.rates_gbps, slow.rates_gbps, rtol=1e-9, atol=1e-12)


def test_large_random_instance_is_valid():
    """20,000 flows over 2,000 resources, paths of 2-8, 10% demand-capped (the benchmark's shape)."""
    from designer.engine.benchmarks.solver import random_instance

    cap, ptr, res, dem = random_instance(20_000, 2_000, seed=7)
    alloc = maxmin(cap, ptr, res, dem)
    assert_valid_allocation(cap, ptr, res, dem, alloc)
    assert alloc.levels > 100


# ------------------------------------------------------------------------------ weighted max-min
def solve_weighted(capacity, paths, weights, demand=None, method="auto") -> Allocation:
    """Weighted solve with paths as lists of resource indices; validated (weighted invariant)."""
    ptr = np.concatenate([[0], np.cumsum([len(p) for p in paths])]).astype(np.int64)
    res = np.array([r for p in paths for r in p], dtype=np.int64)
    alloc = maxmin(capacity, ptr, res, demand, weights=weights, method=method)
    assert_valid_allocation(capacity, ptr, res, demand, alloc, weights=weights)
    return alloc


@pytest.mark.parametrize("method", METHODS)
def test_weights_split_a_link_in_proportion(method):
    """Weights 3 and 1 on one 100G link: the level rises to 100 / (3 + 1) = 25, so 75 and 25.

        f0 (w=3), f1 (w=1): [h0]==l0 100G==[h1]
    """
    a = solve_weighted([100.0], [[0], [0]], [3.0, 1.0], method=method)
    assert a.rates_gbps.tolist() == [75.0, 25.0]
    assert a.flow_level.tolist() == [25.0, 25.0]
    assert a.bottleneck.tolist() == [0, 0] and a.levels == 1


@pytest.mark.parametrize("method", METHODS)
def test_weighted_demand_is_per_flow(method):
    """A weight-2 flow capped at 30G next to a weight-1 flow on 100G.

        f0 (w=2, demand 30G), f1 (w=1): [h0]==l0 100G==[h1]

    f0 reaches its demand at level 30 / 2 = 15 < 100 / 3: it runs at exactly 30 (not 2 x 15
    rounded), and f1 takes the remaining 70.
    """
    a = solve_weighted([100.0], [[0], [0]], [2.0, 1.0], demand=[30.0, np.inf], method=method)
    assert a.rates_gbps.tolist() == [30.0, 70.0]
    assert a.bottleneck.tolist() == [-1, 0]
    np.testing.assert_allclose(a.flow_level, [15.0, 70.0])


@pytest.mark.parametrize("method", METHODS)
def test_weighted_classic_two_links(method):
    """The long flow weighs 2 and crosses both links; the short ones weigh 1.

        f0 (w=2): l0 12G, l1 6G       f1 (w=1): l0       f2 (w=1): l1

    l1 saturates first, at level 6 / 3 = 2: f0 = 4, f2 = 2. f1 then takes l0's remaining 8.
    """
    a = solve_weighted([12.0, 6.0], [[0, 1], [0], [1]], [2.0, 1.0, 1.0], method=method)
    np.testing.assert_allclose(a.rates_gbps, [4.0, 8.0, 2.0])
    assert a.bottleneck.tolist() == [1, 0, 1] and a.levels == 2


def test_invariant_checker_is_weighted():
    """(50, 50) on one 100G link is fair for equal weights but not for weights 3:1 (flow 0 crosses
    a saturated link where flow 1 has a larger rate / weight: 50 > 50 / 3)."""
    cap, ptr, res = np.array([100.0]), np.array([0, 1, 2]), np.array([0, 0])
    even = Allocation(np.array([50.0, 50.0]), np.array([0, 0]), np.array([100.0]), np.array([1.0]), 1)
    assert_valid_allocation(cap, ptr, res, None, even)
    with pytest.raises(AssertionError, match="flow 0"):
        assert_valid_allocation(cap, ptr, res, None, even, weights=[3.0, 1.0])
    weighted = Allocation(np.array([75.0, 25.0]), np.array([0, 0]), np.array([100.0]), np.array([1.0]), 1)
    assert_valid_allocation(cap, ptr, res, None, weighted, weights=[3.0, 1.0])


@pytest.mark.parametrize("weights, where", [
    ([0.0], "weights[0]"), ([-1.0], "weights[0]"), ([np.nan], "weights[0]"), ([np.inf], "weights[0]"),
    ([1.0, 1.0], "weights"), (["x"], "weights"),
])
@pytest.mark.parametrize("method", METHODS)
def test_bad_weights_are_located(weights, where, method):
    with pytest.raises(InvalidWorkload) as err:
        maxmin([1.0], [0, 1], [0], weights=weights, method=method)
    assert err.value.problems[0].path == where


@st.composite
def weighted_instances(draw, integer=False):
    cap, ptr, res, demand = draw(instances())
    n = len(ptr) - 1
    if integer:
        weight = st.integers(1, 6).map(float)
    else:
        weight = st.one_of(st.sampled_from([0.5, 1.0, 2.0, 3.0, 5.0]), st.floats(0.05, 20.0))
    return cap, ptr, res, demand, np.array(draw(st.lists(weight, min_size=n, max_size=n)), dtype=np.float64)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(weighted_instances())
def test_weighted_compiled_matches_weighted_reference(instance):
    cap, ptr, res, demand, w = instance
    fast = maxmin(cap, ptr, res, demand, weights=w)
    slow = maxmin_reference(cap, ptr, res, demand, weights=w)
    assert_valid_allocation(cap, ptr, res, demand, fast, weights=w)
    assert_valid_allocation(cap, ptr, res, demand, slow, weights=w)
    np.testing.assert_allclose(fast.rates_gbps, slow.rates_gbps, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(fast.flow_level, slow.flow_level, rtol=1e-9, atol=1e-12)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances())
def test_unit_weights_are_the_unweighted_solver_bit_for_bit(instance):
    cap, ptr, res, demand = instance
    for method in METHODS:
        plain = maxmin(cap, ptr, res, demand, method=method)
        ones = maxmin(cap, ptr, res, demand, weights=np.ones(len(ptr) - 1), method=method)
        assert np.array_equal(plain.rates_gbps, ones.rates_gbps)
        assert np.array_equal(plain.bottleneck, ones.bottleneck)
        assert np.array_equal(plain.load_gbps, ones.load_gbps) and plain.levels == ones.levels
        assert np.array_equal(plain.flow_level, plain.rates_gbps)


def _repeat_flows(ptr, res, demand, w):
    """Each flow of integer weight k as k unit flows on its path, each with demand / k."""
    k = w.astype(np.int64)
    copy_of = np.repeat(np.arange(len(k)), k)
    lens = np.diff(ptr)[copy_of]
    rptr = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    rres = np.concatenate([res[ptr[f]:ptr[f + 1]] for f in copy_of] + [np.zeros(0, np.int64)])
    return copy_of, rptr, rres, (demand / w)[copy_of]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(weighted_instances(integer=True))
def test_integer_weight_k_is_k_repeated_unit_flows(instance):
    """What repeated sub-flows gave (the former striping) is what one weighted flow gets."""
    cap, ptr, res, demand, w = instance
    weighted = maxmin(cap, ptr, res, demand, weights=w)
    copy_of, rptr, rres, rdem = _repeat_flows(ptr, res, demand, w)
    repeated = maxmin(cap, rptr, rres, rdem)
    total = np.bincount(copy_of, weights=repeated.rates_gbps, minlength=len(w))
    np.testing.assert_allclose(weighted.rates_gbps, total, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(weighted.flow_level, repeated.rates_gbps[np.cumsum(w.astype(int)) - 1],
                               rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(weighted.load_gbps, repeated.load_gbps, rtol=1e-9, atol=1e-9)


def test_large_random_weighted_instance_is_valid():
    """20,000 flows over 2,000 resources with weights 1-18 (striping multiplicities and beyond)."""
    from designer.engine.benchmarks.solver import random_instance

    cap, ptr, res, dem = random_instance(20_000, 2_000, seed=11)
    w = np.random.default_rng(12).integers(1, 19, len(ptr) - 1).astype(np.float64)
    alloc = maxmin(cap, ptr, res, dem, weights=w)
    assert_valid_allocation(cap, ptr, res, dem, alloc, weights=w)
    ref = maxmin_reference(cap, ptr, res, dem, weights=w)
    np.testing.assert_allclose(alloc.rates_gbps, ref.rates_gbps, rtol=1e-9)


def test_subnormal_demand_never_loads_a_zero_capacity_resource():
    """[f0 demand 5e-324, weight 2]--(r0, 0 Gb/s): the demand's level 5e-324/2 underflows to 0 and
    tied with r0's fair share 0; the flow must get 0, not its demand (found by hypothesis in CI)."""
    cap = np.array([0.0])
    ptr, res = np.array([0, 1], dtype=np.int64), np.array([0], dtype=np.int64)
    demand, w = np.array([5e-324]), np.array([2.0])
    for method in ("auto", "reference"):
        alloc = maxmin(cap, ptr, res, demand, weights=w, method=method)
        assert alloc.rates_gbps[0] == 0.0 and alloc.load_gbps[0] == 0.0
        assert_valid_allocation(cap, ptr, res, demand, alloc, weights=w)
