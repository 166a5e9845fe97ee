"""Per-flow outcomes from the solver's per-sub-flow answer: a flow's rate, bottleneck and
completion time from its sub-flows' levels (steady state), and the timeline mode's completions
re-solved at every sub-flow completion. How striped flows are read is in
:mod:`designer.engine.analysis.simulate`'s docstring.
"""
from __future__ import annotations

import numpy as np

from designer.engine.model.tiers import TIERS, resource_tiers
from designer.engine.routing import Routes
from designer.engine.solve import solver
from designer.engine.traffic.flows import Flows

__all__ = ["per_flow", "flow_completions", "run_timeline"]

# Sub-flows of one flow whose levels agree to this relative tolerance froze together (the
# solver snaps ties at 1e-12; a demand-limited sub-flow's level is demand·share / share).
_COMMON_LEVEL_RTOL = 1e-12


def per_flow(routes: Routes, flows: Flows, path_rate, path_bneck, path_level=None, copied=None):
    """Per flow: rate (Gb/s), bottleneck (resource index) and steady-state completion (s).

    ``level`` = the solver's rate per unit of weight of each sub-flow (λ_p; ``path_rate /
    weight`` when not given). rate = ``Σ path_rate`` = Σ w_p·λ_p, or exactly the common level
    when every sub-flow froze at one λ (to the solver's snapping tolerance: Σ w = 1 only up to
    rounding); completion = ``bytes / min λ_p`` (the slowest sub-flow, whose bottleneck is the
    flow's). Weights are the shares (see :mod:`designer.engine.analysis.simulate`), so a level is a whole-flow rate.

    ``copied`` = (distinct routes, per flow its route there, per distinct path its first copy)
    when ``routes`` were laid out from distinct ones (``Routes.copied_from``) *and* the path
    answers are the same bits on every copy of a distinct path (a solve grouped by
    ``aggregate_copies`` gives them so): the rate, bottleneck and pace are then found once per
    distinct route and copied to its flows — the same reductions over the same values.
    """
    if copied is not None:
        distinct, rep, firsts = copied
        level = None if path_level is None else path_level[firsts]
        rate, pace, bneck = (a[rep] for a in _rate_pace_bottleneck(distinct, path_rate[firsts], path_bneck[firsts],
                                                                  level))
    else:
        rate, pace, bneck = _rate_pace_bottleneck(routes, path_rate, path_bneck, path_level)
    return rate, bneck, _completions(flows, pace, np.isnan(rate))


def _rate_pace_bottleneck(routes: Routes, path_rate, path_bneck, path_level):
    """:func:`per_flow`'s rate, pace (slowest level) and bottleneck per flow of ``routes``."""
    n = routes.num_flows
    rate = np.full(n, np.nan)
    pace = np.full(n, np.nan)      # slowest level: the rate at which the flow's bytes complete
    bneck = np.full(n, -1, dtype=np.int64)
    if routes.num_paths:
        if path_level is None:
            with np.errstate(divide="ignore", invalid="ignore"):
                path_level = path_rate / routes.weight
        has = routes.count > 0
        starts = routes.first[has]
        lo = np.minimum.reduceat(path_level, starts)
        hi = np.maximum.reduceat(path_level, starts)
        common = hi <= lo * (1 + _COMMON_LEVEL_RTOL)
        rate[has] = np.where(common, lo, np.add.reduceat(path_rate, starts))
        pace[has] = lo
        slowest = path_level == pace[routes.owner]
        owners, first_slow = _first_of_runs(routes.owner[slowest])
        bneck[owners] = path_bneck[np.flatnonzero(slowest)[first_slow]]
    return rate, pace, bneck


def _completions(flows: Flows, pace: np.ndarray, pathless: np.ndarray) -> np.ndarray:
    """Steady-state completion (s) per flow: ``bytes * 8 / (pace * 1e9)``, 0 for no bytes, NaN
    for a flow without a path (``pathless``)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        completion = flows.bytes * 8.0 / (pace * 1e9)
    completion[flows.bytes == 0] = 0.0
    completion[pathless] = np.nan
    return completion


def flow_completions(routes: Routes, flows: Flows, path_level: np.ndarray) -> np.ndarray:
    """The completions of :func:`per_flow` alone, from the sub-flow levels: the slowest
    sub-flow's level is the flow's pace (one reduction instead of three; the relief re-solves
    read nothing else)."""
    pace = np.full(routes.num_flows, np.nan)
    has = routes.count > 0
    if routes.num_paths:
        pace[has] = np.minimum.reduceat(path_level, routes.first[has])
    return _completions(flows, pace, ~has)


def _first_of_runs(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, return_index=True)``; without its sort when ``values`` never decrease
    (paths are laid out in flow order, so their owners do): 16.8M sub-flows at 4,096 GPUs."""
    if len(values) == 0 or not bool(np.all(values[1:] >= values[:-1])):
        return np.unique(values, return_index=True)
    first = np.flatnonzero(np.concatenate([[True], values[1:] != values[:-1]]))
    return values[first], first


def run_timeline(prep, solved, demand: np.ndarray) -> None:
    """Timeline mode: re-solve at every sub-flow completion (:func:`designer.engine.solve.solver.timeline`),
    setting ``solved.flow_completion_s`` (a flow completes with its last sub-flow) and
    ``solved.timeline`` (per-tier utilization samples and per-pattern delivery at each event)."""
    routes, flows, topo = prep.routes, prep.flows, prep.topology
    tiers = resource_tiers(topo)
    tier_code = np.array([TIERS.index(t) for t in tiers], dtype=np.int64)
    cap = prep.capacity_gbps
    used = np.zeros(len(cap), dtype=bool)
    used[routes.flow_res] = True
    present = [k for k in range(len(TIERS)) if (used & (tier_code == k)).any()]
    samples = {"t_s": [], **{TIERS[k]: {"max": [], "mean": []} for k in present}}
    with np.errstate(divide="ignore", invalid="ignore"):
        inv_cap = np.where(cap > 0, 1.0 / cap, 0.0)

    path_pattern = flows.pattern[routes.owner]
    n_patterns = len(flows.pattern_ids)
    pattern_rates = []          # per event: Gb/s of each pattern, constant until the next event

    def on_event(t_s, active, rates, load):
        util = load * inv_cap
        samples["t_s"].append(float(t_s))
        for k in present:
            u = util[used & (tier_code == k)]
            samples[TIERS[k]]["max"].append(float(u.max()))
            samples[TIERS[k]]["mean"].append(float(u.mean()))
        pattern_rates.append(np.bincount(path_pattern, weights=np.where(active, rates, 0.0), minlength=n_patterns))

    path_bytes = flows.bytes[routes.owner] * routes.share
    res = solver.timeline(cap, routes.flow_ptr, routes.flow_res, path_bytes, demand, weights=routes.weight,
                          on_event=on_event)
    done = np.full(routes.num_flows, np.nan)
    has = routes.count > 0
    if routes.num_paths:
        done[has] = np.maximum.reduceat(res.completion_s, routes.first[has])
    solved.flow_completion_s = done
    t_s = samples.pop("t_s")
    solved.timeline = {"t_s": t_s, "tiers": samples, "events": len(res.events_s),
                       "truncated": bool(res.truncated),
                       "patterns": _delivered(flows.pattern_ids, t_s, pattern_rates)}


def _delivered(pattern_ids: list[str], t_s: list[float], rates: list[np.ndarray]) -> dict:
    """Per pattern, at each event time: its rate (Gb/s, held until the next event) and the bytes
    delivered so far — the integral of its rate, so the curve rises continuously, not in steps
    at flow completions."""
    if not rates:
        return {}
    r = np.vstack(rates)                                   # events × patterns
    dt = np.diff(np.asarray(t_s, dtype=float), prepend=t_s[0] if t_s else 0.0)
    delivered = np.cumsum(np.vstack([np.zeros(r.shape[1]), r[:-1]]) * dt[:, None], axis=0) * 1e9 / 8
    return {pid: {"rate_gbps": r[:, k].tolist(), "delivered_bytes": delivered[:, k].tolist()}
            for k, pid in enumerate(pattern_ids)}
