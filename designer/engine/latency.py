"""Latency of one message along a path, with the control path of its initiator (DESIGN.md §2.7).

``total = control + propagation + forwarding + serialization``:

- *propagation*: the sum of the links' ``latency_ns`` (cable/trace flight time and PHY);
- *forwarding*: a per-hop cost at every intermediate node, by kind (:data:`FORWARDING_NS`);
- *serialization*: ``message_bytes × 8 / rate`` at the path's bottleneck (the flow's allocated rate
  when given, else the smallest link capacity on the path);
- *control*: who starts the transfer. ``cpu_proxy`` — the way NCCL's proxy thread drives a NIC: the
  CPU notices that the GPU kernel produced the data, writes a work request (WQE) and rings the NIC's
  doorbell over PCIe; the NIC then fetches the WQE. ``gpu_initiated`` — the GPU kernel writes the
  WQE and rings the doorbell itself (REFERENCE.md, "Toward GPU-centric networking on commodity
  hardware"): no proxy notice, the doorbell travels GPU → NIC. The initiator changes latency, not
  the data path's bandwidth.

Every default below is a documented *assumption* (order-of-magnitude figures from vendor data
sheets and published measurements), overridable per call with ``overrides={"NAME": ns}``.
"""
from __future__ import annotations

from collections import deque

import numpy as np

from designer.engine.errors import InvalidScenario, Problem
from designer.engine.topology import Topology

__all__ = ["INITIATORS", "FORWARDING_NS", "CONTROL_NS", "path_latency", "DEFAULTS"]

INITIATORS = ("cpu_proxy", "gpu_initiated")

# Per-hop forwarding latency of an intermediate node, ns (assumptions).
FORWARDING_NS = {
    # Cut-through datacenter switch port-to-port: InfiniBand NDR ~130 ns, Spectrum Ethernet
    # ~300-600 ns; we take the Ethernet middle.
    "switch": 450.0,
    # PCIe Gen5 switch (Broadcom PEX89000 class) cut-through: ~100-150 ns.
    "pcie_switch": 120.0,
    # NVSwitch hop: not published; taken like a PCIe switch plus NVLink flit processing.
    "nvswitch": 150.0,
    # Root complex / CPU mesh hop for peer-to-peer or DMA: ~200-300 ns.
    "cpu": 250.0,
    # NIC traversal (host interface ⇄ wire pipeline, one direction): ConnectX adapters quote
    # ~600 ns port-to-port end to end, about half per side.
    "nic": 300.0,
    # A GPU forwarding as PXN relay: an NVLink write into its memory then the NIC reading it.
    "gpu": 500.0,
}

# Control-path steps, ns (assumptions).
CONTROL_NS = {
    # CPU proxy thread polling a host-mapped flag written by the kernel: half a polling period
    # plus the PCIe write of the flag; NCCL's proxy adds ~1-3 µs per operation in practice.
    "PROXY_NOTICE_NS": 1500.0,
    # Building a WQE in host memory from the CPU (a few cache lines).
    "CPU_WQE_POST_NS": 150.0,
    # A GPU thread building the WQE (uncached stores to device/host memory + memory fence).
    "GPU_WQE_POST_NS": 400.0,
    # Fixed cost of an MMIO doorbell write at the issuer (posted write leaving the core / SM),
    # before the path's own PCIe propagation and switch hops are added.
    "DOORBELL_ISSUE_NS": 100.0,
    # The NIC fetching the WQE by DMA read: one PCIe round trip to where the WQE lives.
    "WQE_FETCH_NS": 900.0,
    # Intra-host copies without a NIC: the CPU launching a copy (cudaMemcpyAsync-like) versus a
    # kernel storing directly over NVLink/PCIe (no launch on the critical path).
    "CPU_COPY_LAUNCH_NS": 2500.0,
    "GPU_STORE_ISSUE_NS": 100.0,
}

DEFAULTS = {**{f"FORWARD_{k.upper()}_NS": v for k, v in FORWARDING_NS.items()}, **CONTROL_NS}


def path_latency(topo: Topology, path_nodes, message_bytes: float, *, initiator: str = "cpu_proxy",
                 rate_gbps: float | None = None, overrides: dict | None = None) -> dict:
    """Latency breakdown of one message along a path.

    Parameters
    ----------
    topo : Topology
    path_nodes : sequence of int
        Node indices of the path in order (e.g. ``Routes.path_nodes(p)``).
    message_bytes : float
        Message size in bytes.
    initiator : {"cpu_proxy", "gpu_initiated"}
    rate_gbps : float, optional
        Rate the message is sent at (the flow's allocated rate); default: the path's smallest link
        capacity.
    overrides : dict, optional
        Replacement values for :data:`DEFAULTS` (``{"PROXY_NOTICE_NS": 3000}``).

    Returns
    -------
    dict
        ``total_ns``, ``propagation_ns``, ``forwarding_ns``, ``serialization_ns``, ``control_ns``,
        ``control`` (step → ns), ``hops``, ``bottleneck_gbps``, ``initiator``.

    Raises
    ------
    InvalidScenario
        Unknown initiator or override name.
    """
    if initiator not in INITIATORS:
        raise InvalidScenario("unknown initiator", [Problem(
            "latency.initiators", f"unknown initiator {initiator!r} (cpu_proxy or gpu_initiated)")])
    k = _constants(overrides)
    nodes = [int(n) for n in path_nodes]
    links = _links_along(topo, nodes)
    propagation = float(sum(topo.link_latency_ns[l] for l in links))
    forwarding = float(sum(k[f"FORWARD_{topo.node_kind[n].upper()}_NS"] for n in nodes[1:-1]
                           if f"FORWARD_{topo.node_kind[n].upper()}_NS" in k))
    # The source and destination NICs are traversed too when the path leaves the host.
    forwarding += float(sum(k["FORWARD_NIC_NS"] for n in (nodes[:1] + nodes[-1:]) if topo.node_kind[n] == "nic"))
    bottleneck = float(min((topo.link_capacity_gbps[l] for l in links), default=np.inf))
    rate = bottleneck if rate_gbps is None or not np.isfinite(rate_gbps) or rate_gbps <= 0 else min(rate_gbps, bottleneck)
    serialization = float(message_bytes) * 8.0 / rate if np.isfinite(rate) and rate > 0 else 0.0
    control = _control(topo, nodes, initiator, k)
    control_ns = float(sum(control.values()))
    total = control_ns + propagation + forwarding + serialization
    return {"initiator": initiator, "total_ns": total, "control_ns": control_ns, "control": control,
            "propagation_ns": propagation, "forwarding_ns": forwarding, "serialization_ns": serialization,
            "hops": len(links), "bottleneck_gbps": bottleneck, "rate_gbps": rate,
            "message_bytes": float(message_bytes)}


def _constants(overrides) -> dict:
    k = dict(DEFAULTS)
    for name, value in (overrides or {}).items():
        if name not in k:
            raise InvalidScenario("unknown latency constant", [Problem(
                f"latency.overrides.{name}", f"unknown constant (choose from {', '.join(sorted(k))})")])
        if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0:
            raise InvalidScenario("bad latency constant", [Problem(f"latency.overrides.{name}", "must be ns >= 0")])
        k[name] = float(value)
    return k


def _links_along(topo: Topology, nodes: list[int]) -> list[int]:
    links = []
    for u, v in zip(nodes, nodes[1:]):
        choices = [l for w, l in topo.adjacency[u] if w == v]
        if not choices:
            raise InvalidScenario("not a path", [Problem("path", f"{topo.node_ids[u]} and {topo.node_ids[v]} "
                                                                 "are not linked")])
        links.append(max(choices, key=lambda l: topo.link_capacity_gbps[l]))
    return links


def _control(topo: Topology, nodes: list[int], initiator: str, k: dict) -> dict:
    nic = next((n for n in nodes if topo.node_kind[n] == "nic"), None)
    if nic is None:
        # A copy inside the host (NVLink/PCIe): no NIC, no doorbell.
        if initiator == "cpu_proxy":
            return {"proxy_notice": k["PROXY_NOTICE_NS"], "copy_launch": k["CPU_COPY_LAUNCH_NS"]}
        return {"store_issue": k["GPU_STORE_ISSUE_NS"]}
    if initiator == "cpu_proxy":
        cpu = _nearest_of_kind(topo, nic, "cpu")
        return {"proxy_notice": k["PROXY_NOTICE_NS"], "wqe_post": k["CPU_WQE_POST_NS"],
                "doorbell": k["DOORBELL_ISSUE_NS"] + _one_way_ns(topo, cpu, nic, k),
                "wqe_fetch": k["WQE_FETCH_NS"]}
    issuer = nodes[0] if topo.node_kind[nodes[0]] == "gpu" else _nearest_of_kind(topo, nic, "gpu")
    return {"wqe_post": k["GPU_WQE_POST_NS"],
            "doorbell": k["DOORBELL_ISSUE_NS"] + _one_way_ns(topo, issuer, nic, k),
            "wqe_fetch": k["WQE_FETCH_NS"]}


def _host_path(topo: Topology, a: int | None, b: int) -> list[int]:
    """Shortest path a→b inside b's host; endpoints other than a and b do not forward."""
    if a is None:
        return []
    host = topo.node_host[b]
    prev = {a: None}
    queue = deque([a])
    while queue:
        u = queue.popleft()
        if u == b:
            break
        if u != a and topo.node_kind[u] in ("gpu", "memory", "nvme", "storage"):
            continue
        for v, _ in topo.adjacency[u]:
            if v not in prev and topo.node_host[v] == host:
                prev[v] = u
                queue.append(v)
    if b not in prev:
        return []
    path = [b]
    while prev[path[-1]] is not None:
        path.append(prev[path[-1]])
    return path[::-1]


def _one_way_ns(topo: Topology, a: int | None, b: int, k: dict) -> float:
    """PCIe one-way time from a to b: link latencies plus forwarding of intermediate nodes."""
    nodes = _host_path(topo, a, b)
    if len(nodes) < 2:
        return 0.0
    links = _links_along(topo, nodes)
    fwd = sum(k.get(f"FORWARD_{topo.node_kind[n].upper()}_NS", 0.0) for n in nodes[1:-1])
    return float(sum(topo.link_latency_ns[l] for l in links) + fwd)


def _nearest_of_kind(topo: Topology, start: int, kind: str) -> int | None:
    host = topo.node_host[start]
    seen, queue = {start}, deque([start])
    while queue:
        u = queue.popleft()
        for v, _ in topo.adjacency[u]:
            if v in seen or topo.node_host[v] != host:
                continue
            if topo.node_kind[v] == kind:
                return v
            seen.add(v)
            if topo.node_kind[v] not in ("gpu", "memory", "nvme", "storage"):
                queue.append(v)
    return None
