"""Benchmarks of the topology pipeline: build a rail-optimized DGX-H100 cluster, validate,
normalize and compile it. Figures: seconds per phase, node and link counts.

Targets: 1,024 GPUs in ≤ 1 s and 16,384 GPUs in ≤ 15 s for normalize + compile.
"""
from __future__ import annotations

import time

__all__ = ["BENCHMARKS", "cluster_pipeline", "fabric_32k", "bom_preview_100k"]


def cluster_pipeline(hosts: int, hosts_per_leaf: int = 32) -> dict:
    """Time each phase for ``hosts`` DGX-H100 hosts (8 GPUs each), rail-optimized fabric."""
    from designer.engine.document import normalize, validate
    from designer.engine.model.fabrics import build_cluster
    from designer.engine.model.topology import Topology

    t0 = time.perf_counter()
    doc = build_cluster("dgx-h100", hosts, fabric="rail-optimized",
                        leaves_per_rail=max(1, hosts // hosts_per_leaf))
    t1 = time.perf_counter()
    problems = validate(doc)
    t2 = time.perf_counter()
    normalized = normalize(doc)  # validates again: the figure a caller of normalize sees
    t3 = time.perf_counter()
    topo = Topology.compile(normalized)
    t4 = time.perf_counter()
    return {"gpus": 8 * hosts, "hosts": hosts, "nodes": topo.num_nodes, "links": topo.num_links,
            "resources": topo.num_resources, "problems": len(problems),
            "build_s": round(t1 - t0, 3), "validate_s": round(t2 - t1, 3),
            "normalize_s": round(t3 - t2, 3), "compile_s": round(t4 - t3, 3),
            "normalize_compile_s": round(t4 - t2, 3), "total_s": round(t4 - t0, 3)}


def fabric_32k(hosts: int = 4096) -> dict:
    """Build + validate 4,096 DGX-H100 (32,768 GPUs), rail-optimized, eth-51t2 in 128 x 400G mode:
    64 hosts per leaf at o = 1 → 64 leaves per rail, 512 leaves > 128 → three tiers
    (target ≤ 10 s)."""
    from designer.engine.document import validate
    from designer.engine.model.fabrics import build_cluster

    t0 = time.perf_counter()
    doc = build_cluster("dgx-h100", hosts, fabric="rail-optimized", switch="eth-51t2")
    t1 = time.perf_counter()
    problems = validate(doc)
    t2 = time.perf_counter()
    f = doc["fabric"]
    return {"gpus": 8 * hosts, "hosts": hosts, "nodes": len(doc["nodes"]), "links": len(doc["links"]),
            "leaves_per_rail": f["leaves_per_rail"], "tiers": f["tiers"], "pods": f["pods"],
            "spines": f["spines"], "cores": f["cores"], "problems": len(problems),
            "build_s": round(t1 - t0, 3), "validate_s": round(t2 - t1, 3), "total_s": round(t2 - t0, 3)}


def bom_preview_100k(hosts: int = 12_500, runs: int = 3) -> dict:
    """BOM preview of 12,500 DGX-H100 (100,000 GPUs), rail-optimized, eth-51t2, from the spec
    (``bom.plan_bom``: no host built): 100,000 NIC ports, 1,568 leaves, three tiers
    (target ≤ 1 s; best of ``runs``). Also 456 GB200 NVL72 racks (32,832 GPUs)."""
    from designer.engine.model.bom import plan_bom

    best = nvl = None
    for _ in range(runs):
        t0 = time.perf_counter()
        result = plan_bom("dgx-h100", hosts)
        t1 = time.perf_counter()
        plan_bom("gb200-nvl72", 456)
        t2 = time.perf_counter()
        best = t1 - t0 if best is None else min(best, t1 - t0)
        nvl = t2 - t1 if nvl is None else min(nvl, t2 - t1)
    bom = result["bom"]
    return {"gpus": result["summary"]["gpus"], "hosts": hosts,
            "switches": sum(r["count"] for r in bom["switches"]),
            "cables": sum(bom["cables"].values()), "plan_bom_s": round(best, 3),
            "nvl72_456_racks_s": round(nvl, 3)}


BENCHMARKS = {
    "rail_dgx_h100_1024gpu": lambda: cluster_pipeline(128),
    "rail_dgx_h100_16384gpu": lambda: cluster_pipeline(2048),
    "fabric_32k": fabric_32k,
    "bom_preview_100k": bom_preview_100k,
}
