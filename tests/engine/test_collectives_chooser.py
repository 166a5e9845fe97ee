"""Who chooses the algorithm (``collectives.chooser``): NCCL's own cost model, or a net plugin's tuner.

NCCL converts a tree's bus bandwidth to algorithm bandwidth by ½ and a ring's by nRanks / nsteps
(NVIDIA/nccl src/graph/tuning.cc, "Convert bus BW to algorithm BW"); the engine's tree flows
carry the reduce up and the broadcast down at once, so NCCL's model of the tree's data time is
twice the engine's. AWS's aws-ofi-nccl replaces the choice with regions measured on p5/p5e/p5en/
p6 from three nodes on (src/tuner/nccl_ofi_tuner.cpp, nccl_ofi_regions.cpp), which the engine
stands in for with the fastest prediction.

Two DGX A100, rail-optimized, 8 × HDR per host at 24 GB/s (catalog effective), all-reduce of
4 GiB over 16 GPUs — the ring, by hand::

    data  = 2 · (16 − 1)/16 · 4 GiB = 8.053 GB a rank
    rate  = 8 NICs × 24 GB/s        = 192 GB/s (each channel's ring crosses one NIC pair)
    time  = 8.053 / 192             = 41.94 ms (+ latency, µs)
"""
import pytest

from designer.engine.benchmarks.fidelity import build_topology
from designer.engine.traffic.collectives import plan_pattern
from designer.engine.traffic.collectives.chooser import plugin_tuner_chooses, selection_time
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


def test_nccls_model_counts_the_trees_data_twice_a_plugin_tuner_takes_the_time_achieved():
    assert selection_time("tree", 1e-5, 0.03, 0.5, by_plugin=False) == pytest.approx(1e-5 + 0.12)
    assert selection_time("tree", 1e-5, 0.03, 0.5, by_plugin=True) == pytest.approx(1e-5 + 0.06)
    assert selection_time("ring", 1e-5, 0.03, 0.5, by_plugin=False) == pytest.approx(1e-5 + 0.06)


def test_a_large_allreduce_on_two_a100_hosts_runs_the_ring_nccl_models_cheaper(tops):
    """The engine predicts the tree faster (its flows overlap reduce and broadcast), NCCL's
    model charges the tree 2S / busBw and keeps the ring — which runs at the NICs' 192 GB/s."""
    plan = plan_pattern(tops["a100x2"], _pattern(tops["a100x2"], 4 * GIB))
    ring, tree = plan.alternatives["ring"]["time_s"], plan.alternatives["tree"]["time_s"]
    assert tree < ring
    assert plan.algorithm == "ring"
    assert ring == pytest.approx(2 * 15 / 16 * 4 * GIB / 192e9, rel=0.01)   # 41.94 ms


@pytest.mark.parametrize("name, tuned", [("p5x4", True), ("p5x2", False), ("p4dx4", False), ("h100x4", False)])
def test_the_aws_tuner_chooses_on_hopper_efa_from_three_hosts(tops, name, tuned):
    """p5 (H100, EFA) from 3 hosts: AWS's regions; 2 hosts, p4d (A100) and ConnectX hosts: NCCL."""
    topo = tops[name]
    assert plugin_tuner_chooses(topo, group_of(topo, _pattern(topo, 64 * MIB))) is tuned


def test_where_the_aws_tuner_chooses_the_fastest_prediction_runs(tops):
    plan = plan_pattern(tops["p5x4"], _pattern(tops["p5x4"], 64 * MIB))
    times = {a: v["time_s"] for a, v in plan.alternatives.items() if v["time_s"] is not None}
    assert plan.algorithm == min(times, key=times.get)


def test_the_plan_says_who_chose(tops):
    """``chosen_by`` (result field, docs/FORMATS.md): NCCL's model, the plugin's tuner, or the scenario."""
    assert plan_pattern(tops["a100x2"], _pattern(tops["a100x2"], 4 * GIB)).chosen_by == "nccl"
    assert plan_pattern(tops["p5x4"], _pattern(tops["p5x4"], 64 * MIB)).chosen_by == "plugin"
    forced = {**_pattern(tops["a100x2"], 4 * GIB), "algorithm": "tree"}
    plan = plan_pattern(tops["a100x2"], forced)
    assert (plan.algorithm, plan.chosen_by) == ("tree", "request")
    assert plan.as_dict()["chosen_by"] == "request"
