"""Goodput plan: failure rates × the design → interruptions, blast radius, checkpoint interval.

:func:`plan_goodput` is the one entry point (CLI ``goodput``, and the bridge). From the design's
units per class (:mod:`.counts`) and the rates (:mod:`.facts`, overridden per class and per
catalog model), it gives failures per day in the cluster and under the job, the job's mean time
to interruption, each class's share and blast radius, the checkpoint's write and read times on
the storage fabric (:mod:`.checkpoint`), Young's and Daly's intervals and the ETTR
(:mod:`.interval`), the spares each class needs, and a Monte Carlo of runs (:mod:`.montecarlo`).
The model and its assumptions: docs/ENGINE.md, "Goodput".
"""
from __future__ import annotations

import math

from designer.engine.analysis.goodput.blast import SIMULATED, measure_blast
from designer.engine.analysis.goodput.checkpoint import checkpoint_times
from designer.engine.analysis.goodput.counts import design_units
from designer.engine.analysis.goodput.facts import CLASSES, REPAIR_HOURS
from designer.engine.analysis.goodput.interval import (daly_interval_s, ettr, ettr_curve, poisson_quantile,
                                                       young_interval_s)
from designer.engine.analysis.goodput.montecarlo import Process, monte_carlo
from designer.engine.analysis.goodput.request import check_request
from designer.engine.errors import LimitExceeded, Problem

__all__ = ["GOODPUT_FORMAT", "MAX_SIMULATED_FAILURES", "plan_goodput", "class_rates"]

GOODPUT_FORMAT = "fabricscope.goodput/1"
_STRAGGLER_SLOWDOWN = 0.10  # assumption: a straggler GPU holds every synchronous step back 10 %


def _afr(cls: str, model: str, req: dict) -> float:
    """Failures per unit-year of one model's units: per-model, else per-class, else default."""
    for block in ((req["models"].get(model) or {}).get(cls), req["rates"].get(cls)):
        if block and block.get("afr") is not None:
            return float(block["afr"])
    return CLASSES[cls].afr


def _setting(cls: str, key: str, req: dict, default):
    value = (req["rates"].get(cls) or {}).get(key)
    return default if value is None else value


def _per_day(units, cls: str, req: dict) -> float:
    return sum(n * _afr(cls, model, req) for model, n in units.items()) / 365.0


def _stretch_loss(fraction: float, stretch: float) -> float:
    """Throughput lost when communication (``fraction`` of a step, exposed) takes ``stretch``
    times longer: ``f (g − 1) / (1 + f (g − 1))``; 1 when it cannot run at all."""
    if not math.isfinite(stretch):
        return 1.0
    extra = fraction * (stretch - 1.0)
    return extra / (1.0 + extra)


def _default_slowdown(cls: str, units, req: dict) -> float:
    """A degradation's throughput loss from the design: a fabric cable of a leaf with ``u``
    uplinks leaves ``(u−1)/u`` of them (stretch ``u/(u−1)``), a spine or core switch of ``S``
    likewise, a NIC at half rate or half an NVLink domain's paths stretch 2×."""
    f = req["job"]["exposed_communication_fraction"]
    if cls == "gpu_straggler":
        return _STRAGGLER_SLOWDOWN
    if cls in ("nic_half_rate", "nvlink_partial"):
        return _stretch_loss(f, 2.0)
    n = units.leaf_uplinks if cls == "fabric_link" else units.job_spines
    return _stretch_loss(f, n / (n - 1.0) if n > 1.0 else math.inf)


def _measured(cls: str, job_units: int, measured: dict | None) -> dict | None:
    """The class's simulated blast radius; a class whose units the job's traffic never crosses
    was measured too: its failures cost the job nothing (``slowdown`` 0)."""
    if measured is None or cls not in SIMULATED or not job_units:
        return None
    return measured["classes"].get(cls) or {"source": "simulated", "effect": "degrade", "slowdown": 0.0,
                                            "completion_ratio": 1.0, "failures": [], "sampled": 0, "broken": 0}


def _effect(cls: str, fc, req: dict, units, sim: dict | None) -> tuple[str, float | None, dict]:
    """Effect, slowdown and the blast's ``source`` block: given in the plan, else simulated,
    else the rule (:func:`_default_slowdown`)."""
    given_effect, given_slowdown = _setting(cls, "effect", req, None), _setting(cls, "slowdown", req, None)
    if sim is not None and given_effect is None and given_slowdown is None:
        detail = {k: sim[k] for k in ("completion_ratio", "failures", "sampled", "broken")}
        return sim["effect"], sim["slowdown"], {"source": "simulated", **detail}
    effect = given_effect or (sim["effect"] if sim is not None else fc.effect)
    slowdown = given_slowdown
    if slowdown is None and effect == "degrade":
        slowdown = sim["slowdown"] if sim is not None and sim["effect"] == "degrade" else _default_slowdown(cls, units, req)
    return effect, slowdown, {"source": "given" if given_effect or given_slowdown is not None else "rule"}


def class_rates(req: dict, units, measured: dict | None = None) -> list[dict]:
    """One row per class: units, rates per day (cluster, job), effect, repair, slowdown, and
    the ``blast`` block's ``source`` (``simulated`` from ``measured``, ``rule`` or ``given``)."""
    rows = []
    for cls, fc in CLASSES.items():
        cluster_units, job_units = sum(units.cluster[cls].values()), sum(units.job[cls].values())
        effect, slowdown, blast = _effect(cls, fc, req, units, _measured(cls, job_units, measured))
        rows.append({"class": cls, "unit": fc.unit, "effect": effect, "blast": blast, "units": cluster_units,
                     "job_units": job_units, "afr": _per_day(units.cluster[cls], cls, req) * 365.0 / cluster_units
                     if cluster_units else _afr(cls, "", req),
                     "repair_hours": float(_setting(cls, "repair_hours", req, REPAIR_HOURS[cls])),
                     "slowdown": slowdown, "source": fc.source,
                     "cluster_per_day": _per_day(units.cluster[cls], cls, req),
                     "job_per_day": _per_day(units.job[cls], cls, req)})
    return rows


def _shares(rows: list[dict]) -> None:
    for effect in ("interrupt", "degrade"):
        total = sum(r["job_per_day"] for r in rows if r["effect"] == effect)
        for r in rows:
            if r["effect"] == effect:
                r["share"] = r["job_per_day"] / total if total else 0.0


def _blast(rows: list[dict], job_gpus: int, restart_s: float, tau_s: float, delta_s: float) -> None:
    """GPU-hours a single failure costs the job: an interruption stops every GPU of the job for
    the restart and, on average, half an interval of lost work (first order); a degradation
    costs ``slowdown × repair``."""
    for r in rows:
        if r["effect"] == "interrupt":
            hours = (restart_s + (tau_s + delta_s) / 2.0) / 3600.0
            r["blast"].update(gpus_stopped=job_gpus, gpu_hours_lost_per_failure=job_gpus * hours)
        else:
            r["blast"].update(gpus_stopped=0, gpu_hours_lost_per_failure=job_gpus * r["slowdown"] * r["repair_hours"])


def _spares(rows: list[dict], availability: float) -> None:
    """Spare units per class: Poisson quantile of the cluster's failures during one repair."""
    for r in rows:
        mean = r["cluster_per_day"] * r["repair_hours"] / 24.0
        r["spares"] = {"failures_in_repair": mean, "spares": poisson_quantile(mean, availability)}


def _intervals(ck: dict, req: dict, mttf_s: float) -> dict:
    delta, restart = ck["write_s"], ck["restart_s"]
    young = young_interval_s(delta, mttf_s) if math.isfinite(mttf_s) else None
    daly = daly_interval_s(delta, mttf_s) if math.isfinite(mttf_s) else None
    given = req["checkpoint"].get("interval_s")
    tau = float(given) if given is not None else (daly if daly is not None else 86400.0)
    out = {"young_interval_s": young, "daly_interval_s": daly, "interval_s": tau,
           "interval_source": "given" if given is not None else ("daly" if daly is not None else "no failure: one a day"),
           "ettr": ettr(tau, delta, restart, mttf_s),
           "ettr_young": ettr(young, delta, restart, mttf_s) if young else None,
           "ettr_daly": ettr(daly, delta, restart, mttf_s) if daly else None}
    out["curve"] = ettr_curve(daly or tau, delta, restart, mttf_s)
    return out


def plan_goodput(request) -> dict:
    """Goodput of one job on a design under failures (``fabricscope.goodput/1``).

    Parameters
    ----------
    request : dict
        A ``fabricscope.goodput-plan/1`` object (docs/FORMATS.md, "Goodput plan"); its
        ``topology`` a document or a path.

    Returns
    -------
    dict
        ``format``; ``design`` (GPUs, job GPUs, storage servers); ``classes`` (per class: units,
        AFR per unit-year, ``cluster_per_day`` / ``job_per_day``, ``share``, ``blast``,
        ``spares``); ``job`` (``interruptions_per_day``, ``mttf_hours``, ``degraded_loss``);
        ``cluster`` (``interruptions_per_day``, ``degradations_per_day``); ``checkpoint``
        (size, write/read/restart seconds, intervals, ETTR, curve); ``goodput``;
        ``monte_carlo`` (or None).

    Raises
    ------
    InvalidScenario, InvalidTopology
        Every bad field located (``rates.nic.afr: must be a finite number >= 0``); an empty
        design (``topology.nodes``).
    """
    from designer.engine.document import check, load

    req = check_request(request)
    doc = load(req["topology"])
    check(doc)
    units = design_units(doc, req["job"])
    measured = None
    if req["traffic"] is not None:
        measured = measure_blast(doc, units.job_gpu_ids, req["traffic"], req["job"]["exposed_communication_fraction"])
    rows = class_rates(req, units, measured)
    _shares(rows)
    lam_per_day = sum(r["job_per_day"] for r in rows if r["effect"] == "interrupt")
    mttf_s = 86400.0 / lam_per_day if lam_per_day > 0 else math.inf
    ck = checkpoint_times(doc, req["checkpoint"], units.job_gpu_ids, units.storage_ids)
    ck.update(_intervals(ck, req, mttf_s))
    loss = min(1.0, sum(r["job_per_day"] / 24.0 * r["repair_hours"] * r["slowdown"]
                        for r in rows if r["effect"] == "degrade"))
    n = len(units.job_gpu_ids)
    _blast(rows, n, ck["restart_s"], ck["interval_s"], ck["write_s"])
    _spares(rows, req["spares"]["availability"])
    return {"format": GOODPUT_FORMAT,
            "design": {"gpus": sum(units.cluster["gpu"].values()), "job_gpus": n,
                       "storage_servers": len(units.storage_ids)},
            "classes": rows,
            "cluster": {"interruptions_per_day": sum(r["cluster_per_day"] for r in rows if r["effect"] == "interrupt"),
                        "degradations_per_day": sum(r["cluster_per_day"] for r in rows if r["effect"] == "degrade")},
            "job": {"interruptions_per_day": lam_per_day, "mttf_hours": mttf_s / 3600.0 if lam_per_day else None,
                    "degraded_loss": loss},
            "checkpoint": ck, "goodput": ck["ettr"] * (1.0 - loss), "spares": req["spares"],
            "traffic": _traffic_echo(req["traffic"], measured),
            "monte_carlo": _monte_carlo(rows, ck, req["monte_carlo"])}


def _traffic_echo(traffic: dict | None, measured: dict | None) -> dict | None:
    """The collective the blast radius was measured with, at its reduced scale, or None."""
    if traffic is None:
        return None
    return {**{k: traffic[k] for k in ("pattern", "bytes", "algorithm", "routing", "max_hosts", "samples")},
            "hosts": measured["hosts"], "gpus": measured["gpus"],
            "baseline_completion_s": measured["baseline_completion_s"]}


#: Failures one Monte Carlo may draw (one float each: 160 MB of gaps and their sums).
MAX_SIMULATED_FAILURES = 10_000_000


def _monte_carlo(rows: list[dict], ck: dict, mc: dict | None) -> dict | None:
    if mc is None:
        return None
    per_day = sum(r["job_per_day"] for r in rows if r["effect"] == "interrupt")
    if per_day * mc["runs"] * mc["days_per_run"] > MAX_SIMULATED_FAILURES:
        message = (f"{per_day * mc['runs'] * mc['days_per_run']:,.0f} failures to draw; at most "
                   f"{MAX_SIMULATED_FAILURES:,}: fewer runs or days")
        raise LimitExceeded(message, [Problem("monte_carlo.runs", message)])
    p = Process(interrupts={r["class"]: r["job_per_day"] / 86400.0 for r in rows
                            if r["effect"] == "interrupt" and r["job_per_day"] > 0},
                degrades={r["class"]: (r["job_per_day"] / 86400.0, r["repair_hours"] * 3600.0, r["slowdown"])
                          for r in rows if r["effect"] == "degrade"},
                tau_s=ck["interval_s"], delta_s=ck["write_s"], restart_s=ck["restart_s"])
    return monte_carlo(p, days_per_run=float(mc["days_per_run"]), runs=mc["runs"], seed=mc["seed"],
                       timeline_days=float(mc["timeline_days"]))
