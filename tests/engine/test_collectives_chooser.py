"""Who chooses the algorithm (``collectives.chooser``): NCCL's own cost model, or a net plugin's tuner.

NCCL converts a tree's bus bandwidth to algorithm bandwidth by ½ and a ring's by nRanks / nsteps
(NVIDIA/nccl src/graph/tuning.cc, "Convert bus BW to algorithm BW"); the engine's tree flows
carry the reduce up and the broadcast down at once, so NCCL's model of the tree's data time is
twice the engine's. AWS's aws-ofi-nccl replaces the choice with regions measured on p5/p5e/p5en
from three nodes on (src/tuner/nccl_ofi_tuner.cpp, nccl_ofi_regions.cpp): the pair of the polygon
of (log2 bytes, log2 ranks) holding the collective runs (``collectives.regions``).

Two DGX A100, rail-optimized, 8 × HDR per host at 24 GB/s (catalog effective), all-reduce of
4 GiB over 16 GPUs — the ring, by hand::

    data  = 2 · (16 − 1)/16 · 4 GiB = 8.053 GB a rank
    rate  = 8 NICs × 24 GB/s        = 192 GB/s (each channel's ring crosses one NIC pair)
    time  = 8.053 / 192             = 41.94 ms (+ latency, µs)
"""
import pytest

from designer.engine.benchmarks.fidelity import build_topology
from designer.engine.traffic.collectives import plan_pattern
from designer.engine.traffic.collectives import chooser
from designer.engine.traffic.collectives.chooser import plugin_choice, plugin_platform, selection_time
from designer.engine.traffic.collectives.regions import _extend, _log2_point, region_choice
from designer.engine.traffic.collectives.common import group_of
from designer.engine.traffic.workloads import normalize_pattern

GIB, MIB = 2**30, 2**20


@pytest.fixture(scope="module")
def tops():
    def build(template, hosts):
        return build_topology({"template": template, "hosts": hosts, "fabric": "rail-optimized"})
    return {"a100x2": build("dgx-a100", 2), "h100x4": build("dgx-h100", 4), "p5x2": build("aws-p5", 2),
            "p5x4": build("aws-p5", 4), "p4dx4": build("aws-p4d", 4)}


def _pattern(topo, size):
    raw = {"kind": "allreduce", "participants": {"kind": "gpu"}, "bytes": size}
    return normalize_pattern(topo, raw, "workload[0]", set())


def test_nccls_model_counts_the_trees_data_twice():
    assert selection_time("tree", 1e-5, 0.03, 0.5) == pytest.approx(1e-5 + 0.12)
    assert selection_time("ring", 1e-5, 0.03, 0.5) == pytest.approx(1e-5 + 0.06)


def test_a_large_allreduce_on_two_a100_hosts_runs_the_ring_nccl_models_cheaper(tops):
    """The engine predicts the tree faster (its flows overlap reduce and broadcast), NCCL's
    model charges the tree 2S / busBw and keeps the ring — which runs at the NICs' 192 GB/s."""
    plan = plan_pattern(tops["a100x2"], _pattern(tops["a100x2"], 4 * GIB))
    ring, tree = plan.alternatives["ring"]["time_s"], plan.alternatives["tree"]["time_s"]
    assert tree < ring
    assert plan.algorithm == "ring"
    assert ring == pytest.approx(2 * 15 / 16 * 4 * GIB / 192e9, rel=0.01)   # 41.94 ms


@pytest.mark.parametrize("name, platform", [("p5x4", "p5/p5e"), ("p5x2", "p5/p5e"), ("p4dx4", None),
                                            ("h100x4", None)])
def test_the_aws_tuner_is_the_hopper_efa_hosts_own(tops, name, platform):
    """p5 (H100, EFA): AWS's region tables; p4d (A100, EFA) and ConnectX hosts: NCCL's model."""
    topo = tops[name]
    assert plugin_platform(topo, group_of(topo, _pattern(topo, 64 * MIB))) == platform


def test_two_nodes_are_left_to_nccl(tops):
    """nccl_ofi_regions.cpp skips nNodes <= 2 ("the regions are not well defined"): the point a
    third node would put in the tree LL128 polygon is NCCL's on two."""
    everything = {a: None for a in ("ring", "tree", "nvls", "nvlstree", "collnet", "pat", "p2p")}
    group = group_of(tops["p5x2"], _pattern(tops["p5x2"], 16 * MIB))
    assert plugin_choice(tops["p5x2"], group, None, everything) is None
    assert region_choice("p5/p5e", "allreduce", 16 * MIB, 24, 3, lambda a, p: True) == ("tree", "LL128")


@pytest.mark.parametrize("size, ranks, pair", [
    (32 * MIB, 64, ("tree", "LL128")),         # below the tree polygon's (112 MiB, 64) vertex
    (2 * GIB, 64, ("ring", "LL128")),          # on the ring polygon's (2 GiB, 64) vertex: an edge counts
    (4 * GIB, 64, ("ring", "Simple")),
    (4 * GIB, 128, ("nvlstree", "Simple")),
    (32 * MIB, 32, ("tree", "LL128")),
    (117440512, 64, ("tree", "LL128")),        # a vertex tree LL128 and ring LL128 share: the first wins
])
def test_p5_regions_place_a_point_as_the_plugin_does(size, ranks, pair):
    """Points read off aws-ofi-nccl's p5/p5e all-reduce polygons (8 ranks a node), by hand."""
    assert region_choice("p5/p5e", "allreduce", size, ranks, ranks // 8, lambda a, p: True) == pair


def test_a_pair_nccl_cannot_run_passes_its_polygon_and_the_point_falls_back():
    """The plugin skips a polygon whose pair NCCL marks ignored (an algorithm that does not run,
    or one the pattern's algorithm or protocol excludes); the point lies in no other one."""
    assert region_choice("p5/p5e", "allreduce", 4 * GIB, 128, 16, lambda a, p: a != "nvlstree") is None
    assert region_choice("p5/p5e", "alltoall", 4 * GIB, 128, 16, lambda a, p: True) is None
    assert region_choice("p5/p5e", "allreduce", 4 * GIB, 64, 16, lambda a, p: True) is None  # 4 a node


def test_the_patterns_own_algorithm_or_protocol_bounds_what_the_plugin_may_force(tops):
    """1 GiB over 32 ranks lies in the ring LL128 polygon: forced under ``auto``; a pattern asking
    for Simple, or for the tree, leaves the choice to NCCL's model (the polygon's pair is ignored)."""
    topo = tops["p5x4"]
    group = group_of(topo, _pattern(topo, GIB))
    runs = {a: None for a in ("ring", "tree", "nvlstree")}
    assert plugin_choice(topo, group, None, runs) == ("ring", "LL128")
    assert plugin_choice(topo, group, None, runs, protocol="Simple") is None
    assert plugin_choice(topo, group, None, runs, requested="tree") is None
    assert plugin_choice(topo, group, None, {**runs, "ring": "no ring here"}) is None


def test_an_extended_vertex_follows_its_line_to_the_limits():
    """extend_region: a vertical pair goes up to the rank limit; a sloped one to the first limit it meets."""
    top = _log2_point(100 * GIB, 1024 * 1024)
    assert _extend(_log2_point(384 * MIB, 2048), _log2_point(384 * MIB, 4096), top) == \
        pytest.approx(_log2_point(384 * MIB, 1024 * 1024))
    x, y = _extend((0.0, 0.0), (1.0, 1.0), top)
    assert (x, y) == pytest.approx((top[1], top[1]))   # y = x meets the rank limit (2^20) first


@pytest.mark.parametrize("size, forced", [(32 * MIB, ("tree", "LL128")), (2 * GIB, ("ring", "Simple"))])
def test_where_the_aws_tuner_forces_a_pair_that_pair_runs(tops, monkeypatch, size, forced):
    """p5 × 4 (32 ranks): the polygons force tree LL128 at 32 MiB and ring Simple at 2 GiB, where
    NCCL's model alone would run another pair; the plan runs the forced one and says who chose."""
    topo = tops["p5x4"]
    plan = plan_pattern(topo, _pattern(topo, size))
    assert (plan.algorithm, plan.protocol, plan.chosen_by) == (*forced, "plugin")
    monkeypatch.setattr(chooser, "PLUGIN_PLATFORMS", {})
    alone = plan_pattern(topo, _pattern(topo, size))
    assert (alone.algorithm, alone.protocol, alone.chosen_by) != (*forced, "plugin")
    assert alone.chosen_by == "nccl"


def test_the_plan_says_who_chose(tops):
    """``chosen_by`` (result field, docs/FORMATS.md): NCCL's model, the plugin's tuner, or the scenario."""
    assert plan_pattern(tops["a100x2"], _pattern(tops["a100x2"], 4 * GIB)).chosen_by == "nccl"
    assert plan_pattern(tops["p5x4"], _pattern(tops["p5x4"], GIB)).chosen_by == "plugin"
    forced = {**_pattern(tops["a100x2"], 4 * GIB), "algorithm": "tree"}
    plan = plan_pattern(tops["a100x2"], forced)
    assert (plan.algorithm, plan.chosen_by) == ("tree", "request")
    assert plan.as_dict()["chosen_by"] == "request"


def test_an_allowed_list_is_chosen_from_by_nccls_model_not_by_speed(tops):
    """NCCL_ALGO=Ring,Tree leaves NCCL's model to choose between the two: on two A100 hosts at
    4 GiB it keeps the ring (41.94 ms by hand, above) though the engine predicts the tree
    faster. Keeping the fastest allowed one would answer tree."""
    from designer.engine.analysis.nccl_tests import predict_sweep

    topo = tops["a100x2"]
    nccl = predict_sweep(topo, "all_reduce", sizes=[4 * GIB], algorithms=["ring", "tree"])[0]
    fastest = predict_sweep(topo, "all_reduce", sizes=[4 * GIB], fastest_of=["ring", "tree"])[0]
    assert (nccl["algorithm"], fastest["algorithm"]) == ("ring", "tree")
    assert nccl["time_us"] == pytest.approx(2 * 15 / 16 * 4 * GIB / 192e9 * 1e6, rel=0.01)
    assert fastest["time_us"] < nccl["time_us"]
    # the plan says why the others did not run
    plan = plan_pattern(topo, {**_pattern(topo, 4 * GIB), "algorithms": ("tree",)})
    assert plan.algorithm == "tree"
    assert "NCCL_ALGO" in plan.alternatives["ring"]["reason"]


def test_the_plugin_forces_only_an_allowed_pair(tops):
    """p5 × 4 at 32 MiB: the AWS polygons force tree LL128; with the tree left out (NCCL_ALGO=^Tree)
    NCCL ignores that entry and its own model chooses among the rest."""
    topo = tops["p5x4"]
    allowed = ("ring", "nvls", "nvlstree", "collnet", "pat")
    plan = plan_pattern(topo, {**_pattern(topo, 32 * MIB), "algorithms": allowed})
    assert plan.algorithm != "tree" and plan.chosen_by == "nccl"


@pytest.mark.parametrize("extra, message", [
    ({"algorithms": []}, "non-empty list"),
    ({"algorithms": "ring"}, "non-empty list"),
    ({"algorithms": ["ring", "bogus"]}, "unknown algorithm 'bogus'"),
    ({"algorithms": ["ring"], "algorithm": "tree"}, "applies to algorithm auto only"),
])
def test_a_bad_allowed_list_is_refused_where_it_is(tops, extra, message):
    from designer.engine.errors import InvalidWorkload

    raw = {"kind": "allreduce", "participants": {"kind": "gpu"}, "bytes": GIB, **extra}
    with pytest.raises(InvalidWorkload) as info:
        normalize_pattern(tops["a100x2"], raw, "workload[0]", set())
    where = [p for p in info.value.problems if p.path == "workload[0].algorithms"]
    assert where and message in where[0].message


def test_patterns_that_differ_only_in_their_allowed_list_are_planned_apart(tops):
    """One workload, two grouped all-reduces alike but for ``algorithms``: each group's plan is
    shared between patterns of one shape, and the allowed list is part of that shape."""
    from designer.engine.analysis.simulate import simulate

    topo = tops["a100x2"]
    groups = [[f"h0/gpu{g}", f"h1/gpu{g}"] for g in range(8)]
    base = {"kind": "allreduce", "bytes": GIB, "groups": groups}
    result = simulate({"topology": topo, "options": {"max_flows_listed": 0}, "workload": [
        {**base, "id": "trees", "algorithms": ["tree"]}, {**base, "id": "rings", "algorithms": ["ring"]}]})
    chosen = {pid: p["algorithm"] for pid, p in result["summary"]["patterns"].items()}
    assert chosen == {"trees": "tree", "rings": "ring"}
