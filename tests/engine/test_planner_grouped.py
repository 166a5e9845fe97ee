"""The planner predicts a candidate algorithm from its distinct routes (``router.route_grouped``,
``select._grouped_first_level``) and gets, to the bit, what laying every flow's route out and
taking the kernel's first level gives.

Shapes: a DGX H100 pair and an MI300X pair (``build_cluster``, rail-optimized) — the H100's
GPU→NVSwitch shares are 5/18 and 4/18, so adding them in another order can change the last bit
— with NCCL's tree flows (each chain edge twice) and random repeated same-host flows.
``router._MIN_REPEATS`` is lowered so that these small workloads are grouped at all.
"""
from __future__ import annotations

import numpy as np
import pytest

from designer.engine.solve import solver
from designer.engine.traffic.collectives import select
from designer.engine.traffic.collectives.common import group_of
from designer.engine.model.fabrics import build_cluster
from designer.engine.routing import FailureSet, forget_routes, route, route_grouped, router
from designer.engine.routing.context import cached_context
from designer.engine.model.topology import Topology
from designer.engine.traffic.flows import Flows


@pytest.fixture
def grouping(monkeypatch):
    monkeypatch.setattr(router, "_MIN_REPEATS", 1)


def _topology(template: str, hosts: int = 2) -> Topology:
    return Topology.from_document(build_cluster(template, hosts, fabric="rail-optimized"))


def _gpus(topo) -> np.ndarray:
    return np.array([i for i, k in enumerate(topo.node_kind) if k == "gpu"], dtype=np.int64)


def _random_same_host_flows(topo, seed: int, n: int = 400) -> Flows:
    """Random GPU pairs inside hosts (many repeats) and a few across hosts."""
    rng = np.random.default_rng(seed)
    gpus = _gpus(topo)
    host = np.array([topo.node_host[int(g)] for g in gpus])
    src = rng.choice(gpus, n)
    same = np.array([rng.choice(gpus[(host == topo.node_host[int(s)]) & (gpus != s)]) for s in src])
    far = rng.choice(gpus, n)
    dst = np.where(rng.random(n) < 0.8, same, far)
    keep = src != dst
    return Flows.from_pairs(src[keep], dst[keep], 1e6)


def _kernel_first_level(topo, routes) -> float:
    """The level at which the kernel freezes its first flow: the smallest level of a full solve."""
    cap = topo.resource_capacity_gbps()
    levels = solver.maxmin(cap, routes.flow_ptr, routes.flow_res, np.full(routes.num_paths, np.inf),
                           weights=routes.weight).flow_level
    return float(levels.min())


@pytest.mark.parametrize("template", ["dgx-h100", "amd-mi300x"])
@pytest.mark.parametrize("seed", range(6))
def test_grouped_first_level_is_the_laid_out_one_to_the_bit(grouping, template, seed):
    topo = _topology(template)
    flows = _random_same_host_flows(topo, seed)
    grouped = route_grouped(topo, flows, multipath="hash", seed=seed)
    assert grouped.rep is not None and len(grouped.routes.count) < len(flows)
    laid_out = route(topo, flows, multipath="hash", seed=seed)
    cap = topo.resource_capacity_gbps()
    expected = select._first_level(cap, laid_out)
    got = select._grouped_first_level(cap, grouped, flows)
    assert got == expected                                  # bit for bit
    assert got == _kernel_first_level(topo, laid_out)       # and the kernel's own


def test_the_h100_shares_are_not_dyadic_so_the_order_of_adding_matters(grouping):
    """Why the exact re-summation is needed: adding the same weights per distinct route (times
    the flows taking it) differs from adding them flow by flow on some resource."""
    topo = _topology("dgx-h100")
    weights = set(np.round(route(topo, _random_same_host_flows(topo, 0), multipath="hash").weight, 12).tolist())
    assert {round(5 / 18, 12), round(4 / 18, 12)} <= weights
    a = sum([5 / 18] * 3 + [4 / 18] * 5 + [5 / 18] * 4)
    b = 7 * (5 / 18) + 5 * (4 / 18)
    assert a != b   # the same shares, two orders of adding


@pytest.mark.parametrize("algorithm", ["ring", "tree", "nvlstree"])
def test_candidate_times_equal_with_and_without_grouping(monkeypatch, algorithm):
    topo = _topology("dgx-h100", hosts=4)
    pattern = {"kind": "allreduce", "participants": _gpus(topo).tolist(), "bytes": 1e9, "algorithm": algorithm}
    group = group_of(topo, pattern, None)
    monkeypatch.setattr(router, "_MIN_REPEATS", 10 ** 9)
    plain = select._data_time(topo, group, algorithm, {})
    topo = _topology("dgx-h100", hosts=4)   # a fresh memo
    monkeypatch.setattr(router, "_MIN_REPEATS", 1)
    calls = []
    real = select._grouped_first_level
    monkeypatch.setattr(select, "_grouped_first_level", lambda *a: calls.append(1) or real(*a))
    grouped = select._data_time(topo, group, algorithm, {})
    assert grouped == plain and plain[1] is None
    assert bool(calls) == (algorithm != "nvlstree")   # grouped where same-host flows repeat


def test_unequal_bytes_or_a_demand_lay_the_routes_out(grouping):
    topo = _topology("dgx-h100")
    flows = _random_same_host_flows(topo, 1)
    grouped = route_grouped(topo, flows)
    cap = topo.resource_capacity_gbps()
    unequal = Flows.from_pairs(flows.src, flows.dst, np.arange(1, len(flows) + 1, dtype=np.float64))
    capped = Flows.from_pairs(flows.src, flows.dst, 1e6, demand_gbps=10.0)
    assert select._grouped_first_level(cap, grouped, unequal) is None
    assert select._grouped_first_level(cap, grouped, capped) is None


def test_route_after_route_grouped_lays_the_memo_out_without_routing_again(grouping, monkeypatch):
    topo = _topology("dgx-h100")
    flows = _random_same_host_flows(topo, 2)
    fresh = route(_topology("dgx-h100"), flows)
    grouped = route_grouped(topo, flows)
    runs = []
    real_run = router.Router.run
    monkeypatch.setattr(router.Router, "run", lambda self: runs.append(1) or real_run(self))
    laid_out = route(topo, flows)
    assert not runs
    for name in ("flow_ptr", "flow_res", "owner", "share", "first", "count", "status", "weight"):
        np.testing.assert_array_equal(getattr(laid_out, name), getattr(fresh, name), err_msg=name)
    assert route(topo, flows) is laid_out                   # now the memo holds the laid-out routes
    assert route_grouped(topo, flows).rep is None and route_grouped(topo, flows).routes is laid_out
    assert grouped.routes is not laid_out


def test_forget_routes_drops_a_grouped_entry_by_its_routes(grouping):
    topo = _topology("dgx-h100")
    kept, gone = _random_same_host_flows(topo, 3), _random_same_host_flows(topo, 4)
    route_grouped(topo, kept)
    dropped = route_grouped(topo, gone)
    forget_routes(topo, [dropped.routes])
    memo = list(cached_context(topo, FailureSet()).__dict__["_recent_routes"][1].values())
    assert len(memo) == 1 and memo[0].rep is not None and memo[0].routes is not dropped.routes


def _synthetic(seed: int):
    """Distinct routes with random paths over 6 resources and non-dyadic weights, flows taking
    them in random order (many flows per route): what :func:`route_grouped` returns, and the
    same routes laid out flow by flow in plain Python."""
    from types import SimpleNamespace

    rng = np.random.default_rng(seed)
    shares = [5 / 18, 4 / 18, 1 / 3, 0.1, 0.7, 1.0]
    flow_ptr, flow_res, owner, weight, count = [0], [], [], [], []
    for d in range(5):
        k = int(rng.integers(1, 4))
        count.append(k)
        for _ in range(k):
            hops = rng.choice(6, size=int(rng.integers(1, 4)), replace=False)
            flow_res += hops.tolist()
            flow_ptr.append(len(flow_res))
            owner.append(d)
            weight.append(shares[int(rng.integers(len(shares)))])
    routes = SimpleNamespace(flow_ptr=np.array(flow_ptr), flow_res=np.array(flow_res), owner=np.array(owner),
                             weight=np.array(weight), count=np.array(count))
    rep = rng.integers(0, 5, size=int(rng.integers(20, 60)))
    rep[:5] = np.arange(5)   # every route taken
    paths_of = [np.flatnonzero(routes.owner == d) for d in range(5)]
    lp, lr, lw = [0], [], []
    for d in rep.tolist():
        for p in paths_of[d].tolist():
            lr += flow_res[flow_ptr[p]:flow_ptr[p + 1]]
            lp.append(len(lr))
            lw.append(weight[p])
    laid_out = SimpleNamespace(flow_ptr=np.array(lp), flow_res=np.array(lr), weight=np.array(lw))
    flows = SimpleNamespace(demand_gbps=np.full(len(rep), np.inf), bytes=np.full(len(rep), 1e6))
    capacity = np.array([100.0, 100.0, 100.0, 100.0, 100.0, np.inf])
    return capacity, routes, rep, laid_out, flows


def _summed_per_route(capacity, routes, rep) -> float:
    """The first level with each route's weights added once per taking flow (the wrong order)."""
    per_path = np.diff(routes.flow_ptr)
    takers = np.bincount(rep, minlength=len(routes.count))[routes.owner]
    wsum = np.bincount(routes.flow_res, weights=np.repeat(routes.weight * takers, per_path), minlength=6)
    crossed = (wsum > 0) & np.isfinite(capacity)
    return float(np.min(capacity[crossed] / wsum[crossed]))


def test_grouped_first_level_adds_in_the_laid_out_order_on_synthetic_routes():
    differs = 0
    for seed in range(300):
        capacity, routes, rep, laid_out, flows = _synthetic(seed)
        expected = select._first_level(capacity, laid_out)
        assert select._grouped_first_level(capacity, router.Grouped(routes, rep), flows) == expected, seed
        differs += _summed_per_route(capacity, routes, rep) != expected
    assert differs   # some cases where only the laid-out order gives the kernel's bits


def test_a_negative_capacity_is_left_to_the_laid_out_routes():
    """Capacities are >= 0 wherever they come from today; a negative one (a caller's own
    ``capacity_gbps``) must not make the grouped level skip the minimum."""
    capacity, routes, rep, laid_out, flows = _synthetic(0)
    capacity = capacity.copy()
    capacity[int(routes.flow_res[0])] = -1.0
    assert select._grouped_first_level(capacity, router.Grouped(routes, rep), flows) is None
