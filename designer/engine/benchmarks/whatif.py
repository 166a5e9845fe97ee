"""Benchmarks of the what-if engine at cluster scale.

Target: an N-1 sweep over every NIC, PCIe switch and leaf–spine link of a 128-host (1,024-GPU)
rail-optimized DGX-H100 cluster running ring all-reduce on all GPUs in ≤ 60 s on one core, with a
per-failure cost well below a from-scratch simulate of one failure (the ratio is reported); and an
N-1 NIC sweep over a 4,096-GPU ring all-reduce (512 DGX-H100) in <= 60 s CPU on one core
(``sweep_nic_4096``; ``whole_sweep_nic_4096`` is the same sweep re-solving the whole problem per
failure); ``sweep_store_4096`` is that sweep's stored form, rows against columns: bytes and read
times (docs/PERFORMANCE.md, "Stored sweeps: rows against columns").
"""
from __future__ import annotations

import time

__all__ = ["BENCHMARKS"]

HOSTS = 128  # 128 DGX H100 = 1,024 GPUs
_OVER = "nic,pcie_switch,leaf-spine"


def _scenario(policy: str = "affinity") -> dict:
    from designer.engine.model.fabrics import build_cluster
    from designer.engine.traffic.scenario import normalize_scenario
    from designer.engine.model.topology import Topology

    topo = Topology.from_document(build_cluster("dgx-h100", HOSTS, fabric="rail-optimized", leaves_per_rail=4))
    return normalize_scenario({"topology": topo, "routing": {"nic_policy": policy},
                               "workload": [{"id": "ar", "kind": "allreduce", "algorithm": "ring",
                                             "participants": {"kind": "gpu"}, "bytes": 1e9}]})


def _from_scratch(sc, failure: dict, repeat: int = 3) -> float:
    """Seconds of one failure simulated from scratch: route everything with the failure, solve,
    summarize (what a sweep would cost without reuse). Best of ``repeat``, fresh routing caches."""
    from designer.engine.traffic.failures import normalize_failures
    from designer.engine.analysis.simulate import build_result, prepare, solve_prepared

    best = float("inf")
    for _ in range(repeat):
        sc.topology.__dict__.pop("_routing_contexts", None)
        t0 = time.perf_counter()
        prep = prepare(sc, failures=normalize_failures(sc.topology, [failure]))
        build_result(prep, solve_prepared(prep))
        best = min(best, time.perf_counter() - t0)
    return best


def _sweep(policy: str) -> dict:
    from designer.engine.analysis.whatif import sweep

    sc = _scenario(policy)
    sweep(sc, failures=[{"target": "h0/nic0", "mode": "down"}])  # warm the solver's JIT cache
    t0 = time.perf_counter()
    out = sweep(sc, over=_OVER)
    elapsed = time.perf_counter() - t0
    scratch = _from_scratch(sc, {"target": "h7/nic3", "mode": "down"})
    n = out["candidates"]
    worst = out["ranking"][0]
    return {"sweep_s": elapsed, "candidates": n, "solved": out["stats"]["solved"],
            "untouched": out["stats"]["untouched"], "rerouted_flows": out["stats"]["rerouted_flows"],
            "per_failure_s": elapsed / n, "per_solved_failure_s": elapsed / max(out["stats"]["solved"], 1),
            "from_scratch_simulate_s": scratch, "per_failure_vs_scratch": (elapsed / n) / scratch,
            "per_solved_vs_scratch": (elapsed / max(out["stats"]["solved"], 1)) / scratch,
            "worst": worst["label"], "worst_impact": worst["impact"]}


def bench_sweep_affinity() -> dict:
    return _sweep("affinity")


def bench_sweep_any() -> dict:
    return _sweep("any")


def bench_simulate_with_diff() -> dict:
    from designer.engine.analysis.whatif import simulate_with_diff

    sc = _scenario()
    t0 = time.perf_counter()
    result = simulate_with_diff({"topology": sc.topology, "workload": sc.raw["workload"],
                                 "failures": [{"target": "h3/nic5", "mode": "down"},
                                              {"target": {"kind": "link", "tech": "pcie5x16", "group": "h9"},
                                               "mode": "degrade", "factor": 0.5}]})
    return {"seconds": time.perf_counter() - t0, "disconnected": result["diff"]["summary"]["disconnected"],
            "impact": result["diff"]["impact"]}


def _nic_4096_scenario():
    from designer.engine.model.fabrics import build_cluster
    from designer.engine.model.topology import Topology
    from designer.engine.traffic.scenario import normalize_scenario

    topo = Topology.from_document(build_cluster("dgx-h100", 512, fabric="rail-optimized"))
    return normalize_scenario({"topology": topo, "routing": {"nic_policy": "affinity"},
                               "workload": [{"id": "ar", "kind": "allreduce", "algorithm": "ring",
                                             "participants": {"kind": "gpu"}, "bytes": 1e9}]})


def _sweep_nic_4096(local: bool) -> dict:
    """Target: an N-1 NIC sweep over a ring all-reduce on 4,096 GPUs (512 DGX-H100, rail-optimized,
    ``affinity``) in <= 60 s CPU on one core. ``local=False`` is the former whole re-solve per
    failure (the same figures, docs/PERFORMANCE.md, "What-if: N-1 sweeps")."""
    from designer.engine.analysis.whatif import sweep

    sc = _nic_4096_scenario()
    sweep(sc, failures=[{"target": "h0/nic0", "mode": "down"}], local=local)  # warm the solver's JIT cache
    t0, c0 = time.perf_counter(), time.process_time()
    out = sweep(sc, over="nic", local=local)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"sweep_s": wall, "sweep_cpu_s": cpu, "candidates": out["candidates"], "stats": out["stats"],
            "per_failure_cpu_s": cpu / max(out["candidates"], 1), "worst": out["ranking"][0]["label"]}


def _best_of(fn, repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def bench_sweep_store_4096() -> dict:
    """The N-1 NIC sweep of ``sweep_nic_4096`` as the database keeps it: one dict per failure
    (``fabricscope.sweep/1``, as stored before) against one array per field
    (``fabricscope.sweep-columns/1``). Bytes are the JSON text Django's JSONField writes
    (``json.dumps``); read times are CPU, best of 5, the two forms alternating: ``json.loads`` of
    the text (what a result page visit reads: it shows the head, figures are stored) and, for
    readers of every record (the API's whole result, a figure build), the rows expanded."""
    import json

    import orjson

    from designer.engine.analysis.sweep_columns import pack, rows
    from designer.engine.analysis.whatif import sweep

    # Plain JSON values, as stored (the bridge's json_safe does this for a job).
    doc = orjson.loads(orjson.dumps(sweep(_nic_4096_scenario(), over="nic"), option=orjson.OPT_SERIALIZE_NUMPY))
    t0 = time.process_time()
    packed = pack(doc)
    pack_cpu = time.process_time() - t0
    row_text, col_text = json.dumps(doc), json.dumps(packed)
    assert rows(json.loads(col_text)) == doc
    parse_rows = _best_of(lambda: json.loads(row_text))
    parse_cols = _best_of(lambda: json.loads(col_text))
    expand_cols = _best_of(lambda: rows(json.loads(col_text)))
    return {"failures": len(doc["ranking"]), "stored_bytes_rows": len(row_text.encode()),
            "stored_bytes_columns": len(col_text.encode()),
            "bytes_ratio": len(col_text.encode()) / len(row_text.encode()), "pack_cpu_s": pack_cpu,
            "read_head_cpu_s": {"rows": parse_rows, "columns": parse_cols, "ratio": parse_cols / parse_rows},
            "read_rows_cpu_s": {"rows": parse_rows, "columns": expand_cols, "ratio": expand_cols / parse_rows}}


BENCHMARKS = {
    "sweep_nic_4096": lambda: _sweep_nic_4096(True),
    "whole_sweep_nic_4096": lambda: _sweep_nic_4096(False),
    "sweep_store_4096": bench_sweep_store_4096,
    "whatif_sweep_nic_pcie_leafspine_1024": bench_sweep_affinity,
    "whatif_sweep_any_1024": bench_sweep_any,
    "whatif_simulate_with_diff_1024": bench_simulate_with_diff,
}
