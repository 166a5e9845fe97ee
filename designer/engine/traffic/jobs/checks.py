"""The limits and number rules a job document obeys, shared by the job's validation
(:mod:`.spec`), the training-step templates (:mod:`.models`) and the inference template
(:mod:`.inference`).
"""
from __future__ import annotations

import math

__all__ = ["MAX_PHASES", "is_real"]

# Phases of one job: the event loop re-solves the rates at every phase boundary and the result
# lists every phase, so a job is bounded like a SimAI import (designer.engine.io.simai.MAX_PHASES).
MAX_PHASES = 50_000


def is_real(v) -> bool:
    """A finite JSON number (not a bool; a 400-digit integer is not a float either)."""
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        return False
    try:
        return math.isfinite(v)
    except OverflowError:
        return False
