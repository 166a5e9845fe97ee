"""A shared cluster's ``jobs`` result section: per-job step, slowdown, bottleneck, interference.

Definitions (docs/ENGINE.md, Shared cluster):

- **step time** of a job: its step in the event loop of :mod:`designer.engine.traffic.jobs.dag`
  run with every job at once (a ``patterns`` job is one phase), from its ``start_s`` to its last
  phase's end;
- **alone**: the same loop over the job's own flows only, with the *same routes* (its flows'
  paths are taken from the shared solve, :func:`designer.engine.routing.routes.take_flows`) on
  the empty cluster; **slowdown** = step / alone (1.0 = not slowed);
- **interference** ``I[i][j]`` = step of ``i`` run with ``j`` only / ``i`` alone − 1: how much
  ``j`` alone slows ``i``. Jobs whose paths share no resource have ``I = 0`` exactly (max-min
  rates on disjoint resources are independent) and are not solved; every other pair is one
  event-loop run of the two jobs. Pairwise effects do not add up: three jobs on one link slow
  each other by less than the sum of the pairs (the link's share is 1/3, not 1 − 2 × 1/2);
- **bottleneck** of a job: the resource limiting its slowest flow in the scenario's max-min
  solve (all jobs' flows together), with the jobs whose paths cross it;
- **shared resources**: links (and node resources) that carry paths of two jobs or more.

A ``period_s`` shorter than the job's step alone is a located error: the job could not finish a
round before the next begins (the period is otherwise reported as ``duty_cycle`` = step /
period; the solve is the worst case in which every periodic burst overlaps the others' steps).
"""
from __future__ import annotations

import numpy as np

from designer.engine.errors import InvalidScenario, Problem
from designer.engine.model.tiers import resource_tiers
from designer.engine.numbers import json_float as _num
from designer.engine.routing.routes import take_flows
from designer.engine.traffic.jobs.dag import run_job
from designer.engine.traffic.jobs.shared import job_phases, merged_spec

__all__ = ["MAX_PAIRS", "jobs_section", "jobs_impact", "flow_jobs", "run_steps", "job_usage"]

# Pairs solved for the interference matrix at most (64 jobs: 2,016 pairs); beyond, the pairs
# sharing the most loaded resources first, the rest reported as not computed (null).
MAX_PAIRS = 2_100
_SHARED_LISTED = 200


def flow_jobs(prep) -> np.ndarray:
    """The job index of every flow of ``prep`` (from its pattern)."""
    pattern_job = np.full(len(prep.flows.pattern_ids), -1, dtype=np.int64)
    for k, job in enumerate(prep.scenario.jobs):
        pattern_job[job.patterns] = k
    return pattern_job[prep.flows.pattern]


def _subset(prep, flows_idx: np.ndarray):
    """``prep`` restricted to the flows ``flows_idx`` (sorted), with their routes as they are."""
    from dataclasses import replace

    flows = prep.flows.take(flows_idx)
    routes = take_flows(prep.routes, flows_idx, prep.flows.src[flows_idx])
    return replace(prep, flows=flows, routes=routes)


def run_steps(prep, which: list[int], fjob: np.ndarray | None = None) -> list[float | None]:
    """Step times (s) of the jobs ``which`` run together, alone on the cluster (the event loop
    over their flows only, on their routes); None for a step that does not complete."""
    jobs = [prep.scenario.jobs[k] for k in which]
    fjob = flow_jobs(prep) if fjob is None else fjob
    sub = _subset(prep, np.flatnonzero(np.isin(fjob, which)))
    return _job_steps(run_job(sub, merged_spec(jobs)), jobs)


def _job_steps(summary: dict, jobs: list) -> list[float | None]:
    """Each job's step from a merged run's phases (jobs' phases consecutive, in order)."""
    out, at = [], 0
    phases = summary["phases"]
    for job in jobs:
        n = len(job_phases(job))
        ends = [ph["end_s"] for ph in phases[at:at + n]]
        at += n
        out.append(None if any(e is None for e in ends) else max(ends) - job.start_s)
    return out


def job_usage(prep, fjob: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(resources, jobs): the distinct (resource, job) pairs of the routed paths."""
    routes = prep.routes
    n_jobs = len(prep.scenario.jobs)
    entry_job = np.repeat(fjob[routes.owner], np.diff(routes.flow_ptr))
    key = np.unique(np.asarray(routes.flow_res, dtype=np.int64) * n_jobs + entry_job)
    return key // n_jobs, key % n_jobs


def jobs_section(prep, solved, result: dict) -> dict:
    """The result's ``jobs`` section (docs/FORMATS.md, Result: jobs).

    Raises
    ------
    InvalidScenario
        A job's ``period_s`` shorter than its step alone (located at ``jobs[k].period_s``).
    """
    jobs = prep.scenario.jobs
    fjob = flow_jobs(prep)
    alone = [run_steps(prep, [k], fjob)[0] for k in range(len(jobs))]
    _check_periods(jobs, alone)
    shared = (_job_steps(result["summary"]["job"], jobs) if len(jobs) > 1 else alone)
    res, rj = job_usage(prep, fjob)
    incidence, shared_res = _incidence(res, rj, len(jobs))
    matrix, solved_pairs = _interference(prep, fjob, alone, incidence, solved, shared_res)
    tiers = resource_tiers(prep.topology)
    per_job = [_job_record(prep, solved, k, shared[k], alone[k], fjob, res, rj, tiers) for k in range(len(jobs))]
    return {"jobs": per_job,
            "interference": {"jobs": [j.id for j in jobs], "matrix": matrix, "pairs_solved": solved_pairs,
                             "definition": "matrix[i][j] = step of i with j only / i alone - 1"},
            **_shared_resources(prep, solved, res, rj, tiers),
            "headline": _headline(per_job)}


def _check_periods(jobs: list, alone: list) -> None:
    problems = [Problem(f"{j.where}.period_s", f"{j.period_s:g} s is shorter than the job's step alone "
                        f"({alone[k]:.6g} s): a round would start before the previous one ends")
                for k, j in enumerate(jobs)
                if j.period_s is not None and alone[k] is not None and j.period_s < alone[k]]
    if problems:
        raise InvalidScenario("period shorter than the step", problems)


def _incidence(res: np.ndarray, rj: np.ndarray, n_jobs: int) -> tuple[np.ndarray, np.ndarray]:
    """Jobs × shared resources (bool), and those resources (carrying two jobs or more)."""
    uniq, inv, counts = np.unique(res, return_inverse=True, return_counts=True)
    many = counts[inv] > 1
    shared_res = uniq[counts > 1]
    col = np.searchsorted(shared_res, res[many])
    incidence = np.zeros((n_jobs, len(shared_res)), dtype=bool)
    incidence[rj[many], col] = True
    return incidence, shared_res


def _interference(prep, fjob, alone, incidence, solved, shared_res) -> tuple[list, int]:
    n = len(alone)
    together = incidence.astype(np.int64) @ incidence.T.astype(np.int64) if n else np.zeros((0, 0))
    matrix = [[0.0] * n for _ in range(n)]
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n) if together[i, j]]
    if len(pairs) > MAX_PAIRS:   # the most contended pairs first: the load they share
        util = solved.utilization[shared_res]
        weight = (incidence * util) @ incidence.T.astype(float)
        pairs.sort(key=lambda p: -weight[p])
        for i, j in pairs[MAX_PAIRS:]:
            matrix[i][j] = matrix[j][i] = None
        pairs = pairs[:MAX_PAIRS]
    for i, j in pairs:
        si, sj = run_steps(prep, [i, j], fjob)
        matrix[i][j] = _ratio(si, alone[i])
        matrix[j][i] = _ratio(sj, alone[j])
    return matrix, len(pairs)


def _ratio(step, alone) -> float | None:
    """step / alone − 1 (None when either is unknown; 0 for a job with no time at all)."""
    if step is None or alone is None:
        return None
    return _num(step / alone - 1.0) if alone > 0 else 0.0


def _job_record(prep, solved, k, step, alone, fjob, res, rj, tiers) -> dict:
    job = prep.scenario.jobs[k]
    ids = prep.flows.pattern_ids
    slow = None if step is None or alone is None else (step / alone if alone > 0 else 1.0)
    return {"id": job.id, "kind": job.kind, "gpus": len(job.gpus), "placement": job.placement,
            "fragmentation": job.fragmentation, "start_s": job.start_s, "period_s": job.period_s,
            "patterns": [ids[p] for p in job.patterns], "complete": step is not None,
            "step_time_s": _num(step) if step is not None else None,
            "alone_step_time_s": _num(alone) if alone is not None else None,
            "slowdown": _num(slow) if slow is not None else None,
            "slowdown_pct": _num((slow - 1.0) * 100.0) if slow is not None else None,
            "duty_cycle": _num(step / job.period_s) if step is not None and job.period_s else None,
            "bottleneck": _bottleneck(prep, solved, k, fjob, res, rj, tiers)}


def _bottleneck(prep, solved, k, fjob, res, rj, tiers) -> dict | None:
    """The resource limiting the job's slowest flow, and the jobs whose paths cross it."""
    mine = np.flatnonzero(fjob == k)
    done = solved.flow_completion_s[mine]
    ok = ~np.isnan(done)
    if not ok.any():
        return None
    f = int(mine[ok][np.argmax(done[ok])])
    r = int(solved.flow_bottleneck[f])
    if r < 0:
        return None
    jobs = prep.scenario.jobs
    sharing = sorted({jobs[j].id for j in rj[res == r].tolist()} - {jobs[k].id})
    return {"resource": prep.topology.resource_id(r), "tier": tiers[r],
            "utilization": _num(solved.utilization[r]), "flow": prep.flows.flow_id(f), "shared_with": sharing}


def _shared_resources(prep, solved, res, rj, tiers) -> dict:
    """The resources carrying two jobs or more, the most utilized first (at most 200 listed)."""
    uniq, start, counts = np.unique(res, return_index=True, return_counts=True)
    many = counts > 1
    order = np.argsort(-solved.utilization[uniq[many]], kind="stable")[:_SHARED_LISTED]
    jobs = prep.scenario.jobs
    listed = []
    for i in order.tolist():
        r, s, c = int(uniq[many][i]), int(start[many][i]), int(counts[many][i])
        listed.append({"resource": prep.topology.resource_id(r), "tier": tiers[r],
                       "utilization": _num(solved.utilization[r]), "jobs": [jobs[j].id for j in rj[s:s + c].tolist()]})
    return {"shared_resources": listed, "shared_resources_total": int(many.sum())}


def jobs_impact(jobs: list, before: dict, after: dict) -> dict:
    """Per-job impact of a failure on a shared cluster, from the merged step before and after.

    Returns
    -------
    dict
        ``broken`` (ids of jobs whose step no longer completes), ``slowed`` (``id``,
        ``before_s``, ``after_s``, ``slowdown`` = after / before; slowest first) and
        ``unchanged`` (how many jobs keep their step within 1e-9).
    """
    b, a = _job_steps(before, jobs), _job_steps(after, jobs)
    broken = [j.id for j, x, y in zip(jobs, b, a) if y is None and x is not None]
    slowed = [{"id": j.id, "before_s": _num(x), "after_s": _num(y), "slowdown": _num(y / x) if x > 0 else None}
              for j, x, y in zip(jobs, b, a) if x is not None and y is not None and y > x * (1 + 1e-9)]
    slowed.sort(key=lambda e: -(e["slowdown"] or 0.0))
    return {"broken": broken, "slowed": slowed, "unchanged": len(jobs) - len(broken) - len(slowed)}


def _headline(per_job: list) -> str:
    known = [j for j in per_job if j["slowdown"] is not None]
    if not known:
        return "no job completes its step"
    worst = max(known, key=lambda j: j["slowdown"])
    if worst["slowdown"] <= 1.0 + 1e-9:
        return f"{len(per_job)} job(s): none slowed by the others"
    b = worst["bottleneck"]
    where = f" on {b['resource']} ({b['tier']}, shared with {', '.join(b['shared_with']) or 'no other job'})" if b else ""
    return f"{worst['id']} is {worst['slowdown']:.2f}× slower than alone{where}"
