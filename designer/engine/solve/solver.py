"""Max-min fair rate allocation over shared resources (docs/ENGINE.md, "Fairness model").

A *resource* is anything with a capacity in Gb/s: a link direction, or a node that carries its own
throughput limit. A *flow* crosses an ordered list of resources, given in CSR form::

    flow f crosses flow_res[flow_ptr[f]:flow_ptr[f + 1]]

A resource listed twice in one path counts twice: the flow uses it twice (a path that goes out and
back over the same link direction), so it consumes twice its rate there. Each flow may have a demand
cap (``np.inf`` = none), which behaves like a private resource of that capacity.

The allocation is the unique max-min fair one: no flow can get more without taking from a flow that
has no more than it. It is computed by *progressive filling*: all unfrozen flows rise together; a
resource saturates when ``remaining capacity / unfrozen flows on it`` (its *fair share*) is reached,
which freezes every unfrozen flow on it at that share.

*Weighted* max-min: each flow may have a weight ``w > 0`` (default 1). Filling raises a *level*
``x``; an unfrozen flow runs at ``w * x``; a resource's fair share is ``remaining capacity / sum of
the weights of its unfrozen flows``; a flow with demand ``d`` reaches it at level ``d / w``. A flow
of weight k is thus exactly k unit flows on the same path (their total rate). Routing gives each
sub-flow of a striped or split flow its *share* as weight (shares sum to 1 per flow, e.g. 5/18,
4/18, 4/18, 5/18 over a DGX-H100's NVSwitches), so a flow competes as one flow wherever all its
stripes meet; see docs/ENGINE.md, "Fairness model". The fairness
criterion becomes: no flow can raise its ``rate / weight`` without lowering that of a flow whose
``rate / weight`` is no larger.

Two implementations, same signature and result:

- ``method="auto"`` — a compiled (numba) heap water-filling over CSR (flow → resources) and CSC
  (resource → flows) arrays. Resources sit in an indexed min-heap keyed by fair share; demand caps are
  a sorted list of flow-level events merged with the heap (ties go to the demand). Each pop freezes
  the unfrozen flows of one resource at its share, and only the resources those flows cross change
  (their keys are refreshed lazily, when they reach the top), so the total work is O(nnz log R) —
  each flow frozen once, each (flow, resource) entry touched once. A share within 1e-12 (relative)
  of the current level freezes *at* that level, so rounding never splits a tie or lowers a level.
- ``method="reference"`` — :func:`maxmin_reference`, a plain numpy progressive filling that rescans
  every flow once per level. Obviously correct and slow; the tests compare the two.

:func:`assert_valid_allocation` checks the invariants every solver variant must satisfy, and
:func:`designer.engine.solve.timeline.timeline` (re-exported here) runs the fluid, re-solve-at-every-
completion mode on top of the same kernels.
"""
from __future__ import annotations

import numpy as np

# The solver proper lives in ``maxmin``; the fluid timeline (``timeline``) builds on it. This
# module is the public face of both, so each imports ``maxmin`` and neither imports the other.
from designer.engine.solve.maxmin import (Allocation, StoppedFills, assert_valid_allocation,  # noqa: F401
                                    maxmin, maxmin_levels_until, maxmin_reference, prepare_inputs,
                                    prepare_weights)
from designer.engine.solve.timeline import TimelineResult, timeline

__all__ = [
    "Allocation", "maxmin", "maxmin_levels_until", "StoppedFills", "maxmin_reference", "assert_valid_allocation", "prepare_weights",
    "timeline", "TimelineResult", "warm_up",
]


def warm_up() -> None:
    """Compile (or load from numba's on-disk cache) the solver and timeline kernels now.

    Long-lived processes (Celery workers) call this at start so a user's first job does not
    wait seconds for just-in-time compilation.
    """
    one = np.ones(1)
    ptr, res = np.array([0, 1], dtype=np.int64), np.array([0], dtype=np.int64)
    maxmin(one, ptr, res, weights=one)
    timeline(one, ptr, res, one, weights=one)
