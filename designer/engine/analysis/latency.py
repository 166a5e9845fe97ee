"""The latency view of a result: the ``latency`` section of a simulation.

The latency model itself — per-hop forwarding, the initiator's control path, collective steps,
round trips — is :mod:`designer.engine.model.hop_latency` (routing-independent, so the collective
planner below the analysis layer uses it too); its public names are re-exported here.
"""
from __future__ import annotations

import numpy as np

from designer.engine.model.hop_latency import (COMPLETION_NS, CONTROL_NS, DEFAULTS, FORWARDING_NS,
                                               HOST_BUFFER_PROTOCOLS, INITIATORS, kernel_launch_s,
                                               network_step, path_latency, round_trip, step_latency,
                                               step_latency_s)

__all__ = ["INITIATORS", "FORWARDING_NS", "CONTROL_NS", "COMPLETION_NS", "HOST_BUFFER_PROTOCOLS", "path_latency",
           "step_latency", "step_latency_s", "network_step", "kernel_launch_s", "round_trip", "DEFAULTS",
           "latency_section", "flow_latency"]


def latency_section(prep, solved, patterns: dict) -> list[dict]:
    """The result's ``latency``: per flow asked (``latency.flows``; default the slowest flow of
    every pattern) its path class, node path and, per initiator, the :func:`step_latency`
    breakdown — one way, from "the sender's data is ready" to "the receiver's GPU sees it",
    completion included — at the flow's solved rate, with ``round_trip_ns`` from
    :func:`round_trip` (a ping there and a pong back: the figure GPU-initiated networking is
    published as, and the one the fidelity benchmark checks, through this same section). An
    unknown or unroutable flow gets an ``error``."""
    opts = prep.scenario.latency
    flows, routes, topo = prep.flows, prep.routes, prep.topology
    wanted = opts.get("flows")
    if wanted is None:
        wanted = [p["slowest_flow"] for p in patterns.values() if p["slowest_flow"]]
    index = _flow_index(flows, wanted)
    out = []
    for fid in wanted:
        i = index.get(fid)
        if i is None or routes.status[i] != 0:
            out.append({"flow": fid, "error": "unknown or unroutable flow"})
            continue
        nodes = routes.path_nodes(int(routes.first[i]))
        entry = {"flow": fid, "class": routes.path_class(i), "path": [topo.node_ids[n] for n in nodes],
                 "initiators": {}}
        for init in opts["initiators"]:
            entry["initiators"][init] = flow_latency(topo, nodes, opts["message_bytes"], init,
                                                     solved.flow_rate_gbps[i], opts.get("overrides"))
        out.append(entry)
    return out


def flow_latency(topo, nodes, message_bytes: float, initiator: str, rate_gbps: float | None,
                 overrides: dict | None = None) -> dict:
    """One way (:func:`step_latency`) and ``round_trip_ns`` (:func:`round_trip`) of a message
    along ``nodes`` — the one latency function behind the result page, the API and the benchmark."""
    trip = round_trip(topo, nodes, message_bytes, initiator=initiator, rate_gbps=rate_gbps, overrides=overrides)
    return {**trip["ping"], "round_trip_ns": trip["total_ns"]}   # the ping is the one-way step


def _flow_index(flows, wanted) -> dict:
    index = {}
    if wanted:
        want = set(wanted)
        for k, pid in enumerate(flows.pattern_ids):
            for i in np.flatnonzero(flows.pattern == k).tolist():
                fid = f"{pid}#{int(flows.index[i])}"
                if fid in want:
                    index[fid] = i
    return index
