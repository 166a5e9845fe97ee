"""Placement what-ifs: rank where the next job should go, move one job, compare policies for a job mix.

:func:`rank_placements` takes a shared-cluster scenario (the running ``jobs``) and a new job
whose placement gives only its size (``{"gpus": N, "free": [...] | "after"}``). Its candidates
are the free GPUs chosen by every policy of :mod:`designer.engine.traffic.jobs.placement`
(``packed``, ``rail-aligned``, ``spread``, and ``random`` with a few seeds) and by a packing
inside each leaf block that holds it; identical GPU sets are evaluated once. Each candidate is
routed and run with the running jobs in the event loop (:mod:`designer.engine.analysis.shared_cluster`):
its **step time**, and its **harm** = Σ over running jobs of (step with it / step without it −
1). Candidates are ranked by step time, then harm (a job that runs 1e-9 relatively slower is
no slower). ``why`` explains each candidate against the best: hosts, leaf blocks and misaligned
rails (:func:`~designer.engine.traffic.jobs.placement.fragmentation`), the tier of its
bottleneck, and how much slower it is. :func:`move_job` ranks the placements of a running job
among the others (its current GPUs are the candidate ``current``).

:func:`compare_policies` places a whole job mix under each policy in turn and reports each job's
step and the mix's total slowdown.
"""
from __future__ import annotations

import copy

import numpy as np

from designer.engine.analysis.shared_cluster import _bottleneck, flow_jobs, job_usage, run_steps
from designer.engine.analysis.simulate import prepare, solve_prepared
from designer.engine.errors import InvalidScenario, Problem
from designer.engine.model.tiers import resource_tiers
from designer.engine.numbers import json_float as _num
from designer.engine.traffic.jobs.placement import POLICIES, choose, cluster_map
from designer.engine.traffic.jobs.placement import _free as free_positions
from designer.engine.traffic.scenario import normalize_scenario

__all__ = ["MAX_CANDIDATES", "rank_placements", "move_job", "compare_policies"]

MAX_CANDIDATES = 24
_RANDOM_SEEDS = 3
_BLOCKS_TRIED = 8


def move_job(scenario: dict, job_id: str, *, topology_loader=None, progress=None) -> dict:
    """Where should running job ``job_id`` move? :func:`rank_placements` of that job among the
    others, on every GPU they leave free (its own included), with its current GPUs as the
    candidate ``current``.

    Raises
    ------
    InvalidScenario
        No job ``job_id`` in the scenario.
    """
    sc = normalize_scenario(scenario, topology_loader=topology_loader)
    jobs = list(scenario.get("jobs") or [])
    k = next((i for i, j in enumerate(sc.jobs or []) if j.id == job_id), None)
    if k is None:
        raise InvalidScenario("unknown job", [Problem("--move", f"no job {job_id!r} in the scenario's jobs")])
    moving = {key: v for key, v in jobs[k].items() if key != "placement"}
    moving["placement"] = {"gpus": len(sc.jobs[k].gpus)}
    current = [("current", sc.jobs[k].gpus)]
    others = {**scenario, "topology": sc.topology, "jobs": jobs[:k] + jobs[k + 1:]}
    return rank_placements(others, moving, progress=progress, extra=current)


def rank_placements(scenario: dict, new_job: dict, *, topology_loader=None, progress=None,
                    extra: list | None = None) -> dict:
    """Rank candidate placements of ``new_job`` among the running jobs of ``scenario``.

    Parameters
    ----------
    scenario : dict
        A scenario with ``jobs`` (the running ones; none = an empty cluster).
    new_job : dict
        A job (``id``, ``job`` or ``patterns``) whose ``placement`` is ``{"gpus": N}`` and
        optionally ``"free"``: the free GPU ids (default: every GPU no running job holds).
    extra : list of (str, ndarray), optional
        More candidates (name, GPU node indices), evaluated first (:func:`move_job`'s ``current``).

    Returns
    -------
    dict
        ``job`` (id), ``gpus``, ``running`` (id → step alone together, s), ``candidates``
        (ranked: ``candidate`` (policy name), ``same_as`` (other names that chose the same
        GPUs), ``placement`` (GPU ids), ``step_time_s``, ``alone_step_time_s``,
        ``harm``, ``harm_by_job``, ``fragmentation``, ``bottleneck``, ``why``), ``best``.

    Raises
    ------
    InvalidScenario
        A bad new-job placement (located under ``job.placement``), too few free GPUs.
    """
    base = normalize_scenario(_with_jobs(scenario, scenario.get("jobs") or []), topology_loader=topology_loader)
    topo, running = base.topology, base.jobs or []
    n, free = _size_and_free(topo, new_job, running)
    current = run_steps(prepare(base), list(range(len(running)))) if running else []
    out = []
    for k, (names, gpus) in enumerate(_candidates(topo, free, n, extra or [])):
        if progress is not None:
            progress(k / MAX_CANDIDATES, f"placing {new_job.get('id')} {names[0]}")
        out.append(_evaluate(scenario, topo, running, current, new_job, names, gpus))
    out.sort(key=lambda c: (np.inf if c["step_time_s"] is None else round(c["step_time_s"], 9 - _exp(c)),
                            c["harm"] if c["harm"] is not None else np.inf))
    for c in out:
        c["why"] = _why(c, out[0])
    return {"job": new_job.get("id"), "gpus": n, "running": {j.id: _num(s) if s is not None else None
                                                              for j, s in zip(running, current)},
            "candidates": out, "best": out[0]["candidate"] if out else None}


def _exp(c: dict) -> int:
    """Decimal exponent of a step time, so ties are judged to 1e-9 relative."""
    s = c["step_time_s"]
    return int(np.floor(np.log10(s))) if s else 0


def _with_jobs(scenario: dict, jobs: list) -> dict:
    out = {k: v for k, v in scenario.items() if k not in ("jobs", "workload")}
    if jobs:
        out["jobs"] = jobs
    return out


def _size_and_free(topo, new_job: dict, running: list) -> tuple[int, np.ndarray]:
    placement = new_job.get("placement") if isinstance(new_job, dict) else None
    n = placement.get("gpus") if isinstance(placement, dict) else None
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise InvalidScenario("bad new job", [Problem("job.placement.gpus", "the new job's size: an integer >= 1")])
    claimed = {g: j.id for j in running for g in j.gpus.tolist()}
    free = free_positions(topo, placement.get("free", "after"), "job.placement.free", cluster_map(topo), claimed)
    if len(free) < n:
        raise InvalidScenario("not enough free GPUs", [Problem(
            "job.placement.gpus", f"needs {n:,} GPUs, only {len(free):,} are free")])
    return n, free


def _candidates(topo, free: np.ndarray, n: int, extra: list) -> list[tuple[list, np.ndarray]]:
    """(names, GPU node indices) per distinct candidate: ``extra``, policies, seeded randoms,
    block packings."""
    cmap = cluster_map(topo)
    named = [(name, np.array([cmap.position[int(g)] for g in gpus], dtype=np.int64)) for name, gpus in extra]
    named += [(p, choose(cmap, free, n, p)) for p in POLICIES if p != "random"]
    named += [(f"random (seed {s})", choose(cmap, free, n, "random", s)) for s in range(_RANDOM_SEEDS)]
    blocks = np.bincount(cmap.block[free], minlength=int(cmap.block.max()) + 1)
    for b in np.flatnonzero(blocks >= n)[:_BLOCKS_TRIED].tolist():
        named.append((f"packed in leaf block {b}", choose(cmap, free[cmap.block[free] == b], n, "packed")))
    seen: dict = {}
    for name, pos in named:   # one candidate per GPU set, under every name that chose it
        seen.setdefault(tuple(np.sort(pos).tolist()), []).append(name)
    return [(names, cmap.gpus[list(key)]) for key, names in list(seen.items())[:MAX_CANDIDATES]]


def _evaluate(scenario, topo, running, current, new_job, names, gpus) -> dict:
    ids = topo.node_ids
    job = {**copy.deepcopy({k: v for k, v in new_job.items() if k != "placement"}),
           "placement": {"gpus": [ids[g] for g in gpus.tolist()]}}
    sc = normalize_scenario({**_with_jobs(scenario, [*(scenario.get("jobs") or []), job]), "topology": topo})
    prep = prepare(sc)
    k = len(sc.jobs) - 1
    fjob = flow_jobs(prep)
    steps = run_steps(prep, list(range(len(sc.jobs))), fjob)
    alone = run_steps(prep, [k], fjob)[0]
    harm_by = {j.id: (_num(_tiny(s / c - 1.0)) if s is not None and c else None)
               for j, s, c in zip(running, steps[:-1], current)}
    harm = None if any(v is None for v in harm_by.values()) else _num(sum(harm_by.values()))
    solved = solve_prepared(prep, mode="steady")
    res, rj = job_usage(prep, fjob)
    neck = _bottleneck(prep, solved, k, fjob, res, rj, resource_tiers(topo))
    return {"candidate": names[0], "same_as": names[1:], "placement": job["placement"]["gpus"],
            "step_time_s": _num(steps[-1]) if steps[-1] is not None else None,
            "alone_step_time_s": _num(alone) if alone is not None else None,
            "harm": harm, "harm_by_job": harm_by, "fragmentation": sc.jobs[k].fragmentation, "bottleneck": neck}


def _tiny(x: float) -> float:
    """0 for a relative change within rounding (1e-12): the same step summed another way."""
    return 0.0 if abs(x) < 1e-12 else x


def _why(c: dict, best: dict) -> str:
    """One sentence: the candidate's shape against the best's, and what it costs."""
    f, b = c["fragmentation"], best["fragmentation"]
    parts = [f"{f['hosts']} host(s) (min {f['min_hosts']})",
             f"spans {f['leaf_blocks']} leaf block(s)" + (f" vs {b['leaf_blocks']}" if f["leaf_blocks"] != b["leaf_blocks"]
                                                          else "")]
    if f["misaligned_hosts"]:
        parts.append(f"{f['misaligned_hosts']} host(s) on other rails than the rest")
    neck = c["bottleneck"]
    if neck:
        parts.append(f"bottleneck {neck['tier']} ({neck['resource']}"
                     + (f", shared with {', '.join(neck['shared_with'])}" if neck["shared_with"] else "") + ")")
    if c is best:
        verdict = "best: the shortest step"
    elif c["step_time_s"] is None:
        verdict = "its step does not complete"
    elif best["step_time_s"]:
        ratio = c["step_time_s"] / best["step_time_s"]
        more = c["harm"] is not None and best["harm"] is not None and c["harm"] > best["harm"] + 1e-9
        verdict = f"{ratio:.2f}× slower than {best['candidate']}" if ratio > 1 + 1e-9 else \
            f"as fast as {best['candidate']}" + (", more harm to running jobs" if more else "")
    else:
        verdict = "no time to compare"
    harm = f"harm to running jobs {c['harm'] * 100:.1f}%" if c["harm"] is not None else "harm unknown"
    return f"{verdict}; {'; '.join(parts)}; {harm}"


def compare_policies(scenario: dict, *, policies=POLICIES, topology_loader=None) -> dict:
    """Each policy in turn for every policy-placed job of ``scenario``'s mix.

    Returns
    -------
    dict
        ``policies``: per policy ``{"steps": {job: s}, "slowdown_sum": Σ (slowdown − 1),
        "fragmentation": Σ scores}`` (or ``{"error": message}`` when the mix does not fit), and
        ``best`` (the least total slowdown, then the shortest mean step).
    """
    out = {}
    for policy in policies:
        jobs = [{**j, "placement": {**j["placement"], "policy": policy}} if "policy" in j.get("placement", {}) else j
                for j in scenario.get("jobs") or []]
        try:
            sc = normalize_scenario({**scenario, "jobs": jobs}, topology_loader=topology_loader)
        except InvalidScenario as exc:
            out[policy] = {"error": exc.problems[0].message if exc.problems else exc.message}
            continue
        prep = prepare(sc)
        fjob = flow_jobs(prep)
        steps = run_steps(prep, list(range(len(sc.jobs))), fjob)
        alone = [run_steps(prep, [k], fjob)[0] for k in range(len(sc.jobs))]
        slow = [s / a - 1.0 for s, a in zip(steps, alone) if s is not None and a]
        out[policy] = {"steps": {j.id: _num(s) if s is not None else None for j, s in zip(sc.jobs, steps)},
                       "slowdown_sum": _num(sum(slow)),
                       "fragmentation": _num(sum(j.fragmentation["score"] for j in sc.jobs))}
    ok = [p for p in out if "error" not in out[p]]
    best = min(ok, key=lambda p: (round(out[p]["slowdown_sum"], 9),
                                  np.mean([s for s in out[p]["steps"].values() if s is not None] or [np.inf])),
               default=None)
    return {"policies": out, "best": best}
