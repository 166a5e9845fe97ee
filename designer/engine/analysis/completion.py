"""Completion semantics: when a pattern, and a job, completes — the one definition that the
result summary, the what-if diff, sweeps, policy comparison, the API and the pages all use.

- A **pattern completes** only if every one of its flows is routed *and* gets bandwidth. A
  disconnected flow never delivers its bytes: a ring all-reduce with one lost flow hangs (NCCL
  waits on the missing peer until its timeout aborts the communicator), an all-to-all misses a
  peer's data. Such a pattern has ``complete: false``, ``completion_s: null`` and a ``reason``
  naming the lost flows and why; ``surviving_completion_s`` still says how the routed flows fare.
  A routed flow with rate 0 (it crosses a zero-capacity resource) never finishes either.
- A complete pattern finishes with its slowest flow (steady state: bytes / rate; timeline mode:
  the re-solved finishing time) — its *data time* — plus its latency, at its efficiency:
  ``completion = latency + data_time / efficiency``. A collective's latency (NCCL's per-step
  model) and efficiency (protocol × NVLS × the size factor of
  :mod:`designer.engine.traffic.collectives.sizing`: channels in use and pipeline fill at this
  size) come from the algorithm and protocol chosen for it
  (``Flows.pattern_latency_s``, ``Flows.pattern_efficiency``, see
  :mod:`designer.engine.traffic.collectives`); other patterns have latency 0 and efficiency 1. The
  max-min solve stays exact; this is the one place the latency term is added, so the result
  summary, the what-if diff and sweeps all use the same time model. A collective one host
  thread issues on several GPUs (``gpus_per_thread``, nccl-tests ``-g``) takes at least that
  thread's issue time (``Flows.pattern_issue_floor_s``,
  :mod:`designer.engine.traffic.collectives.launch`): ``max(floor, latency + data_time /
  efficiency)``.
- A **job** (the scenario's whole workload) completes only if all its patterns do; its completion
  time is the slowest pattern's.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from designer.engine.numbers import json_float as _finite

__all__ = ["PatternCompletion", "pattern_completions", "pattern_time_model", "job_completion", "headline", "lost_phrase"]

# A reason names at most this many flows (counts always cover them all).
_NAMED_FLOWS = 3



@dataclass
class PatternCompletion:
    """How one pattern fares. Times in seconds, throughputs in Gb/s."""

    id: str
    kind: str
    flows: int
    unroutable: int
    stalled: int                       # routed flows that get no bandwidth (never finish)
    bytes: float
    slowest: int | None                # flow index of the slowest routed flow, if any
    surviving_completion_s: float | None
    surviving_throughput_gbps: float | None
    reason: str | None

    @property
    def complete(self) -> bool:
        return self.unroutable == 0 and self.stalled == 0

    @property
    def completion_s(self) -> float | None:
        return self.surviving_completion_s if self.complete else None

    @property
    def throughput_gbps(self) -> float | None:
        return self.surviving_throughput_gbps if self.complete else None

    def as_dict(self) -> dict:
        return {"complete": self.complete, "completion_s": self.completion_s,
                "throughput_gbps": self.throughput_gbps, "unroutable": self.unroutable,
                "stalled": self.stalled, "surviving_completion_s": self.surviving_completion_s,
                "reason": self.reason}


def pattern_completions(flows, routes, completion_s: np.ndarray, members: list[np.ndarray]
                        ) -> dict[str, PatternCompletion]:
    """Completion of every pattern.

    Parameters
    ----------
    flows : Flows
    routes : Routes
        ``status`` (0 = routed) and ``reason(f)`` per flow.
    completion_s : ndarray of float, shape (F,)
        Per-flow completion (s): NaN for unroutable flows, inf for a flow that never finishes.
    members : list of ndarray
        Flow indices of each pattern, in ``flows.pattern_ids`` order.

    Returns
    -------
    dict
        Pattern id → :class:`PatternCompletion`.
    """
    ok = routes.status == 0
    out = {}
    latency, efficiency = _time_model(flows)
    floor = getattr(flows, "pattern_issue_floor_s", None)
    for k, pid in enumerate(flows.pattern_ids):
        mine = members[k]
        good = mine[ok[mine]]
        lost = mine[~ok[mine]]
        times = completion_s[good]
        stalled = good[~np.isfinite(times)] if len(good) else good
        slowest = throughput = None
        surviving = 0.0 if len(mine) == 0 else None    # an empty pattern has nothing to wait for
        if len(good):
            worst = int(good[np.argmax(np.where(np.isnan(times), -1, times))])
            slowest, surviving = worst, _finite(completion_s[worst])
            if surviving is not None:
                surviving = float(latency[k]) + surviving / float(efficiency[k])
                surviving = max(surviving, float(floor[k])) if floor is not None else surviving
            if surviving is not None and surviving > 0:
                throughput = float(flows.bytes[good].sum()) * 8 / 1e9 / surviving
        out[pid] = PatternCompletion(pid, flows.pattern_kinds[k], int(len(mine)), int(len(lost)),
                                     int(len(stalled)), float(flows.bytes[mine].sum()), slowest, surviving,
                                     throughput, _reason(flows, routes, mine, lost, stalled))
    return out


def pattern_time_model(flows) -> dict[str, tuple[float, float]]:
    """Pattern id → (latency s, efficiency): completion = latency + data_time / efficiency."""
    latency, efficiency = _time_model(flows)
    return {pid: (float(latency[k]), float(efficiency[k])) for k, pid in enumerate(flows.pattern_ids)}


def _time_model(flows) -> tuple[np.ndarray, np.ndarray]:
    """Per pattern latency (s) and efficiency; 0 and 1 for flows built without them."""
    k = len(flows.pattern_ids)
    latency = getattr(flows, "pattern_latency_s", None)
    efficiency = getattr(flows, "pattern_efficiency", None)
    return (np.zeros(k) if latency is None else latency), (np.ones(k) if efficiency is None else efficiency)


def _reason(flows, routes, mine, lost, stalled) -> str | None:
    if len(lost):
        named = ", ".join(flows.flow_id(int(f)) for f in lost[:_NAMED_FLOWS])
        more = f" and {len(lost) - _NAMED_FLOWS:,} more" if len(lost) > _NAMED_FLOWS else ""
        why = "; ".join(dict.fromkeys(routes.reason(int(f)) for f in lost[:50]))
        return f"{len(lost):,} of {len(mine):,} flows disconnected ({named}{more}): {why}"
    if len(stalled):
        named = ", ".join(flows.flow_id(int(f)) for f in stalled[:_NAMED_FLOWS])
        return (f"{len(stalled):,} of {len(mine):,} flows get no bandwidth ({named}): they cross a "
                "resource of capacity 0")
    return None


def job_completion(patterns: dict[str, PatternCompletion]) -> dict:
    """The job: ``complete`` (all patterns complete), ``completion_s`` (the slowest pattern's, None
    unless complete), ``broken`` (ids of the patterns that do not complete) and
    ``slowest_pattern`` (among those that complete)."""
    broken = [pid for pid, p in patterns.items() if not p.complete]
    done = {pid: p.completion_s for pid, p in patterns.items() if p.complete and p.completion_s is not None}
    slowest = max(done, key=lambda pid: done[pid]) if done else None
    complete = not broken and bool(patterns)
    return {"complete": complete, "completion_s": max(done.values(), default=0.0) if complete else None,
            "broken": broken, "slowest_pattern": slowest}


def lost_phrase(patterns: dict[str, PatternCompletion], failures: list[dict] | None = None) -> str:
    """"2 flows of ar and 1 flow of p lost when h0/nic0 is down" (or the routing reason when no
    failure is given)."""
    parts = []
    for p in patterns.values():
        if p.unroutable:
            parts.append(f"{p.unroutable:,} flow{'s' if p.unroutable != 1 else ''} of {p.id}")
        elif p.stalled:
            parts.append(f"{p.stalled:,} flow{'s' if p.stalled != 1 else ''} of {p.id} without bandwidth")
    if not parts:
        return ""
    text = " and ".join([", ".join(parts[:-1]), parts[-1]] if len(parts) > 1 else parts)
    downs = [f["label"].removesuffix(" down") for f in failures or [] if f.get("mode") == "down"]
    if downs and any(p.unroutable for p in patterns.values()):
        verb = "is" if len(downs) == 1 else "are"
        return f"{text} lost when {', '.join(downs)} {verb} down"
    reasons = [p.reason.split(": ", 1)[-1] for p in patterns.values() if p.reason]
    return f"{text} lost: {reasons[0]}" if reasons else text


def headline(patterns: dict[str, PatternCompletion], failures: list[dict] | None = None,
             critical: dict | None = None) -> str:
    """One line an operator reads first: "does not complete — 3 flows of ar lost when h0/nic1 is
    down", or "completes in 12.3 ms — slowest pattern ar, limited by leaf3-spine0:a>b"."""
    job = job_completion(patterns)
    if not job["complete"]:
        return "does not complete — " + lost_phrase(patterns, failures)
    text = f"completes in {_duration(job['completion_s'])}"
    if job["slowest_pattern"] and len(patterns) > 1:
        text += f" — slowest pattern {job['slowest_pattern']}"
    if critical and critical.get("id"):
        text += (", " if len(patterns) > 1 else " — ") + f"limited by {critical['id']}"
        others = (critical.get("equally_limiting") or 1) - 1
        if others > 0:
            text += f" (and {others:,} like it)"
    return text


def _duration(s: float | None) -> str:
    if s is None:
        return "—"
    if s >= 1:
        return f"{s:.3g} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3g} ms"
    return f"{s * 1e6:.3g} µs"
