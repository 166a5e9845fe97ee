"""Benchmarks of routing + solving at cluster scale (1,024 H100 GPUs, rail-optimized fabric).

Figures: seconds per stage, flow/path/entry counts, peak traced memory (bytes, numpy included).
Targets: the ~1M-flow all-to-all routes and solves in ≤ 10 s total within ≤ 4 GB; one step of a
Llama-3-70B-class job, TP 8 × PP 4 × DP 32 on the 1,024 GPUs (``llama3_70b_step_1024``), in ≤ 30 s.
Measured figures are in docs/PERFORMANCE.md.
"""
from __future__ import annotations

import time
import tracemalloc

__all__ = ["BENCHMARKS"]

HOSTS = 128  # 128 DGX H100 = 1,024 GPUs


def _cluster(storage: int = 0):
    from designer.engine.model.fabrics import build_cluster
    from designer.engine.model.topology import Topology

    return Topology.from_document(build_cluster("dgx-h100", HOSTS, fabric="rail-optimized",
                                                leaves_per_rail=4, storage=storage))


def _run(workload: list[dict], mode: str = "steady", storage: int = 0) -> dict:
    from designer.engine.analysis.simulate import build_result, prepare, solve_prepared

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
    from designer.engine.analysis.simulate import simulate

    topo = _cluster()
    job = {"layout": {"tp": 8, "pp": 4, "dp": 32},
           "template": {"model": "llama3-70b", "seq_len": 8192, "micro_batch": 1, "microbatches": 8,
                        "gpu": "h100", "mfu": 0.4}}
    t0, c0 = time.perf_counter(), time.process_time()
    result = simulate({"topology": topo, "workload": {"job": job}})
    t1, c1 = time.perf_counter(), time.process_time()
    j = result["summary"]["job"]
    # CPU seconds too: the wall time moves with whatever else shares the machine's cores.
    return {"total_s": t1 - t0, "cpu_s": c1 - c0, **{f"{k}_s": v for k, v in result["timings_s"].items()},
            "flows": result["summary"]["flows_total"], "phases": len(j["phases"]), "events": j["events"],
            "step_time_s": j["step_time_s"], "compute_s": j["compute_s"],
            "exposed_communication_s": j["exposed_communication_s"], "critical_path_len": len(j["critical_path"])}


RING = {"id": "ar", "kind": "allreduce", "algorithm": "ring", "participants": {"kind": "gpu"}, "bytes": 1e9}
ALLTOALL = {"id": "a2a", "kind": "alltoall", "participants": {"kind": "gpu"}, "bytes": 1e9}


def cli_simulate(hosts: int, pattern: dict, **fabric) -> dict:
    """The whole ``python -m designer.engine simulate scenario.json -o result.json`` process
    (interpreter, imports, topology read + validate + compile, flows, routing, solve, result
    document, JSON write) on ``hosts`` DGX-H100, rail-optimized (``fabric``: options of
    :func:`~designer.engine.model.fabrics.build_cluster`), in a fresh process of its own, as a user sees it.

    Figures: the child's CPU (user + sys), wall and max RSS (``cli_rusage``), the result's size
    and its ``timings_s``. numba's on-disk cache is warmed by a tiny ``solve`` first.
    """
    import tempfile
    from pathlib import Path

    import orjson

    from designer.engine.benchmarks.solver import cli_rusage, solve_document
    from designer.engine.model.fabrics import build_cluster

    with tempfile.TemporaryDirectory() as tmp:
        topo, scenario, out = Path(tmp, "topology.json"), Path(tmp, "scenario.json"), Path(tmp, "result.json")
        topo.write_bytes(orjson.dumps(build_cluster("dgx-h100", hosts, fabric="rail-optimized", **fabric)))
        scenario.write_bytes(orjson.dumps({"topology": topo.name, "workload": [pattern]}))
        tiny = Path(tmp, "tiny.json")
        tiny.write_bytes(orjson.dumps(solve_document(10, 5)))
        cli_rusage(["solve", str(tiny), "-o", str(out)])
        figures = cli_rusage(["simulate", str(scenario), "-o", str(out), "--quiet"])
        result = orjson.loads(out.read_bytes())
        return {"gpus": 8 * hosts, "flows": result["summary"]["flows_total"], "paths": result["summary"]["paths"],
                **figures, "result_bytes": out.stat().st_size,
                "timings_s": {k: round(v, 3) for k, v in result["timings_s"].items()}}


BENCHMARKS = {
    "cli_allreduce_ring_16384": lambda: cli_simulate(2048, RING, leaves_per_rail=64),
    "cli_alltoall_1024": lambda: cli_simulate(HOSTS, ALLTOALL, leaves_per_rail=4),
    # Target: 4,096 GPUs' all-to-all (16.8M flows) in <= 60 s and <= 16 GB RSS.
    "cli_alltoall_4096": lambda: cli_simulate(512, ALLTOALL),
    # 4,096 DGX-H100, 3-tier rail-optimized on 51.2T switches (as topology.fabric_32k).
    "cli_allreduce_ring_32768": lambda: cli_simulate(4096, RING, switch="eth-51t2"),
    "allreduce_ring_1024": bench_allreduce_ring,
    "alltoall_1024": bench_alltoall_1024,
    "timeline_allreduce_storage_1024": bench_timeline_allreduce_storage,
    "llama3_70b_step_1024": bench_llama3_70b_step,
}
