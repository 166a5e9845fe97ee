"""Flows: what traffic is to the router and the solver — parallel arrays, one entry per flow.

Every traffic pattern (:mod:`.workloads`), collective algorithm (:mod:`.collectives`) and job
phase (:mod:`.jobs`) ends up as :class:`Flows`; routing takes them as they are.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Flows"]


@dataclass
class Flows:
    """Flows as parallel arrays (one entry per flow).

    Attributes
    ----------
    src, dst : ndarray of int64
        Source and destination node indices in the topology.
    bytes : ndarray of float64
        Bytes to move.
    demand_gbps : ndarray of float64
        Rate cap in Gb/s (``inf`` when the flow takes whatever it gets).
    pattern : ndarray of int32
        Index into ``pattern_ids`` of the pattern the flow belongs to.
    index : ndarray of int64
        Position of the flow inside its pattern: the flow id is ``f"{pattern_id}#{index}"``. It is
        also the flow's identity for ECMP hashing, so routing a subset gives the same paths.
    pattern_ids, pattern_kinds : list of str
    pattern_latency_s : ndarray of float64, optional
        Per pattern: the latency term added to its data time (s; 0 for non-collectives).
    pattern_efficiency : ndarray of float64, optional
        Per pattern: the bandwidth efficiency its data time is divided by (1 for non-collectives).
    pattern_plans : list, optional
        Per pattern: its :class:`~designer.engine.traffic.collectives.Plan` (algorithm, protocol,
        alternatives), None for non-collectives.
    pattern_issue_floor_s : ndarray of float64, optional
        Per pattern: the shortest completion one host thread issuing it on several GPUs allows
        (s; 0 by default, :mod:`designer.engine.traffic.collectives.launch`).
    """

    src: np.ndarray
    dst: np.ndarray
    bytes: np.ndarray
    demand_gbps: np.ndarray
    pattern: np.ndarray
    index: np.ndarray
    pattern_ids: list[str] = field(default_factory=list)
    pattern_kinds: list[str] = field(default_factory=list)
    pattern_latency_s: np.ndarray | None = None
    pattern_efficiency: np.ndarray | None = None
    pattern_plans: list | None = None
    pattern_issue_floor_s: np.ndarray | None = None

    def __post_init__(self) -> None:
        k = len(self.pattern_ids)
        if self.pattern_latency_s is None:
            self.pattern_latency_s = np.zeros(k)
        if self.pattern_efficiency is None:
            self.pattern_efficiency = np.ones(k)
        if self.pattern_plans is None:
            self.pattern_plans = [None] * k
        if self.pattern_issue_floor_s is None:
            self.pattern_issue_floor_s = np.zeros(k)

    def __len__(self) -> int:
        return len(self.src)

    def take(self, which) -> "Flows":
        """The subset of flows selected by an index array or boolean mask (ids are kept)."""
        return Flows(self.src[which], self.dst[which], self.bytes[which], self.demand_gbps[which],
                     self.pattern[which], self.index[which], self.pattern_ids, self.pattern_kinds,
                     self.pattern_latency_s, self.pattern_efficiency, self.pattern_plans,
                     self.pattern_issue_floor_s)

    def flow_id(self, i: int) -> str:
        return f"{self.pattern_ids[int(self.pattern[i])]}#{int(self.index[i])}"

    @classmethod
    def from_pairs(cls, src, dst, bytes_=1.0, demand_gbps=np.inf, pattern_id: str = "f",
                   kind: str = "p2p") -> "Flows":
        """Flows of one pattern of ``kind`` from explicit (src, dst) node-index pairs (handy in
        tests; a collective's planner passes its kind, which routing reads: NCCL's send/receive
        kinds take PXN under the ``affinity`` policy)."""
        src = np.asarray(src, dtype=np.int64)
        n = len(src)
        return cls(src, np.asarray(dst, dtype=np.int64), np.broadcast_to(np.asarray(bytes_, float), n).copy(),
                   np.broadcast_to(np.asarray(demand_gbps, float), n).copy(),
                   np.zeros(n, np.int32), np.arange(n, dtype=np.int64), [pattern_id], [kind])
