"""Benchmark of the job loop's batched completions (``event_quantum`` ε): error and cost vs exact.

Each case is prepared once, then its step is run by the exact loop (ε = 0) and at each ε of
``EPSILONS``; per run: events, events batched, event-loop CPU, step time and exposed
communication, their relative error against the exact loop, and the pattern ends' worst error.

- ``batching_error``: 128-256-GPU DGX-H100 steps (DeepSeek-V3-shaped MoE, EP 64, on leaf-spine
  1:1 and 3:1, rail-optimized 3:1; Llama-3-70B-shaped dense step, TP 8 × PP 4; a custom mix of two
  all-to-alls and a ring all-reduce overlapping on a 3:1 leaf-spine), and ``random``: 60 seeded
  instances of 400 paths over 1-3 of 40 resources (capacities 50-400 Gb/s, log-normal bytes, four
  overlapping patterns), the adversarial case for batching (no symmetry: completions spread).
- ``slow_point_1024``: the explorer's point that was slow (1,024 GPUs, leaf-spine 3:1,
  ``eth-25t6``, ``eth400``, the MoE step) at ε = 0 (≈ 5 min CPU) and the ε above.

Figures in docs/PERFORMANCE.md ("Slow points"), which is where the default ε was chosen.
"""
from __future__ import annotations

import time
from types import SimpleNamespace

import numpy as np

__all__ = ["BENCHMARKS", "EPSILONS"]

EPSILONS = (0.002, 0.005, 0.01, 0.02, 0.05)
_MOE = {"template": {"model": "deepseek-v3", "microbatches": 1, "seq_len": 4096}}
_DENSE = {"template": {"model": "llama3-70b", "seq_len": 8192, "micro_batch": 1, "microbatches": 8,
                       "gpu": "h100", "mfu": 0.4}}
_MIX = {"phases": [
    {"id": "a2a", "compute_s": 0.0,
     "patterns": [{"id": "a2a", "kind": "alltoall", "bytes": 4e9, "participants": {"kind": "gpu"}}]},
    {"id": "ar", "compute_s": 0.0,
     "patterns": [{"id": "ar", "kind": "allreduce", "bytes": 2e9, "participants": {"kind": "gpu"}}]},
    {"id": "a2a2", "compute_s": 0.05, "after": ["ar"],
     "patterns": [{"id": "a2a2", "kind": "alltoall", "bytes": 1e9, "participants": {"kind": "gpu"}}]},
    {"id": "end", "compute_s": 0.01, "after": ["a2a", "a2a2"], "patterns": []}]}
# name → (GPUs, fabric, oversubscription, switch, NIC link, job)
CASES = {
    "moe_128_leaf_spine_3": (128, "leaf-spine", 3, "eth-25t6", "eth400", "moe"),
    "moe_256_leaf_spine_3": (256, "leaf-spine", 3, "eth-25t6", "eth400", "moe"),
    "moe_256_leaf_spine_1": (256, "leaf-spine", 1, "eth-51t2", "eth400", "moe"),
    "moe_256_rail_optimized_3": (256, "rail-optimized", 3, "eth-25t6", "eth400", "moe"),
    "dense_128_leaf_spine_3": (128, "leaf-spine", 3, "eth-25t6", "eth400", "dense"),
    "mix_128_leaf_spine_3": (128, "leaf-spine", 3, "eth-25t6", "eth400", "mix"),
}
_SLOW = (1024, "leaf-spine", 3, "eth-25t6", "eth400", "moe")


def _job(kind: str, gpus: int) -> dict:
    if kind == "moe":
        return {**_MOE, "layout": {"tp": 1, "ep": 64, "dp": gpus}}
    if kind == "dense":
        return {**_DENSE, "layout": {"tp": 8, "pp": 4, "dp": gpus // 32}}
    return _MIX


def _prepare(gpus, fabric, over, switch, nic, kind):
    from designer.engine.analysis.simulate import prepare
    from designer.engine.model.fabrics import build_cluster
    from designer.engine.model.topology import Topology

    doc = build_cluster("dgx-h100", gpus // 8, fabric=fabric, oversubscription=over, switch=switch, nic_link_tech=nic)
    prep = prepare({"topology": Topology.from_document(doc), "workload": {"job": _job(kind, gpus)}})
    return prep, prep.scenario.job


def _random(seed: int, n: int = 400, n_res: int = 40, n_pat: int = 4):
    """A prepared-like instance run_job reads: paths over 1-3 random resources, no symmetry."""
    from designer.engine.traffic.jobs.spec import JobSpec

    rng = np.random.default_rng(seed)
    lens = rng.integers(1, 4, n)
    res = np.concatenate([np.sort(rng.choice(n_res, k, replace=False)) for k in lens])
    flows = SimpleNamespace(pattern=rng.integers(0, n_pat, n), bytes=rng.lognormal(20, 1.0, n),
                            demand_gbps=np.full(n, np.inf), pattern_ids=[f"p{k}" for k in range(n_pat)],
                            pattern_efficiency=[1.0] * n_pat, pattern_latency_s=[0.0] * n_pat, pattern_kinds=[])
    routes = SimpleNamespace(flow_ptr=np.concatenate([[0], np.cumsum(lens)]), flow_res=res, owner=np.arange(n),
                             share=np.ones(n), weight=np.ones(n), status=np.zeros(n, int))
    prep = SimpleNamespace(flows=flows, routes=routes, capacity_gbps=rng.uniform(50, 400, n_res), topology=None)
    return prep, JobSpec(None, [{"id": f"ph{k}", "compute_s": 0.0, "patterns": [k], "after": []} for k in range(n_pat)])


def _run(prep, job, eps: float) -> dict:
    from designer.engine.traffic.jobs.dag import run_job

    c0 = time.process_time()
    out = run_job(prep, job, quantum=eps)
    return {"out": out, "cpu_s": time.process_time() - c0,
            "ends": [t["end_s"] for ph in out["phases"] for t in ph["patterns"].values()]}


def _rel(a: float, b: float) -> float:
    return a / b - 1 if b else 0.0


def _compare(prep, job, epsilons=EPSILONS) -> dict:
    """The exact run and, per ε, the batched run's figures and errors (relative, signed)."""
    exact = _run(prep, job, 0.0)
    rows = {"exact": {"events": exact["out"]["events"], "cpu_s": round(exact["cpu_s"], 3),
                      "step_s": exact["out"]["step_time_s"], "exposed_s": exact["out"]["exposed_communication_s"]}}
    for eps in epsilons:
        run = _run(prep, job, eps)
        out, ends = run["out"], [_rel(e, e0) for e, e0 in zip(run["ends"], exact["ends"]) if e0]
        rows[str(eps)] = {"events": out["events"], "batched": out["events_batched"], "cpu_s": round(run["cpu_s"], 3),
                          "step_err": _rel(out["step_time_s"], exact["out"]["step_time_s"]),
                          "exposed_err": _rel(out["exposed_communication_s"], exact["out"]["exposed_communication_s"]),
                          "pattern_end_err": [min(ends, default=0.0), max(ends, default=0.0)],
                          "batching_idle_s": out["batching_idle_s"]}
    return rows


def _worst(runs: list[dict]) -> dict:
    """Per ε, the extremes of the random instances' errors and their total events."""
    out = {"events_exact": sum(r["exact"]["events"] for r in runs)}
    for eps in map(str, EPSILONS):
        rows = [r[eps] for r in runs]
        out[eps] = {"events": sum(r["events"] for r in rows),
                    "step_err": [min(r["step_err"] for r in rows), max(r["step_err"] for r in rows)],
                    "pattern_end_err": [min(r["pattern_end_err"][0] for r in rows),
                                        max(r["pattern_end_err"][1] for r in rows)]}
    return out


def batching_error() -> dict:
    figures = {name: _compare(*_prepare(*case)) for name, case in CASES.items()}
    figures["random"] = _worst([_compare(*_random(seed)) for seed in range(60)])
    return figures


def slow_point_1024() -> dict:
    return _compare(*_prepare(*_SLOW))


BENCHMARKS = {"batching_error": batching_error, "slow_point_1024": slow_point_1024}
