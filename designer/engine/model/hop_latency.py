"""Latency of one message along a path, with the control path of its initiator (docs/ENGINE.md,
"Latency of a message").

``total = control + propagation + forwarding + serialization``:

- *propagation*: the sum of the links' ``latency_ns`` (cable/trace flight time and PHY);
- *forwarding*: a per-hop cost at every intermediate node, by kind (:data:`FORWARDING_NS`);
- *serialization*: ``message_bytes × 8 / rate`` at the path's bottleneck (the flow's allocated rate
  when given, else the smallest link capacity on the path);
- *control*: who starts the transfer. ``cpu_proxy`` — the way NCCL's proxy thread drives a NIC: the
  CPU notices that the GPU kernel produced the data, writes a work request (WQE) and rings the NIC's
  doorbell over PCIe; the NIC then fetches the WQE. ``gpu_initiated`` — the GPU kernel writes the
  WQE and rings the doorbell itself ("Toward GPU-centric networking on commodity hardware",
  EdgeSys '24, DOI 10.1145/3642968.3654820): no proxy notice, the doorbell travels GPU → NIC.
  The initiator changes latency, not the data path's bandwidth.

Collective steps and round trips build on the same pieces:

- :func:`step_latency` / :func:`step_latency_s`: one step of a collective along a path — the time
  from "the sender's data is ready" to "the receiver's GPU sees it": the sender's control path,
  the NIC's DMA read of the payload, flight (propagation + forwarding), and the receiver's
  *completion* (``cpu_proxy``: the NIC writes a CQE, the receiving proxy polls it and writes a
  flag the GPU polls; ``gpu_initiated``: the put's signal atomic lands one PCIe read round trip
  after the data and the GPU polls it; a protocol whose data carries its own flag, NCCL's
  LL/LL128: the receiving GPU polls the data). The GPU-initiated post itself is WQE stores, two
  system-scope fences and the MMIO doorbell. A path without a NIC is a kernel's own stores
  over NVLink/PCIe whatever the initiator (NCCL's kernels move intra-node data themselves).
- :func:`kernel_launch_s`: once per collective (the launch is not per step).
- :func:`serial_issue_s`: a loop's shortest time per collective when one host thread issues it
  on several GPUs (nccl-tests ``-g N``; ``SERIAL_LAUNCH_NS`` per GPU).
- :func:`round_trip`: a ping-pong — a step there and a step back — the figure GPU-initiated
  networking papers report (arXiv 2511.15076: ≈ 16.7 µs on H100 with GDAKI).

Every default below carries its source or says it is an assumption; all are overridable per call
with ``overrides={"NAME": ns}``.
"""
from __future__ import annotations

from collections import deque

import numpy as np

from designer.engine.catalog import TECHS
from designer.engine.errors import InvalidScenario, Problem
from designer.engine.model.topology import Topology

__all__ = ["INITIATORS", "FORWARDING_NS", "CONTROL_NS", "COMPLETION_NS", "HOST_BUFFER_PROTOCOLS", "path_latency",
           "step_latency", "step_latency_s", "network_step", "kernel_launch_s", "round_trip", "DEFAULTS",
           "SERIAL_LAUNCH_NS", "serial_issue_s"]

INITIATORS = ("cpu_proxy", "gpu_initiated")

# Per-hop forwarding latency of an intermediate node, ns.
FORWARDING_NS = {
    # Cut-through Ethernet datacenter switch port-to-port, ~300-600 ns (assumption: the middle of
    # vendor figures for Spectrum-class switches). A switch with InfiniBand links uses "switch_ib".
    "switch": 450.0,
    # InfiniBand switch port-to-port: NVIDIA Quantum-2 (QM9700) "under 150 nanoseconds"
    # (https://www.router-switch.com/faq/nvidia-quantum-2-qm9700-vs-spectrum-4-sn5400.html);
    # Quantum HDR is quoted at 130 ns. We take 130 ns.
    "switch_ib": 130.0,
    # PCIe Gen5 switch (Broadcom PEX89000 class) cut-through: ~100-150 ns.
    "pcie_switch": 120.0,
    # NVSwitch hop: not published; taken like a PCIe switch plus NVLink flit processing.
    "nvswitch": 150.0,
    # Root complex / CPU mesh hop for peer-to-peer or DMA: ~200-300 ns.
    "cpu": 250.0,
    # NIC traversal (host interface ⇄ wire pipeline, one direction): ConnectX-6/7 product briefs
    # quote sub-600 ns end-to-end adapter latency, about half per side (assumption: even split).
    "nic": 300.0,
    # A GPU forwarding as PXN relay: an NVLink write into its memory then the NIC reading it.
    "gpu": 500.0,
}

# Control-path steps, ns (assumptions of the order of the cited measurements).
CONTROL_NS = {
    # CPU proxy thread polling a host-mapped flag written by the kernel: half a polling period
    # plus the PCIe write of the flag; NCCL's proxy adds ~1-3 µs per operation in practice.
    "PROXY_NOTICE_NS": 1500.0,
    # Building a WQE in host memory from the CPU (a few cache lines).
    "CPU_WQE_POST_NS": 150.0,
    # A GPU thread building the WQE (uncached stores to device/host memory). The NVSHMEM
    # performance guide: "A thread on the GPU cannot fill out a work queue entry (WQE) as quickly
    # as a CPU thread. This results in a higher latency for individual messages"
    # (https://docs.nvidia.com/nvshmem/release-notes-install-guide/best-practice-guide/performance.html).
    "GPU_WQE_POST_NS": 400.0,
    # One system-scope memory fence (``__threadfence_system``) on the GPU. The mlx5 post sequence
    # needs two before the doorbell: WQE stores visible before the doorbell-record update, and
    # that update before the MMIO doorbell write (rdma-core providers/mlx5/qp.c post_send_db:
    # udma_to_device_barrier, DBR write, mmio_wc_start, doorbell), which a GPU-initiated post
    # (IBGDA / GDAKI) runs as GPU fences. ~200 ns per system-scope fence (DotCompute FenceType
    # reference, https://mivertowski.github.io/DotCompute/api/DotCompute.Abstractions.Memory.FenceType.html;
    # a third-party figure, not an NVIDIA measurement).
    "GPU_FENCE_NS": 200.0,
    # Fixed cost of an MMIO doorbell write at the issuer (posted write leaving the core / SM),
    # before the path's own PCIe propagation and switch hops are added.
    "DOORBELL_ISSUE_NS": 100.0,
    # The NIC fetching the WQE by DMA read: one PCIe round trip to where the WQE lives; pcie-bench
    # (Neugebauer et al., SIGCOMM 2018) measures ~0.5-1 µs DMA read latency.
    "WQE_FETCH_NS": 900.0,
    # Intra-host copies without a NIC: the CPU launching a copy (cudaMemcpyAsync-like) versus a
    # kernel storing directly over NVLink/PCIe (no launch on the critical path).
    "CPU_COPY_LAUNCH_NS": 2500.0,
    "GPU_STORE_ISSUE_NS": 100.0,
}

# Launch and completion steps, ns.
COMPLETION_NS = {
    # cudaLaunchKernel → kernel running, once per collective. NCCL's tuning model charges a fixed
    # per-operation base latency of 3.6-6.6 µs for ring LL (src/graph/tuning.cc, baseLat; the
    # figure grew across releases), which is mostly launch; 2 H100 GPUs all-reduce 128 B in ~6 µs
    # end to end under NVLSTree with CUDA graphs (NVIDIA/nccl#1259). We take 4 µs.
    "KERNEL_LAUNCH_NS": 4000.0,
    # The NIC's DMA read of the payload's first bytes from the source GPU: a PCIe read round
    # trip. pcie-bench (Neugebauer et al., SIGCOMM 2018, "Understanding PCIe performance for end
    # host networking") measures ~0.5-1 µs DMA read latency; we take 900 ns like WQE_FETCH_NS.
    "PAYLOAD_READ_NS": 900.0,
    # The receiving NIC generating the CQE before its DMA write (the write's PCIe path is added
    # from the topology): NIC pipeline, assumption of the same order as a NIC side traversal.
    "CQE_WRITE_NS": 300.0,
    # The receiving CPU proxy noticing the CQE: half a period of the proxy's progress loop, the
    # same loop as PROXY_NOTICE_NS (NCCL's proxy adds ~1-3 µs per operation).
    "CQ_POLL_NS": 1500.0,
    # A GPU-initiated put with a signal (NCCL GIN ``put<ncclGin_SignalInc>``, NVIDIA/nccl#1893's
    # ping-pong; NVSHMEM put_signal) is an RDMA write followed by an RDMA atomic on the signal word,
    # ordered after the data on the same queue pair. The target NIC executes the atomic as a PCIe
    # read-modify-write of the GPU's memory: the read is non-posted (and, by PCIe ordering, flushes
    # the data's posted writes ahead of it), so the signal lands one PCIe read round trip after the
    # data. pcie-bench (Neugebauer et al., SIGCOMM 2018) measures ~0.5-1 µs DMA read latency; we
    # take 900 ns like PAYLOAD_READ_NS.
    "SIGNAL_ATOMIC_READ_NS": 900.0,
    # A GPU thread spinning on a flag (or LL data line) in its own memory sees a remote write
    # after a few hundred ns: NCCL's per-step NVLink ring LL latency is 0.47-0.6 µs in total
    # (tuning.cc hwLat, NVLINK Ring LL), which bounds store + flight + poll.
    "GPU_FLAG_POLL_NS": 200.0,
    # A GPU thread polling a flag (or LL line) that lives in *host* memory: every poll is a
    # non-posted PCIe read, so the GPU sees the data one read round trip after it lands.
    # pcie-bench (Neugebauer et al., SIGCOMM 2018) measures ~0.5-1 µs DMA read latency; we take
    # 900 ns like PAYLOAD_READ_NS.
    "HOST_POLL_READ_NS": 900.0,
}

# Host time to issue one GPU's collective when one CPU thread drives several GPUs (nccl-tests
# ``-g N``, one process for every GPU of a host): the thread enqueues and launches each GPU's
# kernel in turn, so a loop of back-to-back collectives cannot run faster than N issues per
# operation. NVIDIA/nccl-tests#123 (DGX A100, AMD EPYC 7742, ``NCCL_ALGO=Ring
# NCCL_MAX_NCHANNELS=1 all_reduce_perf -b 8 -g N``): 16.88 µs at 4 GPUs, 20.8 at 5, 25.2 at 6,
# 29.5 at 7, 33.7 at 8 — 4.2 µs per GPU from 4 GPUs up (4.22, 4.16, 4.20, 4.21, 4.21), where
# NCCL's own ring LL model grows by only 1.2 µs per GPU; NVIDIA/nccl-tests#333 (AddyLaddy, NVIDIA):
# higher latency with ``-g 8`` "due to the CUDA latency overheads of single process jobs".
# Not in DEFAULTS: it is not a per-hop constant a scenario overrides.
SERIAL_LAUNCH_NS = 4200.0

# Protocols whose network buffers NCCL keeps in host memory even with GPUDirect RDMA: its net
# transport allocates ``p != NCCL_PROTO_LL && useGdr ? DEVMEM : HOSTMEM`` (NVIDIA/nccl
# src/transport/net.cc), so an LL step across hosts lands in host memory and the receiving GPU
# polls it there; LL128 and Simple land in GPU memory.
HOST_BUFFER_PROTOCOLS = ("LL",)

DEFAULTS = {**{f"FORWARD_{k.upper()}_NS": v for k, v in FORWARDING_NS.items()}, **CONTROL_NS, **COMPLETION_NS}


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
    forwarding = _forwarding_ns(topo, nodes, k)
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


def _forwarding_ns(topo: Topology, nodes: list[int], k: dict) -> float:
    """Per-hop forwarding of the intermediate nodes (plus end NICs: a path leaving the host
    traverses its source and destination NICs too)."""
    total = sum(k.get(_forward_key(topo, n), 0.0) for n in nodes[1:-1])
    total += sum(k["FORWARD_NIC_NS"] for n in (nodes[:1] + nodes[-1:]) if topo.node_kind[n] == "nic")
    return float(total)


def _forward_key(topo: Topology, n: int) -> str:
    kind = topo.node_kind[n]
    if kind == "switch" and any(_family(topo.link_tech[l]) == "infiniband" for _, l in topo.adjacency[n]):
        return "FORWARD_SWITCH_IB_NS"
    return f"FORWARD_{kind.upper()}_NS"


def _family(tech: str | None) -> str | None:
    info = TECHS.get(tech) if tech else None
    return info.family if info is not None else None


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
    return {"wqe_post": k["GPU_WQE_POST_NS"], "fences": 2 * k["GPU_FENCE_NS"],
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


# ============================================================================ collective steps
def kernel_launch_s(overrides: dict | None = None) -> float:
    """Launch latency of one collective kernel, in seconds (``KERNEL_LAUNCH_NS``; once per
    collective, not per step)."""
    return _constants(overrides)["KERNEL_LAUNCH_NS"] * 1e-9


def serial_issue_s(gpus_per_thread: int) -> float:
    """Host time (s) one thread needs to issue one collective on each of its ``gpus_per_thread``
    GPUs (``SERIAL_LAUNCH_NS`` each): the shortest time per operation of a loop of collectives
    issued that way. 0 for one GPU a thread, whose launch NCCL's own latency model covers."""
    return gpus_per_thread * SERIAL_LAUNCH_NS * 1e-9 if gpus_per_thread > 1 else 0.0


def step_latency(topo: Topology, path_nodes, *, initiator: str = "cpu_proxy", message_bytes: float = 0.0,
                 flag_in_data: bool = False, buffer: str = "gpu", rate_gbps: float | None = None,
                 overrides: dict | None = None) -> dict:
    """Latency breakdown of one collective step along a path (no bandwidth term).

    Parameters
    ----------
    topo : Topology
    path_nodes : sequence of int
        Node indices of the step's path, sender first (``Routes.path_nodes(p)``).
    initiator : {"cpu_proxy", "gpu_initiated"}
        Who drives the NIC; ignored on a path without a NIC (the kernel's own stores).
    message_bytes : float
        Bytes serialized at the path's smallest link capacity (default 0: the caller adds its
        own bytes ÷ rate bandwidth term).
    flag_in_data : bool
        True for protocols whose data carries its own flag (NCCL's LL, LL128): the receiving GPU
        polls the data; no CQE, proxy poll, signal atomic or separate flag on the receive side.
    buffer : {"gpu", "host"}
        Where the receive buffer lives: ``host`` for a protocol NCCL's network transport keeps in
        host memory (:data:`HOST_BUFFER_PROTOCOLS`) — the NIC writes to host memory and the GPU
        polls it across PCIe.
    rate_gbps : float, optional
        Rate the bytes are serialized at (a flow's solved rate); default the path's smallest link
        capacity.
    overrides : dict, optional
        Replacement values for :data:`DEFAULTS`.

    Returns
    -------
    dict
        ``total_ns`` and its parts ``control_ns`` (with ``control``: step → ns), ``payload_read_ns``,
        ``propagation_ns``, ``forwarding_ns``, ``serialization_ns``, ``completion_ns`` (with
        ``completion``: step → ns); ``initiator``, ``hops``, ``via_nic``.

    Raises
    ------
    InvalidScenario
        Unknown initiator or override, or consecutive nodes that are not linked.
    """
    base = path_latency(topo, path_nodes, message_bytes, initiator=_effective_initiator(topo, path_nodes, initiator),
                        rate_gbps=rate_gbps, overrides=overrides)
    k = _constants(overrides)
    nodes = [int(n) for n in path_nodes]
    via_nic = any(topo.node_kind[n] == "nic" for n in nodes)
    payload = k["PAYLOAD_READ_NS"] if via_nic else 0.0
    control = dict(base["control"])
    if via_nic and base["initiator"] == "gpu_initiated" and not flag_in_data:
        # A put with its signal is two work requests the GPU thread builds, an RDMA write and
        # the signal's RDMA atomic fetch-add (DOCA GPUNetIO doca_gpu_dev_verbs_put_signal_thread,
        # which NCCL's GIN GDAKI put calls: src/include/nccl_device/gin/gdaki/gin_gdaki.h).
        control["signal_wqe_post"] = k["GPU_WQE_POST_NS"]
    control_ns = float(sum(control.values()))
    completion = _completion(topo, nodes, base["initiator"], via_nic, flag_in_data, k, buffer)
    parts = (control_ns, payload, base["propagation_ns"], base["forwarding_ns"],
             base["serialization_ns"], sum(completion.values()))
    return {"initiator": base["initiator"], "total_ns": float(sum(parts)), "control_ns": control_ns,
            "control": control, "payload_read_ns": payload, "propagation_ns": base["propagation_ns"],
            "forwarding_ns": base["forwarding_ns"], "serialization_ns": base["serialization_ns"],
            "completion_ns": float(sum(completion.values())), "completion": completion,
            "hops": base["hops"], "via_nic": via_nic, "message_bytes": float(message_bytes),
            "bottleneck_gbps": base["bottleneck_gbps"], "rate_gbps": base["rate_gbps"]}


def step_latency_s(topo: Topology, path_nodes, *, initiator: str = "cpu_proxy", message_bytes: float = 0.0,
                   flag_in_data: bool = False, overrides: dict | None = None) -> float:
    """Total of :func:`step_latency`, in seconds (the per-step latency term of a collective)."""
    return step_latency(topo, path_nodes, initiator=initiator, message_bytes=message_bytes,
                        flag_in_data=flag_in_data, overrides=overrides)["total_ns"] * 1e-9


def network_step(topo: Topology, path_nodes, protocol: str, overrides: dict | None = None) -> dict:
    """One step of an NCCL collective across hosts under ``protocol`` (``LL``, ``LL128``,
    ``Simple``): NCCL's network transport is driven by its CPU proxy; LL and LL128 carry their
    flags in the data, Simple completes through a CQE, the proxy's poll and a flag; LL lands in
    host memory (:data:`HOST_BUFFER_PROTOCOLS`). ``path_nodes`` is the step's routed path, sender
    GPU first. Returns the :func:`step_latency` breakdown."""
    return step_latency(topo, path_nodes, initiator="cpu_proxy", flag_in_data=protocol != "Simple",
                        buffer="host" if protocol in HOST_BUFFER_PROTOCOLS else "gpu", overrides=overrides)


def round_trip(topo: Topology, path_nodes, message_bytes: float = 8.0, *, initiator: str = "gpu_initiated",
               rate_gbps: float | None = None, overrides: dict | None = None) -> dict:
    """Ping-pong round trip: a put with its signal along ``path_nodes`` that the far GPU observes
    (it polls the signal), then a put with a signal back.

    This is how GPU-initiated networking latency is reported (arXiv 2511.15076, H100 + GDAKI:
    ≈ 16.7 µs for small messages). The kernel is persistent in a ping-pong loop, so no launch.

    Returns
    -------
    dict
        ``total_ns``, ``total_s``, ``ping`` and ``pong`` (:func:`step_latency` breakdowns),
        ``initiator``, ``message_bytes``.
    """
    nodes = [int(n) for n in path_nodes]
    ping = step_latency(topo, nodes, initiator=initiator, message_bytes=message_bytes, rate_gbps=rate_gbps,
                        overrides=overrides)
    pong = step_latency(topo, nodes[::-1], initiator=initiator, message_bytes=message_bytes, rate_gbps=rate_gbps,
                        overrides=overrides)
    total = ping["total_ns"] + pong["total_ns"]
    return {"initiator": ping["initiator"], "message_bytes": float(message_bytes), "total_ns": total,
            "total_s": total * 1e-9, "ping": ping, "pong": pong}


def _effective_initiator(topo: Topology, path_nodes, initiator: str) -> str:
    if initiator not in INITIATORS:
        return initiator  # path_latency reports it as a located problem
    has_nic = any(topo.node_kind[int(n)] == "nic" for n in path_nodes)
    return initiator if has_nic else "gpu_initiated"


def _completion(topo: Topology, nodes: list[int], initiator: str, via_nic: bool, flag_in_data: bool,
                k: dict, buffer: str = "gpu") -> dict:
    """Receive side: how the destination GPU learns that the data has landed.

    Without a NIC, or when the data carries its own flag (LL/LL128), the GPU polls the data. A
    GPU-initiated put is followed by its signal atomic (one PCIe read round trip at the target
    after the data) that the GPU polls. A CPU-proxied receive goes through a CQE, the proxy's CQ
    poll and a flag the proxy writes. Data that lands in host memory (``buffer="host"``) is
    written there by the NIC and polled there by the GPU, one PCIe read round trip a poll."""
    if via_nic and flag_in_data and buffer == "host":
        nic = next(n for n in reversed(nodes) if topo.node_kind[n] == "nic")
        cpu = _nearest_of_kind(topo, nic, "cpu")
        write = _one_way_ns(topo, nic, cpu, k) if cpu is not None else 0.0
        return {"host_write": write, "host_poll": k["HOST_POLL_READ_NS"]}
    if not via_nic or flag_in_data:
        return {"gpu_poll": k["GPU_FLAG_POLL_NS"]}
    if initiator == "gpu_initiated":
        return {"signal_atomic": k["SIGNAL_ATOMIC_READ_NS"], "gpu_poll": k["GPU_FLAG_POLL_NS"]}
    nic = next(n for n in reversed(nodes) if topo.node_kind[n] == "nic")
    cpu = _nearest_of_kind(topo, nic, "cpu")
    gpu = nodes[-1] if topo.node_kind[nodes[-1]] == "gpu" else _nearest_of_kind(topo, nic, "gpu")
    return {"cqe_write": k["CQE_WRITE_NS"] + _one_way_ns(topo, nic, cpu, k) if cpu is not None else k["CQE_WRITE_NS"],
            "cq_poll": k["CQ_POLL_NS"],
            "flag_write": k["DOORBELL_ISSUE_NS"] + (_one_way_ns(topo, cpu, gpu, k) if gpu is not None else 0.0),
            "gpu_poll": k["GPU_FLAG_POLL_NS"]}
