"""The records of the flows a result document lists, built for all of them at once.

A 16,384-GPU ring lists 20,000 flows of ~3 striped paths each: record by record (the one-flow
reference is in tests/engine/test_simulate_shortcuts_wave2.py) that was 57,892 Python walks of
``Routes.path_nodes`` and ~20 numpy scalar reads per flow. Here
:func:`path_node_ids` walks every listed path in numpy — the first link's tail, then each link's
head, node resources skipped, the flow's source when the path crosses no link — and
:func:`flow_records` reads every per-flow number with one ``tolist`` per array, giving the same
records (same keys in the same order, same values; tests/engine/test_simulate_shortcuts_wave2.py).
"""
from __future__ import annotations

import numpy as np

__all__ = ["pick_listed", "flow_records", "path_node_ids", "json_floats"]


def path_node_ids(topo, routes, paths) -> dict[int, list[str]]:
    """Path index → its node ids in order, as ``[ids[n] for n in routes.path_nodes(p)]``."""
    paths = np.unique(np.asarray(paths, dtype=np.int64))
    if len(paths) == 0:
        return {}
    starts = routes.flow_ptr[paths]
    lens = routes.flow_ptr[paths + 1] - starts
    pos = np.arange(int(lens.sum()), dtype=np.int64) + np.repeat(starts - (np.cumsum(lens) - lens), lens)
    res = np.asarray(routes.flow_res[pos], dtype=np.int64)
    path_of = np.repeat(np.arange(len(paths), dtype=np.int64), lens)
    is_link = res < 2 * topo.num_links          # node resources are not hops
    res, path_of = res[is_link], path_of[is_link]
    link, forward = res >> 1, (res & 1) == 0     # resource 2l is a→b, 2l + 1 is b→a
    head = np.where(forward, topo.link_b[link], topo.link_a[link])
    tail = np.where(forward, topo.link_a[link], topo.link_b[link])
    hops = np.bincount(path_of, minlength=len(paths))
    first_hop = np.cumsum(hops) - hops
    start = np.asarray(routes.src[routes.owner[paths]], dtype=np.int64).copy()
    crosses = hops > 0
    start[crosses] = tail[first_hop[crosses]]
    # Path k's nodes: its start, then one head per hop, at offset first_hop[k] + k.
    offset = first_hop + np.arange(len(paths), dtype=np.int64)
    seq = np.empty(len(paths) + len(head), dtype=np.int64)
    is_start = np.zeros(len(seq), dtype=bool)
    is_start[offset] = True
    seq[offset] = start
    seq[~is_start] = head
    ids = topo.node_ids
    names = [ids[n] for n in seq.tolist()]
    bounds = offset.tolist() + [len(seq)]
    return {p: names[bounds[k]:bounds[k + 1]] for k, p in enumerate(paths.tolist())}


def flow_records(topo, flows, routes, solved, listed, record) -> list[dict]:
    """Records of the ``listed`` flows; ``record(i)`` builds those of unroutable flows, which carry
    reasons and failed NICs."""
    listed = np.asarray(listed, dtype=np.int64)
    # Routed flows with a path; an unroutable one (reason, failed NIC) is built by ``record``.
    routed = listed[(routes.status[listed] == 0) & (routes.count[listed] >= 1)]
    count = routes.count[routed]
    first = routes.first[routed]
    within = np.arange(int(count.sum()), dtype=np.int64) - np.repeat(np.cumsum(count) - count, count)
    paths = np.repeat(first, count) + within
    names = path_node_ids(topo, routes, paths)
    shares, path_rates = _floats(routes.share[paths]), json_floats(solved.path_rate_gbps[paths])
    ids, pattern_ids = topo.node_ids, flows.pattern_ids
    codes, bneck = _ints(routes.class_code[routed]), _ints(solved.flow_bottleneck[routed])
    demand = flows.demand_gbps[routed]
    finite_demand = np.isfinite(demand).tolist()
    columns = zip(routed.tolist(), _ints(flows.pattern[routed]), _ints(flows.index[routed]),
                  _ints(flows.src[routed]), _ints(flows.dst[routed]), _floats(flows.bytes[routed]),
                  _ints(first), _ints(count), codes, json_floats(solved.flow_rate_gbps[routed]), bneck,
                  json_floats(solved.flow_completion_s[routed]), finite_demand, _floats(demand))
    built, at = {}, 0
    for i, pat, index, src, dst, size, p0, n, code, rate, b, done, has_demand, dem in columns:
        rec = {"id": f"{pattern_ids[pat]}#{index}", "pattern": pattern_ids[pat], "src": ids[src], "dst": ids[dst],
               "bytes": size, "path": list(names[p0]),
               "class": routes.class_names[code] if code >= 0 else None, "rate_gbps": rate,
               "bottleneck": topo.resource_id(b) if b >= 0 else None, "status": "ok", "completion_s": done}
        if has_demand:
            rec["demand_gbps"] = dem
        if n > 1:
            rec["paths"] = [{"path": list(names[p]), "share": shares[at + k], "rate_gbps": path_rates[at + k]}
                            for k, p in enumerate(range(p0, p0 + n))]
        at += n
        built[i] = rec
    return [built[i] if i in built else record(i) for i in listed.tolist()]


def _ints(values: np.ndarray) -> list[int]:
    """``int(x)`` of every value, in one conversion."""
    return np.asarray(values).astype(np.int64).tolist()


def _floats(values: np.ndarray) -> list[float]:
    """``float(x)`` of every value, in one conversion."""
    return np.asarray(values, dtype=np.float64).tolist()


def json_floats(values: np.ndarray) -> list:
    """:func:`designer.engine.numbers.json_float` of every value: the float, None when not finite."""
    values = np.asarray(values, dtype=np.float64)
    out = values.tolist()
    if not np.isfinite(values).all():
        for k in np.flatnonzero(~np.isfinite(values)).tolist():
            out[k] = None
    return out


def pick_listed(flows, routes, solved, limit: int) -> np.ndarray:
    """Flows worth listing when there are too many: unroutable, slowest per pattern, a sample."""
    n = len(flows)
    if n <= limit:
        return np.arange(n)
    bad = np.flatnonzero(routes.status != 0)[: limit // 4]
    chosen = [bad]
    per_pattern = max(1, (limit // 2) // max(1, len(flows.pattern_ids)))
    times = np.where(np.isnan(solved.flow_completion_s), -1.0, solved.flow_completion_s)
    for k in range(len(flows.pattern_ids)):
        mine = np.flatnonzero(flows.pattern == k)
        order = np.argsort(-times[mine], kind="stable")[:per_pattern]
        chosen.append(mine[order])
    picked = np.unique(np.concatenate(chosen))
    room = limit - len(picked)
    if room > 0:
        rest = np.setdiff1d(np.arange(n), picked, assume_unique=True)
        sample = rest[np.linspace(0, len(rest) - 1, min(room, len(rest))).astype(np.int64)] if len(rest) else rest
        picked = np.union1d(picked, sample)
    return picked[:limit]
