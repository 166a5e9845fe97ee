"""Fabricscope engine: the unified intra-host + inter-host network model and its simulator.

Pure Python + numpy/networkx (numba for the solver's hot loop). It never imports Django,
Celery or Plotly, so scripts, the CLI and the Celery workers can all use it directly.

Layers
------
Bottom to top; a module imports its own layer and lower ones only, never in a cycle
(``tests/engine/test_layers.py``):

1. :mod:`.errors`, :mod:`.numbers` — base;
2. :mod:`.catalog` — hardware facts; :mod:`.catalog_physical` — cables and optics, rack space, prices and power
   (editable defaults) for a physical plan;
3. :mod:`.solve` — max-min solver, timeline, id tables, compiled kernels;
4. :mod:`.document` — the topology document (validate, normalize, accept, patch);
5. :mod:`.model` — topology, templates, racks, fabrics, BOM, tiers, path classes, hop latency;
6. :mod:`.io` — import/export formats;
7. :mod:`.routing` — flows → paths;
8. :mod:`.traffic` — flows, workloads, collectives, jobs, scenario, failures;
9. :mod:`.analysis` — simulate, completion, bottlenecks, diff, what-if, latency, nccl-tests;
10. :mod:`.benchmarks`;
11. :mod:`.commands`;
12. :mod:`.cli`, ``__main__`` — top.
"""
__all__ = [
    "EngineError", "ImportFormatError", "InvalidScenario", "InvalidTopology", "InvalidWorkload",
    "LimitExceeded", "Problem", "Unroutable",
]


def __getattr__(name: str):
    # Lazy re-export (PEP 562): ``python -m designer.engine`` imports this package first, and
    # ``errors`` pulls in dataclasses + inspect, which ``--help`` never needs.
    if name in __all__:
        from designer.engine import errors

        return getattr(errors, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
