"""Pose a ``designer.engine solve`` document to SimGrid 4.1; time its first allocation.

A one-off side-by-side for the figure recorded in docs/PERFORMANCE.md, not a CI check. It reads the
same input as ``python -m designer.engine solve in.json`` (links ``{id, capacity_gbps}``, flows
``{id, links, demand_gbps}``), builds an equivalent SimGrid platform, starts every flow at t=0 and
runs the simulation to a date just before the earliest possible completion, so SimGrid solves its
max-min system exactly once. Each flow's rate is then read back as bytes sent / elapsed date.

Run (it imports only simgrid, json and the standard library, so any SimGrid venv will do; the pip
build of 4.1 needs pybind11<3 and installs libsimgrid.so without an rpath, hence LD_LIBRARY_PATH)::

    export LD_LIBRARY_PATH=/tmp/sgvenv/lib/python3.11/site-packages

    /tmp/sgvenv/bin/python tools/simgrid_solve_side_by_side.py in.json -o simgrid_out.json \\
        --compare fabricscope_out.json
    /usr/bin/time -f "%U %S %M" /tmp/sgvenv/bin/python tools/simgrid_solve_side_by_side.py in.json

``-o`` writes ``{"rates_gbps": {flow id: rate}}`` like ``solve`` does; ``--compare`` prints the
largest relative difference from a ``solve`` output. A summary with per-phase wall/CPU seconds (read
JSON, build platform, start flows, first allocation, read rates) goes to stderr. Extra ``--cfg=...``
arguments are passed to SimGrid (e.g. ``--cfg=precision/work-amount:1e-12``).

Mapping choices
---------------
* Network model ``raw`` (CM02 with no TCP gamma, no bandwidth/latency factors, no cross-traffic):
  plain max-min fair sharing. The default LV08 would scale every rate by 0.97 and add ACK traffic
  on the reverse route.
* Links: one SimGrid link per link id, SHARED, bandwidth = capacity_gbps * 1e9 / 8 bytes/s,
  latency 0 (only bandwidth sharing counts).
* Routes: the root Full zone with the smallest N hosts such that N*(N-1) >= flows (448 hosts for
  200k flows); flow k gets its own ordered host pair and an asymmetric route equal to its link
  list, in order, duplicates kept (111 flows of the 200k instance list a link twice). A Full
  zone keeps a route's repeated link, and SimGrid's LMM adds the consumption weights, so a link
  listed twice carries twice the flow's rate, as in ``solve``. (A Star zone would scale to one
  host per flow but drops repeated links from a route; one host pair per flow in a Full zone
  would need a (2 * flows)^2 routing table.)
* Demand cap: a private SHARED link of bandwidth demand_gbps * 1e9 / 8, used by that flow only,
  appended to its route (19,955 extra links for the 200k instance). In max-min this is the same
  constraint as a per-flow bound. ``Comm.set_rate`` cannot be used: in the 4.1 Python binding the
  only host-to-host constructor, ``Comm.sendto_init(src, dst)``, returns a comm already in state
  STARTING, and ``set_rate`` accepts only INITED comms (mailbox comms would need an actor per host).
* Payload: every flow sends ``PAYLOAD_BYTES``; the probe date is half of payload / largest
  capacity, so no flow can finish before it and the allocation is the one at t=0.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

from simgrid import Comm, Engine, Link, LinkInRoute

PAYLOAD_BYTES = 10**15
BYTES_PER_GBIT = 1e9 / 8


class PhaseClock:
    """Wall and CPU seconds of each named phase, in order."""

    def __init__(self):
        self.phases = {}
        self._wall, self._cpu = time.perf_counter(), time.process_time()

    def lap(self, name: str) -> None:
        wall, cpu = time.perf_counter(), time.process_time()
        self.phases[name] = {"wall_s": round(wall - self._wall, 3),
                             "cpu_s": round(cpu - self._cpu, 3)}
        self._wall, self._cpu = wall, cpu


def parse_args(argv: list[str]):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("problem", help="a `designer.engine solve` input document")
    parser.add_argument("-o", "--output", help="write {'rates_gbps': {...}} here")
    parser.add_argument("--compare", help="a `solve` output to compare the rates with")
    return parser.parse_known_args(argv)


def hosts_needed(n_flows: int) -> int:
    """Smallest N with N * (N - 1) ordered host pairs >= n_flows (at least 2)."""
    n = 2
    while n * (n - 1) < n_flows:
        n += 1
    return n


def host_pair(k: int, n_hosts: int) -> tuple[int, int]:
    """The k-th ordered pair (src, dst), src != dst, of n_hosts hosts."""
    src, offset = divmod(k, n_hosts - 1)
    return src, offset if offset < src else offset + 1


def build_platform(engine: Engine, links: list[dict], flows: list[dict]):
    """Hosts, links and one asymmetric route per flow in the root (Full) zone; returns the hosts."""
    zone = engine.netzone_root
    by_id = {link["id"]: add_shared_link(zone, link["id"], link["capacity_gbps"]) for link in links}
    n_hosts = hosts_needed(len(flows))
    hosts = [zone.add_host(f"h{i}", 1.0).seal() for i in range(n_hosts)]
    for k, flow in enumerate(flows):
        if not flow["links"]:
            # zero latency and no link: SimGrid refuses the comm ("no connecting path")
            raise SystemExit(f"flow {flow['id']}: no link; SimGrid cannot pose it")
        route = [by_id[lid] for lid in flow["links"]]
        if flow.get("demand_gbps") is not None:
            route.append(add_shared_link(zone, f"demand:{flow['id']}", flow["demand_gbps"]))
        src, dst = host_pair(k, n_hosts)
        zone.add_route(hosts[src], hosts[dst], route, False)
    zone.seal()
    return hosts


def add_shared_link(zone, name: str, gbps: float) -> LinkInRoute:
    link = zone.add_link(name, gbps * BYTES_PER_GBIT).set_latency(0).seal()
    # SHARED is add_link's default; the 4.1 binding's set_sharing_policy demands a non-linear
    # callback even for SHARED, so check the policy instead of setting it
    if link.get_sharing_policy() != Link.SharingPolicy.SHARED:
        raise SystemExit(f"link {name}: not SHARED")
    return LinkInRoute(link)


def start_flows(hosts: list, n_flows: int) -> list:
    """Start every flow at t=0 (from maestro: host-to-host comms need no actor)."""
    return [Comm.sendto_async(*(hosts[h] for h in host_pair(k, len(hosts))), PAYLOAD_BYTES)
            for k in range(n_flows)]


def max_relative_difference(rates: dict, reference_path: str) -> dict:
    with open(reference_path) as f:
        reference = json.load(f)["rates_gbps"]
    worst_flow = max(rates, key=lambda fid: abs(rates[fid] - reference[fid]) / abs(reference[fid]))
    worst = abs(rates[worst_flow] - reference[worst_flow]) / abs(reference[worst_flow])
    return {"flows_compared": len(rates), "missing": sorted(set(reference) - set(rates))[:5],
            "max_rel_diff": worst, "worst_flow": worst_flow,
            "simgrid": rates[worst_flow], "fabricscope": reference[worst_flow]}


def main(argv: list[str]) -> int:
    args, simgrid_args = parse_args(argv[1:])
    clock = PhaseClock()
    with open(args.problem) as f:
        problem = json.load(f)
    clock.lap("read_json")
    engine = Engine([argv[0], "--cfg=network/model:raw", *simgrid_args])
    hosts = build_platform(engine, problem["links"], problem["flows"])
    clock.lap("build_platform")
    comms = start_flows(hosts, len(problem["flows"]))
    clock.lap("start_flows")
    largest = max(link["capacity_gbps"] for link in problem["links"]) * BYTES_PER_GBIT
    probe_date = 0.5 * PAYLOAD_BYTES / largest
    engine.run_until(probe_date)
    clock.lap("first_allocation")
    elapsed = Engine.clock
    rates = {flow["id"]: (PAYLOAD_BYTES - comm.remaining) / elapsed / BYTES_PER_GBIT
             for flow, comm in zip(problem["flows"], comms)}
    clock.lap("read_rates")
    summary = {"flows": len(comms), "links": len(problem["links"]), "hosts": len(hosts),
               "probe_date_s": elapsed, "unfinished": sum(c.remaining > 0 for c in comms),
               "phases": clock.phases}
    if args.output:
        with open(args.output, "w") as f:
            json.dump({"rates_gbps": rates}, f)
    if args.compare:
        summary["compare"] = max_relative_difference(rates, args.compare)
    print(json.dumps(summary), file=sys.stderr)
    sys.stderr.flush()
    # SimGrid 4.1 segfaults tearing down a simulation with unfinished comms; skipping the teardown
    # also leaves it out of SimGrid's whole-process figure (in SimGrid's favour)
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv)
