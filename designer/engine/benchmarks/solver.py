"""Benchmarks of the max-min solver and the timeline (``python -m designer.engine bench --only solver``).

Every figure excludes JIT compilation, which is timed separately (``compile_s``: the first call on a
tiny instance — a load from numba's on-disk cache after the first run). Peak memory is the
tracemalloc peak of the solve (numpy allocations included) and the process's max RSS.

``solve_cli_200k`` is the exception: it times the *whole* ``python -m designer.engine solve``
process (interpreter, imports, JSON read, parse, kernel load from a warm cache, solve, JSON write)
in a subprocess of its own, as a user sees it.
"""
from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

from designer.engine.solve.solver import maxmin
from designer.engine.solve.timeline import timeline

__all__ = ["BENCHMARKS", "random_instance", "alltoall_instance", "solve_document", "cli_rusage"]


def random_instance(n_flows: int, n_res: int = 20_000, *, min_len: int = 2, max_len: int = 8,
                    seed: int = 0):
    """Random paths of ``min_len..max_len`` distinct-ish resources with capacities of 25–800 Gb/s
    and a demand cap on 10% of the flows. Returns (capacity_gbps, flow_ptr, flow_res, demand_gbps)."""
    rng = np.random.default_rng(seed)
    cap = rng.choice([25.0, 50.0, 100.0, 200.0, 400.0, 800.0], n_res) * rng.uniform(0.5, 1.5, n_res)
    lens = rng.integers(min_len, max_len + 1, n_flows)
    ptr = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    res = rng.integers(0, n_res, ptr[-1]).astype(np.int64)
    dem = np.where(rng.random(n_flows) < 0.1, rng.uniform(1.0, 50.0, n_flows), np.inf)
    return cap, ptr, res, dem


def alltoall_instance(hosts: int = 128, gpus: int = 8, hosts_per_leaf: int = 32, spines: int = 16,
                      uplink_gbps: float = 400.0, seed: int = 1):
    """All-to-all among ``hosts * gpus`` GPUs on a rail-optimized fabric, PXN-style, ECMP-hashed.

    Resources: per GPU NVLink out/in (3,600 Gb/s), PCIe up/down (512), NIC up/down (400); per rail
    leaf and spine, one ``uplink_gbps`` uplink and downlink (400: 2:1 oversubscribed, so the
    hashed uplinks are the bottlenecks). A flow from GPU (h, g) to (h', g'), h != h',
    goes NVLink to the rail peer (h, g'), its PCIe and NIC, its rail's leaf, a spine chosen by hash
    (skipped within a leaf), the far leaf, NIC and PCIe of (h', g'): 4–10 resources. Same-host
    flows use NVLink only. The random spine choice makes the uneven uplink loads that give an
    all-to-all its hundreds of bottleneck levels. Returns (capacity_gbps, flow_ptr, flow_res).
    """
    rng = np.random.default_rng(seed)
    n_gpu = hosts * gpus
    leaves_per_rail = hosts // hosts_per_leaf
    n_uplinks = gpus * leaves_per_rail * spines
    # resource blocks: nvl_out, nvl_in, pcie_up, pcie_down, nic_up, nic_down, leaf->spine, spine->leaf
    base = np.arange(8) * n_gpu
    base[7] = base[6] + n_uplinks
    cap = np.concatenate([np.full(n_gpu, 3600.0), np.full(n_gpu, 3600.0), np.full(n_gpu, 512.0),
                          np.full(n_gpu, 512.0), np.full(n_gpu, 400.0), np.full(n_gpu, 400.0),
                          np.full(2 * n_uplinks, uplink_gbps)])
    src, dst = np.divmod(np.arange(n_gpu * n_gpu), n_gpu)
    keep = src != dst
    src, dst = src[keep], dst[keep]
    sh, sg, dh, dg = src // gpus, src % gpus, dst // gpus, dst % gpus
    relay = sh * gpus + dg
    sleaf, dleaf = dg * leaves_per_rail + sh // hosts_per_leaf, dg * leaves_per_rail + dh // hosts_per_leaf
    spine = rng.integers(0, spines, len(src))
    none = -1
    same_host, same_leaf = sh == dh, sleaf == dleaf
    cross = ~same_host & ~same_leaf
    hop = np.full((len(src), 10), none, dtype=np.int64)
    needs_nvl = ~same_host & (sg != dg)
    hop[:, 0] = np.where(same_host | needs_nvl, base[0] + src, none)
    hop[:, 1] = np.where(same_host, base[1] + dst, np.where(needs_nvl, base[1] + relay, none))
    net = ~same_host
    hop[:, 2] = np.where(net, base[2] + relay, none)
    hop[:, 3] = np.where(net, base[4] + relay, none)
    hop[:, 4] = np.where(cross, base[6] + sleaf * spines + spine, none)
    hop[:, 5] = np.where(cross, base[7] + dleaf * spines + spine, none)
    hop[:, 6] = np.where(net, base[5] + dst, none)
    hop[:, 7] = np.where(net, base[3] + dst, none)
    valid = hop >= 0
    ptr = np.concatenate([[0], np.cumsum(valid.sum(axis=1))]).astype(np.int64)
    return cap, ptr, hop[valid], None


def _compile_seconds() -> float:
    start = time.perf_counter()
    maxmin([1.0, 2.0], [0, 1, 3], [0, 0, 1], [np.inf, 0.5])
    timeline([1.0], [0, 1], [0], [1.0])
    return time.perf_counter() - start


def _measure(fn) -> tuple[object, float, int]:
    tracemalloc.start()
    start = time.perf_counter()
    out = fn()
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return out, seconds, peak


def _solve_figures(instance) -> dict:
    compile_s = _compile_seconds()
    cap, ptr, res, dem = instance
    alloc, seconds, peak = _measure(lambda: maxmin(cap, ptr, res, dem))
    return {"flows": len(ptr) - 1, "resources": len(cap), "entries": int(len(res)),
            "seconds": round(seconds, 4), "compile_s": round(compile_s, 3), "levels": alloc.levels,
            "saturated_resources": int((alloc.utilization >= 1 - 1e-9).sum()),
            "peak_bytes": peak, "max_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}


def bench_solve_20k() -> dict:
    return _solve_figures(random_instance(20_000))


def bench_solve_200k() -> dict:
    return _solve_figures(random_instance(200_000))


def bench_solve_alltoall_1m() -> dict:
    return _solve_figures(alltoall_instance())


def bench_timeline_50k() -> dict:
    compile_s = _compile_seconds()
    cap, ptr, res, dem = random_instance(50_000, 5_000, seed=2)
    size = np.random.default_rng(3).lognormal(np.log(1e8), 1.0, len(ptr) - 1)
    result, seconds, peak = _measure(lambda: timeline(cap, ptr, res, size, dem))
    return {"flows": len(ptr) - 1, "resources": len(cap), "seconds": round(seconds, 4),
            "compile_s": round(compile_s, 3), "events": len(result.events_s),
            "flows_resolved": result.flows_resolved,
            "flows_resolved_without_warm_start": _cold_resolves(result),
            "makespan_s": float(np.nanmax(result.completion_s[np.isfinite(result.completion_s)])),
            "levels": result.levels, "peak_bytes": peak,
            "max_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}


def _cold_resolves(result) -> int:
    # Re-solving every active flow at every event would touch this many flows.
    finished = np.sort(result.completion_s[np.isfinite(result.completion_s)])
    running = len(result.completion_s) - np.searchsorted(finished, result.events_s, side="right")
    return int(running.sum())


def solve_document(n_flows: int = 200_000, n_res: int = 20_000, *, seed: int = 0) -> dict:
    """The :func:`random_instance` as a ``solve`` input document: links ``l0..``, flows ``f0..``
    (``demand_gbps`` null where uncapped). 200k flows, 20k links: 21 MB of JSON."""
    cap, ptr, res, dem = random_instance(n_flows, n_res, seed=seed)
    names = np.array([f"l{k}" for k in range(n_res)], dtype=object)
    hops, bounds = names[res].tolist(), ptr.tolist()
    demands = np.where(np.isinf(dem), None, dem).tolist()
    return {"links": [{"id": lid, "capacity_gbps": c} for lid, c in zip(names.tolist(), cap.tolist())],
            "flows": [{"id": f"f{i}", "links": hops[bounds[i]:bounds[i + 1]], "demand_gbps": demands[i]}
                      for i in range(n_flows)]}


def cli_rusage(argv: list[str]) -> dict:
    """Run ``python -m designer.engine *argv`` in a fresh process; its own CPU time and max RSS.

    ``os.wait4`` gives the rusage of that one child (``RUSAGE_CHILDREN`` would sum every child
    this process ever waited for). Raises ``RuntimeError`` on a non-zero exit.
    """
    root = Path(__file__).resolve().parents[3]
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "designer.engine", *argv], cwd=root,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stderr = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    if proc.returncode:
        raise RuntimeError(f"{' '.join(argv)}: exit {proc.returncode}: {stderr.decode()[-500:]}")
    return {"cpu_s": round(usage.ru_utime + usage.ru_stime, 3), "user_s": round(usage.ru_utime, 3),
            "sys_s": round(usage.ru_stime, 3), "wall_s": round(wall, 3),
            "max_rss_bytes": usage.ru_maxrss * 1024}


def bench_solve_cli_200k() -> dict:
    import orjson

    with tempfile.TemporaryDirectory() as tmp:
        tiny, problem, answer = Path(tmp, "tiny.json"), Path(tmp, "in.json"), Path(tmp, "out.json")
        tiny.write_bytes(orjson.dumps(solve_document(10, 5)))
        problem.write_bytes(orjson.dumps(solve_document()))
        cli_rusage(["solve", str(tiny), "-o", str(answer)])  # warm numba's on-disk cache first
        figures = cli_rusage(["solve", str(problem), "-o", str(answer)])
        return {"flows": 200_000, "links": 20_000, "input_bytes": problem.stat().st_size,
                "output_bytes": answer.stat().st_size, **figures}


BENCHMARKS = {
    "solve_20k": bench_solve_20k,
    "solve_200k": bench_solve_200k,
    "solve_alltoall_1m": bench_solve_alltoall_1m,
    "timeline_50k": bench_timeline_50k,
    "solve_cli_200k": bench_solve_cli_200k,
}
