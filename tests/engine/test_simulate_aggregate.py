"""simulate with identical sub-flows grouped before solving gives the result of the plain solve.

A ring all-reduce on 8 DGX-H100 (64 GPUs, rail-optimized, 2 leaves per rail) has many sub-flows
with the same path, demand and weight (the same neighbours on every channel); the threshold is
lowered to 0 so the grouping runs on this small cluster.
"""
import numpy as np
import pytest

from designer.engine.analysis import simulate as sim
from designer.engine.model.fabrics import build_cluster
from designer.engine.model.topology import Topology


@pytest.fixture(scope="module")
def topo():
    return Topology.from_document(build_cluster("dgx-h100", 8, fabric="rail-optimized", leaves_per_rail=2))


def _run(topo, workload, threshold, monkeypatch):
    monkeypatch.setattr(sim, "_AGGREGATE_MIN_PATHS", threshold)
    prep = sim.prepare({"topology": topo, "workload": workload})
    solved = sim.solve_prepared(prep)
    return prep, solved, sim.build_result(prep, solved)


@pytest.mark.parametrize("workload", [
    [{"id": "ar", "kind": "allreduce", "algorithm": "ring", "participants": {"kind": "gpu"}, "bytes": 1e9}],
    [{"id": "ar", "kind": "allreduce", "algorithm": "ring", "participants": {"kind": "gpu"}, "bytes": 1e9},
     {"id": "cap", "kind": "allreduce", "algorithm": "ring", "participants": {"kind": "gpu", "every": 2},
      "bytes": 1e8}],
])
def test_grouped_solve_equals_plain_solve(topo, workload, monkeypatch):
    prep, plain, doc_plain = _run(topo, workload, 10**12, monkeypatch)
    prep2, grouped, doc_grouped = _run(topo, workload, 0, monkeypatch)
    agg = prep2.__dict__["_aggregation"][2]
    assert agg is not False and len(agg.weights) < prep2.routes.num_paths   # something was merged
    np.testing.assert_allclose(grouped.path_rate_gbps, plain.path_rate_gbps, rtol=1e-12)
    np.testing.assert_allclose(grouped.flow_rate_gbps, plain.flow_rate_gbps, rtol=1e-12)
    np.testing.assert_allclose(grouped.flow_completion_s, plain.flow_completion_s, rtol=1e-12)
    np.testing.assert_allclose(grouped.load_gbps, plain.load_gbps, rtol=1e-12, atol=1e-9)
    for pid, entry in doc_plain["summary"]["patterns"].items():
        assert doc_grouped["summary"]["patterns"][pid]["completion_s"] == pytest.approx(entry["completion_s"], rel=1e-12)
    assert doc_grouped["summary"]["complete"] == doc_plain["summary"]["complete"]
