"""Fabricscope engine: the unified intra-host + inter-host network model and its simulator.

Pure Python + numpy/scipy/networkx (numba for the solver's hot loop). It never imports Django,
Celery or Plotly, so scripts, the CLI and the Celery workers can all use it directly.
"""
from designer.engine.errors import (  # noqa: F401
    EngineError, ImportFormatError, InvalidScenario, InvalidTopology, InvalidWorkload,
    LimitExceeded, Problem, Unroutable,
)

__all__ = [
    "EngineError", "ImportFormatError", "InvalidScenario", "InvalidTopology", "InvalidWorkload",
    "LimitExceeded", "Problem", "Unroutable",
]
