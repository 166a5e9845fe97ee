"""Monte Carlo of training runs under failures: vectorized over runs and failures, seeded.

The process is the one :mod:`.interval`'s ETTR is the expectation of, so the two can be checked
against each other: interruptions arrive as a Poisson process (exponential gaps); each gap
begins with a restart of ``R`` seconds (the run's start too: the job loads its initial state),
then the job alternates ``tau`` of compute and ``delta`` of checkpoint; at the next failure the
work since the last completed checkpoint is lost. A gap ``g`` thus keeps
``floor((g − R)⁺ / (tau + delta)) · tau`` seconds of training — gaps are independent, so every
gap of every run is computed at once with numpy, no event loop. The run's last gap is cut at
the horizon (its unsaved work is not counted: a bias of under one interval per run).

Degradations (a class whose ``effect`` is ``degrade``) arrive as Poisson counts per run; each
costs ``slowdown × repair`` seconds of the job's throughput. Goodput = ETTR × (1 − that loss
/ horizon), as the analytic plan (:mod:`.plan`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["Process", "monte_carlo"]

_MAX_TIMELINE_EVENTS = 2000


@dataclass(frozen=True)
class Process:
    """The failure process of one job (rates per second, times in seconds).

    ``interrupts``: ``{class: rate}`` of interrupting failures; ``degrades``: ``{class: (rate,
    repair_s, slowdown)}``; ``tau_s``, ``delta_s``, ``restart_s``: interval, checkpoint write and
    restart (seconds).
    """

    interrupts: dict
    degrades: dict
    tau_s: float
    delta_s: float
    restart_s: float


def _gaps(rng, rate: float, horizon_s: float, runs: int) -> np.ndarray:
    """``(runs, k)`` exponential gaps whose cumulative sums all pass the horizon."""
    mean = rate * horizon_s
    k = int(mean + 6.0 * math.sqrt(mean) + 10.0)
    gaps = rng.exponential(1.0 / rate, (runs, k))
    while gaps.sum(axis=1).min() < horizon_s:  # rare (beyond 6 sigma): draw more columns
        gaps = np.concatenate([gaps, rng.exponential(1.0 / rate, (runs, k))], axis=1)
    return gaps


def _useful(p: Process, gaps: np.ndarray, horizon_s: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Useful seconds per run, interruptions per run, and the gaps' start times."""
    ends = np.cumsum(gaps, axis=1)
    starts = ends - gaps
    live = starts < horizon_s
    kept = np.minimum(ends, horizon_s) - starts
    intervals = np.floor(np.maximum(kept - p.restart_s, 0.0) / (p.tau_s + p.delta_s))
    useful = np.where(live, intervals, 0.0).sum(axis=1) * p.tau_s
    return useful, (ends < horizon_s).sum(axis=1), starts


def _degraded(rng, p: Process, horizon_s: float, runs: int) -> np.ndarray:
    """Fraction of each run's throughput lost to degradations."""
    loss = np.zeros(runs)
    for rate, repair_s, slowdown in p.degrades.values():
        if rate > 0.0:
            loss += rng.poisson(rate * horizon_s, runs) * repair_s * slowdown
    return np.minimum(loss / horizon_s, 1.0)


def _spread(values: np.ndarray) -> dict:
    p5, p50, p95 = np.percentile(values, [5.0, 50.0, 95.0])
    return {"mean": float(values.mean()), "std": float(values.std()), "p5": float(p5),
            "p50": float(p50), "p95": float(p95)}


def monte_carlo(p: Process, *, days_per_run: float, runs: int, seed: int, timeline_days: float) -> dict:
    """Simulate ``runs`` independent runs of ``days_per_run`` days each.

    Parameters
    ----------
    p : Process
        Rates and times.
    days_per_run : float
        Length of one run (days), > 0.
    runs : int
        Independent runs (≥ 1); the simulated days are ``runs × days_per_run``.
    seed : int
        Seed of numpy's default generator (the same seed gives the same answer).
    timeline_days : float
        Days of the first run listed as events.

    Returns
    -------
    dict
        ``runs``, ``days_per_run``, ``simulated_days``, ``seed``; ``interruptions_per_day``,
        ``ettr`` and ``goodput``: ``{mean, std, p5, p50, p95}`` over the runs; ``timeline``:
        the first run's ``failures`` (``{t_hours, class}``), ``restarts_done_hours`` and
        ``checkpoints_hours`` up to ``timeline_days`` (at most 2,000 events; ``truncated``).
    """
    rng = np.random.default_rng(seed)
    horizon_s = days_per_run * 86400.0
    rate = sum(p.interrupts.values())
    # no interrupting failure: one gap per run, one restart (the start)
    gaps = _gaps(rng, rate, horizon_s, runs) if rate > 0.0 else np.full((runs, 1), horizon_s)
    useful, failures, starts = _useful(p, gaps, horizon_s)
    ettr_runs = useful / horizon_s
    goodput_runs = ettr_runs * (1.0 - _degraded(rng, p, horizon_s, runs))
    return {"runs": runs, "days_per_run": days_per_run, "simulated_days": runs * days_per_run, "seed": seed,
            "interruptions_per_day": _spread(failures / days_per_run), "ettr": _spread(ettr_runs),
            "goodput": _spread(goodput_runs),
            "timeline": _timeline(rng, p, starts[0], gaps[0], min(timeline_days, days_per_run) * 86400.0)}


def _timeline(rng, p: Process, starts: np.ndarray, gaps: np.ndarray, until_s: float) -> dict:
    """The events of one run up to ``until_s`` (hours), for the page's timeline."""
    names = list(p.interrupts)
    ends = starts + gaps
    hit = ends < until_s
    failures = []
    if names and hit.any():
        weights = np.array([p.interrupts[n] for n in names])
        cls = rng.choice(len(names), size=int(hit.sum()), p=weights / weights.sum())
        failures = [{"t_hours": float(t) / 3600.0, "class": names[c]} for t, c in zip(ends[hit], cls)]
    restarts, checkpoints = [], []
    for start, end in zip(starts[starts < until_s], np.minimum(ends, until_s)[starts < until_s]):
        restarts.append(float(min(start + p.restart_s, end)) / 3600.0)
        n = int(max(end - start - p.restart_s, 0.0) // (p.tau_s + p.delta_s))
        checkpoints += (start + p.restart_s + (p.tau_s + p.delta_s) * np.arange(1, n + 1)).tolist()
        if len(checkpoints) + len(failures) + len(restarts) > _MAX_TIMELINE_EVENTS:
            break
    truncated = len(checkpoints) + len(failures) + len(restarts) > _MAX_TIMELINE_EVENTS
    return {"days": until_s / 86400.0, "failures": failures[:_MAX_TIMELINE_EVENTS],
            "restarts_done_hours": restarts, "truncated": truncated,
            "checkpoints_hours": [t / 3600.0 for t in checkpoints[:_MAX_TIMELINE_EVENTS]]}
