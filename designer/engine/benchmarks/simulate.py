"""Benchmarks of routing + solving at cluster scale (1,024 H100 GPUs, rail-optimized fabric).

Figures: seconds per stage, flow/path/entry counts, peak traced memory (bytes, numpy included).
Targets (DESIGN.md §2.5, issue 3): the ~1M-flow all-to-all routes and solves in ≤ 10 s total
within ≤ 4 GB. Issue 17: one step of a Llama-3-70B-class job, TP 8 × PP 4 × DP 32 on the 1,024
GPUs (``llama3_70b_step_1024``), in ≤ 30 s.
"""
from __future__ import annotations

import time
import tracemalloc

__all__ = ["BENCHMARKS"]

HOSTS = 128  # 128 DGX H100 = 1,024 GPUs


def _cluster(storage: int = 0):
    from designer.engine.fabrics import build_cluster
    from designer.engine.topology import Topology

    return Topology.from_document(build_cluster("dgx-h100", HOSTS, fabric="rail-optimized",
                                                leaves_per_rail=4, storage=storage))


def _run(workload: list[dict], mode: str = "steady", storage: int = 0) -> dict:
    from designer.engine.simulate import build_result, prepare, solve_prepared

    t0 = time.perf_counter()
    topo = _cluster(storage)
    t1 = time.perf_counter()
    tracemalloc.start()
    prep = prepare({"topology": topo, "workload": workload, "mode": mode})
    solved = solve_prepared(prep)
    t2 = time.perf_counter()
    result = build_result(prep, solved)
    t3 = time.perf_counter()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    figures = {"build_s": t1 - t0, **{f"{k}_s": v for k, v in prep.timings_s.items()},
               **{f"{k}_s": v for k, v in solved.timings_s.items()}, "result_s": t3 - t2,
               "route_plus_solve_s": prep.timings_s["route"] + solved.timings_s["solve"],
               "total_s": t3 - t1, "flows": len(prep.flows), "paths": prep.routes.num_paths,
               "entries": int(len(prep.routes.flow_res)), "levels": solved.levels,
               "peak_traced_bytes": int(peak),
               "completion_s": {k: v["completion_s"] for k, v in result["summary"]["patterns"].items()}}
    if solved.timeline is not None:
        figures["timeline_events"] = solved.timeline["events"]
    return figures


def bench_allreduce_ring() -> dict:
    return _run([{"id": "ar", "kind": "allreduce", "algorithm": "ring", "participants": {"kind": "gpu"}, "bytes": 1e9}])


def bench_alltoall_1024() -> dict:
    return _run([{"id": "a2a", "kind": "alltoall", "participants": {"kind": "gpu"}, "bytes": 1e9}])


def bench_timeline_allreduce_storage() -> dict:
    return _run([{"id": "ar", "kind": "allreduce", "algorithm": "ring", "participants": {"kind": "gpu"}, "bytes": 1e9},
                 {"id": "load", "kind": "storage_read", "source": {"kind": "nvme"},
                  "participants": {"kind": "gpu", "every": 8}, "bytes": 4e9}], mode="timeline")


def bench_llama3_70b_step() -> dict:
    """One training step of the llama3-70b template (GPipe, 8 micro-batches of 1 × 8,192 tokens)
    on TP 8 × PP 4 × DP 32: flows, routing, the phase event loop and the result."""
    from designer.engine.simulate import simulate

    topo = _cluster()
    job = {"layout": {"tp": 8, "pp": 4, "dp": 32},
           "template": {"model": "llama3-70b", "seq_len": 8192, "micro_batch": 1, "microbatches": 8,
                        "gpu": "h100", "mfu": 0.4}}
    t0 = time.perf_counter()
    result = simulate({"topology": topo, "workload": {"job": job}})
    t1 = time.perf_counter()
    j = result["summary"]["job"]
    return {"total_s": t1 - t0, **{f"{k}_s": v for k, v in result["timings_s"].items()},
            "flows": result["summary"]["flows_total"], "phases": len(j["phases"]), "events": j["events"],
            "step_time_s": j["step_time_s"], "compute_s": j["compute_s"],
            "exposed_communication_s": j["exposed_communication_s"], "critical_path_len": len(j["critical_path"])}


BENCHMARKS = {
    "allreduce_ring_1024": bench_allreduce_ring,
    "alltoall_1024": bench_alltoall_1024,
    "timeline_allreduce_storage_1024": bench_timeline_allreduce_storage,
    "llama3_70b_step_1024": bench_llama3_70b_step,
}
