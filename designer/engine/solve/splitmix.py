"""splitmix64's finalizer: the one integer hash the engine uses (routing's per-flow ECMP/NIC
choices, the solver's grouping of identical flows). Its own module so that the solver need not
import routing to share it.
"""
from __future__ import annotations

import numpy as np

__all__ = ["mix"]


def mix(x: np.ndarray) -> np.ndarray:
    """splitmix64 finalizer of uint64 values: cheap, well spread, deterministic (a new array)."""
    x = x.astype(np.uint64, copy=True)
    with np.errstate(over="ignore"):
        x ^= x >> np.uint64(30)
        x *= np.uint64(0xBF58476D1CE4E5B9)
        x ^= x >> np.uint64(27)
        x *= np.uint64(0x94D049BB133111EB)
        x ^= x >> np.uint64(31)
    return x
