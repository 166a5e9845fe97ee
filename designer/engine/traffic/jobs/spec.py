"""Validation of a job workload: ``workload: {"job": {"layout": {...}, "phases": [...]}}``.

A phase is ``{"id": "fwd", "compute_s": 0.01, "patterns": [...], "after": ["..."]}``: it starts
when every phase in ``after`` has finished, runs its compute (``compute_s`` seconds, no network
traffic; after an idle ``wait_s`` when given — a request's arrival) and its patterns (started
together at the phase start), and finishes when both are done.
Pattern ids are unique across the job; ``groups: {"layout": "tp"}`` refers to the job's layout.
A cycle among ``after`` dependencies is a located error. ``template`` (instead of ``phases``)
expands a model template (:mod:`designer.engine.traffic.jobs.models`) on the job's layout, or, with
``"kind": "inference"``, a disaggregated prefill/decode template
(:mod:`designer.engine.traffic.jobs.inference`, no layout needed). ``event_quantum`` (ε, a number
in [0, ``MAX_EVENT_QUANTUM``]) sets the step loop's completion window
(:mod:`designer.engine.traffic.jobs.dag`, "Batched completions"; 0: the exact loop; absent: its default).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from designer.engine.document.bounds import MAX_SECONDS, magnitude_problem
from designer.engine.errors import InvalidWorkload, LimitExceeded, Problem
from designer.engine.traffic.collectives import COLLECTIVE_KINDS, check_algorithm
from designer.engine.traffic.jobs.checks import MAX_PHASES, is_real
from designer.engine.traffic.jobs.inference import expand_inference
from designer.engine.traffic.jobs.layout import Layout, normalize_layout
from designer.engine.traffic.jobs.models import expand_template
from designer.engine.traffic.workloads import normalize_pattern

__all__ = ["MAX_EVENT_QUANTUM", "MAX_PHASES", "JobSpec", "job_overview", "normalize_job"]

_JOB_KEYS = {"layout", "phases", "name", "source", "template", "event_quantum"}
# A wider window would let a re-solve wait longer than a tenth of a pattern's elapsed time: the
# error bound (dag.py) grows with ε and such a step says little about the exact one.
MAX_EVENT_QUANTUM = 0.1
_PHASE_KEYS = {"id", "compute_s", "wait_s", "patterns", "after", "label"}


@dataclass
class JobSpec:
    """A validated job.

    Attributes
    ----------
    layout : Layout or None
    phases : list of dict
        ``id``, ``compute_s`` (s), ``patterns`` (indices into the scenario's flat pattern list),
        ``after`` (phase indices), in document order.
    name : str
    """

    layout: Layout | None
    phases: list = field(default_factory=list)
    name: str = ""
    inference: dict | None = None     # the inference template's numbers (KV bytes, rate, …)
    event_quantum: float | None = None  # ε of the step loop's completion window (None: its default)

    def summary_layout(self) -> dict | None:
        return self.layout.as_dict() if self.layout is not None else None


def normalize_job(topo, raw, where: str = "workload.job", scope=None) -> tuple[list[dict], JobSpec]:
    """The flat list of normalized patterns (every phase's, in order) and the :class:`JobSpec`.

    ``scope`` (node indices) is a shared-cluster job's GPUs, its placement: its layout's ranks
    and its patterns' selectors are over those GPUs (:mod:`designer.engine.traffic.jobs.shared`).

    Raises
    ------
    InvalidWorkload
        Every located problem: unknown keys, bad phases, unknown or cyclic ``after``, bad patterns.
    """
    if not isinstance(raw, dict):
        raise InvalidWorkload("bad job", [Problem(where, "must be an object with \"phases\"")])
    problems = []
    extra = set(raw) - _JOB_KEYS
    if extra:
        problems.append(Problem(where, f"unknown field(s) {sorted(extra)}"))
    layout = None
    if raw.get("layout") is not None:
        try:
            layout = normalize_layout(topo, raw["layout"], f"{where}.layout", scope)
        except InvalidWorkload as exc:
            problems.extend(exc.problems)
    phases_raw = raw.get("phases")
    inference = None
    if "template" in raw and not problems:
        if phases_raw is not None:
            raise InvalidWorkload("invalid job", [Problem(where, "give phases or template, not both")])
        template = raw["template"]
        if isinstance(template, dict) and template.get("kind") == "inference":
            phases_raw, inference = expand_inference(topo, template, f"{where}.template", scope)
        else:
            phases_raw = expand_template(template, layout, f"{where}.template")
    if not isinstance(phases_raw, list) or not phases_raw:
        problems.append(Problem(f"{where}.phases", "must be a non-empty list of phases"))
        raise InvalidWorkload("invalid job", problems)
    if len(phases_raw) > MAX_PHASES:
        raise LimitExceeded(f"the job has {len(phases_raw):,} phases (limit {MAX_PHASES:,})", [Problem(
            f"{where}.phases", f"{len(phases_raw):,} phases exceed the limit of {MAX_PHASES:,}")])
    if problems:
        raise InvalidWorkload("invalid job", problems)
    patterns, phases = [], []
    index = _phase_index(phases_raw, where, problems)
    seen: set = set()
    for k, ph in enumerate(phases_raw):
        phases.append(_phase(topo, ph, f"{where}.phases[{k}]", index, (layout, scope), seen, patterns, problems))
    if not problems:
        _check_acyclic(phases, where, problems)
    quantum = _event_quantum(raw, where, problems)
    if problems:
        raise InvalidWorkload("invalid job", problems)
    return patterns, JobSpec(layout, phases, str(raw.get("name", "")), inference, quantum)


def _event_quantum(raw: dict, where: str, problems: list) -> float | None:
    """The job's ``event_quantum`` (None when absent or refused)."""
    value = raw.get("event_quantum")
    if value is None:
        return None
    if not is_real(value) or not 0 <= value <= MAX_EVENT_QUANTUM:
        problems.append(Problem(f"{where}.event_quantum",
                                f"must be a number from 0 (exact) to {MAX_EVENT_QUANTUM}, got {value!r}"))
        return None
    return float(value)


def _phase_index(phases_raw, where, problems) -> dict:
    index = {}
    for k, ph in enumerate(phases_raw):
        pid = ph.get("id") if isinstance(ph, dict) else None
        if not isinstance(pid, str) or not pid:
            problems.append(Problem(f"{where}.phases[{k}].id", "must be a non-empty string"))
        elif pid in index:
            problems.append(Problem(f"{where}.phases[{k}].id", f"duplicate phase id {pid!r}"))
        else:
            index[pid] = k
    return index


def _phase(topo, ph, where, index, layout_scope, seen, patterns, problems) -> dict:
    layout, scope = layout_scope
    out = {"id": ph.get("id") if isinstance(ph, dict) else None, "compute_s": 0.0, "wait_s": 0.0,
           "patterns": [], "after": []}
    if not isinstance(ph, dict):
        problems.append(Problem(where, "a phase must be an object"))
        return out
    extra = set(ph) - _PHASE_KEYS
    if extra:
        problems.append(Problem(where, f"unknown field(s) {sorted(extra)}"))
    for key in ("compute_s", "wait_s"):
        out[key] = _phase_seconds(ph, key, where, problems)
    after = ph.get("after", [])
    if not isinstance(after, list) or not all(isinstance(a, str) for a in after):
        problems.append(Problem(f"{where}.after", "must be a list of phase ids"))
        after = []
    for j, a in enumerate(after):
        if a not in index:
            problems.append(Problem(f"{where}.after[{j}]", f"unknown phase {a!r}"))
        else:
            out["after"].append(index[a])
    items = ph.get("patterns", [])
    if not isinstance(items, list):
        problems.append(Problem(f"{where}.patterns", "must be a list of patterns"))
        items = []
    for j, item in enumerate(items):
        try:
            pattern = normalize_pattern(topo, item, f"{where}.patterns[{j}]", seen, layout=layout, scope=scope)
            if pattern["kind"] in COLLECTIVE_KINDS:
                check_algorithm(topo, pattern)
        except InvalidWorkload as exc:
            problems.extend(exc.problems)
            continue
        seen.add(pattern["id"])
        out["patterns"].append(len(patterns))
        patterns.append(pattern)
    return out


def _phase_seconds(ph: dict, key: str, where: str, problems: list) -> float:
    """The phase's ``compute_s`` / ``wait_s`` (0 when absent or refused): seconds >= 0, at most
    :data:`~designer.engine.document.bounds.MAX_SECONDS` (50,000 phases of 1e308 s summed to inf)."""
    value = ph.get(key, 0.0)
    too_large = magnitude_problem(f"{where}.{key}", value, MAX_SECONDS, "s")
    if too_large is not None:
        problems.append(too_large)
    elif not _seconds(value):
        problems.append(Problem(f"{where}.{key}", "must be a number of seconds >= 0"))
    else:
        return float(value)
    return 0.0


def _seconds(v) -> bool:
    """A finite number of seconds >= 0 (a 400-digit integer is not: float() of it overflows)."""
    return is_real(v) and v >= 0


def _check_acyclic(phases, where, problems) -> None:
    """Locate the first dependency cycle, iteratively: an imported job chains tens of thousands of
    phases, deeper than Python's recursion limit (a recursive walk was a RecursionError, a 500)."""
    state = [0] * len(phases)        # 0 new, 1 on the stack, 2 done
    for root in range(len(phases)):
        if state[root]:
            continue
        state[root] = 1
        stack = [(root, iter(phases[root]["after"]))]
        while stack:
            k, deps = stack[-1]
            d = next(deps, None)
            if d is None:
                state[k] = 2
                stack.pop()
            elif state[d] == 1:
                trail = [n for n, _ in stack]
                ids = [phases[i]["id"] for i in trail[trail.index(d):] + [d]]
                # A cycle through 50,000 phases is named by its ends, not a 500 kB message.
                cycle = " → ".join(ids if len(ids) <= 12 else ids[:6] + ["…"] + ids[-6:])
                problems.append(Problem(f"{where}.phases[{k}].after", f"dependency cycle {cycle}"))
                return
            elif state[d] == 0:
                state[d] = 1
                stack.append((d, iter(phases[d]["after"])))


def job_overview(raw) -> dict:
    """What a job document holds, for a person to check an import (no topology needed).

    Parameters
    ----------
    raw : dict
        ``{"job": {...}}`` or the job object itself, as written (not normalized).

    Returns
    -------
    dict
        ``name``, ``source`` (``"simai"`` when imported), ``layout`` (as given) and
        ``layout_text`` (``"tp 8 × pp 1 × dp 2"``), ``template`` (the model name, when a
        template), ``phases``, ``compute_phases``, ``compute_s`` (sum of the phases' compute, s —
        not the step time, phases may overlap), ``patterns``, ``kinds`` (kind → ``{"count",
        "bytes"}``, bytes per rank summed over the patterns), ``groups`` (communicator groups
        used, sorted) and ``first_phases`` (up to 12 phase ids, in order).
    """
    job = raw.get("job", raw) if isinstance(raw, dict) else {}
    job = job if isinstance(job, dict) else {}
    phases = [p for p in job.get("phases") or [] if isinstance(p, dict)]
    layout = job.get("layout") if isinstance(job.get("layout"), dict) else None
    compute_s, compute_phases = _compute_totals(phases)
    kinds, groups, n_patterns = _pattern_totals(phases)
    template = job.get("template") if isinstance(job.get("template"), dict) else None
    return {"name": str(job.get("name") or ""), "source": str(job.get("source") or ""), "layout": layout,
            "layout_text": _layout_text(layout) if layout else "",
            "template": _template_text(template) if template else "",
            "phases": len(phases), "compute_phases": compute_phases, "compute_s": compute_s,
            "patterns": n_patterns, "kinds": dict(sorted(kinds.items())), "groups": sorted(groups),
            "first_phases": [str(p.get("id")) for p in phases[:12]]}


def _compute_totals(phases: list[dict]) -> tuple[float, int]:
    """The phases' compute seconds summed, and how many phases compute."""
    total, count = 0.0, 0
    for ph in phases:
        c = ph.get("compute_s") or 0
        if isinstance(c, (int, float)) and c > 0:
            total, count = total + _as_float(c), count + 1
    return total, count


def _pattern_totals(phases: list[dict]) -> tuple[dict, set, int]:
    """Per kind ``{"count", "bytes"}``, the communicator groups named and the pattern count."""
    kinds: dict = {}
    groups: set = set()
    count = 0
    for pat in (p for ph in phases for p in ph.get("patterns") or []):
        if not isinstance(pat, dict):
            continue
        count += 1
        k = kinds.setdefault(str(pat.get("kind")), {"count": 0, "bytes": 0.0})
        k["count"] += 1
        size = pat.get("bytes")
        k["bytes"] += _as_float(size) if isinstance(size, (int, float)) else 0.0
        g = pat.get("groups")
        if isinstance(g, dict):
            groups.add(str(g.get("layout") or g.get("by")))
        elif isinstance(g, str):
            groups.add(g)
    return kinds, groups, count


def _as_float(value: int | float) -> float:
    """``float(value)``, or inf for an integer past the float range: the overview also describes
    jobs stored before the bounds, and a 400-digit size must show as too large, not raise."""
    try:
        return float(value)
    except OverflowError:
        return float("inf") if value > 0 else float("-inf")


def _layout_text(layout: dict) -> str:
    """``"tp 8 × pp 1 × dp 2"``: tp and dp always; the other dimensions when they split anything."""
    return " × ".join(f"{d} {layout[d]}" for d in ("tp", "cp", "ep", "dp", "pp")
                      if isinstance(layout.get(d), int) and (d in ("tp", "dp") or layout[d] > 1))


def _template_text(template: dict) -> str:
    return (("inference (prefill/decode): " if template.get("kind") == "inference" else "")
            + str(template.get("model") or "custom dimensions"))
