"""Example bodies shared by several endpoints' docs (one place to keep them realistic)."""
from __future__ import annotations

__all__ = ["EXAMPLE_DOCUMENT", "EXAMPLE_BUILD", "EXAMPLE_TOPOLOGY", "EXAMPLE_WORKLOAD",
           "EXAMPLE_JOB"]

EXAMPLE_DOCUMENT = {
    "format": "fabricscope.topology/1", "name": "two-gpus",
    "nodes": [{"id": "gpu0", "kind": "gpu"}, {"id": "gpu1", "kind": "gpu"},
              {"id": "sw0", "kind": "pcie_switch"}],
    "links": [{"a": "gpu0", "b": "sw0", "tech": "pcie5x16"},
              {"a": "gpu1", "b": "sw0", "tech": "pcie5x16"}]}
EXAMPLE_BUILD = {"template": "dgx-h100", "hosts": 32, "fabric": "rail-optimized", "spines": 8}
EXAMPLE_TOPOLOGY = {
    "id": 7, "name": "pod-a", "description": "", "owner": "alice", "revision_number": 1,
    "host_count": 32, "gpu_count": 256, "node_count": 1640, "link_count": 2976,
    "created_at": "2026-01-05T10:00:00Z", "updated_at": "2026-01-05T10:00:00Z"}
EXAMPLE_WORKLOAD = [{"id": "ar", "kind": "allreduce", "algorithm": "ring",
                     "participants": {"kind": "gpu"}, "bytes": 1e9}]
EXAMPLE_JOB = {
    "id": 12, "kind": "sweep", "state": "running", "progress": 40,
    "message": "3 of 8 chunks done", "topology": 7, "topology_name": "pod-a", "revision": 1,
    "scenario": 3, "scenario_name": "ring", "attempts": 1, "cancel_requested": False,
    "created_at": "2026-01-05T10:00:00Z", "started_at": "2026-01-05T10:00:01Z",
    "finished_at": None, "timings": {"queued_s": 1.0, "run_s": None, "total_s": None},
    "parameters": {"over": ["nic"], "chunks": 8}, "error": "", "url": "/api/v1/jobs/12/",
    "result_url": None}
