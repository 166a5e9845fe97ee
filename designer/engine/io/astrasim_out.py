"""ASTRA-sim 2.0 inputs: the network configuration (YAML) and the system configuration (JSON).

Network (ASTRA-sim 2.0's analytical backend, https://github.com/astra-sim/astra-sim; the format
of its tutorials' inputs, e.g. astra-sim/tutorials ``hoti2024/demo4/inputs/Ring_Switch.yml``)::

    topology: [ Switch, Switch ]     # one building block per dimension: Ring, FullyConnected, Switch
    npus_count: [ 8, 4 ]             # NPUs per dimension; their product is the NPU count
    bandwidth: [ 450.0, 50.0 ]       # GB/s of one NPU's link in that dimension
    latency: [ 100.0, 1225.0 ]       # ns of one link of that dimension

System (``--system-configuration``; keys of astra-sim's ``examples/system`` files):
``scheduling-policy``, ``endpoint-delay``, ``active-chunks-per-dimension``,
``preferred-dataset-splits``, ``all-reduce-implementation`` (one algorithm per dimension) and the
all-gather / reduce-scatter / all-to-all ones, ``collective-optimization``, ``local-mem-bw``
(GB/s), ``boost-mode``.

How a design maps onto dimensions:

- dim 0, the scale-up domain: the GPUs of one NVLink domain (a host, or a GB200 NVL72 rack).
  GPUs wired to NVSwitches make a ``Switch`` whose link is the GPU's NVLink bandwidth (sum of
  its links to the switches); GPUs wired to each other all-to-all (AMD xGMI) make a
  ``FullyConnected`` whose link is one GPU-to-GPU link; latency is the mean latency of those links.
  Left out when a domain has one GPU.
- dim 1, the scale-out fabric: one ``Switch`` over the domains; its per-NPU bandwidth is the
  domain's compute NIC ports over its GPUs; its latency half the fabric's one-way NIC-to-NIC
  latency between the first and the last domain (propagation + per-hop forwarding,
  :func:`designer.engine.model.hop_latency.path_latency`), since an ASTRA-sim ``Switch`` transfer
  crosses two links. Left out with a single domain.

What is lost: the PCIe tree and CPU sockets (a dimension has no inner structure), the fabric's
tiers, oversubscription and rails (one ideal switch), the NIC-to-GPU affinity, and any
heterogeneity (all domains must hold the same number of GPUs, or the export is refused). The
workload is not written: ASTRA-sim 2.0 reads Chakra execution traces, which Fabricscope does not
write yet; pair these files with a trace of your job.
"""
from __future__ import annotations

import json
from collections import deque

import numpy as np

from designer.engine.catalog import GPU_COMPUTE
from designer.engine.errors import InvalidTopology, Problem
from designer.engine.io.fabric_view import FabricView, comment_text, natural_key

__all__ = ["astrasim_files", "astrasim_dimensions", "SYSTEM_DEFAULTS"]

#: System-configuration values that do not come from the design (astra-sim's example system
#: files): LIFO scheduling, one chunk in flight per dimension, NCCL-like ring algorithms per
#: dimension are set per design in :func:`astrasim_files`.
SYSTEM_DEFAULTS = {"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
                   "preferred-dataset-splits": 4, "collective-optimization": "localBWAware", "boost-mode": 0}


def _domains(view: FabricView) -> dict[str, list[int]]:
    """Scale-up domains -> their GPU node indices: NVLink domains, then hosts outside them."""
    inside = {h for hosts in view.domains.values() for h in hosts}
    gpus = view.gpus_by_group()
    out = {d: gpus.get(d, []) for d in sorted(view.domains, key=natural_key)}
    out.update({h: gpus.get(h, []) for h in view.servers if h not in inside})
    return {d: gpus for d, gpus in out.items() if gpus}


def _scale_up(view: FabricView, gpus: list[int]) -> tuple[str, float, float] | None:
    """``(block, GB/s, ns)`` of one domain's GPUs, or None without GPU fabric links."""
    topo = view.topo
    kinds, members = topo.node_kind, set(gpus)
    gpu = gpus[0]
    to_switch = [l for n, l in topo.adjacency[gpu] if kinds[n] == "nvswitch"]
    to_peer = [l for n, l in topo.adjacency[gpu] if n in members]
    if to_switch:
        gbps = float(sum(topo.link_capacity_gbps[l] for l in to_switch))
        return "Switch", gbps / 8.0, float(np.mean(topo.link_latency_ns[to_switch]))
    peers = {n for n, _ in topo.adjacency[gpu] if n in members}
    if to_peer and len(peers) == len(gpus) - 1:
        per_peer = float(sum(topo.link_capacity_gbps[to_peer])) / len(peers)
        return "FullyConnected", per_peer / 8.0, float(np.mean(topo.link_latency_ns[to_peer]))
    return None


def _fabric_latency_ns(view: FabricView, first: str, last: str) -> float:
    """One-way NIC-to-NIC latency (propagation + forwarding) from a NIC of domain ``first`` to
    the nearest NIC of domain ``last`` across the switches, ns."""
    from designer.engine.model.hop_latency import path_latency

    topo = view.topo
    hosts_of = {first: set(view.domains.get(first, [first])), last: set(view.domains.get(last, [last]))}
    starts = [topo.node_index[nic] for h, nic, _, _ in view.server_links if h in hosts_of[first]]
    goals = {topo.node_index[nic] for h, nic, _, _ in view.server_links if h in hosts_of[last]}
    if not starts or not goals:
        raise InvalidTopology("a scale-up domain has no NIC cabled to the fabric",
                              [Problem("links", f'no NIC of "{first if not starts else last}" reaches a switch')])
    path = _switch_path(topo, starts[0], goals)
    if path is None:
        raise InvalidTopology("the fabric does not connect the domains",
                              [Problem("links", f'no switch path from "{first}" to "{last}"')])
    latency = path_latency(topo, path, 0.0)
    return latency["propagation_ns"] + latency["forwarding_ns"]


def _switch_path(topo, start: int, goals: set) -> list[int] | None:
    """Shortest node path from NIC ``start`` to a NIC in ``goals`` through switches only (BFS)."""
    previous, queue = {start: None}, deque([start])
    while queue:
        node = queue.popleft()
        if node in goals:
            path = []
            while node is not None:
                path.append(node)
                node = previous[node]
            return path[::-1]
        if node != start and topo.node_kind[node] != "switch":
            continue
        for peer, _ in topo.adjacency[node]:
            if peer not in previous and (topo.node_kind[peer] == "switch" or peer in goals):
                previous[peer] = node
                queue.append(peer)
    return None


def astrasim_dimensions(doc: dict) -> list[dict]:
    """The design as ASTRA-sim dimensions: ``[{"topology", "npus", "bandwidth_gbytes_s",
    "latency_ns"}, ...]`` (see the module docstring).

    Raises
    ------
    InvalidTopology
        Invalid document; no GPU; domains of different GPU counts; no fabric between domains.
    """
    return _dimensions(FabricView.of(doc))


def _dimensions(view: FabricView) -> list[dict]:
    domains = _domains(view)
    if not domains:
        raise InvalidTopology("the design has no GPU in a host", [Problem("nodes", "no GPU inside a host group")])
    sizes = {d: len(g) for d, g in domains.items()}
    if len(set(sizes.values())) > 1:
        counts = sorted(set(sizes.values()))
        odd = next(d for d, n in sizes.items() if n != sizes[next(iter(sizes))])
        raise InvalidTopology("ASTRA-sim's dimensions need the same number of GPUs in every domain",
                              [Problem(f"groups.{odd}", f"{sizes[odd]} GPUs; the domains hold {counts}")])
    first, last = next(iter(domains)), list(domains)[-1]
    gpus_per_domain = sizes[first]
    dims = []
    up = _scale_up(view, domains[first]) if gpus_per_domain > 1 else None
    if up is not None:
        dims.append({"topology": up[0], "npus": gpus_per_domain, "bandwidth_gbytes_s": up[1], "latency_ns": up[2]})
    elif gpus_per_domain > 1:
        raise InvalidTopology("the GPUs of a domain share no NVLink/xGMI fabric ASTRA-sim can model",
                              [Problem(f"groups.{first}", "GPUs neither on NVSwitches nor all-to-all linked")])
    if len(domains) > 1:
        hosts = set(view.domains.get(first, [first]))
        nic_gbps = sum(view.port_gbps(l) * view.ports(l) for h, _, _, l in view.server_links if h in hosts)
        dims.append({"topology": "Switch", "npus": len(domains),
                     "bandwidth_gbytes_s": nic_gbps / gpus_per_domain / 8.0,
                     "latency_ns": _fabric_latency_ns(view, first, last) / 2.0})
    return dims


def _local_mem_bw(view: FabricView) -> float | None:
    """HBM bandwidth of the design's first GPU model in the catalog (GB/s), else None."""
    for i, kind in enumerate(view.topo.node_kind):
        if kind == "gpu":
            model = str(view.topo.node_attrs[i].get("model", "")).lower()
            keys = [k for k in GPU_COMPUTE if k in model]
            return GPU_COMPUTE[max(keys, key=len)].hbm_gbytes_s if keys else None
    return None


def astrasim_files(doc: dict) -> dict[str, str]:
    """``{"network.yml": text, "system.json": text}`` for ``AstraSim_Analytical_*``
    (``--network-configuration``, ``--system-configuration``).

    Raises
    ------
    InvalidTopology
        As :func:`astrasim_dimensions`.
    """
    view = FabricView.of(doc)
    dims = _dimensions(view)
    number = lambda v: f"{v:.6g}" if "e" not in f"{v:.6g}" else f"{v:.1f}"   # YAML-plain decimals
    network = "\n".join([
        f"# ASTRA-sim 2.0 network config written by Fabricscope from design \"{comment_text(view.topo.name)}\"",
        "# dim 0 = NVLink domain (if any), dim 1 = scale-out fabric; see docs/FORMATS.md",
        f"topology: [ {', '.join(d['topology'] for d in dims)} ]",
        f"npus_count: [ {', '.join(str(d['npus']) for d in dims)} ]",
        f"bandwidth: [ {', '.join(number(d['bandwidth_gbytes_s']) for d in dims)} ]  # GB/s",
        f"latency: [ {', '.join(number(d['latency_ns']) for d in dims)} ]  # ns", ""])
    algorithms = ["ring"] * len(dims)   # NCCL's default algorithm for large collectives
    system = dict(SYSTEM_DEFAULTS)
    system.update({f"{op}-implementation": list(algorithms)
                   for op in ("all-reduce", "all-gather", "reduce-scatter", "all-to-all")})
    bandwidth = _local_mem_bw(view)
    if bandwidth is not None:
        system["local-mem-bw"] = bandwidth
    return {"network.yml": network, "system.json": json.dumps(system, indent=2) + "\n"}
