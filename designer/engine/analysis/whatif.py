"""What-if engine: failure diffs, N-1 sweeps, chunk merging and NIC-policy comparison (docs/ENGINE.md,
"What-if"; formats in docs/FORMATS.md, "Sweep and comparison").

Entry points
------------
- :func:`simulate_with_diff` — a scenario with ``failures`` → its ``fabricscope.result/1`` with
  ``diff`` filled against the same scenario without failures (disconnected flows with their
  reason, rerouted flows with old/new path and class, per-pattern completion before/after,
  new bottlenecks, largest utilization shifts).
- :func:`sweep_candidates` / :func:`sweep` / :func:`merge_sweeps` — every single failure of a
  class (``nic``, ``pcie_switch``, ``leaf-spine``, …) ranked by impact (``fabricscope.sweep/1``),
  optionally in chunks whose merge equals the unchunked sweep.
- :func:`compare_policies` — the same scenario under several NIC policies, with and without its
  failures (``fabricscope.compare/1``): would unified intra/inter-host routing have saved the job?

Failure semantics (decided here, documented for users)
------------------------------------------------------
- **Stable re-routing.** Flows whose paths avoid every failed element keep their paths; only
  flows that crossed a failed element are routed again (with :func:`~designer.engine.routing.route`
  on the failed topology). This is what resilient ECMP hashing in switches and NCCL's fixed
  channel/NIC bindings do: a failure does not re-shuffle healthy flows. It is also what makes
  sweeps cheap. Degradations never move a flow (routing ignores capacity).
- **Lost flows break patterns.** Flows from or to a node that is down (a dead host's GPUs), or
  whose only NIC is down, are *disconnected*, with the reason. A pattern with a disconnected flow
  does not complete (:mod:`designer.engine.analysis.completion`): ``complete: false``, ``completion_s:
  null``, a ``reason``; ``surviving_completion_s`` shows how the rest fares. A ring all-reduce
  with one lost flow hangs in NCCL; it is never "no slowdown".
- **Ranking.** Most harmful first (:func:`ranking_key`): broken jobs first — more patterns broken,
  then the job after NCCL's fallback (``impact.fallback``, NIC failures: the collective re-planned
  without the failed NICs; no known fallback first, then the larger slowdown), then more flows
  disconnected — then the larger slowdown (of the patterns still completing), then more
  throughput lost; ties keep candidate order. Without the fallback every NIC of a rail-optimized
  pod "breaks the job" alike and the ranking says nothing.
- **Jobs rank by step time.** When the workload is a job (docs/FORMATS.md, Jobs), every state's step
  is re-simulated (:func:`~designer.engine.traffic.jobs.dag.run_job`: phases, dependencies and overlap)
  and ``impact.job`` gives the step before/after; a step that no longer completes (a broken
  communicator hangs it) ranks first, then the larger **step-time** slowdown — a 2× slower
  pattern off the critical path may cost the step nothing. Policy comparisons pick the best
  policy by step time too.
- **Candidates that cannot matter are not ranked**: targets already failed in the scenario, and
  unwired components (a NIC with no link out of its host, a node with no link at all) are listed
  once under ``skipped``.

Why sweeps are fast, and why it is exact
----------------------------------------
The baseline is routed and solved once, and a resource→paths index (CSC of the routes) is built.
Per candidate failure:

1. *Untouched elements* (no baseline path crosses them, no degraded resource carries load) give
   exactly the baseline: same paths, same capacities on every used resource, hence the same
   max-min allocation. They are not solved.
2. *Affected flows* — those whose baseline paths cross a failed resource — are the only ones
   re-routed (stable semantics above, so this is the definition, not an approximation). Their
   routing context is *derived* from the baseline one (:func:`~designer.engine.routing.routing_context`
   with ``base=``): only the hosts holding a failed element
   get a new intra-host shape (shared by every host with the same local failure, so the segment
   and NIC tables of "nic3 down" are built once for all 128 hosts), and fabric distance tables
   are rebuilt only when a fabric element fails. Tests check the derived routes equal routing
   from scratch.
3. The max-min allocation is global (a failure can change rates anywhere in the component of
   shared resources; under a ring all-reduce that is every flow), but it rarely does: the
   re-routed flows are spliced into the nominal CSR and only they are solved, against what the
   other flows leave, then the max-min certificate (every flow has a saturated resource where
   it is largest) is checked on every resource they touch; flows that fail it join the re-solve
   until it holds (:mod:`designer.engine.analysis.whatif_local`). Where a flow could be named
   for two tied bottlenecks, or the re-solve reaches a quarter of the flows, the whole problem
   is solved as before, so every figure, bottleneck names included, is the whole solve's
   (``stats``: ``local_solves`` / ``whole_solves``; ``local=False`` forces the whole solve).
"""
from __future__ import annotations

import copy
import dataclasses
import math
import time

import numpy as np

from designer.engine import routing as _routing
from designer.engine.analysis.diff import compare, echo_failures
from designer.engine.analysis.result_columns import DamagedResult
from designer.engine.analysis.simulate import resource_tiers, simulate
from designer.engine.analysis.shared_cluster import jobs_impact
from designer.engine.analysis.sweep_columns import SWEEP_FORMAT, is_packed, rows
from designer.engine.analysis.whatif_states import (WhatIf, fallback_impact, run_step, split_scenario, state_summary,
                                                  step_impact)
from designer.engine.errors import InvalidScenario, Problem
from designer.engine.traffic.failures import normalize_failures

__all__ = ["SWEEP_FORMAT", "COMPARE_FORMAT", "SWEEP_CLASSES", "simulate_with_diff", "diff_results",
           "sweep_candidates", "sweep_plan", "sweep", "merge_sweeps", "compare_policies", "ranking_key"]

COMPARE_FORMAT = "fabricscope.compare/1"
SWEEP_CLASSES = ("nic", "pcie_switch", "nvswitch", "gpu", "cpu", "leaf-spine", "nic-leaf", "spine-core",
                 "host", "switch", "leaf", "spine", "nvlink_switch_tray", "nvlink")
# Classes that are whole groups of this kind (a GB200 NVL72's NVLink-switch trays, racks.py).
_GROUP_CLASSES = ("nvlink_switch_tray",)


def _progress(progress, fraction: float, message: str) -> None:
    if progress is not None:
        progress(float(min(max(fraction, 0.0), 1.0)), message)


# ======================================================================================== ranking
def _jobs_impact(sc, diff: dict, before: dict, after: dict) -> None:
    """``impact.jobs`` of a shared cluster (several jobs): which jobs break, which slow down
    (:func:`designer.engine.analysis.shared_cluster.jobs_impact`)."""
    if sc.jobs is not None and len(sc.jobs) > 1:
        diff["impact"]["jobs"] = jobs_impact(sc.jobs, before, after)


def ranking_key(entry: dict) -> tuple:
    """Sort key of a sweep ranking entry, most harmful first: broken jobs first (more patterns
    broken, then more flows disconnected), then the larger slowdown (of the patterns that still
    complete, when some broke), then more throughput lost; ties keep candidate order."""
    imp = entry["impact"]
    slowdown = imp["slowdown"] if imp.get("slowdown") is not None else imp.get("slowdown_of_completing")
    return (*_step_key(imp.get("job")), -imp.get("broken_patterns", 0), *_fallback_key(imp),
            -imp["disconnected_flows"], -(slowdown or 1.0), -(imp["throughput_lost_gbps"] or 0.0), entry["index"])


def _fallback_key(imp: dict) -> tuple:
    """Fallback part of :func:`ranking_key`: among failures that break the same patterns, one
    with no known fallback first (nothing runs after re-init, or not computed: only NIC failures
    are re-planned), then the slower job after NCCL's re-initialization (``(0, -1.0)`` when
    nothing broke)."""
    fallback = imp.get("fallback")
    if not imp.get("broken_patterns"):
        return (0, -1.0)
    if not fallback or fallback["unbounded"]:
        return (-1, 0.0)
    return (0, -(fallback.get("slowdown") or 1.0))


def _step_key(step: dict | None) -> tuple:
    """Step-time part of :func:`ranking_key`: a step that does not complete first, then the
    larger step slowdown (``(0, 0)`` for a workload that is not a job)."""
    if not step:
        return (0, 0.0)
    return (-int(step["complete"]["after"] is False), -(step.get("slowdown") or 1.0))


# ======================================================================================== simulate
def simulate_with_diff(scenario, progress=None, *, topology_loader=None) -> dict:
    """Run a scenario and, when it has failures, diff it against the same scenario without them.

    The same as :func:`designer.engine.analysis.simulate.simulate`, which fills ``diff`` itself (kept
    under this name for callers of the what-if API).

    Parameters
    ----------
    scenario : dict or Scenario
        A ``fabricscope.scenario/1`` document; ``failures`` as in :mod:`designer.engine.traffic.failures`.
    progress : callable, optional
        ``progress(fraction, message)``.
    topology_loader : callable, optional
        Resolves a topology given by reference (see ``normalize_scenario``).

    Returns
    -------
    dict
        The ``fabricscope.result/1`` document of the failed scenario (flows, resources and
        summary after the failures) with ``diff``: ``summary`` (counts, per-pattern completion
        and throughput before/after), ``impact`` (as in sweeps), ``disconnected`` (flow, reason,
        old path), ``rerouted`` (old/new path, class and host legs, what it now crosses),
        ``rate_changes``, ``new_bottlenecks``, ``utilization_shifts``. ``diff`` is None without
        failures.

    Raises
    ------
    InvalidScenario
        Among others ``failures[1].target: unknown node or link "h9/nic0"``.
    """
    return simulate(scenario, progress=progress, topology_loader=topology_loader)


def diff_results(scenario, failures: list, *, topology_loader=None) -> dict:
    """Only the ``diff`` of ``scenario`` with ``failures`` added (no result document)."""
    sc, own = split_scenario(scenario, topology_loader)
    w = WhatIf(sc)
    entries = normalize_failures(sc.topology, list(own) + list(failures))
    return compare(w, w.nominal, w.state(entries), details=True)


# ======================================================================================== sweeps
def sweep_candidates(scenario, over, *, degrade: float | None = None, topology_loader=None) -> list[dict]:
    """Every single failure of the chosen classes, in topology order.

    Parameters
    ----------
    scenario : dict or Scenario or Topology
    over : str or list of str
        Classes from :data:`SWEEP_CLASSES`: node kinds ``nic``, ``pcie_switch``, ``nvswitch``,
        ``gpu``, ``cpu``, ``switch``; switch roles ``leaf``, ``spine``; link tiers ``leaf-spine``,
        ``nic-leaf``, ``spine-core``, ``nvlink``; ``host`` (whole host groups); ``nvlink_switch_tray``
        (NVLink-switch tray groups of a GB200 NVL72). A comma-separated string works.
    degrade : float, optional
        When given, each candidate is ``{"mode": "degrade", "factor": degrade}`` instead of down.

    Returns
    -------
    list of dict
        ``{"target": id, "mode": ...}`` failure dicts (no duplicates).

    Raises
    ------
    InvalidScenario
        Unknown class (located at ``over[k]``) or bad factor.
    """
    from designer.engine.model.topology import Topology

    topo = scenario if isinstance(scenario, Topology) else split_scenario(scenario, topology_loader)[0].topology
    classes = [c.strip() for c in over.split(",")] if isinstance(over, str) else list(over or [])
    bad = [Problem(f"over[{k}]", f"unknown class {c!r} (choose from {', '.join(SWEEP_CLASSES)})")
           for k, c in enumerate(classes) if c not in SWEEP_CLASSES]
    if not classes:
        bad.append(Problem("over", "choose at least one class"))
    if degrade is not None and (not isinstance(degrade, (int, float)) or isinstance(degrade, bool)
                                or not 0 < degrade <= 1):
        bad.append(Problem("degrade", "factor must be in (0, 1]"))
    if bad:
        raise InvalidScenario("bad sweep", bad)
    targets = list(dict.fromkeys(t for c in classes for t in _class_targets(topo, c)))
    if degrade is None:
        return [{"target": t, "mode": "down"} for t in targets]
    return [{"target": t, "mode": "degrade", "factor": float(degrade)} for t in targets]


def _class_targets(topo, cls: str) -> list[str]:
    if cls == "host":
        return topo.hosts()
    if cls in _GROUP_CLASSES:
        return [gid for gid, g in topo.groups.items() if g.get("kind") == cls]
    if cls in ("leaf", "spine"):
        roles = ("leaf", "tor") if cls == "leaf" else ("spine",)
        return [topo.node_ids[i] for i in topo.nodes_of_kind("switch") if topo.node_role[i] in roles]
    if cls in ("leaf-spine", "nic-leaf", "spine-core", "nvlink"):
        tiers = resource_tiers(topo)
        return [topo.link_ids[l] for l in range(topo.num_links) if tiers[2 * l] == cls]
    return [topo.node_ids[i] for i in topo.nodes_of_kind(cls)]


def _parse_chunk(chunk, total: int) -> tuple[int, int, int, int] | None:
    if chunk is None:
        return None
    if isinstance(chunk, str):
        try:
            i, n = (int(x) for x in chunk.split("/"))
        except ValueError:
            raise InvalidScenario("bad chunk", [Problem("chunk", f"expected i/n like 0/4, got {chunk!r}")]) from None
    else:
        i, n = chunk
    if not (isinstance(n, int) and isinstance(i, int) and n >= 1 and 0 <= i < n):
        raise InvalidScenario("bad chunk", [Problem("chunk", f"need 0 <= i < n, got {i}/{n}")])
    return i, n, i * total // n, (i + 1) * total // n


def _plan(sc, topo, base_entries: list, over, failures, degrade) -> tuple[list[dict], dict]:
    by_class = sweep_candidates(sc, over, degrade=degrade) if over else []
    if not by_class and not failures:
        raise InvalidScenario("nothing to sweep", [Problem("over", "give failure classes or explicit failures")])
    return _split_candidates(topo, normalize_failures(topo, by_class + list(failures or [])),
                             base_entries, explicit_from=len(by_class))


def sweep_plan(scenario, over=None, *, failures: list | None = None, degrade: float | None = None,
               topology_loader=None) -> dict:
    """The failures :func:`sweep` will evaluate, in its order, and those it skips.

    Returns
    -------
    dict
        ``candidates`` (failure dicts ``{"target", "mode"[, "factor"]}``; block ``chunk=(i, n)``
        of :func:`sweep` is ``candidates[i*N//n:(i+1)*N//n]``) and ``skipped``
        (``already_failed`` labels, ``unwired`` targets with the reason).
    """
    sc, own = split_scenario(scenario, topology_loader)
    topo = sc.topology
    candidates, skipped = _plan(sc, topo, normalize_failures(topo, own), over, failures, degrade)
    return {"candidates": [{x: c[x] for x in ("target", "mode", "factor") if c[x] is not None} for c in candidates],
            "skipped": skipped}


def _unwired(topo, target: str) -> str | None:
    """Why failing ``target`` cannot matter because nothing is wired to it, or None."""
    node = topo.node_index.get(target)
    if node is None:
        return None
    touching = np.flatnonzero((topo.link_a == node) | (topo.link_b == node))
    if not len(touching):
        return "no links"
    if topo.node_kind[node] == "nic":
        host = topo.node_host[node]
        ends = np.where(topo.link_a[touching] == node, topo.link_b[touching], topo.link_a[touching])
        if host is not None and all(topo.node_host[int(e)] == host for e in ends):
            return "no uplink out of its host"
    return None


def _split_candidates(topo, candidates: list[dict], base_entries: list[dict], *, explicit_from: int
                      ) -> tuple[list[dict], dict]:
    """Candidates worth evaluating, and the skipped ones: already failed in the scenario (same
    target and mode, or down), and — among the class candidates (before ``explicit_from``; a
    failure asked for by name is always evaluated) — unwired components."""
    failed = {(str(f["target"]), f["mode"]) for f in base_entries}
    down = {str(f["target"]) for f in base_entries if f["mode"] == "down"}
    keep, already, unwired = [], [], []
    for k, c in enumerate(candidates):
        target = str(c["target"])
        why = _unwired(topo, target) if isinstance(c["target"], str) and k < explicit_from else None
        if (target, c["mode"]) in failed or target in down:
            already.append(c["label"])
        elif why:
            unwired.append({"target": target, "reason": why})
        else:
            keep.append(c)
    return keep, {"already_failed": already, "unwired": unwired}


def sweep(scenario, *, over=None, failures: list | None = None, degrade: float | None = None, chunk=None,
          progress=None, topology_loader=None, derive: bool = True, local: bool = True) -> dict:
    """Rank single failures by impact (``fabricscope.sweep/1``).

    Each candidate is added to the scenario's own failures (if any), and compared with the
    scenario as given: "what is the next failure that hurts most?".

    Parameters
    ----------
    scenario : dict or Scenario
    over : str or list of str, optional
        Failure classes (see :func:`sweep_candidates`).
    failures : list of dict, optional
        Explicit candidates (``{"target", "mode", "factor"}``), evaluated after ``over``'s.
    degrade : float, optional
        Degrade the ``over`` candidates by this factor instead of taking them down.
    chunk : (int, int) or "i/n", optional
        Evaluate only the i-th of n contiguous blocks of candidates (0 <= i < n);
        :func:`merge_sweeps` of all n parts equals the unchunked sweep.
    progress : callable, optional
        ``progress(fraction, message)``.
    derive : bool
        Reuse the baseline routing context across candidates (exact; False routes each
        candidate's affected flows from scratch — for tests).
    local : bool
        Re-solve each failure only where it changes the allocation, proven by the max-min
        certificate (:mod:`designer.engine.analysis.whatif_local`; exact; False re-solves the whole
        problem per failure — for tests and benchmarks).

    Returns
    -------
    dict
        ``format``, ``baseline`` (summary of the scenario as given), ``candidates`` (total),
        ``chunk`` ([i, n] or None), ``evaluated``, ``stats``, and ``ranking``: per candidate
        ``index``, ``failure``, ``label``, ``impact`` (``disconnected_flows``,
        ``job_completion_s`` before/after, ``completion_increase_s``, ``throughput_lost_gbps``,
        ``slowdown``, ``worst_pattern``; for a job also ``job``: the step's ``complete`` and
        ``step_time_s`` before/after, ``slowdown``, ``step_time_increase_s``, ``broken``,
        ``reason``, ``critical_path``) and ``diff_summary`` — most harmful first (a job's by
        step time). A job's ``baseline`` has ``job`` (the step's numbers).

    Raises
    ------
    InvalidScenario
        Unknown class or target (located ``failures[k].target``), bad chunk.
    """
    _progress(progress, 0.0, "validating scenario")
    sc, own = split_scenario(scenario, topology_loader)
    topo = sc.topology
    base_entries = normalize_failures(topo, own)
    candidates, skipped = _plan(sc, topo, base_entries, over, failures, degrade)
    total = len(candidates)
    part = _parse_chunk(chunk, total)
    lo, hi = (part[2], part[3]) if part else (0, total)
    _progress(progress, 0.02, "routing and solving the baseline")
    w = WhatIf(sc, derive=derive, base_entries=base_entries, local=local)
    base = w.state(base_entries) if base_entries else w.nominal
    idle = compare(w, base, base, details=False)
    step0 = run_step(sc, base)
    if step0 is not None:
        idle["impact"]["job"] = step_impact(step0, step0)
        _jobs_impact(sc, idle, step0, step0)
    ranking, stats = [], {"solved": 0, "untouched": 0, "rerouted_flows": 0}
    clock = time.perf_counter()
    for k in range(lo, hi):
        cand = candidates[k]
        if w.unchanged(cand, base):
            diff = copy.deepcopy(idle)
            stats["untouched"] += 1
        else:
            st = w.state(base_entries + [cand])
            diff = compare(w, base, st, details=False)
            fallback = fallback_impact(w, st, diff["summary"])
            if fallback is not None:
                diff["impact"]["fallback"] = fallback
            if step0 is not None:
                step = run_step(sc, st)
                diff["impact"]["job"] = step_impact(step0, step)
                _jobs_impact(sc, diff, step0, step)
            stats["solved"] += 1
            stats["rerouted_flows"] += len(st.affected)
        ranking.append({"index": k, "failure": {x: cand[x] for x in ("target", "mode", "factor") if cand[x] is not None},
                        "label": cand["label"], "impact": diff["impact"], "diff_summary": diff["summary"]})
        now = time.perf_counter()
        if now - clock > 0.5 or k == hi - 1:
            clock = now
            _progress(progress, 0.05 + 0.95 * (k + 1 - lo) / max(hi - lo, 1),
                      f"failure {k + 1 - lo:,}/{hi - lo:,}: {cand['label']}")
    if w.local is not None:
        stats.update({f"{k}_solves": w.local.stats[k] for k in ("local", "whole")})
    ranking.sort(key=ranking_key)
    return {"format": SWEEP_FORMAT,
            "scenario": {"routing": dict(sc.routing), "mode": sc.mode, "failures": echo_failures(base_entries)},
            "over": ([c.strip() for c in over.split(",")] if isinstance(over, str) else list(over)) if over else None,
            "degrade": degrade, "baseline": state_summary(w, base, step0), "candidates": total,
            "chunk": [part[0], part[1]] if part else None, "evaluated": hi - lo, "stats": stats,
            "skipped": skipped, "ranking": ranking}


def merge_sweeps(parts: list[dict]) -> dict:
    """Merge chunked sweeps (any order; each in row form or stored columnar,
    :mod:`~designer.engine.analysis.sweep_columns`) into the unchunked sweep, in row form.

    Raises
    ------
    InvalidScenario
        Parts of different sweeps, missing or repeated chunks, damaged columns (located ``parts[k]``).
    """
    if not parts:
        raise InvalidScenario("nothing to merge", [Problem("parts", "no sweep parts")])
    parts, problems = _row_parts(parts), []
    head = parts[0]
    seen: dict[int, int] = {}
    for k, p in enumerate(parts):
        if not isinstance(p, dict) or p.get("format") != SWEEP_FORMAT:
            problems.append(Problem(f"parts[{k}]", f"not a {SWEEP_FORMAT} document"))
            continue
        for key in ("baseline", "candidates", "scenario", "over", "degrade", "skipped"):
            if p.get(key) != head.get(key):
                problems.append(Problem(f"parts[{k}].{key}", "differs from parts[0]: not chunks of one sweep"))
        ch = p.get("chunk") or [0, 1]
        if ch[1] != (head.get("chunk") or [0, 1])[1]:
            problems.append(Problem(f"parts[{k}].chunk", "chunk counts differ"))
        if ch[0] in seen:
            problems.append(Problem(f"parts[{k}].chunk", f"chunk {ch[0]} repeats parts[{seen[ch[0]]}]"))
        seen[ch[0]] = k
    n = (head.get("chunk") or [0, 1])[1]
    missing = sorted(set(range(n)) - set(seen))
    if missing and not problems:
        problems.append(Problem("parts", f"missing chunk(s) {missing} of {n}"))
    if problems:
        raise InvalidScenario("cannot merge sweeps", problems)
    ranking = sorted((e for p in parts for e in p["ranking"]), key=ranking_key)
    stats = {k: sum(p["stats"][k] for p in parts) for k in head["stats"]}
    return {**head, "chunk": None, "evaluated": sum(p["evaluated"] for p in parts), "stats": stats,
            "ranking": ranking}


def _row_parts(parts: list) -> list:
    """The parts in row form; a packed part whose columns are damaged is a located problem."""
    out, problems = [], []
    for k, p in enumerate(parts):
        try:
            out.append(rows(p) if is_packed(p) else p)
        except DamagedResult as exc:
            problems.append(Problem(f"parts[{k}]", str(exc)))
    if problems:
        raise InvalidScenario("cannot merge sweeps", problems)
    return out


# ======================================================================================== policies
def compare_policies(scenario, *, policies=("affinity", "pxn", "any"), progress=None, topology_loader=None) -> dict:
    """The same scenario under several NIC policies, with and without its failures.

    Parameters
    ----------
    scenario : dict or Scenario
    policies : sequence of str
        NIC policies (``affinity``, ``pxn``, ``any``, ``static``).
    progress : callable, optional

    Returns
    -------
    dict
        ``{"format": "fabricscope.compare/1", "failures": [...], "policies": {name: {"baseline":
        summary, "with_failures": summary or None, "impact": ... or None, "diff_summary": ...}},
        "policy_order": [name, ...], "best": {"baseline": name, "with_failures": name},
        "headline": str}``. For a job each
        summary has ``job`` (step numbers) and ``impact.job``; ``best`` is the shortest step.

    Raises
    ------
    InvalidScenario
        Unknown policy (located ``policies[k]``) or bad scenario.
    """
    policies = [p.strip() for p in policies.split(",")] if isinstance(policies, str) else list(policies)
    bad = [Problem(f"policies[{k}]", f"unknown policy {p!r} (choose from {', '.join(_routing.NIC_POLICIES)})")
           for k, p in enumerate(policies) if p not in _routing.NIC_POLICIES]
    if bad or not policies:
        raise InvalidScenario("bad policies", bad or [Problem("policies", "choose at least one policy")])
    sc, own = split_scenario(scenario, topology_loader)
    entries = normalize_failures(sc.topology, own)
    out = {}
    for k, pol in enumerate(policies):
        _progress(progress, k / len(policies), f"policy {pol}")
        w = WhatIf(dataclasses.replace(sc, routing={**sc.routing, "nic_policy": pol}))
        step0 = run_step(sc, w.nominal)
        entry = {"baseline": state_summary(w, w.nominal, step0), "with_failures": None, "impact": None,
                 "diff_summary": None}
        if entries:
            st = w.state(entries)
            diff = compare(w, w.nominal, st, details=False)
            step = run_step(sc, st)
            if step is not None:
                diff["impact"]["job"] = step_impact(step0, step)
            entry.update({"with_failures": state_summary(w, st, step), "impact": diff["impact"],
                          "diff_summary": diff["summary"]})
        out[pol] = entry
    _progress(progress, 1.0, "done")
    best = {"baseline": _best(out, "baseline"), "with_failures": _best(out, "with_failures") if entries else None}
    return {"format": COMPARE_FORMAT, "scenario": {"routing": dict(sc.routing), "mode": sc.mode},
            "failures": echo_failures(entries), "policies": out,
            # The order asked for: a JSON object's key order does not survive every store
            # (PostgreSQL's jsonb sorts keys), so readers that show policies in turn use this list.
            "policy_order": list(out),
            "best": best, "headline": _headline(out, best, entries)}


def _best(out: dict, which: str) -> str | None:
    def key(item):
        s = item[1][which]
        step = s.get("job")
        if step is not None:       # a job: the step time decides (a step that hangs is worst)
            t = step["step_time_s"]
            return (not step["complete"], math.inf if t is None else t, s["unroutable"])
        job = s["job_completion_s"]
        return (len(s["broken"]), s["unroutable"], math.inf if job is None else job)

    return min(out.items(), key=key)[0] if out else None


def _headline(out: dict, best: dict, entries: list) -> str:
    which = "with_failures" if entries else "baseline"
    parts = []
    for pol, e in out.items():
        s = e[which]
        job = s["job"]["step_time_s"] if s.get("job") else s["job_completion_s"]
        unit = "step " if s.get("job") else ""
        txt = f"{pol}: " + (f"{unit}{job * 1e3:.3f} ms" if job is not None else "does not complete")
        if s["unroutable"]:
            txt += f", {s['unroutable']:,} flow(s) disconnected"
        parts.append(txt)
    lead = "with failures " + ", ".join(f["label"] for f in entries) if entries else "without failures"
    return f"{lead} — " + "; ".join(parts) + f". Best: {best[which]}."
