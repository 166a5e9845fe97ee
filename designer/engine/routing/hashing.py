"""Seeded per-flow hashing: the ECMP, uplink and NIC choices of ``multipath="hash"``.

A flow's hash depends only on its own identity (source, destination, pattern, index within the
pattern) and the seed, never on the other flows: routing a subset of a workload (what-if
re-routing) picks exactly the paths the whole workload would, and the same seed gives the same
paths on every run.
"""
from __future__ import annotations

import numpy as np

from designer.engine.solve.kernels.constants import GOLDEN
from designer.engine.solve.kernels.loader import aot_kernels
from designer.engine.solve.splitmix import mix

__all__ = ["mix", "flow_hash", "hashed_rows", "UPLINK_SALT", "FABRIC_SALT", "NIC_SALT"]

# One salt per decision, so that the uplink, the fabric path and the NIC of a flow are
# independent choices.
UPLINK_SALT, FABRIC_SALT, NIC_SALT = 0x0F1, 0xEC3, 0x51AB




def flow_hash(flows, seed: int, salt: int) -> np.ndarray:
    """Per-flow uint64 hash of ``flows`` (a :class:`~designer.engine.traffic.flows.Flows`) under
    ``seed``, for the decision named by ``salt``.

    ``mix(mix(mix(mix(src·φ ^ seed) ^ dst) ^ (pattern << 40) ^ index) ^ salt)`` with splitmix64's
    :func:`mix`, computed in one buffer (the same bits as the plain expression,
    ``tests/engine/test_routing_assemble.py``): a million flows' hash is ~45 numpy passes.
    """
    with np.errstate(over="ignore"):
        h = flows.src.astype(np.uint64)
        h *= np.uint64(GOLDEN)
        h ^= np.uint64(seed & (2**63 - 1))
        tmp = np.empty_like(h)
        _mix_in_place(h, tmp)
        h ^= _bits(flows.dst)
        _mix_in_place(h, tmp)
        np.left_shift(flows.pattern.astype(np.uint64), np.uint64(40), out=tmp)
        h ^= tmp
        h ^= _bits(flows.index)
        _mix_in_place(h, tmp)
        h ^= np.uint64(salt)
        _mix_in_place(h, tmp)
    return h


def _bits(column: np.ndarray) -> np.ndarray:
    """``column.astype(np.uint64)`` without a copy for int64 (the same two's-complement bits)."""
    return column.view(np.uint64) if column.dtype == np.int64 else column.astype(np.uint64)


def _mix_in_place(x: np.ndarray, tmp: np.ndarray) -> None:
    """:func:`~designer.engine.solve.splitmix.mix` of uint64 ``x`` into ``x`` (``tmp``: scratch)."""
    np.right_shift(x, np.uint64(30), out=tmp)
    x ^= tmp
    x *= np.uint64(0xBF58476D1CE4E5B9)
    np.right_shift(x, np.uint64(27), out=tmp)
    x ^= tmp
    x *= np.uint64(0x94D049BB133111EB)
    np.right_shift(x, np.uint64(31), out=tmp)
    x ^= tmp


def hashed_rows(flows, seed: int, salt: int, first: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Per flow: ``first + flow_hash(flows, seed, salt) % max(count, 1)`` where ``first >= 0``,
    ``first`` elsewhere — the alternative a flow's hash picks among its ``count`` rows from
    ``first`` on (int64).

    Why: the hash is ~45 numpy passes over the flows and the pick three more; the AOT kernel
    ``hashed_rows`` computes the same bits in one compiled pass. Without it, or for columns it
    was not compiled for, the numpy expression."""
    compiled = _compiled_rows(flows, seed, salt, first, count)
    if compiled is not None:
        return compiled
    pick = flow_hash(flows, seed, salt) % np.maximum(count, 1).astype(np.uint64)
    return first + np.where(first >= 0, pick.astype(np.int64), 0)


def _compiled_rows(flows, seed: int, salt: int, first, count):
    """:func:`hashed_rows` by the AOT kernel, or None without it or for other column types."""
    kernels = aot_kernels()
    columns = (flows.src, flows.dst, flows.pattern, flows.index, first, count)
    if kernels is None or any(not isinstance(c, np.ndarray) or c.ndim != 1 or c.dtype.kind not in "iu"
                              or c.dtype.itemsize > 8 or (c.dtype.kind == "u" and c.dtype.itemsize == 8)
                              for c in columns):
        return None   # uint64 columns would not fit int64: the numpy path
    if first.dtype != np.int64 or type(seed) is not int or type(salt) is not int or not 0 <= salt < 2**63:
        return None
    # The kernel reads int64 columns; the hash reads their bits widened (as astype(uint64) does).
    src, dst, pattern, index, count = (np.ascontiguousarray(c, dtype=np.int64)
                                       for c in (flows.src, flows.dst, flows.pattern, flows.index, count))
    rows = np.empty(len(first), dtype=np.int64)
    if kernels.hashed_rows(src, dst, pattern, index, seed & (2**63 - 1), salt,
                           np.ascontiguousarray(first), count, rows) < 0:
        return None
    return rows
