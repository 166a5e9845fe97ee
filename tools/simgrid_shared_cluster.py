"""A shared-cluster (multi-job) solve posed to SimGrid: write the instance, then compare the rates.

A one-off check for docs/ENGINE.md ("Shared cluster"), not a CI test (SimGrid is not installed in
CI). Three jobs with policy placements on 4 DGX-H100 hosts (rail-optimized, 2 leaves per rail,
2:1) are prepared and solved by the engine; every routed path becomes ``k`` unit-weight flows on
the same links, where the path's weight is ``k / 18`` (its weights are 2/9, 5/18 and 1: in max-min
``k`` identical unit flows share exactly as one flow of weight ``k``). SimGrid's raw max-min model
then solves the unit flows (tools/simgrid_solve_side_by_side.py) and the sum of each path's copies
is compared with the engine's path rate::

    .venv/bin/python tools/simgrid_shared_cluster.py write /tmp/sg      # /tmp/sg/in.json, engine.json
    LD_LIBRARY_PATH=/tmp/sgvenv/lib/python3.11/site-packages /tmp/sgvenv/bin/python \\
        tools/simgrid_solve_side_by_side.py /tmp/sg/in.json -o /tmp/sg/simgrid.json
    .venv/bin/python tools/simgrid_shared_cluster.py compare /tmp/sg     # largest relative difference
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

WEIGHT_DENOMINATOR = 18


def scenario() -> dict:
    from designer.engine.model.fabrics import build_cluster

    doc = build_cluster("dgx-h100", 4, fabric="rail-optimized", leaves_per_rail=2, oversubscription=2.0)
    return {"topology": doc, "routing": {"multipath": "hash"}, "jobs": [
        {"id": "a", "patterns": [{"id": "ar", "kind": "allreduce", "bytes": 1e9}],
         "placement": {"policy": "random", "gpus": 12, "seed": 3}},
        {"id": "b", "patterns": [{"id": "x", "kind": "alltoall", "bytes": 1e8}],
         "placement": {"policy": "random", "gpus": 10, "seed": 4}},
        {"id": "c", "patterns": [{"id": "ag", "kind": "allgather", "bytes": 5e8}],
         "placement": {"policy": "spread", "gpus": 8}}]}


def write(out: Path) -> None:
    from designer.engine.analysis.simulate import prepare, solve_prepared

    prep = prepare(scenario())
    solved = solve_prepared(prep)
    routes = prep.routes
    weight = np.asarray(routes.weight, dtype=float)
    copies = np.rint(weight * WEIGHT_DENOMINATOR).astype(int)
    if not np.allclose(copies / WEIGHT_DENOMINATOR, weight, rtol=0, atol=1e-12):
        raise SystemExit(f"weights are not multiples of 1/{WEIGHT_DENOMINATOR}: {np.unique(weight)}")
    links = [{"id": f"r{i}", "capacity_gbps": float(c)} for i, c in enumerate(prep.capacity_gbps)]
    flows = []
    for p in range(len(routes.flow_ptr) - 1):
        res = [f"r{x}" for x in routes.flow_res[routes.flow_ptr[p]:routes.flow_ptr[p + 1]].tolist()]
        flows += [{"id": f"p{p}c{j}", "links": res, "demand_gbps": None} for j in range(copies[p])]
    out.mkdir(parents=True, exist_ok=True)
    (out / "in.json").write_text(json.dumps({"links": links, "flows": flows}))
    (out / "engine.json").write_text(json.dumps({"rates_gbps": solved.path_rate_gbps.tolist(),
                                                 "copies": copies.tolist()}))
    print(f"{len(copies)} paths as {len(flows)} unit flows on {len(links)} links -> {out}")


def compare(out: Path) -> None:
    engine = json.loads((out / "engine.json").read_text())
    simgrid = json.loads((out / "simgrid.json").read_text())["rates_gbps"]
    worst = 0.0
    for p, (rate, k) in enumerate(zip(engine["rates_gbps"], engine["copies"])):
        theirs = sum(simgrid[f"p{p}c{j}"] for j in range(k))
        worst = max(worst, abs(theirs - rate) / max(abs(rate), 1e-30))
    print(f"{len(engine['copies'])} paths: largest relative difference {worst:.3g}")


if __name__ == "__main__":
    {"write": write, "compare": compare}[sys.argv[1]](Path(sys.argv[2]))
