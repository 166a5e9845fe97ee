"""Benchmark of the diagnosis: one 16-host DGX-H100 (128 GPUs, rail-optimized) all-reduce curve of
31 sizes (8 B … 8 GiB, nccl-tests' ``-b 8 -e 8G -f 2``) measured with ``h5/nic3`` at half its
rate, diagnosed against the healthy design.

The "measured" curve is the faulty design's own prediction (``simulate`` with the failure: the
pattern's ``fallback``, what NCCL re-initialized on the faulty machine runs) × seeded ±3 % noise;
it is made before the clock starts. Target: the diagnosis in ≤ 60 s CPU on one core
(docs/PERFORMANCE.md, "Diagnosis").
"""
from __future__ import annotations

import time

__all__ = ["BENCHMARKS", "diagnose_16"]


def _measured(topo, failures: list, sizes: list[int], seed: int) -> list[dict]:
    import numpy as np

    from designer.engine.analysis.simulate import simulate

    rng = np.random.default_rng(seed)
    gpus = [topo.node_ids[i] for i in topo.nodes_of_kind("gpu")]
    rows = []
    for size in sizes:
        scenario = {"topology": topo, "failures": failures, "options": {"max_flows_listed": 0},
                    "workload": [{"id": "nccl", "kind": "allreduce", "participants": {"ids": gpus}, "bytes": size}]}
        pattern = simulate(scenario)["summary"]["patterns"]["nccl"]
        busbw = (pattern.get("fallback") or pattern)["busbw_gbs"]
        rows.append({"bytes": size, "busbw_gbps": busbw * (1 + rng.uniform(-0.03, 0.03)), "time_us": None})
    return rows


def diagnose_16(hosts: int = 16) -> dict:
    """CPU seconds of one diagnosis, what it simulated, and where the injected fault ranks."""
    from designer.engine.analysis.diagnose import diagnose
    from designer.engine.analysis.nccl_tests import compile_topology, sweep_sizes

    topo = compile_topology({"build": {"template": "dgx-h100", "hosts": hosts}})
    injected = "h5/nic3"
    rows = _measured(topo, [{"target": injected, "mode": "degrade", "factor": 0.5}], sweep_sizes(8, 8 << 30), 0)
    runs = [{"label": "all", "hosts": None, "gpus": None, "rows": rows}]
    t0, w0 = time.process_time(), time.perf_counter()
    out = diagnose(topo, runs)
    cpu, wall = time.process_time() - t0, time.perf_counter() - w0
    rank = next((e["rank"] for e in out["explanations"] if injected in e["members"]), None)
    best = out["explanations"][0] if out["explanations"] else {}
    return {"cpu_seconds": round(cpu, 3), "wall_seconds": round(wall, 3), "gpus": out["ranks"], "sizes": len(rows),
            "candidates": out["stats"]["candidates"], "classes": out["stats"]["classes"],
            "simulated": out["stats"]["simulated"], "injected_rank": rank,
            "best": best.get("label"), "best_fit_error_pct": round(best.get("fit_error_pct", 0.0), 2),
            "healthy_fit_error_pct": round(out["healthy_fit_error_pct"], 2)}


BENCHMARKS = {"diagnose_16": diagnose_16}
