"""The ``fabricscope.scenario/1`` format: validation and normalization (docs/FORMATS.md, Scenario).

:func:`normalize_scenario` checks a scenario dict and returns a :class:`Scenario` whose topology is
compiled and whose selectors are resolved to node indices. Every problem is reported with its
location (``workload[2].participants: selector matches no node``), never as a traceback.

Fields beyond the contract (added, nothing renamed):

- ``topology`` may be a document, a path (resolved by ``topology_loader``, the CLI's file reader),
  an already compiled :class:`Topology`, or ``{"build": {"template": "dgx-h100", "hosts": 2,
  "fabric": "rail-optimized", ...}}`` (the arguments of ``fabrics.build_cluster``);
- ``latency``: ``{"message_bytes": 65536, "initiators": ["cpu_proxy", "gpu_initiated"],
  "flows": ["ar#0", ...] (optional; default the slowest flow of each pattern)}``;
- ``options``: ``{"max_flows_listed": 20000}``;
- ``workload`` may be ``{"job": {"layout": {...}, "phases": [...]}}`` (docs/FORMATS.md, Jobs): a step
  as a DAG of phases (:mod:`designer.engine.traffic.jobs.spec`); ``patterns`` is then every phase's
  patterns, in order, and ``job`` the :class:`~designer.engine.traffic.jobs.spec.JobSpec`;
- ``jobs`` (instead of ``workload``, never both): a shared cluster, many jobs with placements
  (:mod:`designer.engine.traffic.jobs.shared`); ``jobs`` is then the placed jobs, ``patterns``
  all of theirs and ``job`` the step that runs them together.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from designer.engine.traffic.collectives import COLLECTIVE_KINDS, check_algorithm
from designer.engine.errors import EngineError, InvalidScenario, InvalidWorkload, LimitExceeded, Problem
from designer.engine.traffic.failures import normalize_failures, resolve_failures
from designer.engine.traffic.jobs.shared import normalize_jobs
from designer.engine.traffic.jobs.spec import normalize_job
from designer.engine.routing import MULTIPATH_MODES, NIC_POLICIES, FailureSet
from designer.engine.model.hop_latency import DEFAULTS as LATENCY_DEFAULTS
from designer.engine.model.topology import Topology
from designer.engine.traffic.workloads import MAX_FLOWS, normalize_pattern, pattern_flow_count

__all__ = ["FORMAT", "MODES", "INITIATORS", "DEFAULT_MAX_FLOWS_LISTED", "Scenario", "normalize_scenario",
           "apply_failures"]

FORMAT = "fabricscope.scenario/1"
MODES = ("steady", "timeline")
INITIATORS = ("cpu_proxy", "gpu_initiated")
# A result lists at most this many flows (summaries always cover all): 20k flow records are
# ~10 MB of JSON, about what a browser view or a notebook handles comfortably.
DEFAULT_MAX_FLOWS_LISTED = 20_000
_TOP_KEYS = {"format", "name", "description", "topology", "workload", "routing", "failures", "mode",
             "latency", "options", "jobs"}


@dataclass
class Scenario:
    """A validated scenario.

    Attributes
    ----------
    topology : Topology
    patterns : list of dict
        Normalized patterns (selectors resolved to node-index arrays; see ``workloads``).
    routing : dict
        ``nic_policy``, ``multipath``, ``seed``.
    failures : list of dict
        As :func:`designer.engine.traffic.failures.normalize_failures` returns them: ``target`` (as
        given), ``mode``, ``factor``, ``label`` and the resolved ``nodes`` / ``links`` indices.
    mode : str
    latency : dict or None
    max_flows_listed : int
    raw : dict
        The scenario as given (the topology field replaced by its name).
    """

    topology: Topology
    patterns: list[dict]
    routing: dict
    failures: list[dict] = field(default_factory=list)
    mode: str = "steady"
    latency: dict | None = None
    max_flows_listed: int = DEFAULT_MAX_FLOWS_LISTED
    raw: dict = field(default_factory=dict)
    job: object = None
    jobs: list | None = None     # PlacedJob per job of a shared cluster (None: a single workload)


def normalize_scenario(scenario: dict, *, topology_loader=None) -> Scenario:
    """Validate a ``fabricscope.scenario/1`` dict.

    Parameters
    ----------
    scenario : dict
    topology_loader : callable, optional
        ``loader(reference) -> document dict`` for a topology given as a string (a path for the
        CLI, a revision reference for the API). Each call must return a new dict nobody else
        holds (the CLI's file reader parses one): it is normalized in place, not copied. It may
        return a compiled ``Topology`` instead (the CLI's ``simulate`` reads a file into columns).

    Returns
    -------
    Scenario

    Raises
    ------
    InvalidScenario
        Bad format, routing, mode, failures, latency or options fields; bad topology (its
        problems relocated under ``topology.``).
    InvalidWorkload
        Bad patterns or selectors.
    LimitExceeded
        More than ``workloads.MAX_FLOWS`` flows.
    """
    if isinstance(scenario, Scenario):
        return scenario
    if not isinstance(scenario, dict):
        raise InvalidScenario("a scenario must be a JSON object", [Problem("", "not an object")])
    problems: list[Problem] = []
    fmt = scenario.get("format", FORMAT)
    if fmt != FORMAT:
        problems.append(Problem("format", f"expected {FORMAT!r}, got {fmt!r}"))
    unknown = set(scenario) - _TOP_KEYS
    if unknown:
        problems.append(Problem("", f"unknown field(s) {sorted(unknown)}"))
    routing = _routing(scenario.get("routing"), problems)
    mode = scenario.get("mode", "steady")
    if mode not in MODES:
        problems.append(Problem("mode", f"unknown mode {mode!r} (steady or timeline)"))
    latency = _latency(scenario.get("latency"), problems)
    listed = _options(scenario.get("options"), problems)
    if "jobs" in scenario and scenario.get("workload") is not None:
        problems.append(Problem("jobs", "give workload or jobs, not both (a single workload is one job)"))
    if problems:
        raise InvalidScenario("invalid scenario", problems)
    topo = _topology(scenario.get("topology"), topology_loader)
    jobs = None
    if "jobs" in scenario:
        patterns, job, jobs = normalize_jobs(topo, scenario["jobs"])
        _check_flow_limit(patterns, "jobs")
    else:
        patterns, job = _workload_or_job(topo, scenario.get("workload"))
    failures = _failures(topo, scenario.get("failures"))
    raw = {k: v for k, v in scenario.items() if k != "topology"}
    raw["topology"] = topo.name
    return Scenario(topo, patterns, routing, failures, mode, latency, listed, raw, job, jobs)


def _check_flow_limit(patterns: list[dict], where: str) -> None:
    """Refuse up front a workload that makes more than ``MAX_FLOWS`` flows whichever algorithms
    its ``auto`` collectives get (the fewest any could make); generation counts the flows of
    the planned algorithms as it builds them (:func:`~designer.engine.traffic.workloads.generate`)."""
    total = sum(pattern_flow_count(p, min) for p in patterns)
    if total > MAX_FLOWS:
        raise LimitExceeded(f"the workload makes at least {total:,} flows (limit {MAX_FLOWS:,})",
                            [Problem(where, f"{total:,} flows exceed the limit of {MAX_FLOWS:,}")])


def _workload_or_job(topo: Topology, raw):
    """(patterns, job): a list of patterns, or ``{"job": ...}`` (the job's phases' patterns)."""
    if not isinstance(raw, dict):
        return _workload(topo, raw), None
    extra = set(raw) - {"job"}
    if extra or "job" not in raw:
        raise InvalidWorkload("bad workload", [Problem("workload", "must be a list of patterns or "
                                                                   "{\"job\": {...}}" + (f" (unknown field(s) {sorted(extra)})" if extra else ""))])
    patterns, job = normalize_job(topo, raw["job"])
    _check_flow_limit(patterns, "workload")
    return patterns, job


def _routing(raw, problems) -> dict:
    out = {"nic_policy": "affinity", "multipath": "hash", "seed": 0}
    if raw is None:
        return out
    if not isinstance(raw, dict):
        problems.append(Problem("routing", "must be an object"))
        return out
    extra = set(raw) - set(out)
    if extra:
        problems.append(Problem("routing", f"unknown field(s) {sorted(extra)}"))
    out.update({k: raw[k] for k in out if k in raw})
    if out["nic_policy"] not in NIC_POLICIES:
        problems.append(Problem("routing.nic_policy", f"unknown policy {out['nic_policy']!r} "
                                f"(choose from {', '.join(NIC_POLICIES)})"))
    if out["multipath"] not in MULTIPATH_MODES:
        problems.append(Problem("routing.multipath", f"unknown mode {out['multipath']!r} (hash or split)"))
    if not isinstance(out["seed"], int) or isinstance(out["seed"], bool):
        problems.append(Problem("routing.seed", "must be an integer"))
    return out


def _latency(raw, problems) -> dict | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        problems.append(Problem("latency", "must be an object"))
        return None
    size = raw.get("message_bytes", 65536)
    if not isinstance(size, (int, float)) or isinstance(size, bool) or not size > 0:
        problems.append(Problem("latency.message_bytes", "must be a number of bytes > 0"))
    initiators = raw.get("initiators", list(INITIATORS))
    if not isinstance(initiators, list) or not initiators or any(i not in INITIATORS for i in initiators):
        problems.append(Problem("latency.initiators", f"must be a non-empty list of {', '.join(INITIATORS)}"))
    flows = raw.get("flows")
    if flows is not None and (not isinstance(flows, list) or not all(isinstance(f, str) for f in flows)):
        problems.append(Problem("latency.flows", "must be a list of flow ids like \"ar#0\""))
    overrides = raw.get("overrides", {})
    if not isinstance(overrides, dict):
        problems.append(Problem("latency.overrides", "must be an object of constant name -> ns"))
    else:
        _latency_overrides(overrides, problems)
    extra = set(raw) - {"message_bytes", "initiators", "flows", "overrides"}
    if extra:
        problems.append(Problem("latency", f"unknown field(s) {sorted(extra)}"))
    return {"message_bytes": size, "initiators": initiators, "flows": flows, "overrides": overrides}


def _latency_overrides(overrides: dict, problems) -> None:
    """Each override names a constant of :data:`~designer.engine.model.hop_latency.DEFAULTS`
    with a value in ns >= 0: checked when the scenario is saved, not when its result is computed."""
    for name, value in overrides.items():
        if name not in LATENCY_DEFAULTS:
            problems.append(Problem(f"latency.overrides.{name}",
                                    f"unknown constant (choose from {', '.join(sorted(LATENCY_DEFAULTS))})"))
        elif not isinstance(value, (int, float)) or isinstance(value, bool) or not value >= 0:
            problems.append(Problem(f"latency.overrides.{name}", "must be ns >= 0"))


def _options(raw, problems) -> int:
    if raw is None:
        return DEFAULT_MAX_FLOWS_LISTED
    if not isinstance(raw, dict):
        problems.append(Problem("options", "must be an object"))
        return DEFAULT_MAX_FLOWS_LISTED
    listed = raw.get("max_flows_listed", DEFAULT_MAX_FLOWS_LISTED)
    if not isinstance(listed, int) or isinstance(listed, bool) or listed < 0:
        problems.append(Problem("options.max_flows_listed", "must be an integer >= 0"))
        return DEFAULT_MAX_FLOWS_LISTED
    return listed


def _topology(raw, loader) -> Topology:
    if isinstance(raw, Topology):
        return raw
    if raw is None:
        raise InvalidScenario("missing topology", [Problem("topology", "missing")])
    # Only the document the loader just read is ours to complete in place (no normalized
    # copy); a document given inline belongs to the caller.
    owned = isinstance(raw, str)
    if owned:
        if loader is None:
            raise InvalidScenario("topology reference without a loader", [Problem(
                "topology", "a topology given by reference needs a loader (give the document inline)")])
        raw = loader(raw)
        if isinstance(raw, Topology):
            return raw
    if isinstance(raw, dict) and "build" in raw:
        raw, owned = _build(raw["build"]), False
    if not isinstance(raw, dict):
        raise InvalidScenario("bad topology", [Problem("topology", "must be a topology document")])
    try:
        return Topology.from_document(raw, owned=owned)
    except EngineError as exc:
        located = [Problem(f"topology.{p.path}" if p.path else "topology", p.message) for p in exc.problems]
        raise type(exc)(exc.message, located or [Problem("topology", exc.message)]) from None


def _build(spec) -> dict:
    if not isinstance(spec, dict) or "template" not in spec:
        raise InvalidScenario("bad topology.build", [Problem("topology.build", 'needs {"template": ..., "hosts": N}')])
    from designer.engine.model.fabrics import build_cluster  # local: fabrics is heavy and optional here

    args = dict(spec)
    template = args.pop("template")
    hosts = args.pop("hosts", 2)
    try:
        return build_cluster(template, hosts, **args)
    except TypeError as exc:
        raise InvalidScenario("bad topology.build", [Problem("topology.build", str(exc))]) from None


def _workload(topo: Topology, raw) -> list[dict]:
    if raw is None:
        raw = []
    if not isinstance(raw, list):
        raise InvalidWorkload("bad workload", [Problem("workload", "must be a list of patterns")])
    problems, patterns, seen = [], [], set()
    for k, item in enumerate(raw):
        try:
            pattern = normalize_pattern(topo, item, f"workload[{k}]", seen)
            if pattern["kind"] in COLLECTIVE_KINDS:
                check_algorithm(topo, pattern)   # an explicit algorithm must run on this topology
        except InvalidWorkload as exc:
            problems.extend(exc.problems)
            continue
        seen.add(pattern["id"])
        patterns.append(pattern)
    if problems:
        raise InvalidWorkload("invalid workload", problems)
    _check_flow_limit(patterns, "workload")
    return patterns


def _failures(topo: Topology, raw) -> list[dict]:
    # One implementation of failure targets (ids, groups, node and link selectors) and messages.
    return normalize_failures(topo, raw)


def apply_failures(topo: Topology, failures: list[dict]) -> tuple[FailureSet, np.ndarray]:
    """The routing failure set and the per-resource capacities after ``failures``.

    Kept for callers of the first API; it is :func:`designer.engine.traffic.failures.resolve_failures`
    (``down`` removes nodes/links from routing, ``degrade`` multiplies capacity once per
    resource) with the multipliers applied to the topology's capacities.
    """
    failed, mult = resolve_failures(topo, failures)
    return failed, topo.resource_capacity_gbps() * mult
