"""Planning a collective keeps only the chosen algorithm's routes in route()'s memo
(:func:`~designer.engine.routing.router.forget_routes`); simulate still finds them there.
Uses ``mini(hosts=4)`` of test_routing (4 hosts × 2 GPUs, 2 leaves, 2 spines)::

    [hX/gpuI]--pcie--[hX/pcie0]--pcie--[hX/nicI]==400==[leafI]==400==[spineS]
        \\==nvlink==[hX/nvs0]

An all-reduce of the 8 GPUs runs as ring, tree or NVLS tree (NVLS itself needs one host); the
planner routes all three to predict their times.
"""
import pytest

from designer.engine.routing import FailureSet, forget_routes, route
from designer.engine.routing.context import cached_context
from designer.engine.analysis.simulate import prepare
from designer.engine.traffic.flows import Flows
from tests.engine.test_routing import mini


def _memo(topo) -> list:
    """The Routes route()'s memo holds on ``topo``'s failure-free context."""
    return list(cached_context(topo, FailureSet()).__dict__["_recent_routes"][1].values())


def _prepare(topo, algorithm):
    work = [{"id": "ar", "kind": "allreduce", "participants": {"kind": "gpu"}, "bytes": 1e9,
             "algorithm": algorithm}]
    return prepare({"topology": topo, "workload": work, "mode": "steady"})


@pytest.mark.parametrize("algorithm, chosen", [("auto", "ring"), ("tree", "tree")])
def test_only_the_chosen_candidates_routes_stay_memoized(algorithm, chosen):
    topo = mini(hosts=4, gpus=4)   # NVLS needs more than two GPUs a host (NCCL ncclNvlsInit)
    prep = _prepare(topo, algorithm)
    plan = prep.flows.pattern_plans[0]
    predicted = [a for a, alt in plan.alternatives.items() if alt["time_s"] is not None]
    assert plan.algorithm == chosen and sorted(predicted) == ["nvlstree", "ring", "tree"]
    memo = _memo(topo)
    # The simulation's routes (a memo hit: the chosen algorithm's flows) and the one-flow route
    # of the network-step latency; not the two other candidates'.
    assert any(r is prep.routes for r in memo)
    assert sorted(r.num_flows for r in memo) == [1, len(prep.flows)]


def test_a_second_simulation_of_the_scenario_reuses_the_chosen_routes():
    topo = mini(hosts=4)
    first = _prepare(topo, "auto")
    second = _prepare(topo, "auto")
    assert second.routes is first.routes
    assert len(_memo(topo)) == 2


def test_forget_routes_drops_only_the_given_routes():
    topo = mini(hosts=4)
    ids = {n: i for i, n in enumerate(topo.node_ids)}
    flows = [Flows.from_pairs([ids["h0/gpu0"]], [ids[f"h{h}/gpu0"]], 1e9, pattern_id="p") for h in (1, 2, 3)]
    routed = [route(topo, f) for f in flows]
    forget_routes(topo, routed[:2])
    assert [r is routed[2] for r in _memo(topo)] == [True]
    assert route(topo, flows[2]) is routed[2]
    assert route(topo, flows[0]) is not routed[0]          # routed afresh
    forget_routes(topo, routed, failed=FailureSet(frozenset([0]), frozenset()))   # no such context: no-op
    assert len(_memo(topo)) == 2
