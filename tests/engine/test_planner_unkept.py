"""Planner shortcuts that change no answer: a candidate that cannot be chosen is routed without
``route()``'s memo (``route_grouped(keep=False)``), the NVLS-tree plane flows are built for every
host at once (``nvlstree._plane_flows_of_blocks``), and the explicit-algorithm plan reports the
same alternatives as before."""
from __future__ import annotations

import numpy as np
import pytest

from designer.engine.traffic.collectives import nvlstree, select
from designer.engine.traffic.collectives.common import group_of
from designer.engine.traffic.collectives.nvls import plane_flows
from designer.engine.model.fabrics import build_cluster
from designer.engine.routing import FailureSet, route, route_grouped, router
from designer.engine.routing.context import cached_context
from designer.engine.model.topology import Topology
from designer.engine.traffic.flows import Flows

_FIELDS = ("flow_ptr", "flow_res", "owner", "share", "first", "count", "status", "weight", "class_code")


def _topology(template: str, hosts: int) -> Topology:
    return Topology.from_document(build_cluster(template, hosts, fabric="rail-optimized"))


def _gpus(topo) -> list[int]:
    return [i for i, k in enumerate(topo.node_kind) if k == "gpu"]


def _memo(topo) -> dict:
    return cached_context(topo, FailureSet()).__dict__.get("_recent_routes", (None, {}))[1]


@pytest.mark.parametrize("algorithm", ["ring", "tree", "nvlstree"])
@pytest.mark.parametrize("min_repeats", [1, 10 ** 9])
def test_unkept_routes_are_the_kept_ones_and_leave_the_memo_alone(monkeypatch, algorithm, min_repeats):
    monkeypatch.setattr(router, "_MIN_REPEATS", min_repeats)
    topo = _topology("dgx-h100", 4)
    group = group_of(topo, {"kind": "allreduce", "participants": _gpus(topo), "bytes": 1e9}, None)
    flows = Flows.from_pairs(*select.MODULES[algorithm].flows(topo, group), pattern_id=algorithm)
    unkept = route_grouped(topo, flows, keep=False, seed=3)
    assert not _memo(topo)
    kept = route_grouped(topo, flows, seed=3)
    assert (unkept.rep is None) == (kept.rep is None)
    if kept.rep is not None:
        np.testing.assert_array_equal(unkept.rep, kept.rep)
    a, b = router.lay_out(unkept, flows), route(topo, flows, seed=3)
    for name in _FIELDS:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert a.class_names == b.class_names


@pytest.mark.parametrize("template, hosts", [("dgx-h100", 3), ("gb200-nvl72", 2), ("dgx-h100", 1)])
def test_plane_flows_of_every_block_are_the_per_block_ones(template, hosts):
    topo = _topology(template, hosts)
    gpus = _gpus(topo)
    for participants in (gpus, gpus[3:], gpus[::3]):
        group = group_of(topo, {"kind": "allreduce", "participants": participants, "bytes": 1e9 / 7}, None)
        (got,) = nvlstree._plane_flows_of_blocks(topo, group.blocks, group.size)
        m = [len(b) for b in group.blocks]
        parts = [plane_flows(topo, b, group.size * (k + 1) / k, group.size * (k + 1) / k)
                 for b, k in zip(group.blocks, m)]
        for k in range(3):
            expected = np.concatenate([p[k] for p in parts])
            assert got[k].dtype == expected.dtype
            np.testing.assert_array_equal(got[k], expected)


@pytest.mark.parametrize("algorithm", ["ring", "tree", "nvlstree"])
def test_an_explicit_plan_reports_the_auto_plans_times(algorithm):
    """Explicit: the other candidates are routed unkept; their predicted times are auto's, and
    only the chosen one's routes stay in the memo."""
    topo = _topology("dgx-h100", 4)
    pattern = {"kind": "allreduce", "participants": _gpus(topo), "bytes": 1e9}
    auto = select.plan_pattern(topo, pattern)
    topo = _topology("dgx-h100", 4)
    explicit = select.plan_pattern(topo, {**pattern, "algorithm": algorithm})
    assert explicit.algorithm == algorithm
    for name, alternative in auto.alternatives.items():
        assert explicit.alternatives[name]["time_s"] == alternative["time_s"], name
    assert len(_memo(topo)) == 2   # the chosen algorithm's routes and the network step's
