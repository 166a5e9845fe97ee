"""Grouping identical paths on the distinct paths they copy (``aggregate_copies``) gives exactly
:func:`aggregate_identical`'s aggregation, and a tree all-reduce solved that way (``Routes.copies``,
the per-flow answers found per distinct route) gives the same arrays and result document, bit for
bit, as grouping every laid-out path. Also: ``take_flows`` copies each flow's route (the contract
the grouping relies on).
"""
import numpy as np
import pytest

from designer.engine.analysis import simulate as sim
from designer.engine.model.fabrics import build_cluster
from designer.engine.model.topology import Topology
from designer.engine.routing import router as router_module
from designer.engine.routing import routes as routes_module
from designer.engine.routing.csr import range_positions
from designer.engine.solve.aggregate import aggregate_copies, aggregate_identical


def _distinct(rng, n_paths, n_res):
    """A CSR of ``n_paths`` paths, some of them equal (so distinct paths also group)."""
    base = [rng.choice(n_res, size=rng.integers(1, 5), replace=False) for _ in range(max(n_paths // 2, 1))]
    paths = [base[rng.integers(len(base))] for _ in range(n_paths)]
    ptr = np.zeros(n_paths + 1, dtype=np.int64)
    np.cumsum([len(p) for p in paths], out=ptr[1:])
    return ptr, np.concatenate(paths).astype(np.int64)


def _copies(rng, distinct: int, n_copies: int):
    """Per copy the distinct path it copies, every distinct path first appearing in order (a
    new one, or a copy of one already seen, at random)."""
    out, seen = [], 0
    for k in range(n_copies):
        new_left, slots_left = distinct - seen, n_copies - k
        if seen == 0 or new_left == slots_left or (new_left and rng.random() < new_left / slots_left):
            out.append(seen)
            seen += 1
        else:
            out.append(int(rng.integers(seen)))
    copy_of = np.array(out, dtype=np.int64)
    new = np.r_[True, copy_of[1:] > np.maximum.accumulate(copy_of)[:-1]]
    assert np.array_equal(copy_of[new], np.arange(distinct))
    return copy_of


def _laid_out(ptr, res, copy_of):
    lens = np.diff(ptr)[copy_of]
    out_ptr = np.zeros(len(copy_of) + 1, dtype=np.int64)
    np.cumsum(lens, out=out_ptr[1:])
    return out_ptr, res[range_positions(ptr[copy_of], lens)]


def _assert_same(a, b):
    assert (a is None) == (b is None)
    if a is None:
        return
    for name in ("group", "flow_ptr", "flow_res", "demand_gbps", "weights"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), name


@pytest.mark.parametrize("seed", range(6))
def test_copies_group_as_every_path(seed):
    rng = np.random.default_rng(seed)
    distinct = int(rng.integers(5, 60))
    ptr, res = _distinct(rng, distinct, 12)
    copy_of = _copies(rng, distinct, distinct * int(rng.integers(2, 6)))
    flow_ptr, flow_res = _laid_out(ptr, res, copy_of)
    d_demand = rng.choice([np.inf, 5.0, 7.5], distinct)
    d_weight = rng.choice([1.0, 0.25, 5 / 18], distinct)
    demand, weights = d_demand[copy_of], d_weight[copy_of]
    got = aggregate_copies(flow_ptr, flow_res, demand, weights, copy_of, None, ptr, res)
    _assert_same(got, aggregate_identical(flow_ptr, flow_res, demand, weights))
    assert got.copies is not None   # grouped on the distinct paths
    firsts = np.array([np.flatnonzero(copy_of == d)[0] for d in range(distinct)])
    _assert_same(aggregate_copies(flow_ptr, flow_res, demand, weights, copy_of, firsts, ptr, res), got)
    with pytest.raises(ValueError):   # a first copy that is not one of its distinct path
        aggregate_copies(flow_ptr, flow_res, demand, weights, copy_of, np.roll(firsts, 1), ptr, res)
    level, bneck = rng.random(len(got.weights)), rng.integers(-1, 12, len(got.weights))
    plain = aggregate_identical(flow_ptr, flow_res, demand, weights).expand(level, bneck, demand, weights)
    for x, y in zip(got.expand(level, bneck, demand, weights), plain):
        assert np.array_equal(x, y)


def test_copies_that_differ_or_come_out_of_order_are_grouped_in_full():
    rng = np.random.default_rng(7)
    ptr, res = _distinct(rng, 20, 10)
    copy_of = _copies(rng, 20, 80)
    flow_ptr, flow_res = _laid_out(ptr, res, copy_of)
    demand, weights = np.full(80, np.inf), np.ones(80)
    demand[np.flatnonzero(copy_of == 3)[-1]] = 2.0   # one copy's demand differs from its distinct path's
    got = aggregate_copies(flow_ptr, flow_res, demand, weights, copy_of, None, ptr, res)
    _assert_same(got, aggregate_identical(flow_ptr, flow_res, demand, weights))
    assert got.copies is None
    swapped = copy_of.copy()
    swapped[[0, np.flatnonzero(copy_of == 1)[0]]] = swapped[[np.flatnonzero(copy_of == 1)[0], 0]]
    flow_ptr, flow_res = _laid_out(ptr, res, swapped)
    got = aggregate_copies(flow_ptr, flow_res, np.full(80, np.inf), weights, swapped, None, ptr, res)
    _assert_same(got, aggregate_identical(flow_ptr, flow_res, np.full(80, np.inf), weights))
    assert got.copies is None


def test_not_worth_it_as_aggregate_identical():
    rng = np.random.default_rng(3)
    ptr, res = _distinct(rng, 40, 400)
    copy_of = _copies(rng, 40, 44)   # 44 copies of 40 paths (fewer groups still): under 10 % merged
    flow_ptr, flow_res = _laid_out(ptr, res, copy_of)
    demand, weights = np.full(44, np.inf), np.ones(44)
    for gain in (0.1, 0.01, 0.5):
        _assert_same(aggregate_copies(flow_ptr, flow_res, demand, weights, copy_of, None, ptr, res, min_gain=gain),
                     aggregate_identical(flow_ptr, flow_res, demand, weights, min_gain=gain))


@pytest.fixture(scope="module")
def topo():
    return Topology.from_document(build_cluster("dgx-h100", 8, fabric="rail-optimized", leaves_per_rail=2))


_TREE = [{"id": "ar", "kind": "allreduce", "algorithm": "tree", "participants": {"kind": "gpu"}, "bytes": 1e9}]


def _tree(topo, monkeypatch, copies: bool):
    """Prepared, solved and the document, with the grouping of repeated routes and of identical
    paths on at this small size (their thresholds at 0)."""
    monkeypatch.setattr(sim, "_AGGREGATE_MIN_PATHS", 0)
    monkeypatch.setattr(router_module, "_MIN_REPEATS", 0)
    if not copies:
        monkeypatch.setattr(routes_module.Routes, "copies", lambda self: None)
    prep = sim.prepare({"topology": topo, "workload": _TREE})
    solved = sim.solve_prepared(prep)
    doc = sim.build_result(prep, solved)
    monkeypatch.undo()
    return prep, solved, doc


def test_tree_solved_on_copies_equals_every_path(topo, monkeypatch):
    prep, solved, doc = _tree(topo, monkeypatch, copies=True)
    assert prep.routes.copied_from is not None and prep.__dict__["_aggregation"][2].copies is not None
    copy_of, firsts = prep.routes.copies()[:2]   # the first copies, found from the flows
    assert np.array_equal(firsts, np.flatnonzero(np.r_[True, copy_of[1:] > np.maximum.accumulate(copy_of)[:-1]]))
    _, plain, plain_doc = _tree(topo, monkeypatch, copies=False)
    for name in ("path_rate_gbps", "path_bottleneck", "load_gbps", "flow_rate_gbps", "flow_bottleneck",
                 "flow_completion_s"):
        x, y = getattr(solved, name), getattr(plain, name)
        assert x.dtype == y.dtype and np.array_equal(x, y, equal_nan=True), name
    assert doc == plain_doc


def test_take_flows_copies_each_route(topo, monkeypatch):
    prep = _tree(topo, monkeypatch, copies=True)[0]
    distinct, rep = prep.routes.copied_from
    got = routes_module.take_flows(distinct, rep, prep.flows.src)
    assert got.copied_from[0] is distinct and got.copied_from[1] is rep and len(rep) > distinct.num_flows
    path = range_positions(distinct.first[rep], distinct.count[rep])   # per laid-out path, its copy
    assert np.array_equal(got.flow_res, np.concatenate([distinct.path_resources(p) for p in path]))
    assert np.array_equal(np.diff(got.flow_ptr), np.diff(distinct.flow_ptr)[path])
    for name in ("share", "weight", "stripes"):
        assert np.array_equal(getattr(got, name), getattr(distinct, name)[path]), name
    assert np.array_equal(got.owner, np.repeat(np.arange(len(rep)), distinct.count[rep]))
    assert np.array_equal(got.first, np.cumsum(distinct.count[rep]) - distinct.count[rep])
    for name in ("count", "status", "class_code"):
        assert np.array_equal(getattr(got, name), getattr(distinct, name)[rep]), name
    for name in ("flow_ptr", "flow_res", "share", "weight", "stripes", "owner", "first"):   # as prepare's
        assert np.array_equal(getattr(got, name), getattr(prep.routes, name)), name
