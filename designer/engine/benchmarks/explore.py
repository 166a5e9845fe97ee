"""Benchmark of the design-space explorer: a 36-point grid for a 1,024-GPU cluster.

128 DGX-H100 (1,024 GPUs) × fabric kind (rail-optimized, rail-only, leaf-spine) ×
oversubscription (1, 3) × switch model (eth-51t2, eth-25t6) × NIC link (eth200, eth400, eth800),
each point built, planned and simulated with a DeepSeek-V3-shaped MoE step (tp 1, ep 64, dp
1,024: expert all-to-all across hosts). Timed on one process (the unchunked run) and on two
processes, each running one chunk of two as a Celery worker would (each process warmed first by
a one-point grid: a running worker has imported the engine and loaded the compiled solver), then
merged. Target: ≤ 5 min on 2 workers (docs/PERFORMANCE.md, "Design-space explorer").

Oversubscription is 1 and 3 (not 1, 2, 3) so that the grid holds every fabric kind and still has
36 points: the leaf-spine points at 3:1 are the hard ones (an ECMP-hashed all-to-all through
oversubscribed spines finishes at thousands of distinct times), and all six of them are in.
They cost seconds because the job's event loop batches completions inside its quantum
(``event_quantum`` ε, :data:`designer.engine.traffic.jobs.dag.EVENT_QUANTUM`; each point's
``jobs`` say their events and ε): the 3:1 ``eth-25t6`` ``eth400`` point's loop took 263 s CPU in
7,027 exact events, 3.3 s in 255 batched ones at ε = 0.005, with the same step time to 1e-15
(docs/PERFORMANCE.md, "Slow points").
"""
from __future__ import annotations

import time
from concurrent.futures import ProcessPoolExecutor

__all__ = ["BENCHMARKS", "GRID_36", "explore_36"]

GRID_36 = {"base": {"template": "dgx-h100", "gpus": 1024},
           "grid": {"fabric": ["rail-optimized", "rail-only", "leaf-spine"], "oversubscription": [1, 3],
                    "switch": ["eth-51t2", "eth-25t6"], "nic_link_tech": ["eth200", "eth400", "eth800"]},
           "workload": {"job": {"layout": {"tp": 1, "ep": 64, "dp": 1024},
                                "template": {"model": "deepseek-v3", "microbatches": 1, "seq_len": 4096}}}}
_WARM = {"base": {"template": "dgx-h100", "hosts": 2}, "grid": {"fabric": ["rail-only"]},
         "workload": [{"id": "ar", "kind": "allreduce", "bytes": 1e6}]}


def _chunk(args) -> tuple[dict, float]:
    from designer.engine.analysis.explore import explore

    i, n = args
    t0 = time.process_time()
    return explore(GRID_36, chunk=(i, n)), time.process_time() - t0


def _warm(_) -> bool:
    from designer.engine.analysis.explore import explore

    explore(_WARM)
    return True


def explore_36(processes: int = 2) -> dict:
    """Wall seconds of the 36-point grid on one process and on ``processes`` chunk processes."""
    from designer.engine.analysis.explore import explore, merge_explore

    explore(_WARM)
    w0 = time.perf_counter()
    whole = explore(GRID_36)
    one = time.perf_counter() - w0
    with ProcessPoolExecutor(processes) as pool:
        list(pool.map(_warm, range(processes)))
        w0 = time.perf_counter()
        parts = list(pool.map(_chunk, [(i, processes) for i in range(processes)]))
        merged = merge_explore([p for p, _ in parts])
        many = time.perf_counter() - w0
    assert merged == whole, "chunked run differs from the unchunked one"
    pts = whole["points"]
    return {"points": len(pts), "feasible": whole["summary"]["feasible"], "frontier": len(whole["frontier"]),
            "gpus": pts[0].get("gpus"), "wall_seconds_1_process": round(one, 2),
            f"wall_seconds_{processes}_processes": round(many, 2),
            "cpu_seconds_per_chunk": [round(c, 2) for _, c in parts],
            "speedup": round(one / many, 2) if many else None, "target_seconds": 300}


BENCHMARKS = {"explore_36": explore_36}
