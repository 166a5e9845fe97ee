"""Seeded per-flow hashing: the ECMP, uplink and NIC choices of ``multipath="hash"``.

A flow's hash depends only on its own identity (source, destination, pattern, index within the
pattern) and the seed, never on the other flows: routing a subset of a workload (what-if
re-routing) picks exactly the paths the whole workload would, and the same seed gives the same
paths on every run.
"""
from __future__ import annotations

import numpy as np

from designer.engine.splitmix import mix

__all__ = ["mix", "flow_hash", "UPLINK_SALT", "FABRIC_SALT", "NIC_SALT"]

# One salt per decision, so that the uplink, the fabric path and the NIC of a flow are
# independent choices.
UPLINK_SALT, FABRIC_SALT, NIC_SALT = 0x0F1, 0xEC3, 0x51AB




def flow_hash(flows, seed: int, salt: int) -> np.ndarray:
    """Per-flow uint64 hash of ``flows`` (a :class:`~designer.engine.workloads.Flows`) under
    ``seed``, for the decision named by ``salt``."""
    with np.errstate(over="ignore"):
        h = mix(flows.src.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15) ^ np.uint64(seed & (2**63 - 1)))
        h = mix(h ^ flows.dst.astype(np.uint64))
        h = mix(h ^ (flows.pattern.astype(np.uint64) << np.uint64(40)) ^ flows.index.astype(np.uint64))
        h = mix(h ^ np.uint64(salt))
    return h
