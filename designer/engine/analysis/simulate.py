"""Scenario → result: workload, routing, max-min solve, summaries (``fabricscope.result/1``).

:func:`simulate` is the one-call entry point used by the CLI, the API and the Celery tasks. The
stages are also public so the what-if engine can reuse them without re-doing work:

>>> prep = prepare(scenario)                      # topology, flows, routes, capacities
>>> solved = solve_prepared(prep)                 # rates, bottlenecks, completion times
>>> result = build_result(prep, solved)           # the JSON document

A scenario with ``failures`` is simulated as a what-if, always: the failure-free baseline is
prepared and solved, :func:`prepare_failures` re-routes only the flows whose paths cross a failed
element (stable re-routing, see :mod:`designer.engine.analysis.whatif`), and the result's ``diff`` compares
the two (:mod:`designer.engine.analysis.diff`). Sweeps reuse exactly these stages per candidate failure.

A flow split over several paths (ECMP ``split``, ``any`` + ``split`` over NICs, NVLink striping
inside a host) is solved as sub-flows, one per distinct path, each carrying ``share`` of the
flow's bytes and demand, with solver weight = ``share`` (:mod:`designer.engine.routing`,
"Fairness"): a flow's weights sum to 1, so it competes as *one* flow on every resource all its
sub-flows cross, however it is striped. At water level λ a sub-flow of weight w runs at w·λ;
the solver reports each sub-flow's level λ_p (``Allocation.flow_level``). Per flow:

- ``rate = Σ_p w_p·λ_p``, the sum of its sub-flows' rates (the load it puts on a resource all
  of them cross); when they freeze together (the common case: same bottleneck, or symmetric
  ones) the levels are one λ and the rate is exactly λ (Σ w = 1);
- ``completion = bytes / min_p λ_p``: striping is proportional, not adaptive, so each sub-flow
  carries ``share · bytes`` at ``w·λ_p`` and finishes after ``bytes / λ_p``; the flow completes
  with its slowest sub-flow, whose bottleneck is reported as the flow's. With a common λ this is
  ``bytes / rate``; when sub-flows freeze at different levels (paths with different bottlenecks)
  the completion is later than ``bytes / rate``, the "weighted fair share per path"
  approximation of a striped flow (the fast stripes finish first and idle).

In steady mode a pattern's completion is the largest completion of its flows; ``mode:
"timeline"`` re-solves at every sub-flow completion instead
(:func:`designer.engine.solve.solver.timeline`), a flow completing with its last sub-flow.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from designer.engine.analysis.bottlenecks import rank_bottlenecks
from designer.engine.analysis.completion import (headline, job_completion, pattern_completions,
                                                 pattern_time_model)
from designer.engine.analysis.diff import Frame, Outcome, compare, echo_failures, fallback_applies, fallback_impact
from designer.engine.analysis.flow_rates import flow_completions, per_flow, run_timeline
from designer.engine.analysis.latency import latency_section
from designer.engine.analysis.listed_flows import flow_records, json_floats, pick_listed
from designer.engine.analysis.result_groups import group_resource_arrays
from designer.engine.analysis.result_summary import (add_fallbacks, bottleneck_lists, class_counts, pattern_summary,
                                                     tier_utilization)
from designer.engine.model.tiers import TIERS, resource_tier, resource_tiers
from designer.engine.model.topology import Topology
from designer.engine.collector import gc_paused
from designer.engine.numbers import first_appearance_codes, json_float as _num
from designer.engine.routing import Routes, route, routing_context
from designer.engine.routing.splice import splice_flows
from designer.engine.solve import solver
from designer.engine.traffic.failures import failed_resources, resolve_failures
from designer.engine.traffic.flows import Flows
from designer.engine.traffic.scenario import Scenario, normalize_scenario
from designer.engine.traffic.workloads import generate

__all__ = ["RESULT_FORMAT", "TIERS", "Prepared", "Solved", "prepare", "prepare_failures", "flows_crossing",
           "solve_prepared", "build_result", "simulate", "gc_paused", "resource_tier", "resource_tiers"]

RESULT_FORMAT = "fabricscope.result/1"
# Relative tolerance for "saturated" (the solver freezes at capacity up to rounding).
_SATURATED = 1e-6
# Sub-flows from which identical ones are grouped before solving (see _aggregation).
_AGGREGATE_MIN_PATHS = 100_000


@dataclass
class Prepared:
    """Everything before the solve: reusable by the what-if engine.

    ``capacity_gbps`` already includes ``degrade`` failures; ``failed`` is the routing failure
    set of ``down`` failures; ``failures`` the normalized entries applied (what the result
    echoes); ``affected`` the flows re-routed against the baseline (:func:`prepare_failures`).
    """

    scenario: Scenario
    topology: Topology
    flows: Flows
    routes: Routes
    capacity_gbps: np.ndarray
    failed: object = None
    timings_s: dict = field(default_factory=dict)
    failures: list = field(default_factory=list)
    affected: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))


@dataclass
class Solved:
    """Solver output per path and its aggregation per flow and pattern."""

    path_rate_gbps: np.ndarray
    path_bottleneck: np.ndarray
    load_gbps: np.ndarray
    utilization: np.ndarray
    flow_rate_gbps: np.ndarray       # Σ of its sub-flows' rates; NaN for unroutable flows
    flow_bottleneck: np.ndarray      # of its slowest sub-flow; -1 demand-limited / unroutable
    flow_completion_s: np.ndarray    # bytes / slowest level; NaN unroutable, inf when it is 0
    levels: int = 0
    timeline: dict | None = None
    timings_s: dict = field(default_factory=dict)


def _progress(progress, fraction: float, message: str) -> None:
    if progress is not None:
        progress(float(fraction), message)


def prepare(scenario, *, progress=None, topology_loader=None, failures: list | None = None) -> Prepared:
    """Validate, generate flows and route them.

    Parameters
    ----------
    scenario : dict or Scenario
    progress : callable, optional
        ``progress(fraction, message)``.
    topology_loader : callable, optional
        See :func:`designer.engine.traffic.scenario.normalize_scenario`.
    failures : list of dict, optional
        Failures to apply instead of the scenario's own (``[]`` = the baseline), routing every
        flow from scratch under them. :func:`simulate` uses :func:`prepare_failures` instead.
    """
    t0 = time.perf_counter()
    _progress(progress, 0.0, "validating scenario")
    sc = normalize_scenario(scenario, topology_loader=topology_loader)
    topo = sc.topology
    t1 = time.perf_counter()
    _progress(progress, 0.1, "generating flows")
    flows = generate(topo, sc.patterns, sc.routing)
    t2 = time.perf_counter()
    _progress(progress, 0.2, f"routing {len(flows):,} flows")
    entries = sc.failures if failures is None else failures
    failed, mult = resolve_failures(topo, entries)
    routes = route(topo, flows, failed=failed, **sc.routing)
    t3 = time.perf_counter()
    return Prepared(sc, topo, flows, routes, topo.resource_capacity_gbps() * mult, failed,
                    {"validate": t1 - t0, "flows": t2 - t1, "route": t3 - t2}, list(entries))


def flows_crossing(prep: Prepared, resources) -> np.ndarray:
    """Flows (sorted) whose paths in ``prep`` cross any of ``resources`` (a resource → paths
    index is built once per ``prep``)."""
    resources = np.asarray(resources, dtype=np.int64)
    index = prep.__dict__.get("_crossing")
    if index is None:
        r, n_res = prep.routes, prep.topology.num_resources
        counts = np.bincount(r.flow_res, minlength=n_res) if len(r.flow_res) else np.zeros(n_res, np.int64)
        ptr = np.zeros(n_res + 1, dtype=np.int64)
        np.cumsum(counts, out=ptr[1:])
        entry_path = np.repeat(np.arange(r.num_paths, dtype=np.int64), np.diff(r.flow_ptr))
        index = prep.__dict__["_crossing"] = (ptr, entry_path[np.argsort(r.flow_res, kind="stable")])
    ptr, paths = index
    if len(resources) == 0:
        return np.zeros(0, dtype=np.int64)
    starts, lens = ptr[resources], ptr[resources + 1] - ptr[resources]
    total = int(lens.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    pos = np.arange(total, dtype=np.int64) + np.repeat(starts - (np.cumsum(lens) - lens), lens)
    return np.unique(prep.routes.owner[paths[pos]])


def prepare_failures(base: Prepared, failures: list, *, derive_from=None, derive: bool = True,
                     splice: bool = False) -> Prepared:
    """``base`` (prepared without failures) under ``failures``, with stable re-routing.

    Flows whose paths avoid every failed element keep them; only the flows crossing one are
    routed again (as resilient ECMP and NCCL's fixed NIC bindings behave); ``degrade`` only
    scales capacities.

    Parameters
    ----------
    base : Prepared
        The failure-free preparation of the scenario.
    failures : list of dict
        Raw or normalized failure entries (see :mod:`designer.engine.traffic.failures`).
    derive_from : RoutingContext, optional
        Context whose failures are a subset of ``failures``' to derive from (default: the
        failure-free one); sweeps pass the context of their own base failures.
    derive : bool
        False routes the affected flows with a context built from scratch (same routes; tests).
    splice : bool
        Patch the re-routed flows into the nominal routes by slices
        (:func:`~designer.engine.routing.splice.splice_flows`: the same arrays as
        ``replace_flows``, cheaper when few flows move; a sweep's per-failure states).

    Returns
    -------
    Prepared
        With ``affected`` = the re-routed flows.
    """
    t0 = time.perf_counter()
    topo, sc = base.topology, base.scenario
    failed, mult = resolve_failures(topo, failures)
    routes, affected = base.routes, np.zeros(0, dtype=np.int64)
    if failed.nodes or failed.links:
        affected = flows_crossing(base, failed_resources(topo, failed))
        if len(affected):
            if derive:
                ctx = routing_context(topo, failed, base=derive_from or routing_context(topo))
                sub = route(topo, base.flows.take(affected), context=ctx, **sc.routing)
            else:
                sub = route(topo, base.flows.take(affected), failed=failed, **sc.routing)
            routes = splice_flows(base.routes, affected, sub) if splice else base.routes.replace_flows(affected, sub)
    timings = {**base.timings_s, "reroute": time.perf_counter() - t0}
    return Prepared(sc, topo, base.flows, routes, topo.resource_capacity_gbps() * mult, failed, timings,
                    list(failures), affected)


def solve_prepared(prep: Prepared, *, mode: str | None = None, progress=None) -> Solved:
    """Max-min fair rates (and, in timeline mode, completion times re-solved at every completion).

    Returns
    -------
    Solved
    """
    mode = mode or prep.scenario.mode
    routes, flows = prep.routes, prep.flows
    owner = routes.owner
    demand = flows.demand_gbps[owner] * routes.share
    _progress(progress, 0.5, f"solving {routes.num_paths:,} paths")
    t0 = time.perf_counter()
    aggregation = _aggregation(prep, demand)
    alloc = solver.maxmin(prep.capacity_gbps, routes.flow_ptr, routes.flow_res, demand,
                          weights=routes.weight, aggregate=aggregation)
    t1 = time.perf_counter()
    rate, bneck, completion = per_flow(routes, flows, alloc.rates_gbps, alloc.bottleneck,
                                       alloc.flow_level, copied=_copied(routes, aggregation))
    solved = Solved(alloc.rates_gbps, alloc.bottleneck, alloc.load_gbps, alloc.utilization, rate, bneck,
                    completion, int(getattr(alloc, "levels", 0) or 0), timings_s={"solve": t1 - t0})
    if mode == "timeline":
        _progress(progress, 0.65, "timeline: re-solving at every completion")
        run_timeline(prep, solved, demand)
        solved.timings_s["timeline"] = time.perf_counter() - t1
    return solved


def _copied(routes: Routes, aggregation):
    """:func:`~designer.engine.analysis.flow_rates.per_flow`'s ``copied`` when the solve was grouped
    on the distinct routes ``routes`` were laid out from (its answers are then equal on every
    copy), else None."""
    if aggregation is False or aggregation.copies is None or routes.copied_from is None:
        return None
    distinct, rep = routes.copied_from
    return distinct, rep, aggregation.copies[1]


def _aggregation(prep: Prepared, demand: np.ndarray):
    """The groups of identical sub-flows of ``prep.routes`` under ``demand``
    (:func:`designer.engine.solve.maxmin.aggregate_identical`), or False when there are too few to
    merge; found once per preparation and reused by every re-solve (bottleneck relief).

    A ring all-reduce sends the same bytes between the same neighbours on every channel: on
    16,384 GPUs its 475,136 sub-flows are 81,920 distinct ones, and a grouped solve takes about
    half the time (the grouping is paid once). Routes laid out from distinct ones (a tree's
    chain flows, repeated under both trees and every channel) are grouped on those
    (``aggregate_copies``: the same groups; 3.2 M flows' 11.6 M paths are copies of 1.2 M at
    100,000 GPUs). Below :data:`_AGGREGATE_MIN_PATHS` sub-flows the
    grouping costs more than the solves it shortens, and sweeps re-prepare per failure, so small
    problems are solved as they are. An all-to-all has nothing to merge (a cheap first test on
    each path's ends and length says so). Exact either
    way (tests/engine/test_maxmin_aggregate.py).
    """
    from designer.engine.solve.aggregate import aggregate_copies
    from designer.engine.solve.maxmin import aggregate_identical

    routes = prep.routes
    cached = prep.__dict__.get("_aggregation")
    if cached is not None and cached[0] is routes and np.array_equal(cached[1], demand):
        return cached[2]
    agg = False
    if routes.num_paths >= _AGGREGATE_MIN_PATHS:
        inputs = (routes.flow_ptr, routes.flow_res, np.ascontiguousarray(demand, dtype=np.float64),
                  np.ascontiguousarray(routes.weight, dtype=np.float64))
        copies = routes.copies()   # laid out from distinct routes: grouped on those (the same groups)
        agg = (aggregate_copies(*inputs, *copies) if copies is not None else aggregate_identical(*inputs)) or False
    prep.__dict__["_aggregation"] = (routes, demand, agg)
    return agg


# ======================================================================================== result

def build_result(prep: Prepared, solved: Solved, *, baseline: tuple[Prepared, Solved] | None = None,
                 progress=None, group_from: int | None = None) -> dict:
    """The ``fabricscope.result/1`` document.

    Parameters
    ----------
    prep, solved : Prepared, Solved
    baseline : (Prepared, Solved), optional
        The same scenario without failures: ``diff`` is then filled (see
        :func:`designer.engine.analysis.diff.compare`); otherwise it is null.
    group_from : int, optional
        With at least this many loaded resources, ``resources`` is written grouped by symmetry
        (:mod:`designer.engine.analysis.result_groups`; ``expand_result`` gives the list back).
        None (the default): always the list.
    """
    _progress(progress, 0.85, "summarizing")
    topo, flows, routes, sc = prep.topology, prep.flows, prep.routes, prep.scenario
    tiers = resource_tiers(topo)
    members = [np.flatnonzero(flows.pattern == k) for k in range(len(flows.pattern_ids))]
    done = pattern_completions(flows, routes, solved.flow_completion_s, members)
    patterns = pattern_summary(topo, flows, routes, solved, done, members)
    if prep.failures:
        add_fallbacks(prep, patterns)
    job, order = _job_summary(prep, solved, done, members, tiers)
    bottlenecks, by_tier = bottleneck_lists(topo, tiers, order)
    listed = pick_listed(flows, routes, solved, sc.max_flows_listed)
    result = {
        "format": RESULT_FORMAT,
        "summary": {
            "patterns": patterns,
            "max_utilization": _num(solved.utilization.max()) if len(solved.utilization) else 0.0,
            **job,
            "bottlenecks": bottlenecks,
            "bottlenecks_by_tier": by_tier,
            "utilization_by_tier": tier_utilization(solved, tiers, routes),
            "flows_total": len(flows),
            "flows_listed": len(listed),
            "flows_omitted": len(flows) - len(listed),
            "paths": routes.num_paths,
            "classes": class_counts(routes),
        },
        "flows": _flow_records(topo, flows, routes, solved, listed),
        "resources": _resources(topo, solved, tiers, prep.capacity_gbps, group_from),
        "diff": None,
        "scenario": {"routing": dict(sc.routing), "mode": sc.mode, "failures": echo_failures(prep.failures)},
    }
    if baseline is not None and prep.failures:
        _progress(progress, 0.9, "computing the diff")
        frame = Frame(topo, flows, tiers)
        before = Outcome(baseline[0].routes, baseline[1])
        after = Outcome(routes, solved, prep.affected)
        result["diff"] = {"against": "the same scenario without failures", "failures": echo_failures(prep.failures),
                          **compare(frame, before, after, details=True)}
        fallback = fallback_impact(result["diff"]["summary"]["patterns"], flows, [p["kind"] for p in sc.patterns],
                                   lambda k: patterns[flows.pattern_ids[k]].get("fallback")) if fallback_applies(
            topo, prep.failed) else None
        if fallback is not None:
            result["diff"]["impact"]["fallback"] = fallback
    if len(listed) < len(flows):
        result["summary"]["note"] = (f"{len(flows) - len(listed):,} of {len(flows):,} flows omitted from "
                                     "'flows' (kept: unroutable, slowest, and an even sample); summaries "
                                     "cover all flows")
    if solved.timeline is not None:
        result["summary"]["timeline"] = solved.timeline
    if sc.job is not None:
        from designer.engine.traffic.jobs.dag import run_job, step_headline   # a step as a DAG (FORMATS.md, Jobs)
        from designer.engine.traffic.jobs.report import step_collectives

        _progress(progress, 0.95, "simulating the job's phases")
        summary = result["summary"]
        summary["job"] = run_job(prep, sc.job)
        summary["job"]["collectives"] = step_collectives(summary["job"], summary["patterns"])
        summary["headline"] = step_headline(summary["job"], summary["headline"], summary["patterns"])
        if result["diff"] is not None:
            from designer.engine.traffic.jobs.dag import step_diff

            result["diff"]["job"] = step_diff(run_job(baseline[0], sc.job), result["summary"]["job"])
    if sc.latency is not None:
        result["latency"] = latency_section(prep, solved, patterns)
    if sc.jobs is not None:   # a shared cluster (FORMATS.md, Jobs with placements)
        from designer.engine.analysis.shared_cluster import jobs_section

        _progress(progress, 0.97, f"comparing {len(sc.jobs)} job(s) with each alone")
        result["jobs"] = jobs_section(prep, solved, result)
    return result


def _job_summary(prep: Prepared, solved: Solved, done: dict, members: list[np.ndarray], tiers: list[str]):
    """``complete``, ``job_completion_s``, ``broken``, the critical bottleneck, relief ranking and
    the headline (see :mod:`designer.engine.analysis.completion` and :mod:`designer.engine.analysis.bottlenecks`)."""
    topo, flows, routes = prep.topology, prep.flows, prep.routes
    ok = routes.status == 0
    routed = {pid: members[k][ok[members[k]]] for k, pid in enumerate(flows.pattern_ids)}
    demand = flows.demand_gbps[routes.owner] * routes.share

    aggregation = _aggregation(prep, demand)

    fills = []   # the stopped fills' checked inputs, made at the first (the relief asks ~7 times)

    def resolve(capacity, at_least=None):
        if at_least is None:
            alloc = solver.maxmin(capacity, routes.flow_ptr, routes.flow_res, demand, weights=routes.weight,
                                  aggregate=aggregation)
            return flow_completions(routes, flows, alloc.flow_level), True
        if not fills:
            fills.append(solver.StoppedFills(routes.flow_ptr, routes.flow_res, demand, len(capacity),
                                             weights=routes.weight, aggregate=aggregation or None))
        level, stopped = fills[0].levels(capacity, _stop_levels(flows, at_least)[routes.owner])
        if stopped:   # not reached yet: it freezes at or above every known level (counts 0 here)
            level[np.isnan(level)] = np.inf
        return flow_completions(routes, flows, level), not stopped

    ranked = rank_bottlenecks(topo, solved, tiers, done, resolve, prep.capacity_gbps, routed, len(routes.flow_res),
                              pattern_time_model(flows))
    critical = ranked["critical"]
    if critical is not None:
        critical["flow"] = flows.flow_id(critical.pop("flow_index"))
    job = job_completion(done)
    summary = {"complete": job["complete"], "job_completion_s": _num(job["completion_s"]) if job["complete"] else None,
               "broken": job["broken"], "slowest_pattern": job["slowest_pattern"],
               "critical_bottleneck": critical, "bottleneck_relief": ranked["relief"],
               "bottleneck_relief_computed": ranked["relief_computed"],
               "saturated_not_critical": ranked["saturated_not_critical"],
               "headline": headline(done, prep.failures, critical)}
    return summary, ranked["order"]


def _stop_levels(flows: Flows, at_least: np.ndarray) -> np.ndarray:
    """Per flow: the level at or below which it completes no sooner than ``at_least`` (s):
    completion = bytes * 8 / (level * 1e9) >= at_least  <=>  level <= bytes * 8 / (at_least * 1e9).
    +inf when any completion will do (``at_least <= 0``), -inf when none can (no target, or no
    bytes to move).

    Raised by a relative 1e-9: ``at_least`` comes back from a job time through a latency and an
    efficiency, so the slowest flow's own level can sit an ulp above the exact inverse. A stop
    is only where the fill ends; whether its bound reaches the job time is decided on the
    levels themselves (``bottlenecks._relieved_job_time``), a near miss re-solves in full."""
    with np.errstate(divide="ignore", invalid="ignore"):
        stop = flows.bytes * 8.0 / (at_least * 1e9) * (1.0 + 1e-9)
    stop[np.isinf(at_least) | ((flows.bytes == 0) & (at_least > 0))] = -np.inf
    stop[at_least <= 0] = np.inf
    return stop


def _flow_records(topo: Topology, flows: Flows, routes: Routes, solved: Solved, listed) -> list[dict]:
    """The listed flows' records, built for all of them at once
    (:func:`~designer.engine.analysis.listed_flows.flow_records`; unroutable ones by :func:`_unroutable_record`)."""
    return flow_records(topo, flows, routes, solved, listed, lambda i: _unroutable_record(topo, flows, routes, i))


def _unroutable_record(topo: Topology, flows: Flows, routes: Routes, i: int) -> dict:
    """The record of unroutable flow ``i``: its reason, and the NIC whose failure stranded it."""
    ids = topo.node_ids
    rec = {"id": flows.flow_id(i), "pattern": flows.pattern_ids[int(flows.pattern[i])],
           "src": ids[int(flows.src[i])], "dst": ids[int(flows.dst[i])], "bytes": float(flows.bytes[i]),
           "path": [], "class": None, "rate_gbps": 0.0, "bottleneck": None, "status": "unroutable",
           "reason": routes.reason(i), "completion_s": None}
    nic = routes.failed_nic(i)
    if nic is not None:
        rec["failed_nic"] = nic   # "GPU h3/gpu5's only NIC under policy affinity is down": h3/nic5
    return rec


def _resources(topo: Topology, solved: Solved, tiers: list[str], capacity: np.ndarray,
               group_from: int | None = None) -> list[dict] | dict:
    """One record per loaded resource (230k at 16,384 GPUs), built column by column: the numbers
    are converted once (``tolist`` gives the same Python floats as ``float`` per element) and the
    records are made by one dict display per row — no branch or f-string per resource (the same records:
    tests/engine/test_simulate_fastpaths.py). From ``group_from`` resources up, the records
    grouped by symmetry instead (:func:`_grouped_resources`), when they group."""

    rs = np.flatnonzero(solved.load_gbps > 0)
    if group_from is not None and len(rs) >= group_from:
        grouped = _grouped_resources(topo, solved, tiers, capacity, rs)
        if grouped is not None:
            return grouped
    is_link = rs < 2 * topo.num_links   # resources are sorted: every link direction comes first
    link_res = rs[is_link]
    link_ids, link_tech = topo.link_ids, topo.link_tech
    links, backward = (link_res >> 1).tolist(), (link_res & 1).tolist()   # 2l is a>b, 2l + 1 is b>a
    lids = [link_ids[k] for k in links]
    dirs = [("a>b", "b>a")[bit] for bit in backward]
    nodes = len(rs) - len(link_res)   # a node resource: no link, direction or tech
    node_ids = topo.node_ids
    ids = list(map(str.__add__, lids, [(":a>b", ":b>a")[bit] for bit in backward]))
    ids += [node_ids[n] for n in topo.resource_node[rs[~is_link] - 2 * topo.num_links].tolist()]
    columns = zip(ids, lids + [None] * nodes, dirs + [None] * nodes, [link_tech[k] for k in links] + [None] * nodes,
                  [tiers[r] for r in rs.tolist()], np.asarray(capacity[rs], dtype=np.float64).tolist(),
                  np.asarray(solved.load_gbps[rs], dtype=np.float64).tolist(), json_floats(solved.utilization[rs]))
    return [{"id": rid, "link": lid, "dir": direction, "tech": tech, "tier": tier, "capacity_gbps": cap,
             "load_gbps": load, "utilization": util}
            for rid, lid, direction, tech, tier, cap, load, util in columns]


def _grouped_resources(topo: Topology, solved: Solved, tiers: list[str], capacity: np.ndarray,
                       rs: np.ndarray) -> dict | None:
    """:func:`_resources`' records of the loaded resources ``rs``, grouped by symmetry from the
    arrays (:func:`~designer.engine.analysis.result_groups.group_resource_arrays`: no dict per
    resource; its expansion is the list, tests/engine/test_result_groups.py)."""
    is_link = rs < 2 * topo.num_links
    link_res, node_res = rs[is_link], rs[~is_link]
    links, link_of = np.unique(link_res >> 1, return_inverse=True)
    nodes, node_of = np.unique(topo.resource_node[node_res - 2 * topo.num_links], return_inverse=True)
    link_ids, node_ids, link_tech = topo.link_ids, topo.node_ids, topo.link_tech
    names = [link_ids[k] for k in links.tolist()] + [node_ids[n] for n in nodes.tolist()]
    entity = np.concatenate([link_of.reshape(-1), len(links) + node_of.reshape(-1)]).astype(np.int64)
    techs, tech_code = first_appearance_codes([link_tech[k] for k in links.tolist()] + [None])
    tech = np.concatenate([tech_code[:-1][link_of.reshape(-1)], np.full(len(node_res), tech_code[-1])])
    tier_names, tier_code = first_appearance_codes([tiers[r] for r in rs.tolist()])
    direction = np.concatenate([link_res & 1, np.zeros(len(node_res), dtype=link_res.dtype)])
    return group_resource_arrays(entity, names, len(links), direction, tech, techs, tier_code, tier_names,
                                 np.asarray(capacity[rs], dtype=np.float64),
                                 np.asarray(solved.load_gbps[rs], dtype=np.float64),
                                 np.asarray(solved.utilization[rs], dtype=np.float64))


def simulate(scenario, *, progress=None, topology_loader=None, group_from: int | None = None) -> dict:
    """Run a scenario end to end; with failures, diff it against the same scenario without them.

    Parameters
    ----------
    scenario : dict or Scenario
        A ``fabricscope.scenario/1`` document (docs/FORMATS.md, Scenario).
    progress : callable, optional
        ``progress(fraction, message)``, called at each stage (fraction in [0, 1]).
    topology_loader : callable, optional
        Resolves a topology given by reference (the CLI passes a file reader).
    group_from : int, optional
        Write ``resources`` grouped by symmetry from this many loaded resources up
        (:func:`build_result`); None: always the list of records.

    Returns
    -------
    dict
        The ``fabricscope.result/1`` document (of the scenario after its failures), plus
        ``timings_s``. ``diff`` is null without failures; otherwise ``summary`` (counts,
        per-pattern completion and throughput before/after), ``impact``, ``disconnected`` (flow,
        reason, old path), ``rerouted`` (old/new path, class, host legs), ``rate_changes``,
        ``new_bottlenecks``, ``utilization_shifts``.

    Raises
    ------
    InvalidScenario, InvalidWorkload, InvalidTopology, LimitExceeded
    """
    with gc_paused():
        return _simulate(scenario, progress, topology_loader, group_from)


def _simulate(scenario, progress, topology_loader, group_from: int | None = None) -> dict:
    sc = normalize_scenario(scenario, topology_loader=topology_loader)
    prep = prepare(sc, progress=progress, failures=[])
    baseline = None
    if sc.failures:
        _progress(progress, 0.3, f"applying {len(sc.failures)} failure(s)")
        baseline = (prep, solve_prepared(prep, progress=progress))
        prep = prepare_failures(prep, sc.failures)
    solved = solve_prepared(prep, progress=progress)
    t0 = time.perf_counter()
    result = build_result(prep, solved, baseline=baseline, progress=progress, group_from=group_from)
    result["timings_s"] = {**prep.timings_s, **solved.timings_s, "summarize": time.perf_counter() - t0}
    _progress(progress, 1.0, "done")
    return result
