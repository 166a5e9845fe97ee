"""Benchmarks of GB200 NVL72 rack-scale NVLink domains.

- ``nvl72_pod_alltoall_route``: route an all-to-all over the 576 GPUs of 8 NVL72 racks in a
  rail-optimized fabric (331,200 flows; 40,896 GPU pairs inside a rack ride NVLink through the
  domain router, the rest the NICs), CPU seconds of ``route`` alone;
- ``nvl72_switch_tray_sweep``: an N-1 sweep over the 9 NVLink-switch trays of one rack running
  an NVLS all-reduce over its 72 GPUs.

CPU seconds (``time.process_time``): the machine these run on is shared.
"""
from __future__ import annotations

import time

__all__ = ["BENCHMARKS"]

RACKS = 8


def pod_alltoall_route() -> dict:
    import numpy as np

    from designer.engine.model.fabrics import build_cluster
    from designer.engine.routing import route
    from designer.engine.model.topology import Topology
    from designer.engine.traffic.flows import Flows

    topo = Topology.from_document(build_cluster("gb200-nvl72", RACKS, fabric="rail-optimized"))
    gpus = np.array(topo.nodes_of_kind("gpu"), dtype=np.int64)
    src, dst = np.repeat(gpus, len(gpus)), np.tile(gpus, len(gpus))
    keep = src != dst
    flows = Flows.from_pairs(src[keep], dst[keep])
    t0 = time.process_time()
    routes = route(topo, flows)
    cpu = time.process_time() - t0
    nvl = int(np.sum(routes.class_code[routes.status == 0] == routes.class_names.index("NVL")))
    return {"cpu_seconds": cpu, "flows": len(flows), "paths": int(routes.count.sum()), "nvlink_flows": nvl}


def switch_tray_sweep() -> dict:
    from designer.engine.model.templates import host_document
    from designer.engine.analysis.whatif import sweep

    scenario = {"topology": host_document("gb200-nvl72"), "workload": [
        {"id": "ar", "kind": "allreduce", "participants": {"kind": "gpu", "group": "h0"}, "bytes": 1e9}]}
    t0 = time.process_time()
    out = sweep(scenario, over="nvlink_switch_tray")
    cpu = time.process_time() - t0
    worst = out["ranking"][0]["impact"]
    return {"cpu_seconds": cpu, "candidates": len(out["ranking"]),
            "completion_before_s": worst["job_completion_s"]["before"],
            "completion_after_s": worst["job_completion_s"]["after"]}


BENCHMARKS = {"nvl72_pod_alltoall_route": pod_alltoall_route, "nvl72_switch_tray_sweep": switch_tray_sweep}
