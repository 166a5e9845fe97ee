"""Host-memory copies as the hardware does them: engine, direction, the GPU's host link, shared host ports.

A ``host_offload`` flow's rate is the least of what its path allows (the solver: link and node
capacities, host memory included, shared by everything on them) and of this per-flow demand
cap (:func:`copy_caps_gbps`):

- the payload rate of the GPU's host link in the copy's direction for the copying engine
  (:func:`designer.engine.catalog_copies.copy_payload_gbytes`: SM 128-byte / copy-engine
  256-byte writes, 64-byte read completions, NVLink packet overhead on NVLink-C2C);
- an SM copy *from* host memory over PCIe: the measured non-posted-read rate of the link
  technology (``catalog.PCIE_MEASURED_GBYTES[tech]["h2d"]``), as before;
- a shared host port (:data:`designer.engine.catalog_copies.HOST_PORTS`, by CPU model: a Grace's
  NVLink-C2C) split evenly between the pattern's GPUs copying through it in the same direction
  — the max-min share when the pattern's copies are alike and nothing else crosses the port
  (an approximation when other traffic does: the solver does not see the port).
"""
from __future__ import annotations

import numpy as np

from designer.engine.catalog import GBPS_PER_GBYTE, PCIE_MEASURED_GBYTES, TECHS
from designer.engine.catalog_copies import HOST_PORTS, copy_payload_gbytes
from designer.engine.model.topology import Topology

__all__ = ["copy_caps_gbps", "host_link"]


def host_link(topo: Topology, gpu: int) -> tuple[str | None, int | None]:
    """The GPU's link toward its host, as ``(tech, neighbour)``: its PCIe or NVLink-C2C link
    (``(None, None)`` when it has none)."""
    for nbr, l in topo.adjacency[gpu]:
        tech = topo.link_tech[l] or ""
        if tech.startswith("pcie") or tech == "nvlink-c2c":
            return tech, nbr
    return None, None


def _one_cap_gbytes(tech: str | None, direction: str, engine: str) -> float:
    if tech is None:
        return np.inf
    if direction == "read" and engine == "sm" and "h2d" in PCIE_MEASURED_GBYTES.get(tech, {}):
        return PCIE_MEASURED_GBYTES[tech]["h2d"][0]
    raw = TECHS[tech].raw_gbps / GBPS_PER_GBYTE if tech in TECHS else None
    rate = copy_payload_gbytes(tech, direction, engine, raw)
    return np.inf if rate is None else rate


def copy_caps_gbps(topo: Topology, src, dst, engine: str = "sm") -> np.ndarray:
    """Per-flow demand cap (Gb/s) of host-memory copies; inf where a flow is not GPU ⇄ memory.

    Parameters
    ----------
    topo : Topology
    src, dst : array of int
        Flow endpoints (node indices).
    engine : str
        ``"sm"`` (a copy kernel, nvbandwidth's ``*_memcpy_sm``) or ``"ce"`` (copy engines).

    Returns
    -------
    ndarray of float64
        Demand cap per flow, Gb/s.
    """
    src, dst = np.asarray(src).tolist(), np.asarray(dst).tolist()
    caps = np.full(len(src), np.inf)
    ports: dict[tuple[int, str], list[int]] = {}
    for k, (s, d) in enumerate(zip(src, dst)):
        kinds = (topo.node_kind[s], topo.node_kind[d])
        if kinds not in (("gpu", "memory"), ("memory", "gpu")):
            continue
        gpu, direction = (s, "write") if kinds[0] == "gpu" else (d, "read")
        tech, nbr = host_link(topo, gpu)
        caps[k] = _one_cap_gbytes(tech, direction, engine) * GBPS_PER_GBYTE
        port = HOST_PORTS.get(str(topo.node_attrs[nbr].get("model"))) if nbr is not None else None
        if port is not None and port["tech"] == tech:
            ports.setdefault((nbr, direction), []).append(k)
    for (cpu, _), members in ports.items():
        share = HOST_PORTS[str(topo.node_attrs[cpu].get("model"))]["port_gbytes"] * GBPS_PER_GBYTE / len(set(
            (src[k] if topo.node_kind[src[k]] == "gpu" else dst[k]) for k in members))
        caps[members] = np.minimum(caps[members], share)
    return caps
