"""Benchmarks of training steps at scale: one step of a model template as a whole process.

- ``step_llama405_16k``: llama3-405b, TP 8 × PP 16 × DP 128 (16,384 GPUs on 2,048 DGX-H100,
  rail-optimized), GPipe, 16 micro-batches of 1 × 8,192 tokens: data-parallel all-reduce,
  pipeline send/recv, tensor-parallel collectives. Target ≤ 30 s CPU.
- ``step_moe_ep64_16k``: deepseek-v3, TP 1 × EP 64 × DP 16,384 (the same cluster), one
  micro-batch of 4,096 tokens: expert-parallel all-to-all, dense and expert-gradient all-reduces.
  Target ≤ 60 s CPU.
- ``step_dense_100k``: llama3-405b on 100,000 GPUs (12,500 DGX-H100, rail-optimized, three
  tiers), TP 8 × PP 20 × DP 625 (100,000 = 8 × 20 × 625; PP 16 does not divide it), 16
  micro-batches. Target ≤ 5 min CPU.

Each runs in a fresh process of its own (``python -m designer.engine.benchmarks.steps NAME``):
build and compile the topology, expand the template, route, solve, the phase event loop and the
result (:func:`designer.engine.analysis.simulate.simulate`). Figures: the child's CPU (user +
sys) and max RSS, the step time and exposed communication, events, flows. ``--reference`` runs the
job's event loop with a full re-solve at every event (``run_job(..., incremental=False)``), the
before of docs/PERFORMANCE.md ("Training steps at scale"). Measured figures are there.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["BENCHMARKS", "CASES", "run_case"]

_DENSE = {"model": "llama3-405b", "seq_len": 8192, "micro_batch": 1, "microbatches": 16, "gpu": "h100", "mfu": 0.4}
# name → (hosts, build_cluster options, job)
CASES = {
    "step_llama405_16k": (2048, {}, {"layout": {"tp": 8, "pp": 16, "dp": 128}, "template": _DENSE}),
    "step_moe_ep64_16k": (2048, {}, {"layout": {"tp": 1, "ep": 64, "dp": 16384},
                                     "template": {"model": "deepseek-v3", "microbatches": 1, "seq_len": 4096}}),
    "step_dense_100k": (12500, {"tiers": 3}, {"layout": {"tp": 8, "pp": 20, "dp": 625}, "template": _DENSE}),
}


def run_case(name: str, reference: bool = False) -> dict:
    """Simulate case ``name`` in this process; its figures (CPU seconds of this process so far
    included: the child's whole-process figure is taken by the parent)."""
    from designer.engine.analysis.simulate import simulate
    from designer.engine.model.fabrics import build_cluster
    from designer.engine.model.topology import Topology
    from designer.engine.traffic.jobs import dag

    if reference:   # the full re-solve at every event, for the before/after comparison
        run = dag.run_job
        dag.run_job = lambda prep, job, incremental=False: run(prep, job, incremental)
    hosts, options, job = CASES[name]
    c0 = time.process_time()
    topo = Topology.from_document(build_cluster("dgx-h100", hosts, fabric="rail-optimized", **options))
    c1 = time.process_time()
    result = simulate({"topology": topo, "workload": {"job": job}})
    j = result["summary"]["job"]
    return {"gpus": 8 * hosts, "build_cpu_s": round(c1 - c0, 3), "simulate_cpu_s": round(time.process_time() - c1, 3),
            "timings_s": {k: round(v, 3) for k, v in result["timings_s"].items()},
            "flows": result["summary"]["flows_total"], "phases": len(j["phases"]), "events": j["events"],
            "step_time_s": j["step_time_s"], "compute_s": j["compute_s"],
            "exposed_communication_s": j["exposed_communication_s"]}


def whole_process(name: str, reference: bool = False) -> dict:
    """:func:`run_case` in a fresh child process; adds the child's CPU and max RSS (``os.wait4``)."""
    root = Path(__file__).resolve().parents[3]
    argv = [sys.executable, "-m", "designer.engine.benchmarks.steps", name] + (["--reference"] if reference else [])
    start = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, cwd=root, stdout=subprocess.PIPE, stderr=err)
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode:
            err.seek(0)
            raise RuntimeError(f"{name}: exit {proc.returncode}: {err.read().decode()[-500:]}")
    figures = json.loads(out)
    figures.update(wall_s=round(time.perf_counter() - start, 2), reference=reference,
                   cpu_s=round(usage.ru_utime + usage.ru_stime, 2), max_rss_bytes=usage.ru_maxrss * 1024)
    return figures


BENCHMARKS = {name: (lambda n=name: whole_process(n)) for name in CASES}


if __name__ == "__main__":
    print(json.dumps(run_case(sys.argv[1], reference="--reference" in sys.argv[2:])))
