"""The bottleneck-relief re-solves stop their fill early and give the same answer.

``maxmin_levels_until`` fills like the full solve and stops right after a flow freezes at or
below its stop level; every level it reports is the full solve's, bit for bit. The relief of
``simulate`` asks it "does some flow of the slowest pattern still end at the old job time?",
and falls back to the full re-solve when the answer is a near miss. Checked here against the
full re-solve on collectives where relief gains nothing (symmetric rings) and where it gains
(a lone transfer, a storage read behind one leaf)::

    [hX/gpuI]--[hX/pcieI]--[hX/nicI]==[leafI]==[spine0|spine1]==[storage leaf]==[storage0]
"""
import numpy as np
import pytest

from designer.engine.analysis import bottlenecks
from designer.engine.analysis import simulate as sim
from designer.engine.solve.maxmin import aggregate_identical, maxmin, maxmin_levels_until

AR = {"id": "ar", "kind": "allreduce", "algorithm": "ring", "participants": {"kind": "gpu"}, "bytes": 1e9}
LOAD = {"id": "load", "kind": "storage_read", "source": {"kind": "storage"}, "participants": {"kind": "gpu"},
        "bytes": 2e10, "via": "gpudirect"}
P2P = {"id": "p", "kind": "p2p", "src": "h0/gpu0", "dst": "h1/gpu0", "bytes": 1e9}


def _instance(seed: int):
    """A random weighted problem with demands, zero and infinite capacities, flows on no link."""
    rng = np.random.default_rng(seed)
    n_res, n_flows = int(rng.integers(1, 30)), int(rng.integers(1, 200))
    cap = rng.choice([0.0, np.inf, 1.0, 10.0, 100.0], n_res, p=[.05, .05, .2, .4, .3]) * (0.5 + rng.random(n_res))
    lens = rng.integers(0, 5, n_flows)
    ptr = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    res = rng.integers(0, n_res, int(ptr[-1])).astype(np.int64)
    dem = np.where(rng.random(n_flows) < .3, rng.choice([0.5, 3.0, 30.0], n_flows), np.inf)
    dem[lens == 0] = 1.0
    w = rng.choice([0.5, 1.0, 3.0], n_flows)
    return cap, ptr, res, dem, w


@pytest.mark.parametrize("seed", range(30))
def test_known_levels_are_the_full_solves_and_the_stop_is_where_asked(seed):
    cap, ptr, res, dem, w = _instance(seed)
    full = maxmin(cap, ptr, res, dem, weights=w).flow_level
    rng = np.random.default_rng(seed + 100)
    stop = np.where(rng.random(len(w)) < 0.1, np.median(full[np.isfinite(full)]) if np.isfinite(full).any()
                    else 1.0, -np.inf)
    lev, stopped = maxmin_levels_until(cap, ptr, res, dem, stop, weights=w)
    known = ~np.isnan(lev)
    assert np.array_equal(lev[known], full[known])          # bit for bit
    if stopped:
        assert (lev[known] <= stop[known]).any()            # a flow met its stop level
        assert np.nanmax(lev) <= np.min(full[~known], initial=np.inf)  # the rest freeze above
    else:
        assert np.array_equal(lev, full)                    # ran to the end: the full solve


def test_no_stop_level_is_the_full_solve_and_an_aggregated_fill_agrees():
    cap, ptr, res, dem, w = _instance(7)
    never = np.full(len(w), -np.inf)
    lev, stopped = maxmin_levels_until(cap, ptr, res, dem, never, weights=w)
    assert not stopped and np.array_equal(lev, maxmin(cap, ptr, res, dem, weights=w).flow_level)
    # Two copies of every flow: aggregation merges them; a group stops when a member would.
    ptr2 = np.concatenate([ptr, ptr[1:] + ptr[-1]])
    res2, dem2, w2 = np.concatenate([res, res]), np.concatenate([dem, dem]), np.concatenate([w, w])
    agg = aggregate_identical(ptr2, res2, dem2, w2)
    assert agg is not None
    full = maxmin(cap, ptr2, res2, dem2, weights=w2, aggregate=agg).flow_level
    stop = np.full(len(w2), -np.inf)
    stop[len(w) + 3] = np.inf                               # only the second copy of flow 3 asks
    lev, stopped = maxmin_levels_until(cap, ptr2, res2, dem2, stop, weights=w2, aggregate=agg)
    known = ~np.isnan(lev)
    assert stopped and known[3] and known[len(w) + 3] and np.array_equal(lev[known], full[known])


def test_a_stop_level_per_flow_is_required():
    cap, ptr, res, dem, w = _instance(3)
    with pytest.raises(ValueError, match="stop_level has 1 entries"):
        maxmin_levels_until(cap, ptr, res, dem, [0.0], weights=w)


def _ranked(scenario: dict, full_only: bool) -> dict:
    """``summary`` relief fields, the re-solves stopped early or (``full_only``) always full."""
    prep = sim.prepare(scenario)
    solved = sim.solve_prepared(prep)
    original = bottlenecks._relieved_job_time

    def full(done, resolve, routed, time_model, job0, targets, capacity):
        return bottlenecks._job_time(done, resolve(capacity)[0], routed, time_model)

    bottlenecks._relieved_job_time = full if full_only else original
    try:
        s = sim.build_result(prep, solved)["summary"]
    finally:
        bottlenecks._relieved_job_time = original
    return {k: s[k] for k in ("bottleneck_relief", "critical_bottleneck", "bottlenecks", "headline")}


def _scenario(hosts: int, workload: list, storage: int = 0, failures=()):
    build = {"template": "dgx-h100", "hosts": hosts, "fabric": "rail-optimized"}
    if storage:
        build["storage"] = storage
    return {"topology": {"build": build}, "workload": workload, "failures": list(failures)}


@pytest.mark.parametrize("case", [
    _scenario(4, [AR]),                                      # symmetric: every gain is 0
    _scenario(2, [P2P]),                                     # one path: its bottleneck gains
    _scenario(2, [AR, LOAD], storage=1),                     # a storage uplink sets the job time
    _scenario(4, [AR, P2P], failures=[{"target": {"kind": "link", "tech": "pcie5x16", "group": "h1"},
                                       "mode": "degrade", "factor": 0.5}]),
])
def test_relief_with_stopped_fills_equals_relief_with_full_re_solves(case):
    stopped, full = _ranked(case, full_only=False), _ranked(case, full_only=True)
    assert stopped == full
    assert stopped["bottleneck_relief"] and all(e["gain_s"] is not None for e in stopped["bottleneck_relief"])


def test_a_gain_needs_the_full_re_solve_and_gets_it():
    """A storage read behind its server's link degraded to half, beside a ring: doubling that
    link speeds the read up (the storage leaf's one uplink runs at the link's full rate), so the
    stopped fill's bound falls short of the job time and the full re-solve gives the gain; the
    ring's PCIe links gain nothing (their twins keep the ring as slow). Undegraded, the server
    link and the uplink bind together and neither alone gains."""
    half = [{"target": "storage0-sleaf0", "mode": "degrade", "factor": 0.5}]
    relief = _ranked(_scenario(2, [AR, LOAD], storage=1, failures=half), full_only=False)["bottleneck_relief"]
    assert relief[0]["id"] == "storage0-sleaf0:a>b" and relief[0]["limits"] == ["load"]
    assert relief[0]["gain_s"] > 0 and all(e["gain_s"] == 0.0 for e in relief[1:])


@pytest.mark.parametrize("algorithm", ["ring", "tree", "nvlstree"])
@pytest.mark.parametrize("hosts, failures", [(4, ()), (3, [{"target": "h1/nic2", "mode": "down"}]),
                                             (4, [{"target": {"kind": "link", "tech": "pcie5x16", "group": "h2"},
                                                   "mode": "degrade", "factor": 0.25}])])
def test_a_candidate_solve_stopped_at_its_slowest_flow_predicts_the_full_solves_time(algorithm, hosts, failures,
                                                                                    monkeypatch):
    """The planner's prediction stops at the first flow carrying the most bytes: the same
    slowest time as the full solve, to the bit."""
    from designer.engine.solve import solver
    from designer.engine.traffic.collectives import select
    from designer.engine.traffic.collectives.common import group_of

    prep = sim.prepare(_scenario(hosts, [{**AR, "algorithm": algorithm}], failures=failures))
    group = group_of(prep.topology, prep.scenario.patterns[0], prep.failed)
    args = (prep.topology, group, algorithm, dict(prep.scenario.routing), prep.failed, prep.capacity_gbps)
    stopped = select._data_time(*args)
    monkeypatch.setattr(select, "_levels", lambda capacity, routes, flows, demand: solver.maxmin(
        capacity, routes.flow_ptr, routes.flow_res, demand, weights=routes.weight).flow_level)
    full = select._data_time(*args)
    assert stopped == full and full[0] is not None and full[0] > 0


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("sizes", ["equal", "mixed"])
def test_the_slowest_time_from_a_stopped_fill_is_the_full_solves(seed, sizes):
    """Random routed flows of 1-3 striped sub-flows (weights = shares), no demand cap: the
    planner's slowest time — from the first level when every flow moves the same bytes, from a
    fill stopped at the first largest flow otherwise — equals the full solve's, to the bit."""
    from types import SimpleNamespace

    from designer.engine.traffic.collectives import select

    cap, ptr, res, _, _ = _instance(seed)
    rng = np.random.default_rng(seed + 7)
    n_paths = len(ptr) - 1
    count = []
    while sum(count) < n_paths:
        count.append(int(min(rng.integers(1, 4), n_paths - sum(count))))
    count = np.array(count)
    first = np.concatenate([[0], np.cumsum(count)[:-1]])
    owner = np.repeat(np.arange(len(count)), count)
    share = 1.0 / count[owner]
    size = np.full(len(count), 1e9) if sizes == "equal" else rng.choice([1e8, 5e8, 1e9], len(count))
    routes = SimpleNamespace(flow_ptr=ptr, flow_res=res, weight=share, owner=owner, first=first, num_paths=n_paths)
    flows = SimpleNamespace(bytes=size)
    demand = np.full(n_paths, np.inf)
    level = maxmin(cap, ptr, res, demand, weights=share).flow_level
    pace = np.minimum.reduceat(level, first)
    with np.errstate(divide="ignore"):
        full = float(np.where(size > 0, size * 8.0 / (pace * 1e9), 0.0).max())
    assert select._slowest_time(cap, routes, flows, demand) == full


@pytest.mark.parametrize("seed", range(10))
def test_stopped_fills_reused_under_many_capacities_equal_one_call_each(seed):
    """``StoppedFills`` checks the paths once and answers every capacity as its own call does,
    aggregated or not; a bad capacity is refused with its position."""
    from designer.engine.errors import InvalidWorkload
    from designer.engine.solve.maxmin import StoppedFills

    cap, ptr, res, dem, w = _instance(seed)
    rng = np.random.default_rng(seed)
    agg = aggregate_identical(ptr, res, dem, w)
    for aggregate in (None, agg):
        fills = StoppedFills(ptr, res, dem, len(cap), weights=w, aggregate=aggregate)
        for _ in range(3):
            scaled = cap * rng.choice([0.5, 1.0, 2.0], len(cap))
            stop = rng.choice([-np.inf, 0.5, 2.0, np.inf], len(ptr) - 1)
            got, stopped = fills.levels(scaled, stop)
            full = maxmin(scaled, ptr, res, dem, weights=w, aggregate=aggregate).flow_level
            known = ~np.isnan(got)
            np.testing.assert_array_equal(got[known], full[known])   # bit for bit, call after call
            assert stopped or known.all()
        with pytest.raises(InvalidWorkload, match="invalid solver input"):
            fills.levels(np.full(len(cap), -1.0), np.zeros(len(ptr) - 1))
        with pytest.raises(InvalidWorkload):
            fills.levels(np.ones(len(cap) + 1), np.zeros(len(ptr) - 1))
