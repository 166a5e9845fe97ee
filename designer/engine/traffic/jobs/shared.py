"""A shared cluster: a scenario's ``jobs`` — many jobs with placements on one fabric.

``jobs: [{"id": "train-a", "job": {...} | "patterns": [...], "placement": {...}, "start_s": 0,
"period_s": null}]`` (docs/FORMATS.md, Jobs with placements). Each job is written as a single
workload is today, over **its own GPUs**: its placement
(:mod:`designer.engine.traffic.jobs.placement`) is the job's rank space — its layout's ranks,
and the GPUs its selectors choose from (``{"kind": "gpu"}`` means the job's GPUs).

:func:`normalize_jobs` returns the scenario's flat pattern list and the step to simulate:

- **one job**: exactly what ``workload`` would give today (its patterns, its
  :class:`~designer.engine.traffic.jobs.spec.JobSpec` or none), so its result is today's to the
  last bit, plus the ``jobs`` section;
- **several**: one merged :class:`JobSpec` — every job's phases side by side (ids prefixed
  ``<job>/``), a ``patterns`` job as one phase, a job starting later behind a ``<job>/start``
  phase that waits ``start_s`` — so the event loop of :mod:`designer.engine.traffic.jobs.dag`
  runs all their steps in one timeline, sharing every link max-min fairly.

A pattern id used by more than one job becomes ``<job>/<id>`` in each (ids stay unique in the
flows, ``<pattern>#<k>``); an id used by one job is kept as written.

Limits: at most :data:`MAX_JOBS` jobs (refused before anything is placed); ``period_s`` must
not be shorter than the job's step alone, checked once that step is known
(:mod:`designer.engine.analysis.shared_cluster`).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from designer.engine.document.bounds import MAX_SECONDS
from designer.engine.errors import InvalidScenario, InvalidWorkload, LimitExceeded, Problem
from designer.engine.traffic.jobs.checks import MAX_PHASES, is_real
from designer.engine.traffic.jobs.placement import fragmentation, place
from designer.engine.traffic.jobs.spec import JobSpec, normalize_job
from designer.engine.traffic.workloads import normalize_pattern

__all__ = ["MAX_JOBS", "PlacedJob", "normalize_jobs", "job_phases", "merged_spec"]

# 1,024 jobs: a 16,384-GPU cluster cut into 16-GPU jobs; each job costs an alone solve and its
# pairs an interference solve, so 10,000 is refused before any work.
MAX_JOBS = 1_024
_JOB_KEYS = {"id", "job", "patterns", "placement", "start_s", "period_s"}


@dataclass
class PlacedJob:
    """One validated job of a shared cluster.

    Attributes
    ----------
    id : str
    where : str
        Its location (``jobs[3]``).
    gpus : ndarray of int64
        Its GPUs (node indices, rank order).
    placement : dict
        The placement echo (``policy``, ``gpus`` ids, ``seed``).
    patterns : list of int
        Indices of its patterns in the scenario's flat list.
    spec : JobSpec or None
        Its step (``None`` for a ``patterns`` job); pattern indices are the flat list's.
    start_s, period_s : float, float or None
    fragmentation : dict
    """

    id: str
    where: str
    gpus: np.ndarray
    placement: dict
    patterns: list = field(default_factory=list)
    spec: JobSpec | None = None
    start_s: float = 0.0
    period_s: float | None = None
    fragmentation: dict = field(default_factory=dict)

    @property
    def kind(self) -> str:
        if self.spec is None:
            return "patterns"
        return "inference" if self.spec.inference else "job"


def normalize_jobs(topo, raw) -> tuple[list[dict], JobSpec | None, list[PlacedJob]]:
    """The flat patterns, the step to simulate and the placed jobs of a ``jobs`` list.

    Raises
    ------
    LimitExceeded
        More than :data:`MAX_JOBS` jobs, or phases over the job limit when merged.
    InvalidScenario
        Bad job fields, ids or placements (a GPU claimed twice names the job holding it).
    InvalidWorkload
        A job's patterns or step (located under ``jobs[k]``).
    """
    if not isinstance(raw, list) or not raw:
        raise InvalidScenario("bad jobs", [Problem("jobs", "must be a non-empty list of jobs")])
    if len(raw) > MAX_JOBS:
        raise LimitExceeded(f"{len(raw):,} jobs (limit {MAX_JOBS:,})", [Problem(
            "jobs", f"{len(raw):,} jobs exceed the limit of {MAX_JOBS:,} per scenario")])
    _check_fields(raw)
    claimed: dict = {}
    jobs, patterns = [], []
    for k, item in enumerate(raw):
        where = f"jobs[{k}]"
        gpus, echo = place(topo, item["placement"], f"{where}.placement", claimed, item["id"])
        claimed.update(dict.fromkeys(gpus.tolist(), item["id"]))
        job = PlacedJob(item["id"], where, gpus, echo, start_s=float(item.get("start_s", 0.0)),
                        period_s=float(item["period_s"]) if item.get("period_s") is not None else None,
                        fragmentation=fragmentation(topo, gpus))
        _job_workload(topo, item, job, patterns)
        jobs.append(job)
    _qualify_clashing_ids(jobs, patterns)
    if len(jobs) == 1:
        return patterns, jobs[0].spec, jobs
    spec = merged_spec(jobs, patterns)
    if len(spec.phases) > MAX_PHASES:
        raise LimitExceeded(f"the jobs have {len(spec.phases):,} phases (limit {MAX_PHASES:,})", [Problem(
            "jobs", f"{len(spec.phases):,} phases together exceed the limit of {MAX_PHASES:,}")])
    return patterns, spec, jobs


def _check_fields(raw: list) -> None:
    """Every job an object with a unique id, one of job/patterns, a placement, and good times."""
    problems, seen = [], set()
    for k, item in enumerate(raw):
        where = f"jobs[{k}]"
        if not isinstance(item, dict):
            problems.append(Problem(where, "a job must be an object"))
            continue
        extra = set(item) - _JOB_KEYS
        if extra:
            problems.append(Problem(where, f"unknown field(s) {sorted(extra)}"))
        jid = item.get("id")
        if not isinstance(jid, str) or not jid or "#" in jid or "/" in jid:
            problems.append(Problem(f"{where}.id", "must be a non-empty string without '#' or '/'"))
        elif jid in seen:
            problems.append(Problem(f"{where}.id", f"duplicate job id {jid!r}"))
        seen.add(jid)
        if ("job" in item) == ("patterns" in item):
            problems.append(Problem(where, 'give one of "job" or "patterns"'))
        if "placement" not in item:
            problems.append(Problem(f"{where}.placement", "missing (hosts, gpus or a policy)"))
        for key, low in (("start_s", 0.0), ("period_s", None)):
            v = item.get(key)
            if v is None:
                continue
            if not is_real(v) or not (v >= 0 if low is not None else v > 0) or v > MAX_SECONDS:
                problems.append(Problem(f"{where}.{key}", "must be a number of seconds " +
                                        (">= 0" if low is not None else "> 0") + f", at most {MAX_SECONDS:g}"))
    if problems:
        raise InvalidScenario("invalid jobs", problems)


def _job_workload(topo, item: dict, job: PlacedJob, patterns: list) -> None:
    """Normalize the job's ``job`` or ``patterns`` over its GPUs into ``patterns`` (appended)."""
    base = len(patterns)
    if "job" in item:
        own, spec = normalize_job(topo, item["job"], f"{job.where}.job", scope=job.gpus)
        for ph in spec.phases:
            ph["patterns"] = [base + p for p in ph["patterns"]]
        job.spec = spec
    else:
        own = _patterns(topo, item["patterns"], f"{job.where}.patterns", job.gpus)
    job.patterns = list(range(base, base + len(own)))
    patterns.extend(own)


def _patterns(topo, raw, where: str, scope: np.ndarray) -> list[dict]:
    if not isinstance(raw, list) or not raw:
        raise InvalidWorkload("bad patterns", [Problem(where, "must be a non-empty list of patterns")])
    problems, out, seen = [], [], set()
    for k, item in enumerate(raw):
        try:
            pattern = normalize_pattern(topo, item, f"{where}[{k}]", seen, scope=scope)
        except InvalidWorkload as exc:
            problems.extend(exc.problems)
            continue
        seen.add(pattern["id"])
        out.append(pattern)
    if problems:
        raise InvalidWorkload("invalid job patterns", problems)
    return out


def _qualify_clashing_ids(jobs: list[PlacedJob], patterns: list[dict]) -> None:
    """``<job>/<id>`` for every pattern id more than one job uses."""
    owner = {}
    for job in jobs:
        for p in job.patterns:
            owner[p] = job.id
    counts = Counter(p["id"] for p in patterns)
    for k, p in enumerate(patterns):
        if counts[p["id"]] > 1:
            p["id"] = f"{owner[k]}/{p['id']}"


def job_phases(job: PlacedJob) -> list[dict]:
    """The job's phases as one job of a merged step: ids ``<job>/<phase>``, ``after`` as local
    indices, a ``patterns`` job as one phase; with ``start_s`` a first phase ``<job>/start``
    waits it and every root phase comes after it (a phase's patterns start with the phase, not
    after its wait, see :mod:`designer.engine.traffic.jobs.dag`)."""
    if job.spec is None:
        phases = [{"id": f"{job.id}/step", "compute_s": 0.0, "wait_s": 0.0, "patterns": list(job.patterns),
                   "after": []}]
    else:
        phases = [{**ph, "id": f"{job.id}/{ph['id']}", "after": list(ph["after"])} for ph in job.spec.phases]
    if job.start_s > 0:
        for ph in phases:
            ph["after"] = [d + 1 for d in ph["after"]] or [0]
        phases.insert(0, {"id": f"{job.id}/start", "compute_s": 0.0, "wait_s": job.start_s, "patterns": [],
                          "after": []})
    return phases


def merged_spec(jobs: list[PlacedJob], patterns: list[dict] | None = None) -> JobSpec:
    """One :class:`JobSpec` running ``jobs``' steps side by side (``after`` shifted per job); its
    ``event_quantum`` is the smallest any job asks for (one loop runs them all: the most exact wins)."""
    phases = []
    for job in jobs:
        base = len(phases)
        phases.extend({**ph, "after": [base + d for d in ph["after"]]} for ph in job_phases(job))
    asked = [j.spec.event_quantum for j in jobs if j.spec is not None and j.spec.event_quantum is not None]
    return JobSpec(None, phases, "shared cluster: " + ", ".join(j.id for j in jobs[:8])
                   + (f" … ({len(jobs)} jobs)" if len(jobs) > 8 else ""), event_quantum=min(asked, default=None))
