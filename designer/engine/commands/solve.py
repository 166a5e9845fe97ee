"""``solve``: max-min fair rates for flows over explicit paths of links.

Input (a file, or ``-`` for stdin)::

    {"links": [{"id": "l1", "capacity_gbps": 100.0}, ...],
     "flows": [{"id": "f1", "links": ["l1", "l2"], "demand_gbps": null, "bytes": 1e9}, ...]}

Each link id is one independent resource (a direction, if you model duplex links, is its own
link). ``demand_gbps`` is optional (null or absent = no cap); ``bytes`` is required with
``--timeline`` only. Output::

    {"rates_gbps": {"f1": 33.3}, "bottleneck": {"f1": "l1"}, "utilization": {"l1": 1.0}}

``bottleneck`` is null for a demand-limited flow. With ``--timeline`` every flow starts at 0 and the
rates are re-solved at each completion; the output adds ``"completion_s": {"f1": 0.24}`` (null for a
flow that never finishes: it crosses a zero-capacity link or has demand 0) and ``"events_s"``.
"""
from __future__ import annotations

import json
import math
import sys

import numpy as np

from designer.engine.errors import InvalidWorkload, Problem

__all__ = ["add_arguments", "run", "parse_problem"]


def add_arguments(parser) -> None:
    parser.add_argument("file", help="problem JSON file, or - to read standard input")
    parser.add_argument("--timeline", action="store_true",
                        help="fluid mode: flows carry 'bytes'; re-solve at every completion and "
                             "print completion_s per flow")
    parser.add_argument("--indent", type=int, default=2, help="JSON indentation (default 2)")


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _read(path: str) -> dict:
    try:
        text = sys.stdin.read() if path == "-" else open(path, encoding="utf-8").read()
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidWorkload(f"{path}: not valid JSON", [Problem("", f"not valid JSON: {exc}")]) from None
    except UnicodeDecodeError:
        raise InvalidWorkload(f"{path}: not UTF-8 text", [Problem("", "not UTF-8 text")]) from None
    if not isinstance(doc, dict):
        raise InvalidWorkload("the document must be a JSON object", [Problem("", "must be an object")])
    return doc


def _parse_links(doc, problems: list[Problem]) -> tuple[list[str], list[float]]:
    links = doc.get("links")
    if not isinstance(links, list):
        problems.append(Problem("links", "must be a list of {id, capacity_gbps}"))
        return [], []
    ids, caps, seen = [], [], set()
    for i, link in enumerate(links):
        where = f"links[{i}]"
        if not isinstance(link, dict):
            problems.append(Problem(where, "must be an object"))
            continue
        lid, cap = link.get("id"), link.get("capacity_gbps")
        if not isinstance(lid, str) or not lid:
            problems.append(Problem(f"{where}.id", "must be a non-empty string"))
        elif lid in seen:
            problems.append(Problem(f"{where}.id", f"duplicate link id {lid!r}"))
        if not _is_number(cap) or cap < 0:
            problems.append(Problem(f"{where}.capacity_gbps", f"must be a number >= 0 (got {cap!r})"))
        seen.add(lid)
        ids.append(lid)
        caps.append(float(cap) if _is_number(cap) else 0.0)
    return ids, caps


def _parse_flow(i, flow, index, timeline, problems) -> tuple[list[int], float, float]:
    where = f"flows[{i}]"
    path = flow.get("links")
    if not isinstance(path, list):
        problems.append(Problem(f"{where}.links", "must be a list of link ids"))
        path = []
    hops = []
    for k, lid in enumerate(path):
        if not isinstance(lid, str) or lid not in index:
            problems.append(Problem(f"{where}.links[{k}]", f"unknown link id {lid!r}"))
        else:
            hops.append(index[lid])
    demand = flow.get("demand_gbps")
    if demand is not None and (not _is_number(demand) or demand < 0):
        problems.append(Problem(f"{where}.demand_gbps", f"must be null or a number >= 0 (got {demand!r})"))
    elif demand is None and not path:
        problems.append(Problem(f"{where}.links", "a flow crossing no link needs a demand_gbps"))
    size = flow.get("bytes")
    if timeline and (not _is_number(size) or size < 0):
        problems.append(Problem(f"{where}.bytes", f"must be a number >= 0 with --timeline (got {size!r})"))
    return (hops, float(demand) if _is_number(demand) else math.inf,
            float(size) if _is_number(size) else 0.0)


def parse_problem(doc: dict, *, timeline: bool = False):
    """Turn the ``solve`` JSON document into solver arrays.

    Returns
    -------
    link_ids, flow_ids : list of str
    capacity_gbps, flow_ptr, flow_res, demand_gbps, bytes_ : ndarray

    Raises
    ------
    InvalidWorkload
        With every located problem (``flows[3].links[1]: unknown link id 'l9'``).
    """
    problems: list[Problem] = []
    link_ids, caps = _parse_links(doc, problems)
    index = {lid: k for k, lid in enumerate(link_ids) if isinstance(lid, str)}
    flows = doc.get("flows")
    if not isinstance(flows, list):
        problems.append(Problem("flows", "must be a list of {id, links, demand_gbps}"))
        flows = []
    flow_ids, ptr, res, dem, size, seen = [], [0], [], [], [], set()
    for i, flow in enumerate(flows):
        if not isinstance(flow, dict):
            problems.append(Problem(f"flows[{i}]", "must be an object"))
            continue
        fid = flow.get("id")
        if not isinstance(fid, str) or not fid or fid in seen:
            problems.append(Problem(f"flows[{i}].id", f"must be a unique non-empty string (got {fid!r})"))
        seen.add(fid)
        hops, demand, nbytes = _parse_flow(i, flow, index, timeline, problems)
        flow_ids.append(fid)
        res += hops
        ptr.append(len(res))
        dem.append(demand)
        size.append(nbytes)
    if problems:
        raise InvalidWorkload(f"invalid solve input ({len(problems)} problems)", problems)
    return (link_ids, flow_ids, np.array(caps, dtype=np.float64), np.array(ptr, dtype=np.int64),
            np.array(res, dtype=np.int64), np.array(dem, dtype=np.float64), np.array(size, dtype=np.float64))


def _finite_or_none(value: float):
    return float(value) if math.isfinite(value) else None


def run(args) -> int:
    from designer.engine.solver import maxmin

    doc = _read(args.file)
    link_ids, flow_ids, cap, ptr, res, dem, size = parse_problem(doc, timeline=args.timeline)
    alloc = maxmin(cap, ptr, res, dem)
    out = {
        "rates_gbps": {f: float(r) for f, r in zip(flow_ids, alloc.rates_gbps)},
        "bottleneck": {f: (link_ids[b] if b >= 0 else None) for f, b in zip(flow_ids, alloc.bottleneck)},
        "utilization": {lid: float(u) for lid, u in zip(link_ids, alloc.utilization)},
    }
    if args.timeline:
        from designer.engine.timeline import timeline
        result = timeline(cap, ptr, res, size, dem)
        out["completion_s"] = {f: _finite_or_none(c) for f, c in zip(flow_ids, result.completion_s)}
        out["events_s"] = [float(t) for t in result.events_s]
    print(json.dumps(out, indent=args.indent or None))
    return 0
