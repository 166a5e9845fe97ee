"""Diagnosis: measured nccl-tests curves in, the broken part named — ranked explanations
(docs/ENGINE.md, "Diagnosis"; result shape in docs/FORMATS.md, "Diagnosis").

1. **Expected band.** Each run's healthy curve is :func:`~designer.engine.analysis.nccl_tests.predict_sweep`
   at the run's sizes and ranks; a size is outside when its busbw is off by more than
   :data:`~designer.engine.analysis.nccl_tests.CURVE_TOLERANCE_PCT` (the bandwidth tolerance
   docs/FIDELITY.md judges predictions by). A run with no size outside is healthy.
2. **Candidates** are enumerated from the design (:mod:`.diagnose_candidates`): NICs degraded or
   down, PCIe links trained lower, NVLinks down, fabric links down or degraded, GPUDirect RDMA
   off, PXN off — grouped into symmetry classes.
3. **Fit.** A candidate's curve is what NCCL initialized on the faulty machine would run
   (:func:`~designer.engine.traffic.collectives.fallback_fields`: algorithm and protocol chosen on
   the faulty topology, degradations as capacity multipliers, routes reused through the
   router's memo). Its fit error is the root mean square of ``ln(measured / explained)`` over
   every size of every run, shown as a percentage (``100 × (e^rms − 1)``).
4. **Search and localization** (:mod:`.diagnose_search`). A coarse pass scores every class by a
   representative on the few sizes that say most (farthest from the healthy curve, the largest,
   a middle one); the members of the best classes are then simulated on every run that contains
   them (a member leaves a run that does not contain it on the healthy curve), so runs over
   subsets (a node pair, a rail, a rack) tell members apart; members and faults whose curves
   agree on every run are reported together, never split by a guess.
5. **Pairs.** The best singles, and the candidates that best explain what the best single leaves
   unexplained, are combined two at a time; a pair is listed when it fits better than both of its
   singles and leaves fewer sizes outside the band than the best single.
"""
from __future__ import annotations

import time

import numpy as np

from designer.engine.analysis.diagnose_candidates import classes_of, enumerate_members
from designer.engine.analysis.diagnose_input import Run, check_options, check_runs, runs_from_logs
from designer.engine.analysis.diagnose_search import (COARSE_SIZES, FULL_CLASSES, PAIR_POOL, TOP_MEMBERS, Curves,
                                                      Search, coarse_rows, explain, fit_error_pct, outside,
                                                      routing_changes)
from designer.engine.analysis.nccl_tests import CURVE_TOLERANCE_PCT, compile_topology, predict_sweep
from designer.engine.errors import EngineError, InvalidScenario, Problem

__all__ = ["diagnose", "diagnosis_plan", "runs_from_logs", "fit_error_pct", "TOLERANCE_PCT"]

#: Band half-width (%) around the healthy busbw: docs/FIDELITY.md's bandwidth tolerance.
TOLERANCE_PCT = CURVE_TOLERANCE_PCT


# ============================================================================ expected band
def _expected(topo, op: str, dtype: str, knobs: dict, run: Run) -> np.ndarray:
    """The healthy busbw (GB/s) at the run's sizes: the nccl-tests prediction itself."""
    try:
        rows = predict_sweep(topo, op, sizes=run.sizes, participants={"ids": run.gpus}, dtype=dtype,
                             routing={"nic_policy": knobs["nic_policy"]}, algorithm=knobs["algorithm"],
                             protocol=knobs["protocol"], channels=knobs["channels"])
    except EngineError as exc:
        raise type(exc)(exc.message, [Problem(f"options.{p.path}" if p.path in ("algorithm", "protocol", "channels")
                                              else p.path, p.message) for p in exc.problems]) from None
    by_size = {r.get("requested_bytes", r["size_bytes"]): r["busbw_gbs"] for r in rows}
    return np.array([by_size[s] for s in run.sizes], dtype=np.float64)


def _run_entry(run: Run, healthy: np.ndarray) -> dict:
    out = outside(run.busbw, healthy)
    ratios = run.busbw / healthy
    worst = int(np.argmax(np.abs(np.log(ratios))))
    return {"label": run.label, "hosts": sorted(run.hosts) if run.hosts is not None else None,
            "healthy": not bool(out.any()), "outside": [run.sizes[j] for j in np.flatnonzero(out)],
            "worst_ratio": float(ratios[worst]),
            "rows": [{"bytes": s, "busbw_gbps": float(b)} for s, b in zip(run.sizes, run.busbw)]}


# ============================================================================ the answer
def _curve_rows(run: Run, curve: np.ndarray) -> list[dict]:
    return [{"bytes": s, "busbw_gbps": float(b) if np.isfinite(b) else None} for s, b in zip(run.sizes, curve)]


def _explained_runs(search: Search, curves: list, unhealthy: list[bool]) -> list[str]:
    """Labels of the runs outside the healthy band that the explanation brings inside it."""
    return [run.label for r, (run, c) in enumerate(zip(search.runs, curves))
            if unhealthy[r] and c is not None and not outside(run.busbw, c).any()]


def _shown_curve(search: Search, curves: list, unhealthy: list[bool]) -> list[dict]:
    """The explained curve of the first run it changes, preferring a run outside the band."""
    order = sorted(range(len(curves)), key=lambda r: (not unhealthy[r], r))
    r = next((r for r in order if curves[r] is not None), 0)
    return _curve_rows(search.runs[r], curves[r] if curves[r] is not None else search.healthy[r])


def _single_entry(search: Search, e: dict, unhealthy: list[bool]) -> dict:
    """One explanation: a member group, and the groups of other kinds whose curves are the same
    on every run (``equally``: the measurements cannot tell those faults apart either)."""
    members, equals = e["members"], e["equally"]
    first = members[0]
    label = first.label
    if len(members) > 1:
        label += f" (or the same part in {len(members) - 1} other place(s) the runs cannot tell apart)"
    if equals:
        shown = "; ".join(g["members"][0].label for g in equals[:3])
        label += f"; equally well: {shown}" + (f" and {len(equals) - 3} more" if len(equals) > 3 else "")
    return {"kind": first.kind, "target": first.target, "label": label, "failures": [dict(f) for f in first.failures],
            "routing": routing_changes([first]),
            "members": [m.target for g in [e] + equals for m in g["members"]],
            "equally": [{"kind": g["members"][0].kind, "target": g["members"][0].target,
                         "label": g["members"][0].label} for g in equals],
            "fit_error_pct": e["fit"], "curve": _shown_curve(search, e["curves"], unhealthy),
            "runs": _explained_runs(search, e["curves"], unhealthy)}


def _pair_entry(search: Search, p: dict, unhealthy: list[bool]) -> dict:
    """Two faults at once; ``members`` holds every part either could be (their groups and the
    faults that fit equally)."""
    a, b = (x["members"][0] for x in p["pair"])
    members = [m.target for x in p["pair"] for g in [x] + x["equally"] for m in g["members"]]
    return {"kind": f"{a.kind}+{b.kind}", "target": f"{a.target} + {b.target}", "label": f"{a.label} and {b.label}",
            "failures": [dict(f) for f in a.failures + b.failures], "routing": routing_changes([a, b]),
            "members": list(dict.fromkeys(members)), "equally": [], "fit_error_pct": p["fit"],
            "curve": _shown_curve(search, p["curves"], unhealthy),
            "runs": _explained_runs(search, p["curves"], unhealthy)}


def _summary(run_entries: list[dict], explanations: list[dict], healthy_fit: float) -> str:
    n = len(run_entries)
    off = sum(not r["healthy"] for r in run_entries)
    if not off:
        return (f"Healthy: {'the run is' if n == 1 else f'all {n} runs are'} within ±{TOLERANCE_PCT:g} % of the "
                "healthy prediction at every size; nothing to explain.")
    lead = f"{off} of {n} run(s) fall outside ±{TOLERANCE_PCT:g} % of the healthy prediction"
    if not explanations:
        return f"{lead}; no candidate fault of the design explains them better than the healthy design."
    best = explanations[0]
    return (f"{lead}; the best explanation is {best['label']} (fit error {best['fit_error_pct']:.1f} % against "
            f"{healthy_fit:.1f} % for the healthy design).")


def _progress(progress, fraction: float, message: str) -> None:
    if progress is not None:
        progress(float(min(max(fraction, 0.0), 1.0)), message)


def _prepare(topology, runs, op: str, options, dtype: str, top=10):
    knobs, problems = check_options(op, options)
    if not isinstance(top, int) or isinstance(top, bool) or top < 1:
        problems.append(Problem("top", "must be an integer >= 1"))
    if problems:
        raise InvalidScenario("bad diagnosis options", problems)
    topo = compile_topology(topology)
    return topo, knobs, check_runs(topo, runs, op)


def diagnose(topology, runs, *, op: str = "all_reduce", dtype: str = "float", options=None, progress=None,
             top: int = 10) -> dict:
    """Explain measured nccl-tests curves by faults of the design, best fit first.

    Parameters
    ----------
    topology : Topology or dict
        The healthy design: a compiled topology or a topology document
        (:func:`~designer.engine.analysis.nccl_tests.compile_topology`).
    runs : list of dict
        ``{"label", "hosts", "gpus", "rows": [{"bytes", "busbw_gbps", "time_us"}]}`` per measured
        run; ``hosts`` / ``gpus`` the subset it ran on (None: the whole design); busbw in GB/s,
        time in µs. :func:`runs_from_logs` makes them from parsed logs.
    op : str
        nccl-tests op (``all_reduce``, ``all_gather``, ``reduce_scatter``, ``alltoall``).
    dtype : str
        Element type of the runs (nccl-tests ``-d``).
    options : dict, optional
        The runs' NCCL settings: ``algorithm``, ``protocol``, ``channels``, ``nic_policy``.
    progress : callable, optional
        ``progress(fraction, message)`` as candidates are evaluated.
    top : int
        Explanations returned at most.

    Returns
    -------
    dict
        ``op``, ``ranks``, ``tolerance_pct``, ``expected`` (first run: ``bytes``, ``busbw_gbps``,
        ``low_gbps``, ``high_gbps``), ``runs`` (``label``, ``hosts``, ``healthy``, ``outside``,
        ``worst_ratio``, ``rows``, ``expected``), ``healthy``, ``explanations`` (``rank``, ``kind``,
        ``target``, ``label``, ``failures``, ``routing``, ``members``, ``fit_error_pct``, ``curve``,
        ``runs``), ``healthy_fit_error_pct``, ``stats`` and ``summary`` (docs/FORMATS.md, "Diagnosis").

    Raises
    ------
    InvalidScenario, InvalidTopology
        Located problems: no runs, sizes not increasing, a negative busbw, a host not in the
        design, an op or rank count that does not match, bad options.
    """
    _progress(progress, 0.0, "checking the runs")
    topo, knobs, checked = _prepare(topology, runs, op, options, dtype, top)
    healthy = [_expected(topo, op, dtype, knobs, run) for run in checked]
    run_entries = [_run_entry(run, h) for run, h in zip(checked, healthy)]
    for entry, h in zip(run_entries, healthy):
        entry["expected"] = _band(entry["rows"], h)
    out = {"op": op, "ranks": len(checked[0].gpus), "tolerance_pct": TOLERANCE_PCT,
           "expected": run_entries[0]["expected"], "runs": run_entries,
           "healthy": all(r["healthy"] for r in run_entries), "explanations": []}
    coarse = [coarse_rows(run, h) for run, h in zip(checked, healthy)]
    curves = Curves(topo, op, knobs, checked)
    healthy_fit = fit_error_pct(np.concatenate([r.busbw for r in checked]), np.concatenate(healthy))
    out["healthy_fit_error_pct"] = healthy_fit
    if out["healthy"]:
        out["stats"] = {"candidates": 0, "classes": 0, "simulated": 0}
    else:
        _progress(progress, 0.02, "finding the parts each run crosses")
        search = Search(curves, checked, healthy, enumerate_members(topo, nic_policy=knobs["nic_policy"]), coarse)
        out["explanations"] = _explain(search, coarse, healthy_fit, [not r["healthy"] for r in run_entries],
                                       progress, top)
        out["stats"] = {"candidates": len(search.members), "classes": len(search.classes),
                        "simulated": curves.evaluations}
    out["summary"] = _summary(run_entries, out["explanations"], healthy_fit)
    _progress(progress, 1.0, "done")
    return out


def _band(rows: list[dict], healthy: np.ndarray) -> list[dict]:
    tol = TOLERANCE_PCT / 100.0
    return [{"bytes": r["bytes"], "busbw_gbps": float(h), "low_gbps": float(h * (1 - tol)),
             "high_gbps": float(h * (1 + tol))} for r, h in zip(rows, healthy)]


def _explain(search: Search, coarse: list, healthy_fit: float, unhealthy: list[bool], progress, top: int) -> list:
    singles, pairs = explain(search, coarse, healthy_fit, progress)
    entries = ([(e["fit"], k, _single_entry(search, e, unhealthy)) for k, e in enumerate(singles)]
               + [(p["fit"], len(singles) + k, _pair_entry(search, p, unhealthy)) for k, p in enumerate(pairs)])
    entries.sort(key=lambda x: (round(x[0], 9), x[1]))
    out = [e[2] for e in entries[:top]]
    for rank, e in enumerate(out, 1):
        e["rank"] = rank
    return out


def diagnosis_plan(topology, runs, *, op: str = "all_reduce", options=None) -> dict:
    """What :func:`diagnose` will do, cheaply: checks the input (the same located errors) and
    times one prediction to estimate the run.

    Returns
    -------
    dict
        ``candidates`` (candidate faults), ``classes``, ``sizes`` (measured sizes over all
        runs), ``runs``, ``estimate_s`` (seconds of one core, an upper estimate: every class's
        members tried, before the parts the runs do not cross are set aside).
    """
    topo, knobs, checked = _prepare(topology, runs, op, options, "float")
    members = enumerate_members(topo, nic_policy=knobs["nic_policy"])
    n_classes = len(classes_of(members))
    sizes = sum(len(r.sizes) for r in checked)
    coarse = sum(min(len(r.sizes), COARSE_SIZES) for r in checked)
    curves = Curves(topo, op, knobs, checked)
    clock = time.perf_counter()
    curves.curve(("plan",), (), 0, np.array([len(checked[0].sizes) - 1]))
    one = time.perf_counter() - clock
    pairs = PAIR_POOL * (PAIR_POOL - 1) // 2
    per_class = max((len(m) for m in classes_of(members).values()), default=0)
    evaluations = ((n_classes + FULL_CLASSES * per_class + pairs) * coarse
                   + (TOP_MEMBERS + PAIR_POOL) * sizes)
    return {"candidates": len(members), "classes": n_classes, "sizes": sizes, "runs": len(checked),
            "estimate_s": round(evaluations * one, 3)}
