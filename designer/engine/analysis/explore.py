"""The design-space explorer: the cheapest fabric that gives a job mix its step time.

A grid request (:mod:`.explore_grid`) names build options to vary (fabric kind, tiers,
oversubscription, switch model, NIC speed, planes, size, scale-up domain) and the traffic (a
``jobs`` mix or one ``workload``). Every point is built (:func:`.fabrics.build_cluster`), priced
(:func:`.physical_plan.plan`: racks, cables by reach, US$ and W per GPU) and simulated
(:func:`.simulate.simulate`, all jobs at once); the merged result marks the **Pareto frontier**
over (US$ per GPU, step score). Rules in docs/ENGINE.md, "Design-space explorer"; the document
in docs/FORMATS.md.

- **step score** of a point: the geometric mean over the jobs of (the job's step on this point /
  its best step on any point); 1.0 = every job as fast as anywhere in the grid. A point where a
  job does not complete has no score and is never on the frontier.
- **frontier**: the points no other point beats on both cost and score (one at most equal and
  the other strictly lower); equal points are all kept.
- **blast radius**: the share of the hosts' fabric NIC ports that end on the one switch whose
  failure cuts the most of them (each such GPU loses its own NIC and falls back over the
  scale-up domain or stops). Structural, from the document: a rail switch of a rail-only fabric
  holding a whole rail cuts one NIC of *every* host.
- **network cost**: the plan's switches, cables and optics (every BOM tier but servers and
  storage), per GPU — the figure the rail-only paper's saving is about.

Points are independent: ``chunk=(i, n)`` evaluates every n-th point from the i-th (strided, so
the costly points of one fabric kind, neighbours in the grid, spread over the workers) and
:func:`merge_explore` of all n parts equals the unchunked run (the sweep machinery's contract,
:func:`.whatif.merge_sweeps`).
"""
from __future__ import annotations

import math
import time

from designer.engine.errors import EngineError, InvalidScenario, Problem
from designer.engine.analysis.explore_grid import check_request, grid_points
from designer.engine.analysis.simulate import simulate
from designer.engine.model.fabrics import build_cluster, fabric_summary, plan_cluster
from designer.engine.model.physical_plan import plan

__all__ = ["EXPLORE_FORMAT", "explore", "explore_points", "merge_explore", "pareto_front", "evaluate_point"]

EXPLORE_FORMAT = "fabricscope.explore/1"
_BUILD_KEYS = ("fabric", "rails", "leaves_per_rail", "spines", "nic_link_tech", "uplink_tech", "oversubscription",
               "hosts_per_rack", "switch", "tiers", "planes", "params")
_NOT_NETWORK = ("servers", "storage")


def _progress(progress, fraction: float, message: str) -> None:
    if progress is not None:
        progress(fraction, message)


def explore_points(request) -> list[dict]:
    """The checked request's points (``index``, ``axes``, ``build``), in run order.

    Raises
    ------
    InvalidScenario, LimitExceeded
        As :func:`.explore_grid.check_request`.
    """
    return grid_points(check_request(request))


def _hosts(build: dict) -> int:
    """Hosts of a point: as given, or enough host instances for ``gpus``."""
    if "hosts" in build:
        return build["hosts"]
    per_host = plan_cluster(build["template"], 1, params=build.get("params"))["per_host"]["gpus"]
    return max(1, math.ceil(build["gpus"] / max(per_host, 1)))


def _blast_radius(doc: dict) -> dict:
    """The switch holding the most host NIC ports, and their share of all of them."""
    kinds = {n["id"]: n["kind"] for n in doc["nodes"]}
    ports: dict[str, int] = {}
    for link in doc["links"]:
        a, b = kinds[link["a"]], kinds[link["b"]]
        if {a, b} == {"nic", "switch"}:
            sw = link["a"] if a == "switch" else link["b"]
            ports[sw] = ports.get(sw, 0) + 1
    total = sum(ports.values())
    if not total:
        return {"switch": None, "nic_ports": 0, "fraction": 0.0}
    worst = max(sorted(ports), key=ports.get)
    return {"switch": worst, "nic_ports": ports[worst], "fraction": round(ports[worst] / total, 6)}


def _cost(bom: dict) -> dict:
    """US$ and W per GPU, whole and network only (switches, cables, optics)."""
    gpus = bom["gpus"] or 1
    net_usd = sum(r["usd"] for r in bom["tiers"] if r["tier"] not in _NOT_NETWORK) + sum(r["usd"] for r in bom["media"])
    net_w = sum(r["watts"] for r in bom["tiers"] if r["tier"] not in _NOT_NETWORK) + sum(r["watts"] for r in bom["media"])
    return {"usd_per_gpu": bom["usd_per_gpu"], "w_per_gpu": bom["w_per_gpu"],
            "network_usd_per_gpu": round(net_usd / gpus, 2), "network_w_per_gpu": round(net_w / gpus, 3),
            "network_usd": round(net_usd, 2), "total_usd": bom["total_usd"]}


def _job_steps(request: dict, result: dict) -> list[dict]:
    """Per job ``{"id", "step_time_s", "complete"}`` from a simulation result (a ``job``
    workload's also ``events`` and ``event_quantum``)."""
    section = result.get("jobs")
    if request.get("jobs") is not None and section is not None:
        rows = section["jobs"] if isinstance(section, dict) else section
        return [{"id": j["id"], "step_time_s": j.get("step_time_s"), "complete": bool(j.get("complete"))
                 and j.get("step_time_s") is not None} for j in rows]
    job = result["summary"].get("job")
    if job is not None:
        step = job.get("step_time_s")
        # The step's event count and completion quantum: a batched step says so (dag.py).
        return [{"id": "job", "step_time_s": step, "complete": step is not None, "events": job.get("events"),
                 "event_quantum": job.get("event_quantum")}]
    times = [p.get("completion_s") for p in result["summary"]["patterns"].values()]
    done = bool(times) and all(t is not None for t in times)
    return [{"id": "workload", "step_time_s": max(times) if done else None, "complete": done}]


def _scenario(request: dict, doc: dict) -> dict:
    sc = {"topology": doc, "routing": request["routing"], "options": {"max_flows_listed": 0,
                                                                        **(request.get("options") or {})}}
    for key in ("jobs", "workload", "mode"):
        if request.get(key) is not None:
            sc[key] = request[key]
    return sc


def evaluate_point(request: dict, point: dict) -> dict:
    """Build, plan and simulate one point of a checked request.

    Returns
    -------
    dict
        ``index``, ``axes``, ``label``, ``feasible``; when feasible: ``hosts``, ``gpus``,
        ``switches``, ``tiers``, the :func:`_cost` figures, ``bisection_gbps``,
        ``bisection_gbps_per_gpu``, ``blast_radius``, ``plan_flags``, ``jobs`` (per job step)
        and ``step_s`` (the slowest job's step, s; None when a job does not complete); else
        ``error`` (the builder's or the scenario's located reason) and ``stage``.
    """
    b = point["build"]
    out = {"index": point["index"], "axes": point["axes"], "label": _label(point["axes"])}
    stage = "build"
    try:
        hosts = _hosts(b)
        opts = {k: b[k] for k in _BUILD_KEYS if k in b}
        doc = build_cluster(b["template"], hosts, name=f"explore-{point['index']}", **opts)
        stage = "plan"
        bom = plan(doc, request.get("plan"))
        stage = "simulate"
        result = simulate(_scenario(request, doc))
    except EngineError as exc:
        first = exc.problems[0] if exc.problems else None
        where = f"{first.path}: {first.message}" if first else exc.message
        return {**out, "feasible": False, "stage": stage, "error": where}
    fs = fabric_summary(doc)
    jobs = _job_steps(request, result)
    done = all(j["complete"] for j in jobs)
    return {**out, "feasible": True, "hosts": hosts, "gpus": fs["gpus"], "switches": sum(fs["switches"].values()),
            "tiers": (doc.get("fabric") or {}).get("tiers"), **_cost(bom["bom"]),
            "bisection_gbps": fs["bisection_gbps"], "bisection_gbps_per_gpu": round(fs["bisection_gbps"] / max(fs["gpus"], 1), 3),
            "blast_radius": _blast_radius(doc), "plan_flags": len(bom["flags"]), "jobs": jobs,
            "step_s": max(j["step_time_s"] for j in jobs) if done else None}


def _label(axes: dict) -> str:
    return " · ".join(f"{k} {v}" if k not in ("fabric", "template", "switch", "nic_link_tech") else str(v)
                      for k, v in axes.items())


def _parse_chunk(chunk, total: int) -> tuple[int, int] | None:
    if chunk is None:
        return None
    if isinstance(chunk, str):
        i, _, n = chunk.partition("/")
        chunk = (int(i), int(n)) if i.isdigit() and n.isdigit() else None
    if not (isinstance(chunk, (tuple, list)) and len(chunk) == 2 and all(isinstance(x, int) for x in chunk)
            and 0 <= chunk[0] < chunk[1] <= max(total, 1)):
        raise InvalidScenario("bad chunk", [Problem("chunk", f"must be i/n with 0 ≤ i < n ≤ {max(total, 1)} points")])
    return int(chunk[0]), int(chunk[1])


def explore(request, *, chunk=None, progress=None) -> dict:
    """Evaluate a grid request's points (all, or block ``chunk = (i, n)``).

    Parameters
    ----------
    request : dict
        A grid request (docs/FORMATS.md, "Design-space explorer").
    chunk : (int, int) or "i/n", optional
        Evaluate only points i, i + n, i + 2n, … (:func:`chunk_points`).
    progress : callable, optional
        ``progress(fraction, message)``.

    Returns
    -------
    dict
        Unchunked: the merged ``fabricscope.explore/1`` document (:func:`merge_explore`);
        chunked: a part ``{format, request, points_total, chunk, points}`` to merge.

    Raises
    ------
    InvalidScenario, LimitExceeded
        A bad request (located), a bad chunk.
    """
    checked = check_request(request)
    points = grid_points(checked)
    part = _parse_chunk(chunk, len(points))
    mine = chunk_points(points, *part) if part else points
    done, clock = [], time.perf_counter()
    for k, point in enumerate(mine, 1):
        done.append(evaluate_point(checked, point))
        now = time.perf_counter()
        if now - clock > 0.5 or k == len(mine):
            clock = now
            _progress(progress, k / len(mine), f"point {k}/{len(mine)}: {point['axes']}")
    doc = {"format": EXPLORE_FORMAT, "request": checked, "points_total": len(points),
           "chunk": list(part) if part else None, "points": done}
    return doc if part else merge_explore([doc])


def chunk_points(points: list, i: int, n: int) -> list:
    """The points chunk ``i`` of ``n`` evaluates: every n-th from the i-th. A grid's neighbours
    share a fabric kind and so a cost (an oversubscribed leaf-spine under an all-to-all takes a few
    seconds a point, a rail fabric ~1 s), so contiguous blocks would leave one worker the slow
    kind; striding deals them out evenly."""
    return points[i::n]


def pareto_front(points: list[dict], x: str = "usd_per_gpu", y: str = "step_score") -> list[int]:
    """Indices (into ``points``) of the points no other point dominates on (``x``, ``y``), both
    minimized; points without both figures are never on it.

    A point ``q`` dominates ``p`` when ``q[x] ≤ p[x]`` and ``q[y] ≤ p[y]`` with one strictly less.
    """
    have = [i for i, p in enumerate(points) if p.get(x) is not None and p.get(y) is not None]
    front = []
    for i in have:
        px, py = points[i][x], points[i][y]
        if not any(points[j][x] <= px and points[j][y] <= py and (points[j][x] < px or points[j][y] < py)
                   for j in have):
            front.append(i)
    return front


def _check_parts(parts: list[dict]) -> None:
    if not parts:
        raise InvalidScenario("nothing to merge", [Problem("parts", "no explorer parts")])
    problems, seen = [], {}
    head = parts[0]
    n = (head.get("chunk") or [0, 1])[1] if isinstance(head, dict) else 1
    for k, p in enumerate(parts):
        if not isinstance(p, dict) or p.get("format") != EXPLORE_FORMAT:
            problems.append(Problem(f"parts[{k}]", f"not a {EXPLORE_FORMAT} part"))
            continue
        if p.get("request") != head.get("request"):
            problems.append(Problem(f"parts[{k}].request", "differs from parts[0]: not chunks of one grid"))
        i, m = p.get("chunk") or [0, 1]
        if m != n:
            problems.append(Problem(f"parts[{k}].chunk", "chunk counts differ"))
        if i in seen:
            problems.append(Problem(f"parts[{k}].chunk", f"chunk {i} repeats parts[{seen[i]}]"))
        seen[i] = k
        problems += _points_problems(k, p, i, n)
    missing = sorted(set(range(n)) - set(seen))
    if missing and not problems:
        problems.append(Problem("parts", f"missing chunk(s) {missing} of {n}"))
    if problems:
        raise InvalidScenario("cannot merge explorer parts", problems)


def _points_problems(k: int, part: dict, i: int, n: int) -> list[Problem]:
    """A part must hold exactly the points chunk ``(i, n)`` evaluates (:func:`chunk_points`): a
    part chunked another way (contiguous blocks, before striding; a worker of another version)
    would merge into a grid with points twice and others missing."""
    total = part.get("points_total")
    got = [q.get("index") for q in part.get("points") or [] if isinstance(q, dict)]
    if not isinstance(total, int) or got != chunk_points(list(range(total)), i, n):
        return [Problem(f"parts[{k}].points", f"are not chunk {i} of {n}'s points ({i}, {i + n}, {i + 2 * n}, …)")]
    return []


def _scores(points: list[dict]) -> None:
    """Each point's ``step_score``: geometric mean of its jobs' step / that job's best step."""
    best: dict[str, float] = {}
    for p in points:
        if p.get("step_s") is not None:
            for j in p["jobs"]:
                best[j["id"]] = min(best.get(j["id"], math.inf), j["step_time_s"])
    for p in points:
        if p.get("step_s") is None or any(best.get(j["id"], 0) <= 0 for j in p["jobs"]):
            p["step_score"] = None
            continue
        logs = [math.log(j["step_time_s"] / best[j["id"]]) for j in p["jobs"]]
        p["step_score"] = round(math.exp(sum(logs) / len(logs)), 6)


def merge_explore(parts: list[dict]) -> dict:
    """Merge chunked parts (any order) into the explorer's result: points in grid order with
    ``step_score`` and ``frontier``, ``frontier`` (indices, cheapest first) and ``summary``.

    Raises
    ------
    InvalidScenario
        Parts of different grids, missing or repeated chunks (located ``parts[k]``).
    """
    _check_parts(parts)
    points = sorted((p for part in parts for p in part["points"]), key=lambda p: p["index"])
    _scores(points)
    front = set(pareto_front(points))
    for i, p in enumerate(points):
        p["frontier"] = i in front
    order = sorted(front, key=lambda i: (points[i]["usd_per_gpu"], points[i]["step_score"]))
    head = parts[0]
    return {"format": EXPLORE_FORMAT, "request": head["request"], "points_total": head["points_total"],
            "chunk": None, "points": points, "frontier": [points[i]["index"] for i in order],
            "summary": _summary(points, order)}


def _summary(points: list[dict], order: list[int]) -> dict:
    ok = [p for p in points if p.get("step_score") is not None]
    cheapest = min(ok, key=lambda p: (p["usd_per_gpu"], p["step_score"]), default=None)
    fastest = min(ok, key=lambda p: (p["step_score"], p["usd_per_gpu"]), default=None)
    headline = (f"{len(order)} of {len(points)} designs on the frontier; cheapest that runs every job: "
                f"{cheapest['label']} at ${cheapest['usd_per_gpu']:,.0f}/GPU (score {cheapest['step_score']:.3g}); "
                f"fastest: {fastest['label']} at ${fastest['usd_per_gpu']:,.0f}/GPU") if ok else \
        "no design runs every job of the mix"
    return {"points": len(points), "feasible": sum(1 for p in points if p["feasible"]),
            "complete": len(ok), "frontier": len(order),
            "cheapest": cheapest["index"] if cheapest else None, "fastest": fastest["index"] if fastest else None,
            "headline": headline}
