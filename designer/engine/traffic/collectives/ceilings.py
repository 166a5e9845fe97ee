"""NCCL's per-architecture bandwidth ceilings, applied to a plan, and what they read off the topology.

NCCL's tuner caps the bus bandwidth of ring and tree per protocol with tables per GPU architecture
and node count (NVIDIA/nccl ``src/graph/tuning.cc``, ``src/tuning/cost_model.cc`` from NCCL 2.28:
``llMaxBws``, ``perChMaxRingLL128Bws``, ``perChMaxTreeBws``, ``perChMaxTreeLL128Bws``; the tables
and the arithmetic are in :mod:`.protocols`, :func:`~.protocols.tuner_efficiency`). This module
supplies what those tables are indexed by, from the topology:

- the GPU architecture, from the NVLink generation of the participants' links (NVLink 3 = Ampere,
  4 = Hopper, 5 = Blackwell; no NVLink: no ceiling — the engine has no compute capability);
- NCCL's channel count for the algorithm (:func:`.sizing.channels_full`);
- whether the hosts' CPUs are AMD (across hosts NCCL picks the LL row by CPU vendor).

RCCL hosts (AMD xGMI meshes) keep RCCL's own tuning, so no ceiling is applied there.
"""
from __future__ import annotations

from designer.engine.model.topology import kind_nodes
from designer.engine.traffic.collectives.common import Group
from designer.engine.traffic.collectives.protocols import ARCH_BY_NVLINK, bandwidth_efficiency, tuner_efficiency
from designer.engine.traffic.collectives.sizing import channels_full, runs_rccl

__all__ = ["amd_hosts", "ceilings_for", "cpu_vendor", "gpu_arch", "may_be_capped", "protocol_efficiency"]


def cpu_vendor(model: str | None) -> str | None:
    """``intel``, ``amd`` or None from a CPU model string (``AMD EPYC 7742`` → ``amd``)."""
    text = (model or "").lower()
    if "amd" in text or "epyc" in text:
        return "amd"
    if "intel" in text or "xeon" in text:
        return "intel"
    return None


def gpu_arch(topo, group: Group) -> str | None:
    """The participants' GPU architecture as NCCL's tuner rows name it (``ampere``, ``hopper``,
    ``blackwell`` …), read from the NVLink generation of the first participant's links
    (:data:`.protocols.ARCH_BY_NVLINK`: NVLink 3 = A100, 4 = H100/H200, 5 = B200); None without
    NVLink (PCIe-only or AMD GPUs: no ceiling is applied)."""
    g = int(group.participants[0])
    gens = set()
    for _, link in topo.adjacency[g]:
        tech = (topo.link_tech[link] or "").lower()
        if tech.startswith("nvlink") and tech[6:7].isdigit():   # not nvlink-c2c (the CPU link)
            gens.add(int(tech[6]))
    return ARCH_BY_NVLINK.get(min(gens)) if gens else None


def amd_hosts(topo, group: Group) -> bool:
    """Whether any participant's host has an AMD CPU (NCCL's ``llMaxBw`` row across hosts; NCCL
    takes the AMD row for mixed vendors too)."""
    hosts = {topo.node_host[int(g)] for g in group.participants.tolist()} - {None}
    return any(cpu_vendor(topo.node_attrs[i].get("model")) == "amd"
               for i in kind_nodes(topo, "cpu").tolist() if topo.node_host[i] in hosts)


def ceilings_for(topo, group: Group, algorithm: str) -> dict | None:
    """What NCCL's ceilings need for ``algorithm`` here — ``arch``, ``channels``, ``cpu_amd`` — or
    None when they do not apply: algorithms other than ring and tree, GPUs without NVLink, RCCL."""
    if algorithm not in ("ring", "tree") or group.n < 2 or runs_rccl(topo, group):
        return None
    arch = gpu_arch(topo, group)
    if arch is None:
        return None
    return {"arch": arch, "channels": channels_full(topo, group, algorithm), "cpu_amd": amd_hosts(topo, group)}


def may_be_capped(topo, group: Group, algorithm: str, protocol: str) -> bool:
    """Whether a ceiling can lower ``algorithm`` under ``protocol`` here; then its data time is
    needed even when it is the only candidate (the ceiling is compared with its full-rate
    bandwidth). Ring Simple has no ceiling."""
    if algorithm == "nvls" and group.kind == "allreduce" and group.nvls_bus_limit(topo):
        return True   # the NVSwitch plane's own limit is compared with the data time (nvls.switch_limited)
    if algorithm == "ring" and protocol == "Simple":
        return False
    return ceilings_for(topo, group, algorithm) is not None


def protocol_efficiency(algorithm: str, protocol: str, group: Group, data_s: float, ceilings: dict | None) -> float:
    """Protocol efficiency of ``algorithm`` (fraction of its solved rate), under NCCL's ceilings
    when ``ceilings`` (:func:`ceilings_for`) is given.

    Parameters
    ----------
    algorithm, protocol : str
    group : Group
        The collective (kind, ranks, hosts, size in bytes).
    data_s : float
        The algorithm's data time alone on the topology at full rate, s; its full-rate bus
        bandwidth — NCCL's ``nChannels × bw`` — is read off it: the ring's nccl-tests bus
        bandwidth (``size × 2(n−1)/n / data_s`` for all-reduce, ``(n−1)/n`` otherwise), the tree's
        per-GPU rate (``size / data_s``: every GPU moves the size up and down at once).

    Returns
    -------
    float
        :func:`.protocols.tuner_efficiency`, or :func:`.protocols.bandwidth_efficiency` without
        ceilings or without a data time.
    """
    n = group.n
    per_host = n / max(group.nodes, 1)
    if ceilings is None or not data_s > 0:
        return bandwidth_efficiency(algorithm, protocol, group.kind, group.nodes, per_host)
    # What each ring link carries per byte of S: a chain (broadcast, reduce) forwards all of it.
    moved = 1.0 if algorithm != "ring" or group.kind in ("broadcast", "reduce") else \
        (2.0 if group.kind == "allreduce" else 1.0) * (n - 1) / n
    busbw_gbs = group.size * moved / data_s / 1e9
    return tuner_efficiency(algorithm, protocol, group.kind, group.nodes, busbw_gbs, ceilings["arch"],
                            ceilings["channels"], ceilings["cpu_amd"], per_host)
