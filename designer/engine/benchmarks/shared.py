"""Benchmark of a shared cluster: 64 jobs with placements on 512 DGX H100 (4,096 GPUs).

``place_512``: ranking a new job's placements on the same 512 hosts, as the API does inline
(docs/PERFORMANCE.md, "Place the next job inline").

Target (docs/PERFORMANCE.md, Shared cluster): the whole result — one max-min solve of every
job's flows, the jobs' steps in one event loop, each job alone, the interference pairs, the
shared links — in ≤ 60 s CPU on one core.

The mix (3,840 GPUs): 2 × 512, 6 × 128, 16 × 64, 24 × 32 and 16 × 16 GPUs, given
``packed``, ``rail-aligned``, ``spread`` and ``random`` in turn, the compact ones placed first. Jobs placed by
``packed``/``rail-aligned`` are training steps (a TP 8 × DP layout: forward compute with the TP
all-reduce, then the DP gradient all-reduce); the scattered ones are a flat all-reduce, or every
other one an all-to-all, over their GPUs (a TP group needs whole hosts).
"""
from __future__ import annotations

import time

__all__ = ["BENCHMARKS", "mix"]

HOSTS = 512
_SIZES = [512] * 2 + [128] * 6 + [64] * 16 + [32] * 24 + [16] * 16
_POLICIES = ("packed", "rail-aligned", "spread", "random")


def mix() -> list[dict]:
    """The 64 jobs (module docstring)."""
    jobs = []
    # Compact policies first: their TP 8 groups need whole hosts, which scattered jobs break up.
    order = sorted(range(len(_SIZES)), key=lambda k: _POLICIES[k % len(_POLICIES)] in ("spread", "random"))
    for k in order:
        n, policy = _SIZES[k], _POLICIES[k % len(_POLICIES)]
        placement = {"policy": policy, "gpus": n, **({"seed": k} if policy == "random" else {})}
        if policy in ("packed", "rail-aligned"):
            work = {"job": {"layout": {"tp": 8, "dp": n // 8}, "phases": [
                {"id": "fwd", "compute_s": 0.002, "patterns": [
                    {"id": "tp", "kind": "allreduce", "bytes": 5e7, "groups": {"layout": "tp"}}]},
                {"id": "grad", "after": ["fwd"], "patterns": [
                    {"id": "dp", "kind": "allreduce", "bytes": 2e8, "groups": {"layout": "dp"}}]}]}}
        elif k % 8 == 3:   # every other scattered job: an all-to-all (expert-parallel-like traffic)
            work = {"patterns": [{"id": "a2a", "kind": "alltoall", "bytes": 5e7}]}
        else:
            work = {"patterns": [{"id": "ar", "kind": "allreduce", "bytes": 2e8}]}
        jobs.append({"id": f"j{k}", **work, "placement": placement})
    return jobs


def _shared_64() -> dict:
    from designer.engine.analysis.simulate import simulate
    from designer.engine.model.fabrics import build_cluster
    from designer.engine.model.topology import Topology

    topo = Topology.from_document(build_cluster("dgx-h100", HOSTS, fabric="rail-optimized", leaves_per_rail=8))
    wall0, cpu0 = time.perf_counter(), time.process_time()
    result = simulate({"topology": topo, "jobs": mix()})
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    section = result["jobs"]
    slow = [j["slowdown"] for j in section["jobs"] if j["slowdown"] is not None]
    return {"cpu_s": cpu, "wall_s": wall, "jobs": len(section["jobs"]), "gpus": sum(_SIZES),
            "flows": result["summary"]["flows_total"], "pairs_solved": section["interference"]["pairs_solved"],
            "shared_resources": section["shared_resources_total"], "max_slowdown": max(slow) if slow else None,
            "timings_s": result["timings_s"]}


def _place_512() -> dict:
    """``rank_placements`` on 512 DGX H100 (rail-optimized, 8 leaves per rail): a new flat
    all-reduce over 1,024 GPUs among two running ones (1,024 GPUs ``packed``, 1,024 ``spread``),
    the size the API ranks inside a request (``designer/bridge/shared.py`` ``MAX_PLACE_HOSTS``)."""
    from designer.engine.analysis.place import rank_placements
    from designer.engine.model.fabrics import build_cluster

    doc = build_cluster("dgx-h100", HOSTS, fabric="rail-optimized", leaves_per_rail=8)
    work = [{"id": "ar", "kind": "allreduce", "bytes": 2e8}]
    running = [{"id": "a", "patterns": work, "placement": {"policy": "packed", "gpus": 2 * HOSTS}},
               {"id": "b", "patterns": work, "placement": {"policy": "spread", "gpus": 2 * HOSTS}}]
    wall0, cpu0 = time.perf_counter(), time.process_time()
    out = rank_placements({"topology": doc, "jobs": running},
                          {"id": "next", "patterns": work, "placement": {"gpus": 2 * HOSTS}})
    return {"cpu_s": time.process_time() - cpu0, "wall_s": time.perf_counter() - wall0,
            "hosts": HOSTS, "candidates": len(out["candidates"]), "best": out["best"]}


BENCHMARKS = {"shared_64": _shared_64, "place_512": _place_512}
