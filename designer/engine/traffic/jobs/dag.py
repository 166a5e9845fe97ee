"""A training step as a DAG of phases, simulated by an event loop over max-min fair rates.

A phase starts when every phase in its ``after`` list has finished; it runs its compute
(``compute_s`` seconds, no traffic; after an idle ``wait_s``, e.g. a request's arrival time) and
starts its patterns at once; it finishes when its compute and every one of its patterns are done. A pattern waits its latency (the collective's
``latency_s``, :mod:`designer.engine.traffic.collectives`) and then sends its flows' bytes divided by its
bandwidth efficiency, so a pattern alone takes ``latency + data_time / efficiency`` — the time
model of :mod:`designer.engine.analysis.completion`.

Between two events the set of transferring flows is fixed and every flow runs at its max-min
fair rate over *all* transferring flows (of every running phase: overlapping phases contend for
links). Events are a flow finishing (completions within ``TIME_RTOL`` of the earliest are one
event), a compute or latency timer expiring, and the phase starts they cause; the rates are
re-solved at each, so the loop is exact under max-min (the timeline mode of
:mod:`designer.engine.solve.timeline`, with flows that start later). Only the connected components
of the transferring paths that changed are re-solved (:mod:`designer.engine.traffic.jobs.rates`):
the others keep their max-min rates, which a full re-solve would give them again.

**Batched completions** (``event_quantum`` ε, default :data:`EVENT_QUANTUM`; 0: the exact loop
above, bit for bit). ECMP-hashed flows through an oversubscribed fabric finish at thousands of
distinct times, each a re-solve of the whole all-to-all. With ε > 0 an event whose earliest
completion is at ``t1`` extends, at the rates in force, to the last completion no later than
``t1 + ε (t1 − s)`` (``s``: when the youngest sending pattern began sending), cut at the next
compute or latency timer and at the first pattern whose every path finishes inside (so timers,
pattern ends and the phase starts they cause happen at their exact times under those rates). Every
path in the window finishes at its own time and moves exactly its bytes; the rate it frees is given
to the others only at the window's end, one re-solve. So no resource is ever loaded past its
capacity (the rates are a max-min allocation of a superset of the transferring paths), bytes are
conserved, and each re-solve is late by at most ε × the youngest pattern's elapsed send time. The
capacity-time each resource leaves idle meanwhile is summed; ``batching_idle_s`` is the largest,
in seconds of that resource's capacity: when the step ends when one resource has carried its bytes
(available from the same start) and it is saturated whenever the rates are fresh (an all-to-all's
hottest spine link), it idles only while batching idles it, so the step is late by at most that
much and never early; max-min in general is not monotone (a flow leaving can slow another), so
elsewhere it is an indicator, and the error was measured (docs/PERFORMANCE.md, "Slow points").
``events_batched`` counts the events that took more than one completion time.

A pattern with a lost flow (unroutable, or routed with no bandwidth) never finishes, so neither
does its phase, nor anything after it: the job does not complete (``step_time_s: null``) and
``reason`` says which phase and pattern.

``summary.job``: ``step_time_s`` (the last phase's end), ``compute_s`` (time during which some
compute runs), ``communication_s`` (time during which some pattern is in flight, latency
included), ``exposed_communication_s`` (communication time not overlapped by compute),
``critical_path`` (phase ids: from the last phase back through the dependency that finished
last; empty when the step does not complete: nothing is critical in a step that hangs), ``hung``
(the phase that never finishes and its patterns), ``events`` (rate solves), ``event_quantum``,
``events_batched`` and ``batching_idle_s`` (Batched completions, above), and per-phase ``start_s`` / ``end_s``. Under failures the result's ``diff.job``
(:func:`step_diff`) compares the step with the failure-free one.

For ``kv_transfer`` patterns the loop also records which resource limited the pattern's slowest
transferring path, and for how long (the link that limits a request's KV-cache transfer is the
one that bounded it longest); a disaggregated-inference job (:mod:`designer.engine.traffic.jobs.inference`)
reports it per request in ``summary.job.inference``.
"""
from __future__ import annotations

import numpy as np

from designer.engine.solve import solver
from designer.engine.solve.kernels.constants import BYTES_PER_GBPS_S, TIME_RTOL
from designer.engine.numbers import json_float as _num
from designer.engine.traffic.jobs import report
from designer.engine.traffic.jobs.rates import ComponentRates

__all__ = ["EVENT_QUANTUM", "TIME_RTOL", "run_job", "step_diff", "step_headline", "union_length"]

_MAX_EVENTS = 200_000
# ε of the completion window (module docstring, "Batched completions"): a re-solve may wait for the
# completions up to ε × the youngest sending pattern's elapsed send time past the earliest one.
# Chosen by measurement (docs/PERFORMANCE.md, "Slow points"; ``bench --only batching``): no error
# above 1e-6 on the fabrics' steps at any ε up to 0.05, and ≤ 0.3 % on random asymmetric instances
# at this ε (0.77 % at 0.01).
EVENT_QUANTUM = 0.005


class _State:
    """Mutable loop state (arrays over paths, patterns and phases)."""

    def __init__(self, prep, job, incremental: bool = True):
        flows, routes = prep.flows, prep.routes
        self.prep, self.job = prep, job
        self.cap = prep.capacity_gbps
        self.ptr, self.res = routes.flow_ptr, routes.flow_res
        self.path_pattern = flows.pattern[routes.owner]
        eff = np.asarray(flows.pattern_efficiency, float)
        self.left = flows.bytes[routes.owner] * routes.share / eff[self.path_pattern]
        self.demand = flows.demand_gbps[routes.owner] * routes.share
        self.weight = routes.weight
        n_pat = len(flows.pattern_ids)
        lost = np.bincount(flows.pattern[routes.status != 0], minlength=n_pat)
        self.lost = lost > 0
        self.latency = np.asarray(flows.pattern_latency_s, float)
        self.pat_paths = _group(self.path_pattern, n_pat)
        self.pat_start = np.full(n_pat, np.nan)
        self.pat_end = np.full(n_pat, np.nan)
        self.send_start = np.full(n_pat, np.nan)       # when the latency ended and bytes began
        self.sending = np.zeros(n_pat, bool)           # latency over, bytes in flight
        self.active = np.zeros(len(self.left), bool)   # paths transferring now
        n_ph = len(job.phases)
        self.ph_start = np.full(n_ph, np.nan)
        self.ph_end = np.full(n_ph, np.nan)
        self.stalled: list[str] = []
        kinds = list(getattr(flows, "pattern_kinds", None) or [])
        self.track = np.array([k == "kv_transfer" for k in kinds] or [False] * n_pat, bool)
        self.tracking = bool(self.track.any())
        self.limit_s: dict[int, dict[int, float]] = {}     # pattern → {resource: seconds limiting}
        # Event-driven bookkeeping: work per event follows what runs, not the job's size.
        self.idx = np.zeros(0, dtype=np.int64)              # transferring paths, sorted
        self.pat_active = np.zeros(n_pat, dtype=np.int64)   # transferring paths per pattern
        self.latent: set[int] = set()                       # started, waiting out their latency
        self.running: set[int] = set()                      # phases started, not ended
        self.succ: list[list[int]] = [[] for _ in range(n_ph)]
        self.deps_left = np.zeros(n_ph, dtype=np.int64)
        for k, ph in enumerate(job.phases):
            deps = set(ph["after"])
            self.deps_left[k] = len(deps)
            for d in deps:
                self.succ[d].append(k)
        self.ready = [k for k in range(n_ph) if self.deps_left[k] == 0]
        self.pending: list[np.ndarray] = []                 # paths that started since the last solve
        self.idle = np.zeros(len(self.cap))                 # Gb/s·s left idle by batched completions
        self.rates = ComponentRates(self.cap, self.ptr, self.res, self.demand, self.weight,
                                    self.pat_paths) if incremental else None


def _group(labels: np.ndarray, n: int) -> list[np.ndarray]:
    order = np.argsort(labels, kind="stable")
    bounds = np.searchsorted(labels[order], np.arange(n + 1))
    return [order[bounds[k]:bounds[k + 1]] for k in range(n)]


def run_job(prep, job, incremental: bool = True, quantum: float | None = None) -> dict:
    """Simulate one step of ``job`` on the prepared (routed) scenario.

    Parameters
    ----------
    prep : designer.engine.analysis.simulate.Prepared
        Its flows are every phase's patterns (pattern ``k`` = the scenario's ``patterns[k]``).
    job : designer.engine.traffic.jobs.spec.JobSpec
    incremental : bool
        Re-solve only the components of the transferring paths that changed at an event
        (:mod:`designer.engine.traffic.jobs.rates`); False re-solves every transferring path at
        every event (the reference the tests compare it with; same times within 1e-9 relative).
    quantum : float, optional
        ε of the completion window (module docstring, "Batched completions"); None: the job's
        ``event_quantum``, else :data:`EVENT_QUANTUM`. 0 is the exact loop.

    Returns
    -------
    dict
        ``summary.job`` (see the module docstring).

    Notes
    -----
    The work per event is proportional to what is running (phases started and not ended, their
    patterns, the transferring paths), not to the size of the job: phases start from dependency
    counters, and the transferring paths are kept as a sorted index array. An imported workload
    of tens of thousands of chained phases costs one small solve per event.
    """
    eps = _quantum(job, quantum)
    st = _State(prep, job, incremental)
    t, events, batched = 0.0, 0, 0
    _start_ready(st, t)
    while events < _MAX_EVENTS:
        rates, bneck = _solve(st)
        t_next = _next_event(st, t, rates)
        if not np.isfinite(t_next):
            break
        if eps > 0:
            t_window = _window_end(st, t, t_next, rates, eps)
            if t_window > t_next:
                batched += 1
                _note_idle(st, rates, t, t_window)
            t_next = t_window
        if st.tracking:
            _note_limits(st, rates, bneck, t_next - t)
        _advance(st, rates, t, t_next)
        t, events = t_next, events + 1
        _settle(st, t)
    idle = np.divide(st.idle, st.cap, out=np.zeros(len(st.cap)), where=st.idle > 0)
    return {**_summary(st, events), "event_quantum": eps, "events_batched": batched,
            "batching_idle_s": _num(float(np.max(idle, initial=0.0)))}


def _quantum(job, quantum: float | None) -> float:
    if quantum is None:
        quantum = getattr(job, "event_quantum", None)
    return EVENT_QUANTUM if quantum is None else float(quantum)


def _start_ready(st: _State, t: float) -> None:
    """Start every phase whose dependencies have all finished, in phase order; a phase that ends
    at once (nothing to compute or send) releases its successors in the same instant."""
    while st.ready:
        batch, st.ready = sorted(st.ready), []
        for k in batch:
            st.ph_start[k] = t
            for p in st.job.phases[k]["patterns"]:
                st.pat_start[p] = t
                if not st.lost[p]:
                    st.latent.add(p)
            st.running.add(k)
            if _settle_phase(st, k, t):
                _phase_done(st, k)


def _phase_done(st: _State, k: int) -> None:
    st.running.discard(k)
    for s in st.succ[k]:
        st.deps_left[s] -= 1
        if st.deps_left[s] == 0:
            st.ready.append(s)


def _settle(st: _State, t: float) -> None:
    for k in sorted(st.running):
        if _settle_phase(st, k, t):
            _phase_done(st, k)
    _start_ready(st, t)


def _settle_pattern(st: _State, p: int, t: float) -> None:
    if st.lost[p]:
        return
    if not st.sending[p] and st.pat_start[p] + st.latency[p] <= t * (1 + TIME_RTOL) + 1e-15:
        st.sending[p] = True
        st.send_start[p] = t
        st.latent.discard(p)
        paths = st.pat_paths[p]
        new = paths[st.left[paths] > 0]
        if len(new):
            st.active[new] = True
            st.pending.append(new)
            if st.rates is not None:
                st.rates.add(p)
        st.pat_active[p] = len(new)
    if st.sending[p] and st.pat_active[p] == 0:
        st.pat_end[p] = t


def _settle_phase(st: _State, k: int, t: float) -> bool:
    ph = st.job.phases[k]
    for p in ph["patterns"]:
        if np.isnan(st.pat_end[p]):
            _settle_pattern(st, p, t)
    compute_done = st.ph_start[k] + _busy_s(ph) <= t * (1 + TIME_RTOL) + 1e-15
    if compute_done and all(np.isfinite(st.pat_end[p]) for p in ph["patterns"]):
        st.ph_end[k] = t
        return True
    return False


def _busy_s(ph: dict) -> float:
    """Seconds a phase's timer runs: its idle wait, then its compute."""
    return ph.get("wait_s", 0.0) + ph["compute_s"]


def _solve(st: _State) -> tuple[np.ndarray, np.ndarray]:
    """Max-min rates (Gb/s) and bottleneck resources (-1: demand-limited) of the transferring
    paths, aligned with ``st.idx``."""
    if st.pending:
        # The paths that started are not transferring yet: one sorted merge per event.
        st.idx = np.sort(np.concatenate([st.idx, *st.pending]))
        st.pending = []
    if st.rates is not None:
        st.rates.solve(st.active, st.idx, names=st.tracking)
        return st.rates.rate[st.idx], st.rates.bneck[st.idx]
    idx = st.idx
    if len(idx) == 0:
        return np.zeros(0), np.zeros(0, dtype=np.int64)
    lens = st.ptr[idx + 1] - st.ptr[idx]
    sub_ptr = np.zeros(len(idx) + 1, dtype=np.int64)
    np.cumsum(lens, out=sub_ptr[1:])
    pos = np.arange(sub_ptr[-1], dtype=np.int64) + np.repeat(st.ptr[idx] - sub_ptr[:-1], lens)
    alloc = solver.maxmin(st.cap, sub_ptr, st.res[pos], st.demand[idx], weights=st.weight[idx])
    return np.asarray(alloc.rates_gbps, float), np.asarray(alloc.bottleneck, np.int64)


def _note_limits(st: _State, rates: np.ndarray, bneck: np.ndarray, dt: float) -> None:
    """Credit ``dt`` to the bottleneck of each tracked pattern's slowest transferring path."""
    if dt <= 0 or not len(st.idx):
        return
    owner = st.path_pattern[st.idx]
    for p in np.unique(owner[st.track[owner]]).tolist():
        mine = np.flatnonzero(owner == p)
        r = int(bneck[mine[int(np.argmin(rates[mine]))]])
        if r >= 0:
            per = st.limit_s.setdefault(p, {})
            per[r] = per.get(r, 0.0) + dt


def _next_event(st: _State, t: float, rates: np.ndarray) -> float:
    """Earliest of: a transferring path finishing, a latency or compute timer expiring."""
    best = np.inf
    moving = rates > 0
    if moving.any():
        best = t + float(np.min(st.left[st.idx[moving]] / (rates[moving] * BYTES_PER_GBPS_S)))
    best = min(best, _next_timer(st, t))
    if not np.isfinite(best):
        zero = st.idx[~moving]
        st.stalled = sorted({st.prep.flows.pattern_ids[int(st.path_pattern[i])] for i in zero[:1000]})
    return max(best, t)


def _next_timer(st: _State, t: float) -> float:
    """Earliest latency or compute timer still to expire (inf: none)."""
    best = np.inf
    for p in st.latent:
        best = min(best, st.pat_start[p] + st.latency[p])
    for k in st.running:
        end = st.ph_start[k] + _busy_s(st.job.phases[k])
        if end > t * (1 + TIME_RTOL):
            best = min(best, end)
    return best


def _window_end(st: _State, t: float, t1: float, rates: np.ndarray, eps: float) -> float:
    """Where the batched event at ``t1`` (the earliest completion) ends: the last completion, at
    the current rates, no later than ``t1 + eps × (t1 − s)`` (``s``: when the youngest sending
    pattern began sending), than the next timer, nor than the first pattern to finish whole (its
    end, and the phase starts it causes, stay exact). ``t1`` itself when a timer comes first."""
    timer = _next_timer(st, t)
    if not t1 < timer:
        return t1
    moving = rates > 0
    paths = st.idx[moving]
    finish = t + st.left[paths] / (rates[moving] * BYTES_PER_GBPS_S)
    youngest = float(np.max(st.send_start[st.pat_active > 0]))
    inside = finish <= min(t1 + eps * (t1 - youngest), timer)
    if not inside.any():   # t1 is within rounding of the earliest finish: nothing to batch
        return t1
    end = float(np.max(finish[inside]))
    owner = st.path_pattern[paths[inside]]
    counts = np.bincount(owner, minlength=len(st.pat_active))
    whole = np.flatnonzero(counts == st.pat_active)
    whole = whole[counts[whole] > 0]
    if len(whole):
        last = np.full(len(st.pat_active), -np.inf)
        np.maximum.at(last, owner, finish[inside])
        end = min(end, float(np.min(last[whole])))
    return max(end, t1)


def _note_idle(st: _State, rates: np.ndarray, t: float, t_end: float) -> None:
    """Add to each resource the capacity-time (Gb/s·s) that paths finishing before ``t_end`` leave
    unused: their rate comes back to the others only when the window ends."""
    idx = st.idx
    finish = np.where(rates > 0, st.left[idx] / np.maximum(rates, 1e-300) / BYTES_PER_GBPS_S, np.inf)
    early = np.flatnonzero(finish < t_end - t)
    if not len(early):
        return
    paths = idx[early]
    lens = st.ptr[paths + 1] - st.ptr[paths]
    pos = np.repeat(st.ptr[paths] - np.cumsum(lens) + lens, lens) + np.arange(int(lens.sum()))
    np.add.at(st.idle, st.res[pos], np.repeat(rates[early] * (t_end - t - finish[early]), lens))


def _advance(st: _State, rates: np.ndarray, t: float, t_next: float) -> None:
    idx = st.idx
    if len(idx) == 0:
        return
    dt = t_next - t
    # A path finishing within TIME_RTOL of this event finishes at it, and so does one whose finish
    # time rounds to this event's time: the last bytes of a path can take less than a unit in the
    # last place of ``t``, and ``t + that`` is ``t`` again (the loop then made events of length 0
    # until its event limit, and the step never completed).
    finish = np.where(rates > 0, st.left[idx] / np.maximum(rates, 1e-300) / BYTES_PER_GBPS_S, np.inf)
    done = (st.left[idx] <= 0) | (finish <= dt * (1 + TIME_RTOL)) | (t + finish <= t_next)
    if dt > 0:
        st.left[idx] -= rates * dt * BYTES_PER_GBPS_S
    gone = idx[done]
    if len(gone):
        st.left[gone] = 0.0
        st.active[gone] = False
        np.subtract.at(st.pat_active, st.path_pattern[gone], 1)
        st.idx = idx[~done]
        if st.rates is not None:
            st.rates.finished(gone)
            for p in np.unique(st.path_pattern[gone]).tolist():
                st.rates.changed(p, bool(st.pat_active[p] > 0))


def union_length(intervals: list[tuple[float, float]]) -> float:
    """Total length (s) covered by a set of ``(start, end)`` intervals."""
    total, cur_s, cur_e = 0.0, None, None
    for s, e in sorted(intervals):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    return total + (cur_e - cur_s if cur_e is not None else 0.0)


def _overlap_minus(a: list[tuple[float, float]], b: list[tuple[float, float]]) -> float:
    """Length of (∪a) minus (∪a ∩ ∪b)."""
    return union_length(a + b) - union_length(b)


def _summary(st: _State, events: int) -> dict:
    job, flows = st.job, st.prep.flows
    compute = [(st.ph_start[k] + ph.get("wait_s", 0.0), st.ph_start[k] + _busy_s(ph))
               for k, ph in enumerate(job.phases) if not np.isnan(st.ph_start[k]) and ph["compute_s"] > 0]
    comm_end = np.where(np.isnan(st.pat_end), np.nan, st.pat_end)
    comm = [(st.pat_start[p], comm_end[p]) for p in range(len(flows.pattern_ids))
            if not np.isnan(st.pat_start[p]) and not np.isnan(comm_end[p])]
    complete = bool(np.isfinite(st.ph_end).all())
    step = float(np.max(st.ph_end)) if complete else None
    phases = []
    for k, ph in enumerate(job.phases):
        phases.append({"id": ph["id"], "start_s": _opt(st.ph_start[k]), "end_s": _opt(st.ph_end[k]),
                       "compute_s": ph["compute_s"], **({"wait_s": ph["wait_s"]} if ph.get("wait_s") else {}),
                       "after": [job.phases[d]["id"] for d in ph["after"]],
                       "patterns": {flows.pattern_ids[p]: {"start_s": _opt(st.pat_start[p]),
                                                           "end_s": _opt(st.pat_end[p])}
                                    for p in ph["patterns"]}})
    critical = _critical_path(st) if complete else []
    for ph in phases:
        ph["critical"] = ph["id"] in critical
    out = {"complete": complete, "step_time_s": _num(step) if step is not None else None,
           "compute_s": _num(union_length(compute)), "communication_s": _num(union_length(comm)),
           "exposed_communication_s": _num(_overlap_minus(comm, compute)),
           "critical_path": critical, "phases": phases, "events": events,
           "layout": job.summary_layout(), "reason": None if complete else _reason(st),
           "hung": None if complete else _hung(st)}
    if getattr(job, "inference", None):
        from designer.engine.traffic.jobs.inference import inference_summary

        out["inference"] = inference_summary(out, job.inference, _limits(st))
    return out


def _limits(st: _State) -> dict[str, dict]:
    """Per tracked pattern id: the resource that limited it longest and the seconds it did."""
    topo, ids = st.prep.topology, st.prep.flows.pattern_ids
    out = {}
    for p, per in st.limit_s.items():
        r, secs = max(per.items(), key=lambda kv: (kv[1], -kv[0]))
        out[ids[p]] = {"resource": topo.resource_id(r), "seconds": float(secs)}
    return out


def _opt(x) -> float | None:
    return float(x) if np.isfinite(x) else None


def _critical_path(st: _State) -> list[str]:
    phases = st.job.phases
    # Ties (zero-length phases ending together) go to the later phase: the one that waited.
    k = len(phases) - 1 - int(np.argmax(st.ph_end[::-1]))
    path = [k]
    while phases[k]["after"]:
        k = max(phases[k]["after"], key=lambda d: (st.ph_end[d], d))
        path.append(k)
    return [phases[i]["id"] for i in reversed(path)]


def _reason(st: _State) -> str:
    flows = st.prep.flows
    for k, ph in enumerate(st.job.phases):
        if np.isnan(st.ph_start[k]) or np.isfinite(st.ph_end[k]):
            continue
        lost = [flows.pattern_ids[p] for p in ph["patterns"] if st.lost[p]]
        if lost:
            return (f"phase {ph['id']} does not finish: pattern {', '.join(lost)} lost flows "
                    "(a broken communicator hangs the step)")
        stalled = [flows.pattern_ids[p] for p in ph["patterns"] if flows.pattern_ids[p] in st.stalled]
        if stalled:
            return f"phase {ph['id']} does not finish: pattern {', '.join(stalled)} gets no bandwidth"
    return "the step does not finish (event limit reached)"


def _hung(st: _State) -> dict | None:
    """``summary.job.hung``: the first phase that started and never finished, its patterns that
    lost flows (``why: "lost"``) or get no bandwidth (``"stalled"``); None past the event limit."""
    flows = st.prep.flows
    for k, ph in enumerate(st.job.phases):
        if np.isnan(st.ph_start[k]) or np.isfinite(st.ph_end[k]):
            continue
        lost = [flows.pattern_ids[p] for p in ph["patterns"] if st.lost[p]]
        stalled = [flows.pattern_ids[p] for p in ph["patterns"] if flows.pattern_ids[p] in st.stalled]
        if lost or stalled:
            return {"phase": ph["id"], "patterns": lost or stalled, "why": "lost" if lost else "stalled"}
    return None


def step_diff(before: dict, after: dict) -> dict:
    """``diff.job``: the step before and after the failures.

    Returns
    -------
    dict
        ``complete`` and ``step_time_s`` as ``{"before", "after"}``, ``slowdown`` (after / before,
        None when either does not complete), ``broken`` (the step completed and no longer does)
        and ``reason`` (why it does not complete after).
    """
    b, a = before.get("step_time_s"), after.get("step_time_s")
    slowdown = a / b if a is not None and b else None
    return {"complete": {"before": before["complete"], "after": after["complete"]},
            "step_time_s": {"before": b, "after": a}, "slowdown": _num(slowdown) if slowdown is not None else None,
            "broken": bool(before["complete"] and not after["complete"]), "reason": after.get("reason")}


def step_headline(job: dict, patterns_headline: str | None, patterns: dict | None = None) -> str:
    """``summary.headline`` of a job (:func:`designer.engine.traffic.jobs.report.step_headline`)."""
    return report.step_headline(job, patterns_headline, patterns)
