"""The search of a diagnosis: candidate curves, fits and the order they are tried in
(docs/ENGINE.md, "Diagnosis"; :mod:`.diagnose` assembles the answer).

- :class:`Curves` — a run's busbw under a fault: what NCCL initialized on the faulty machine
  would run (:func:`~designer.engine.traffic.collectives.fallback_fields`), memoized per fault,
  run and size; degradations are capacity multipliers, so routes are reused.
- :class:`Search` — which candidates can touch which run (the resources the healthy collective
  crosses, and the hosts the run contains), class representatives, fits.
- :func:`explain` — coarse pass over classes → members of the best classes → every size for the
  best members (members whose curves agree on every run are merged: the runs cannot tell them
  apart) → pairs of the best singles.
"""
from __future__ import annotations

import math
import time

import numpy as np

from designer.engine.analysis.diagnose_candidates import KINDS, Member, classes_of, contains
from designer.engine.analysis.diagnose_input import Run
from designer.engine.analysis.nccl_tests import CURVE_TOLERANCE_PCT, OPS
from designer.engine.analysis.simulate import prepare
from designer.engine.errors import EngineError
from designer.engine.traffic.collectives import fallback_fields
from designer.engine.traffic.failures import failed_resources, resolve_failures
from designer.engine.traffic.scenario import normalize_scenario

__all__ = ["COARSE_SIZES", "FULL_CLASSES", "TOP_MEMBERS", "PAIR_POOL", "Curves", "Search", "coarse_rows",
           "explain", "fit_error_pct", "outside", "routing_changes"]

# Sizes per run of the coarse pass, classes whose members are tried, members simulated at every
# size, and singles combined into pairs: speed knobs (docs/PERFORMANCE.md, "Diagnosis").
COARSE_SIZES = 6
FULL_CLASSES = 10
TOP_MEMBERS = 12
PAIR_POOL = 8


def fit_error_pct(measured: np.ndarray, explained: np.ndarray) -> float:
    """``100 × (e^rms − 1)`` of ``ln(measured / explained)`` (%): inf when a size has no explained
    value (the fault stops the collective, yet the run completed)."""
    if len(measured) == 0:
        return 0.0
    if not np.all(np.isfinite(explained)) or np.any(explained <= 0):
        return math.inf
    rms = math.sqrt(float(np.mean(np.log(measured / explained) ** 2)))
    return 100.0 * math.expm1(rms)


def outside(measured: np.ndarray, explained: np.ndarray) -> np.ndarray:
    """Per size: measured busbw outside ±:data:`CURVE_TOLERANCE_PCT` of the explained one."""
    tol = CURVE_TOLERANCE_PCT / 100.0
    with np.errstate(invalid="ignore"):
        inside = (measured >= explained * (1 - tol)) & (measured <= explained * (1 + tol))
    return ~inside


def routing_changes(members) -> dict:
    """The routing options the members change: ``gdr_off`` (hosts), ``nic_policy``."""
    out: dict = {}
    for m in members:
        for name, value in m.routing:
            if name == "gdr_off":
                out.setdefault("gdr_off", []).append(value)
            else:
                out[name] = value
    return out


def coarse_rows(run: Run, healthy: np.ndarray) -> np.ndarray:
    """The sizes that say most about a fault: farthest from the healthy curve, the largest and a
    middle one (row indices, at most :data:`COARSE_SIZES`)."""
    n = len(run.sizes)
    far = np.argsort(-np.abs(np.log(run.busbw / healthy)), kind="stable")[:max(COARSE_SIZES - 2, 1)]
    return np.unique(np.concatenate([far, [n - 1, n // 2]])).astype(np.int64)


class Curves:
    """Explained busbw of a run's sizes under a fault, memoized per (fault, run, size)."""

    def __init__(self, topo, op: str, knobs: dict, runs: list[Run]):
        self.topo, self.op, self.knobs, self.runs = topo, op, knobs, runs
        self.capacity = topo.resource_capacity_gbps()
        self.patterns: dict[tuple, tuple] = {}
        self.memo: dict[tuple, float] = {}
        self.evaluations = 0

    def scenario(self, r: int, size: int) -> dict:
        """The healthy one-pattern scenario of run ``r`` at ``size`` bytes."""
        pattern = {"id": "nccl", "kind": OPS[self.op], "participants": {"ids": self.runs[r].gpus}, "bytes": size}
        for knob in ("algorithm", "protocol", "channels"):
            if self.knobs[knob] not in (None, "auto"):
                pattern[knob] = self.knobs[knob]
        return {"topology": self.topo, "workload": [pattern], "routing": {"nic_policy": self.knobs["nic_policy"]},
                "options": {"max_flows_listed": 0}}

    def _pattern(self, r: int, size: int) -> tuple:
        key = (r, size)
        if key not in self.patterns:
            sc = normalize_scenario(self.scenario(r, size))
            self.patterns[key] = (sc.patterns[0], dict(sc.routing))
        return self.patterns[key]

    def state(self, members: tuple) -> tuple:
        """(failed or None, capacities or None, routing changes) of members applied together."""
        failures = [f for m in members for f in m.failures]
        failed, mult = resolve_failures(self.topo, failures) if failures else (None, None)
        if failed is not None and not (failed.nodes or failed.links):
            failed = None
        return failed, (self.capacity * mult if mult is not None else None), routing_changes(members)

    def curve(self, key, members: tuple, r: int, rows: np.ndarray) -> np.ndarray:
        """busbw (GB/s) of run ``r`` at row indices ``rows`` with ``members`` failed (nan: it does
        not run); ``key`` names the fault in the memo."""
        state = None
        out = np.empty(len(rows))
        for k, j in enumerate(np.asarray(rows).tolist()):
            size = self.runs[r].sizes[j]
            memo_key = (key, r, size)
            if memo_key not in self.memo:
                state = state or self.state(members)
                self.memo[memo_key] = self._evaluate(r, size, state)
            out[k] = self.memo[memo_key]
        return out

    def _evaluate(self, r: int, size: int, state: tuple) -> float:
        pattern, routing = self._pattern(r, size)
        failed, capacity, changes = state
        self.evaluations += 1
        try:
            fb = fallback_fields(self.topo, pattern, {**routing, **changes}, failed, capacity)
        except EngineError:
            return math.nan
        return float(fb["busbw_gbs"]) if fb.get("busbw_gbs") else math.nan


class Search:
    """Candidates against runs: relevance, class representatives, curves and fits."""

    def __init__(self, curves: Curves, runs: list[Run], healthy: list[np.ndarray], members: list[Member],
                 rows: list[np.ndarray]):
        self.curves, self.runs, self.healthy = curves, runs, healthy
        self.unhealthy = [bool(outside(run.busbw, h).any()) for run, h in zip(runs, healthy)]
        self.full = [np.arange(len(r.sizes), dtype=np.int64) for r in runs]
        used = [self._used(r, rows[r]) for r in range(len(runs))]
        self.relevant = {m.label: tuple(self._touches(m, run, u) for run, u in zip(runs, used)) for m in members}
        self.members = [m for m in members if any(self.relevant[m.label])]
        self.classes = classes_of(self.members)

    def _used(self, r: int, rows: np.ndarray) -> np.ndarray:
        """Resources the healthy collective of run ``r`` crosses at any of ``rows``' sizes (a
        fault elsewhere cannot change its curve: degradations never move a route, and NCCL
        re-initialized keeps the algorithm that was fastest when only unused parts got worse)."""
        used = np.zeros(self.curves.topo.num_resources, dtype=bool)
        for j in np.asarray(rows).tolist():
            prep = prepare(self.curves.scenario(r, self.runs[r].sizes[j]))
            used[prep.routes.flow_res] = True
        return used

    def _touches(self, m: Member, run: Run, used: np.ndarray) -> bool:
        if not contains(m, run.hosts):
            return False
        if m.routing:
            return True
        failed, mult = resolve_failures(self.curves.topo, list(m.failures))
        hit = failed_resources(self.curves.topo, failed) if (failed.nodes or failed.links) else np.zeros(0, np.int64)
        return bool(used[hit].any() or used[mult != 1.0].any())

    def member_curves(self, m: Member, rows: list[np.ndarray]) -> list[np.ndarray | None]:
        """Per run: the member's curve at ``rows`` (None where it cannot touch the run)."""
        return [self.curves.curve(("m", m.label), (m,), r, rows[r]) if hit else None
                for r, hit in enumerate(self.relevant[m.label])]

    def class_curves(self, key: tuple, rows: list[np.ndarray]) -> list[np.ndarray | None]:
        """Per run: a representative's curve (the class's first member that touches the run)."""
        out = []
        for r in range(len(self.runs)):
            rep = next((m for m in self.classes[key] if self.relevant[m.label][r]), None)
            out.append(None if rep is None else self.curves.curve(("m", rep.label), (rep,), r, rows[r]))
        return out

    def fit(self, per_run: list[np.ndarray | None], rows: list[np.ndarray]) -> float:
        measured = [self.runs[r].busbw[rows[r]] for r in range(len(self.runs))]
        explained = [c if c is not None else self.healthy[r][rows[r]] for r, c in enumerate(per_run)]
        return fit_error_pct(np.concatenate(measured), np.concatenate(explained))

    def outside_count(self, curves: list[np.ndarray | None]) -> int:
        return sum(int(outside(run.busbw, c if c is not None else self.healthy[r]).sum())
                   for r, (run, c) in enumerate(zip(self.runs, curves)))


def _progress(progress, fraction: float, message: str) -> None:
    if progress is not None:
        progress(float(min(max(fraction, 0.0), 1.0)), message)


def _rank_classes(search: Search, coarse: list[np.ndarray], progress) -> list[list[tuple]]:
    """The best classes on the coarse sizes, scored by a representative: the classes of each of
    the :data:`FULL_CLASSES` best distinct curves, best first (a NIC of any rail, when nothing
    tells the rails apart, is one curve: its classes are *siblings*)."""
    # Only the runs outside the band score classes here: a class that would also spoil a healthy
    # run pays for it when its members are fitted on every run.
    off = [rows if bad else rows[:0] for rows, bad in zip(coarse, search.unhealthy)]
    scored, keys, clock = [], list(search.classes), time.perf_counter()
    for k, key in enumerate(keys):
        curves = search.class_curves(key, off)
        scored.append((search.fit(curves, off), KINDS.index(key[0]), k, key, (key[:2], _signature(curves))))
        if time.perf_counter() - clock > 0.5 or k == len(keys) - 1:
            clock = time.perf_counter()
            _progress(progress, 0.05 + 0.45 * (k + 1) / len(keys), f"candidate class {k + 1}/{len(keys)}: {key[0]}")
    scored.sort(key=lambda s: s[:3])
    chosen: dict[tuple, list[tuple]] = {}
    for s in scored:
        if s[4] in chosen or len(chosen) < FULL_CLASSES:
            chosen.setdefault(s[4], []).append(s[3])
    return list(chosen.values())


def _signature(curves: list[np.ndarray | None]) -> tuple:
    """Curves rounded to 9 significant digits: members with equal signatures are indistinguishable."""
    return tuple(None if c is None else tuple(float(f"{v:.9g}") for v in c) for c in curves)


def _member_groups(search: Search, ranked: list[list[tuple]], coarse: list[np.ndarray], progress) -> list[dict]:
    """Members of the best classes on the coarse sizes, best first. Only the first class of each
    set of siblings is simulated member by member; a sibling's member joins the group of the
    first class's member on the same hosts (the classes agree on every run, so their members
    do). Members whose curves agree on every run are one group: the runs cannot tell them apart."""
    groups: dict[tuple, dict] = {}

    def add(m: Member) -> dict:
        curves = search.member_curves(m, coarse)
        sig = (m.key[:2], _signature(curves))
        if sig not in groups:
            groups[sig] = {"members": [], "coarse_fit": search.fit(curves, coarse), "coarse": curves}
        groups[sig]["members"].append(m)
        return groups[sig]

    for n, siblings in enumerate(ranked):
        placed = {}
        for m in search.classes[siblings[0]]:
            placed.setdefault(m.hosts, add(m))
        for key in siblings[1:]:
            for m in search.classes[key]:
                # A sibling's member on hosts no lead member sits on (a switch link) is tried itself.
                if m.hosts in placed:
                    placed[m.hosts]["members"].append(m)
                else:
                    add(m)
        _progress(progress, 0.5 + 0.25 * (n + 1) / len(ranked), f"candidates like {siblings[0][0]}")
    return sorted(groups.values(), key=lambda g: (round(g["coarse_fit"], 9), KINDS.index(g["members"][0].kind)))


def _full(search: Search, groups: list[dict]) -> list[dict]:
    """``groups`` simulated at every size, with their fit."""
    out = []
    for g in groups:
        curves = search.member_curves(g["members"][0], search.full)
        out.append({**g, "fit": search.fit(curves, search.full), "curves": curves})
    return out


def _by_fit(entries: list[dict]) -> list[dict]:
    return sorted(entries, key=lambda e: (round(e["fit"], 9), KINDS.index(e["members"][0].kind)))


def _complements(search: Search, best: dict, groups: list[dict], coarse: list[np.ndarray]) -> list[dict]:
    """The groups that best explain what ``best`` leaves outside the band: fitted on the runs
    it does not bring inside (coarse curves, no new simulation), best first."""
    left = [bool(outside(run.busbw, c if c is not None else search.healthy[r]).any())
            for r, (run, c) in enumerate(zip(search.runs, best["curves"]))]
    if not any(left):
        return []
    rows = [c if keep else c[:0] for c, keep in zip(coarse, left)]
    scored = [(search.fit([c[:len(rows[r])] if c is not None and left[r] else None
                           for r, c in enumerate(g["coarse"])], rows), k) for k, g in enumerate(groups)]
    return [groups[k] for _, k in sorted(scored)]


def _pairs(search: Search, singles: list[dict], pool: list[dict], coarse: list[np.ndarray], progress) -> list[dict]:
    """Pairs (a best single, a member of ``pool``) that fit better than both and leave fewer
    sizes outside the band than the best single (a second fault must explain something the
    first does not)."""
    if not singles:
        return []
    best_outside = search.outside_count(singles[0]["curves"])
    todo = [(a, b) for a in singles[:PAIR_POOL] for b in pool if b is not a]
    out, seen = [], set()
    for n, (a, b) in enumerate(todo):
        both = tuple(sorted((a["members"][0], b["members"][0]), key=lambda m: m.label))
        key = ("pair", both[0].label, both[1].label)
        _progress(progress, 0.8 + 0.2 * (n + 1) / len(todo), f"pair {n + 1}/{len(todo)}")
        if key in seen:     # (a, b) and (b, a) when both are among the best singles
            continue
        seen.add(key)
        hits = [x or y for x, y in zip(search.relevant[both[0].label], search.relevant[both[1].label])]
        rough = [search.curves.curve(key, both, r, coarse[r]) if hit else None for r, hit in enumerate(hits)]
        if search.fit(rough, coarse) >= min(a["coarse_fit"], b["coarse_fit"]):
            continue
        curves = [search.curves.curve(key, both, r, search.full[r]) if hit else None for r, hit in enumerate(hits)]
        fit = search.fit(curves, search.full)
        if fit < min(a["fit"], b["fit"]) and search.outside_count(curves) < best_outside:
            out.append({"pair": (a, b), "fit": fit, "curves": curves})
    return out


def explain(search: Search, coarse: list[np.ndarray], healthy_fit: float, progress) -> tuple[list, list]:
    """(singles, pairs) that fit better than the healthy curve, each sorted by fit.

    The pairs combine one of the best singles with one of the best singles or of the groups
    that best explain the runs the best single leaves outside the band: two faults seen by
    different runs are each a poor single, and would not be among the best singles."""
    ranked = _rank_classes(search, coarse, progress)
    groups = _member_groups(search, ranked, coarse, progress)
    _progress(progress, 0.75, "simulating the best candidates at every size")
    tried = _by_fit(_full(search, groups[:TOP_MEMBERS]))
    if not tried:
        return [], []
    extra = [g for g in _complements(search, tried[0], groups[TOP_MEMBERS:], coarse)[:PAIR_POOL]]
    tried = _merged(_by_fit(tried + _full(search, extra)))
    singles = [e for e in tried if e["fit"] < healthy_fit]
    complements = _complements(search, tried[0], tried, coarse)[:PAIR_POOL]
    pool = list({id(e): e for e in tried[:PAIR_POOL] + complements}.values())
    return singles, _pairs(search, tried, pool, coarse, progress)


def _merged(entries: list[dict]) -> list[dict]:
    """Entries with the same curve on every run merged into the first (in fit and kind order),
    the others kept under ``equally``: the measurements cannot tell those faults apart."""
    out: dict[tuple, dict] = {}
    for e in entries:
        sig = _signature(e["curves"])
        if sig in out:
            out[sig]["equally"].append(e)
        else:
            out[sig] = {**e, "equally": []}
    return list(out.values())
