"""Whole-process figures at 100,000 GPUs: 12,500 DGX-H100 on a 3-tier rail-optimized fabric.

Each benchmark runs ``python -m designer.engine ...`` in a fresh process, as a user does, and
reports that child's CPU time (user + sys), wall time and peak RSS (``os.wait4``: its own
rusage, the same figure ``resource.getrusage(RUSAGE_CHILDREN)`` gives for one child) and the
size of what it wrote:

- ``build_100k``: ``build --template dgx-h100 --hosts 12500 --tiers 3 -o topology.json`` (build,
  validate, normalize, write). Target: ≤ 10 s CPU, ≤ 2 GB peak RSS.
- ``allreduce_ring_100k`` / ``allreduce_tree_100k``: ``simulate`` of a 1 GB all-reduce over all
  100,000 GPUs, topology read from that file (straight into columns, ``Topology.read_file_bytes``),
  the result written (its ``resources`` grouped by symmetry). Targets: ≤ 10 s CPU each, a result
  ≤ 100 MB.

The topology is built once per process of the bench (not timed) and numba's on-disk cache is
warmed by a tiny ``solve`` first. Figures and their history: docs/PERFORMANCE.md, "100,000 GPUs".
"""
from __future__ import annotations

import tempfile
from pathlib import Path

__all__ = ["BENCHMARKS"]

HOSTS = 12_500
BUILD = ["build", "--template", "dgx-h100", "--hosts", str(HOSTS), "--tiers", "3"]


def bench_build_100k() -> dict:
    from designer.engine.benchmarks.solver import cli_rusage

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp, "topology.json")
        figures = cli_rusage([*BUILD, "-o", str(out)])
        return {"gpus": 8 * HOSTS, **figures, "document_bytes": out.stat().st_size}


def _allreduce(algorithm: str) -> dict:
    import orjson

    from designer.engine.benchmarks.solver import cli_rusage, solve_document

    with tempfile.TemporaryDirectory() as tmp:
        topo, scenario, out = Path(tmp, "topology.json"), Path(tmp, "scenario.json"), Path(tmp, "result.json")
        cli_rusage([*BUILD, "-o", str(topo)])
        scenario.write_bytes(orjson.dumps({"topology": topo.name, "workload": [
            {"id": "ar", "kind": "allreduce", "algorithm": algorithm, "participants": {"kind": "gpu"},
             "bytes": 1e9}]}))
        tiny = Path(tmp, "tiny.json")
        tiny.write_bytes(orjson.dumps(solve_document(10, 5)))
        cli_rusage(["solve", str(tiny), "-o", str(out)])
        figures = cli_rusage(["simulate", str(scenario), "-o", str(out), "--quiet"])
        result = orjson.loads(out.read_bytes())
        return {"gpus": 8 * HOSTS, "flows": result["summary"]["flows_total"], **figures,
                "result_bytes": out.stat().st_size,
                "completion_s": result["summary"]["patterns"]["ar"]["completion_s"],
                "timings_s": {k: round(v, 3) for k, v in result["timings_s"].items()}}


BENCHMARKS = {
    "build_100k": bench_build_100k,
    "allreduce_ring_100k": lambda: _allreduce("ring"),
    "allreduce_tree_100k": lambda: _allreduce("tree"),
}
