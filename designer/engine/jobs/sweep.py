"""Rank single failures by their impact on a job's **step time** (issue 17).

For a scenario whose workload is a job, every candidate failure of the chosen classes
(:func:`designer.engine.whatif.sweep_candidates`: ``nic``, ``leaf-spine``, …) is applied to the
failure-free preparation with stable re-routing (:func:`designer.engine.simulate.prepare_failures`,
the same stage sweeps use) and the step is re-simulated (:func:`designer.engine.jobs.dag.run_job`).
Completion semantics apply: a failure that breaks a communicator stops the step (``broken``), and
broken failures rank first, then the larger step-time slowdown.
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
        Failure classes (see :func:`~designer.engine.whatif.sweep_candidates`).
    degrade : float, optional
        Degrade each candidate to this factor instead of taking it down.
    progress : callable, optional
        ``progress(fraction, message)``.

    Returns
    -------
    dict
        ``format``, ``baseline`` (the failure-free ``summary.job`` numbers), ``evaluated`` and
        ``ranking``: per failure ``target``, ``mode``, ``complete``, ``step_time_s``, ``slowdown``
        (step / baseline step; None when broken), ``broken``, ``reason``, ``critical_path``, most
        harmful first.

    Raises
    ------
    InvalidScenario
        The workload is not a job, or a bad class or factor.
    """
    from designer.engine.jobs.dag import run_job, step_diff
    from designer.engine.scenario import normalize_scenario
    from designer.engine.simulate import prepare, prepare_failures
    from designer.engine.whatif import sweep_candidates

    sc = normalize_scenario(scenario, topology_loader=topology_loader)
    if sc.job is None:
        raise InvalidScenario("not a job", [Problem("workload", "a step-time sweep needs workload: {\"job\": ...}")])
    candidates = sweep_candidates(sc.topology, over, degrade=degrade)
    base = prepare(sc, failures=[])
    before = run_job(base, sc.job)
    ranking = []
    for k, failure in enumerate(candidates):
        if progress is not None:
            progress(k / max(1, len(candidates)), f"failure {k + 1} of {len(candidates)}: {failure['target']}")
        after = run_job(prepare_failures(base, [failure]), sc.job)
        d = step_diff(before, after)
        ranking.append({"index": k, "target": failure["target"], "mode": failure["mode"],
                        "complete": after["complete"], "step_time_s": after["step_time_s"],
                        "slowdown": d["slowdown"], "broken": d["broken"] or not after["complete"],
                        "reason": after["reason"], "critical_path": after["critical_path"]})
    ranking.sort(key=lambda e: (not e["broken"], -(e["slowdown"] or 0.0), e["index"]))
    return {"format": JOB_SWEEP_FORMAT, "over": over if isinstance(over, list) else [over],
            "baseline": {k: before[k] for k in ("complete", "step_time_s", "compute_s",
                                                "exposed_communication_s", "critical_path")},
            "evaluated": len(ranking), "ranking": ranking}
