"""The memory model of docs/PERFORMANCE.md ("100,000 GPUs: memory per GPU, flow and link"), checked
at a small size by counting the bytes Python allocates (tracemalloc: dicts, strings and numpy
arrays alike), not by timing anything.

64 DGX-H100 (512 GPUs), rail-optimized, a ring all-reduce over every GPU::

    [h0/gpu0]--pcie--[h0/nic0]==400G==[leaf0]==[spine*]==[leaf1]==[h32/nic0]--pcie--[h32/gpu0]

Bounds: the figures measured on this tree plus ~20 % (a change that makes any element fatter by
more than that should update the model, and the figures, on purpose).
"""
from __future__ import annotations

import gc
import json
import tracemalloc

import orjson
import pytest

from designer.engine.analysis.result_groups import group_resources
from designer.engine.analysis.simulate import build_result, prepare, solve_prepared
from designer.engine.model.fabrics import build_cluster
from designer.engine.model.topology import Topology
from designer.engine.traffic.scenario import normalize_scenario

# Bytes per element (docs/PERFORMANCE.md): measured 1,071 B/link, 11,445 B/GPU, 597 B/flow, 77 B/entry.
TOPOLOGY_BYTES_PER_LINK = 1_300
TOPOLOGY_BYTES_PER_GPU = 14_000
PREPARED_BYTES_PER_FLOW = 720
PREPARED_BYTES_PER_PATH_ENTRY = 95
GROUPED_RESOURCE_BYTES_PER_GPU = 40


def _ring(topology):
    return normalize_scenario({"topology": topology, "workload": [
        {"id": "ar", "kind": "allreduce", "algorithm": "ring", "participants": {"kind": "gpu"}, "bytes": 1e9}]})


@pytest.fixture(scope="module")
def measured():
    # One small run first: imports and one-time caches are not per element.
    prepare(_ring(build_cluster("dgx-h100", 2, fabric="rail-optimized")))
    text = orjson.dumps(build_cluster("dgx-h100", 64, fabric="rail-optimized"))
    gc.collect()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        topo = Topology.from_document(json.loads(text), owned=True)   # as the CLI loads a file
        gc.collect()
        topology_bytes = tracemalloc.get_traced_memory()[0] - start
        prep = prepare(_ring(topo))
        gc.collect()
        prepared_bytes = tracemalloc.get_traced_memory()[0] - start - topology_bytes
    finally:
        tracemalloc.stop()
    result = build_result(prep, solve_prepared(prep))
    return {"topo": topo, "prep": prep, "topology_bytes": topology_bytes, "prepared_bytes": prepared_bytes,
            "result": result}


def test_topology_bytes_per_link_and_per_gpu(measured):
    topo, size = measured["topo"], measured["topology_bytes"]
    gpus = sum(1 for kind in topo.node_kind if kind == "gpu")
    assert gpus == 512
    assert size / topo.num_links <= TOPOLOGY_BYTES_PER_LINK, size / topo.num_links
    assert size / gpus <= TOPOLOGY_BYTES_PER_GPU, size / gpus


def test_prepared_flow_bytes(measured):
    prep, size = measured["prep"], measured["prepared_bytes"]
    assert len(prep.flows) == 4096
    assert size / len(prep.flows) <= PREPARED_BYTES_PER_FLOW, size / len(prep.flows)
    assert size / len(prep.routes.flow_res) <= PREPARED_BYTES_PER_PATH_ENTRY, size / len(prep.routes.flow_res)


def test_grouped_resources_bytes_per_gpu(measured):
    resources = measured["result"]["resources"]
    grouped = group_resources(resources)
    per_gpu = len(orjson.dumps(grouped)) / 512
    assert per_gpu <= GROUPED_RESOURCE_BYTES_PER_GPU, per_gpu
    assert len(orjson.dumps(resources)) / 512 > 10 * per_gpu   # the list it replaces
