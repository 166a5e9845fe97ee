"""Benchmark of the Chakra trace import: 1,024 ranks (TP 8 × DP 128), each a transformer step of
``layers`` layers (forward compute and TP all-reduce, backward compute and TP all-reduce,
weight-gradient compute and its DP all-reduce: 6 nodes a layer, 1,801 nodes a rank at 300
layers, 1.8 million nodes in all), every rank's file different (its TP and DP communicator
names), so each is decoded.

Target: the import (decode, merge, job) in ≤ 30 s CPU (docs/PERFORMANCE.md, "Chakra import");
writing the traces is not counted.
"""
from __future__ import annotations

import json
import time

__all__ = ["BENCHMARKS", "chakra_1024", "rank_template"]


def rank_template(layers: int) -> bytes:
    """One rank's ``.et`` bytes with the placeholders ``tpXXXX`` / ``dpXXXX`` as communicators."""
    from designer.engine.io.chakra_write import encode_trace

    nodes, last, nid = [{"id": 1, "type": "METADATA_NODE"}], 1, 1
    for k in range(layers):
        for step, (typ, pg, size, dur) in enumerate((("COMP_NODE", None, 0, 200), ("COMM_COLL_NODE", "tpXXXX", 1 << 24, 0),
                                                     ("COMP_NODE", None, 0, 400), ("COMM_COLL_NODE", "tpXXXX", 1 << 24, 0),
                                                     ("COMP_NODE", None, 0, 300), ("COMM_COLL_NODE", "dpXXXX", 1 << 26, 0))):
            nid += 1
            node = {"id": nid, "name": f"layer{k}.{step}", "type": typ, "data_deps": [last], "duration_micros": dur}
            if pg:
                node["attrs"] = [("comm_type", 0), ("comm_size", size), ("pg_name", pg, "string")]
            nodes.append(node)
            if step != 5:                  # the DP all-reduce is off the chain (it overlaps)
                last = nid
    return encode_trace(nodes)


def chakra_1024(ranks: int = 1024, tp: int = 8, layers: int = 300) -> dict:
    """CPU seconds of :func:`designer.engine.io.chakra.chakra_job` over ``ranks`` traces."""
    from designer.engine.io.chakra import chakra_job

    template = rank_template(layers)
    traces = [(f"trace.{r}.et", template.replace(b"tpXXXX", b"tp%04d" % (r // tp)).replace(b"dpXXXX", b"dp%04d" % (r % tp)))
              for r in range(ranks)]
    groups = {f"tp{g:04d}": list(range(g * tp, (g + 1) * tp)) for g in range(ranks // tp)}
    groups.update({f"dp{g:04d}": list(range(g, ranks, tp)) for g in range(tp)})
    gpu_ids = [f"h{r // 8}/gpu{r % 8}" for r in range(ranks)]
    t0, w0 = time.process_time(), time.perf_counter()
    result = chakra_job(traces, json.dumps(groups), gpu_ids)
    cpu, wall = time.process_time() - t0, time.perf_counter() - w0
    s = result.summary
    return {"cpu_seconds": round(cpu, 3), "wall_seconds": round(wall, 3), "ranks": s["ranks"],
            "nodes": sum(s["nodes"].values()), "phases": s["phases"], "trace_bytes": sum(len(t) for _, t in traces),
            "distinct_rank_files": s["distinct_rank_files"]}


BENCHMARKS = {"chakra_1024": chakra_1024}
