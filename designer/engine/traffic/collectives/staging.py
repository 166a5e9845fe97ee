"""GPUDirect RDMA off: network data staged through host memory (docs/ENGINE.md, "Diagnosis").

With GPUDirect RDMA the NIC reads and writes GPU memory over PCIe directly. Without it (a host
where ``nvidia-peermem`` is not loaded, an IOMMU in the way, or ``NCCL_NET_GDR_LEVEL`` set below
the GPU–NIC distance) NCCL's network transport keeps its buffers in host memory: the GPU copies
the data to a host buffer and the NIC sends from there, and on the receiving side the NIC writes
into a host buffer that the GPU then copies in (NCCL's ``NCCL_NET_GDR_LEVEL`` /
``NCCL_NET_GDR_READ``,
https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-net-gdr-level).

:func:`stage_through_memory` models that the way a storage pattern's ``"via": "bounce"`` does
(:mod:`designer.engine.traffic.workloads`): a cross-host flow whose source GPU sits in a host
without GDR becomes concurrent flows of the same bytes, GPU → host memory, host memory → the
GPU's own NIC and on to the destination (the steady state of a pipelined copy), and likewise on
the receiving side. The GPU's
PCIe link, its root port and the CPU's memory path then carry the data too — which is what
slows a real run without GDR.
"""
from __future__ import annotations

from collections import deque

import numpy as np

from designer.engine.errors import InvalidWorkload, Problem
from designer.engine.model.topology import Topology
from designer.engine.traffic.collectives.common import nearest_nics

__all__ = ["host_memory_of", "stage_through_memory"]

# Kinds a search for host memory does not walk through: endpoints, never transit nodes.
_ENDPOINT_KINDS = ("gpu", "nvme", "storage")


def host_memory_of(topo: Topology, node: int, where: str = "routing.gdr_off",
                   need: str = "to stage network data in") -> int:
    """The nearest ``memory`` node inside ``node``'s host (breadth-first over host-internal links,
    never through another GPU or a drive): where NCCL pins its host buffers, the GPU's own NUMA
    node.

    Raises
    ------
    InvalidWorkload
        The host has no memory node reachable from ``node``.
    """
    host = topo.node_host[node]
    seen, queue = {node}, deque([node])
    while queue:
        u = queue.popleft()
        for v, _ in topo.adjacency[u]:
            if v in seen or topo.node_host[v] != host:
                continue
            if topo.node_kind[v] == "memory":
                return v
            seen.add(v)
            if topo.node_kind[v] not in _ENDPOINT_KINDS:
                queue.append(v)
    raise InvalidWorkload("no host memory", [Problem(
        where, f"{topo.node_ids[node]} has no host memory reachable {need}")])


def stage_through_memory(topo: Topology, src, dst, size, hosts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Flows with every cross-host leg of a GDR-less host staged through its host memory.

    Parameters
    ----------
    topo : Topology
    src, dst : array of int
        Flow endpoints (node indices).
    size : float or array of float
        Bytes per flow (a scalar applies to every flow).
    hosts : iterable of str
        Host ids without GPUDirect RDMA.

    Returns
    -------
    src, dst, size : ndarray
        The flows, each cross-host flow out of a listed host's GPU cut into legs GPU → host
        memory → the GPU's NIC → onwards, and one into a listed host's GPU into … → the GPU's
        NIC → host memory → GPU; every leg carries the flow's bytes. Same-host flows (NVLink)
        are kept.

    Examples
    --------
    ``h0/gpu0 → h1/gpu0`` with ``hosts = ["h0"]`` becomes ``h0/gpu0 → h0/mem0``,
    ``h0/mem0 → h0/nic0`` and ``h0/nic0 → h1/gpu0``, each carrying the flow's bytes.
    """
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    size = np.broadcast_to(np.asarray(size, dtype=np.float64), src.shape)
    staged = set(hosts)
    memo: dict[int, tuple[int, ...]] = {}

    def stops(gpu: int) -> tuple[int, ...]:
        # The GPU's host buffer and the NIC it would have used with GDR: NCCL keeps the GPU's
        # NIC (its nearest), only the buffer moves to host memory.
        if gpu not in memo:
            nics = nearest_nics(topo, gpu)
            memo[gpu] = (host_memory_of(topo, gpu),) + ((nics[0],) if nics else ())
        return memo[gpu]

    out_src, out_dst, out_size = [], [], []
    for s, d, b in zip(src.tolist(), dst.tolist(), size.tolist()):
        hs, hd = topo.node_host[s], topo.node_host[d]
        cross = hs != hd
        legs = [s]
        if cross and hs in staged and topo.node_kind[s] == "gpu":
            legs += stops(s)
        if cross and hd in staged and topo.node_kind[d] == "gpu":
            legs += stops(d)[::-1]
        legs.append(d)
        for a, z in zip(legs[:-1], legs[1:]):
            out_src.append(a)
            out_dst.append(z)
            out_size.append(b)
    return (np.array(out_src, dtype=np.int64), np.array(out_dst, dtype=np.int64),
            np.array(out_size, dtype=np.float64))
