"""Benchmark of the goodput plan at Llama 3 scale: 2,048 DGX-H100 (16,384 GPUs), rail-optimized,
64 storage servers; a 405e9-parameter checkpoint (14 bytes a parameter: 5.67 TB, 346 MB per
GPU) written and read back through the storage fabric (two simulations), default rates, a
Monte Carlo of 200 runs × 54 days (10,800 simulated days); the blast radius measured on the
job's gradient all-reduce (405e9 × 2 bytes) at the reduced scale of
:mod:`designer.engine.analysis.goodput.blast` (16 hosts of two leaf groups).

Target: the plan (counts, blast radius sweep, both storage simulations, intervals, Monte Carlo) in ≤ 10 s CPU, the design's
build not counted (docs/PERFORMANCE.md, "Goodput plan").
"""
from __future__ import annotations

import time

__all__ = ["BENCHMARKS", "goodput_16k"]


def goodput_16k(hosts: int = 2048, storage: int = 64) -> dict:
    """CPU seconds of one plan, and its headline figures."""
    from designer.engine.analysis.goodput import plan_goodput
    from designer.engine.model.fabrics import build_cluster

    doc = build_cluster("dgx-h100", hosts, storage=storage)
    plan = {"topology": doc, "checkpoint": {"parameters": 405e9},
            "monte_carlo": {"runs": 200, "days_per_run": 54, "seed": 0}}
    t0, w0 = time.process_time(), time.perf_counter()
    out = plan_goodput(plan)
    cpu, wall = time.process_time() - t0, time.perf_counter() - w0
    ck, mc = out["checkpoint"], out["monte_carlo"]
    return {"cpu_seconds": round(cpu, 3), "wall_seconds": round(wall, 3), "gpus": out["design"]["gpus"],
            "interruptions_per_day": round(out["job"]["interruptions_per_day"], 4),
            "mttf_hours": round(out["job"]["mttf_hours"], 3), "checkpoint_write_s": round(ck["write_s"], 3),
            "checkpoint_read_s": round(ck["read_s"], 3), "daly_interval_s": round(ck["daly_interval_s"], 1),
            "ettr": round(ck["ettr"], 4), "goodput": round(out["goodput"], 4),
            "mc_simulated_days": mc["simulated_days"], "mc_ettr_mean": round(mc["ettr"]["mean"], 4),
            "mc_ettr_p5": round(mc["ettr"]["p5"], 4), "mc_ettr_p95": round(mc["ettr"]["p95"], 4),
            "blast_simulated_classes": sum(r["blast"]["source"] == "simulated" for r in out["classes"]),
            "blast_traffic_gpus": out["traffic"]["gpus"]}


BENCHMARKS = {"goodput_16k": goodput_16k}
