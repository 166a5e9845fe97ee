"""Fabricscope engine: the unified intra-host + inter-host network model and its simulator.

Pure Python + numpy/scipy/networkx (numba for the solver's hot loop). It never imports Django,
Celery or Plotly, so scripts, the CLI and the Celery workers can all use it directly.
"""
__all__ = [
    "EngineError", "ImportFormatError", "InvalidScenario", "InvalidTopology", "InvalidWorkload",
    "LimitExceeded", "Problem", "Unroutable",
]


def __getattr__(name: str):
    # Lazy re-export (PEP 562): ``python -m designer.engine`` imports this package first, and
    # ``errors`` pulls in dataclasses + inspect (~20 ms) that ``--help`` never needs.
    if name in __all__:
        from designer.engine import errors

        return getattr(errors, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
