"""Which GPUs an nccl-tests prediction runs on (a GPU or host subset, as a run launched on
part of a cluster), and each rank's device, as nccl-tests lists them (``#  Rank 0 ... on
node-1 device 0 [..] NVIDIA H100``).
"""
from __future__ import annotations

import json

from designer.engine.errors import InvalidScenario, Problem
from designer.engine.model.topology import Topology

__all__ = ["participants_for", "rank_devices"]


def participants_for(topo: Topology, gpus=None, hosts=None) -> dict | None:
    """The participants selector of a GPU or host subset (None: every GPU).

    Parameters
    ----------
    gpus : str, list or dict, optional
        GPU ids in rank order (``"h0/gpu0,h1/gpu0"`` or a list), or a selector
        (``{"kind": "gpu", "group": "pod0"}``, or its JSON text).
    hosts : str or list, optional
        Host ids (``"h0,h3"``): every GPU of these hosts, host by host in the order given, each
        host's GPUs in document order (nccl-tests' ranks: one process per GPU, hosts in order).

    Raises
    ------
    InvalidScenario
        Both given, an unknown host, a host without GPUs, or a selector that is not JSON.
    """
    if gpus and hosts:
        raise InvalidScenario("two subsets", [Problem("hosts", "give a GPU subset or a host subset, not both")])
    if gpus:
        return _gpu_selector(gpus)
    if not hosts:
        return None
    names = [h.strip() for h in hosts.split(",")] if isinstance(hosts, str) else [str(h) for h in hosts]
    by_host: dict[str, list[str]] = {}
    for i, kind in enumerate(topo.node_kind):
        if kind == "gpu":
            by_host.setdefault(topo.node_host[i], []).append(topo.node_ids[i])
    problems = [Problem(f"hosts[{k}]", f"unknown host {h!r}" if h not in set(topo.node_host) else
                        f"host {h!r} has no GPU") for k, h in enumerate(names) if not by_host.get(h)]
    if problems:
        raise InvalidScenario("bad host subset", problems)
    return {"ids": [g for h in dict.fromkeys(names) for g in by_host[h]]}


def _gpu_selector(gpus):
    if isinstance(gpus, (dict, list)):
        return gpus if isinstance(gpus, dict) else {"ids": [str(g) for g in gpus]}
    text = str(gpus).strip()
    if text.startswith("{"):
        try:
            return json.loads(text)
        except ValueError as exc:
            raise InvalidScenario("bad GPU selector", [Problem("gpus", f"not JSON: {exc}")]) from None
    return {"ids": [g.strip() for g in text.split(",") if g.strip()]}


def rank_devices(topo: Topology, ranks: list[str]) -> list[dict]:
    """Per rank: ``hostname`` (its host id), ``device`` (its index among its host's ranks) and
    ``device_info`` (the GPU model)."""
    seen: dict = {}
    out = []
    for node_id in ranks:
        i = topo.node_index[node_id]
        host = topo.node_host[i]
        seen[host] = seen.get(host, -1) + 1
        out.append({"hostname": host or "", "device": seen[host], "device_info": topo.node_attrs[i].get("model", "")})
    return out
