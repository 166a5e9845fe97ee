"""What a collective treats as one node — the NVLink domain holding a GPU, else its host — and
that node's NVSwitch plane. Shared by the shared pieces (:mod:`.common`), the direct-mesh channels
(:mod:`.mesh`) and the NVLS algorithms.
"""
from __future__ import annotations

import numpy as np

from designer.engine.model.pathclass import DOMAIN_KIND, node_domains
from designer.engine.model.topology import Topology, kind_nodes

__all__ = ["block_key", "nvswitch_plane"]


def block_key(topo: Topology, n: int) -> str | None:
    """What a collective treats as one node: the NVLink domain holding ``n`` (the 18 trays of a
    GB200 NVL72 share one NVSwitch plane, as NCCL's multi-node NVLink treats them), else its host."""
    ids, domain = node_domains(topo)
    return ids[int(domain[n])] if ids and domain[n] >= 0 else topo.node_host[n]


def nvswitch_plane(topo: Topology, host: str | None) -> list[int]:
    """NVSwitch nodes of ``host`` in document order (its NVSwitch plane); ``host`` may be an
    NVLink domain (:func:`block_key`), whose plane is every NVSwitch inside it."""
    if host is None:
        return []
    if topo.groups.get(host, {}).get("kind") == DOMAIN_KIND:
        return [i for i in np.flatnonzero(topo.in_group_mask(host)).tolist() if topo.node_kind[i] == "nvswitch"]
    return list(_host_planes(topo).get(host, ()))


def _host_planes(topo: Topology) -> dict:
    """Host id → its NVSwitch nodes in document order, from one pass over the nodes, kept on the
    topology: NVLS checks ask for every host's plane (2,048 hosts, 106k nodes at 16,384 GPUs)."""
    planes = topo.__dict__.get("_nvswitch_planes")
    if planes is None:
        planes = {}
        hosts = topo.node_host
        for i in kind_nodes(topo, "nvswitch").tolist():
            if hosts[i] is not None:
                planes.setdefault(hosts[i], []).append(i)
        topo.__dict__["_nvswitch_planes"] = planes
    return planes
