"""The compiled grouping of identical flows (kernel ``group_identical``, used first by
``maxmin.aggregate_identical``) gives the sort-based grouping's Aggregation, array for array,
says "not worth it" at the same threshold, and declines (the sort answers) on bad inputs or on
flows crafted to crowd one hash slot."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from designer.engine.solve import aggregate as maxmin_module
from designer.engine.solve.kernels.loader import kernels

FIELDS = ("group", "flow_ptr", "flow_res", "demand_gbps", "weights")


def csr(paths):
    ptr = np.concatenate([[0], np.cumsum([len(p) for p in paths])]).astype(np.int64)
    return ptr, np.array([r for p in paths for r in p], dtype=np.int64)


def by_sort(*args, **kw):
    """aggregate_identical with the kernel declining: the sort-based grouping."""
    saved = maxmin_module._grouped_in_kernel
    maxmin_module._grouped_in_kernel = lambda *a: None
    try:
        return maxmin_module.aggregate_identical(*args, **kw)
    finally:
        maxmin_module._grouped_in_kernel = saved


def assert_same_aggregation(a, b):
    assert (a is None) == (b is None)
    if a is not None:
        for f in FIELDS:
            x, y = getattr(a, f), getattr(b, f)
            assert x.dtype == y.dtype and x.tobytes() == y.tobytes(), f


@st.composite
def instances(draw):
    rows = draw(st.lists(st.tuples(st.lists(st.integers(0, 7), max_size=5),
                                   st.sampled_from([np.inf, 0.0, 1.0, 2.5]),
                                   st.sampled_from([1.0, 0.5, 5 / 18])), min_size=1, max_size=8))
    reps = draw(st.lists(st.integers(1, 5), min_size=len(rows), max_size=len(rows)))
    flows = [row for row, k in zip(rows, reps) for _ in range(k)]
    order = draw(st.permutations(range(len(flows))))
    flows = [flows[i] for i in order]
    ptr, res = csr([f[0] for f in flows])
    return ptr, res, np.array([f[1] for f in flows]), np.array([f[2] for f in flows])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(), st.sampled_from([0.0, 0.1, 0.5, 0.9]))
def test_kernel_grouping_equals_sort_grouping(instance, min_gain):
    kernel = maxmin_module.aggregate_identical(*instance, min_gain=min_gain)
    assert_same_aggregation(kernel, by_sort(*instance, min_gain=min_gain))


def test_kernel_answers_on_a_ring_like_instance():
    """Many flows on a few paths: the kernel itself groups them (not the sort)."""
    rng = np.random.default_rng(3)
    distinct = [list(rng.integers(0, 300, rng.integers(1, 6))) for _ in range(500)]
    paths = [distinct[k] for k in rng.integers(0, 500, 5000)]
    ptr, res = csr(paths)
    dem, w = np.full(5000, np.inf), np.ones(5000)
    direct = maxmin_module._grouped_in_kernel(ptr, res, dem, w, 4500)
    assert direct not in (None, False) and len(direct.weights) == len({tuple(p) for p in paths})
    assert_same_aggregation(direct, by_sort(ptr, res, dem, w))


def test_not_worth_it_past_max_groups():
    ptr, res = csr([[0], [0], [1], [2]])
    k = kernels()
    table, group, firsts = np.full(16, -1, dtype=np.int64), np.empty(4, dtype=np.int64), np.empty(4, dtype=np.int64)
    bits = np.zeros(4, dtype=np.int64)
    assert k.group_identical(ptr, res, bits, bits, table.copy(), group, firsts, 3) == 3
    assert k.group_identical(ptr, res, bits, bits, table.copy(), group, firsts, 2) == -1


@pytest.mark.parametrize("bad", ["short table", "table not a power of two", "ptr does not cut res",
                                 "decreasing ptr"])
def test_bad_inputs_decline(bad):
    ptr, res = csr([[0, 1], [1], [0, 1]])
    table = np.full(8, -1, dtype=np.int64)
    if bad == "short table":
        table = np.full(2, -1, dtype=np.int64)
    elif bad == "table not a power of two":
        table = np.full(6, -1, dtype=np.int64)
    elif bad == "ptr does not cut res":
        res = res[:-1].copy()
    else:
        ptr = np.array([0, 2, 1, 4], dtype=np.int64)
        res = np.array([0, 1, 1, 0], dtype=np.int64)
    bits = np.zeros(3, dtype=np.int64)
    out = np.empty(3, dtype=np.int64)
    assert kernels().group_identical(ptr, res, bits, bits, table, out, out.copy(), 3) == -2


def _slot(resource: int, mask: int) -> int:
    """The kernel's slot of a one-resource flow with demand and weight bits 0 (its hash, here)."""
    from designer.engine.solve.kernels.hashing import _splitmix

    mix = _splitmix.py_func
    with np.errstate(over="ignore"):
        h = mix(np.uint64(0) ^ (np.uint64(0) * np.uint64(0x9E3779B97F4A7C15)))
        h = mix(h ^ np.uint64(1))
        h = (h ^ np.uint64(resource)) * np.uint64(0x100000001B3)
        return int(mix(h) & np.uint64(mask))


def test_flows_crafted_to_collide_decline_to_the_sort():
    """Paths chosen so that 80 distinct flows share one slot of the 256-slot table (what an
    untrusted ``solve`` document could do): the kernel gives up after MAX_PROBES probes instead
    of walking them all, and the sort groups them, the same way."""
    n = 100
    mask = (1 << (2 * n).bit_length()) - 1
    crowd = [r for r in range(200_000) if _slot(r, mask) == 0][:80]
    assert len(crowd) == 80
    paths = [[r] for r in crowd] + [[crowd[0]]] * 20
    ptr, res = csr(paths)
    dem, w = np.zeros(n), np.zeros(n)   # bits 0, as _slot assumes
    assert maxmin_module._grouped_in_kernel(ptr, res, dem, w, n) is None
    agg = maxmin_module.aggregate_identical(ptr, res, dem, w, min_gain=0.0)
    assert agg is not None and len(agg.weights) == 80
