"""Rank single failures by their impact on a job's **step time**.

A thin view of :func:`designer.engine.analysis.whatif.sweep` — the sweep the CLI, the API and the pages
run — for a scenario whose workload is a job: every candidate failure of the chosen classes
(``nic``, ``leaf-spine``, …) is applied with stable re-routing and the step is re-simulated
(:func:`designer.engine.traffic.jobs.dag.run_job`). A failure that breaks a communicator stops the step
(``broken``); broken failures rank first, then the larger step-time slowdown.
"""
from __future__ import annotations

from designer.engine.errors import InvalidScenario, Problem

__all__ = ["JOB_SWEEP_FORMAT", "sweep_job"]

JOB_SWEEP_FORMAT = "fabricscope.job_sweep/1"


def sweep_job(scenario, over="nic", *, degrade: float | None = None, topology_loader=None,
              progress=None) -> dict:
    """Step-time impact of every single failure of the classes ``over``.

    Parameters
    ----------
    scenario : dict or Scenario
        With ``workload: {"job": ...}``; its own ``failures`` are ignored (the baseline is
        failure-free).
    over : str or list of str
        Failure classes (see :func:`~designer.engine.analysis.whatif.sweep_candidates`).
    degrade : float, optional
        Degrade each candidate to this factor instead of taking it down.
    progress : callable, optional
        ``progress(fraction, message)``.

    Returns
    -------
    dict
        ``format``, ``baseline`` (the failure-free step's numbers), ``evaluated``, ``skipped``
        (unwired candidates) and ``ranking``: per failure ``target``, ``mode``, ``complete``,
        ``step_time_s`` (s), ``slowdown`` (step / baseline step; None when broken), ``broken``,
        ``reason``, ``critical_path``, most harmful first.

    Raises
    ------
    InvalidScenario
        The workload is not a job, or a bad class or factor.
    """
    from dataclasses import replace

    from designer.engine.traffic.scenario import normalize_scenario
    from designer.engine.analysis.whatif import sweep

    sc = normalize_scenario(scenario, topology_loader=topology_loader)
    if sc.job is None:
        raise InvalidScenario("not a job", [Problem("workload", "a step-time sweep needs workload: {\"job\": ...}")])
    doc = sweep(replace(sc, failures=[]), over=over, degrade=degrade, progress=progress)
    ranking = []
    for e in doc["ranking"]:
        step = e["impact"]["job"]
        ranking.append({"index": e["index"], "target": e["failure"]["target"], "mode": e["failure"]["mode"],
                        "complete": step["complete"]["after"], "step_time_s": step["step_time_s"]["after"],
                        "slowdown": step["slowdown"], "broken": step["complete"]["after"] is False,
                        "reason": step["reason"], "critical_path": step["critical_path"]})
    return {"format": JOB_SWEEP_FORMAT, "over": doc["over"], "baseline": doc["baseline"]["job"],
            "evaluated": doc["evaluated"], "skipped": doc["skipped"], "ranking": ranking}
