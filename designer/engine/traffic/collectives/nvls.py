"""NVLS: NVLink SHARP — the NVSwitch plane reduces and multicasts (NVSwitch gen3+, H100-class).

Each GPU exchanges its data with the host's NVSwitch plane, which works as the reduction
endpoint: a flow to an NVSwitch ends at the whole plane, striped over the GPU's NVLinks to
every NVSwitch in proportion to their link counts (5/4/4/5 on an HGX H100), see
:mod:`designer.engine.routing.intra`. Per GPU, for m GPUs on the plane and size S:

- all-reduce: reduce-scatter by ``multimem.ld_reduce`` (the switch reads S from every GPU, each
  GPU receives its reduced S/m shard), then all-gather by ``multimem.st`` (each GPU sends its
  S/m shard once, the switch replicates it to all): ``S·(m+1)/m`` up and ``S·(m+1)/m`` down;
- all-gather (S = the gathered buffer): ``S/m`` up, ``S`` down;
- reduce-scatter (S = the sent buffer): ``S`` up, ``S/m`` down.

The switch's reduction/multicast engines sustain a fraction of the NVLink rate, the catalog's
NVLS efficiency (NCCL ``nvlsEfficiency``: 0.85 Hopper, 0.74 Blackwell), applied to the
pattern's data time by :mod:`designer.engine.analysis.completion`. An all-reduce is also held to
the bus bandwidth the plane sustains per GPU whatever the domain's size (catalog
``nvls_bus_gbytes``, :func:`switch_limited`): on a GB200 NVL72 the links' limit grows with the GPUs
taking part, the switch's does not, and past 16 GPUs the switch binds.
"""
from __future__ import annotations

import numpy as np

from designer.engine.traffic.collectives.common import Group, block_key, empty, nvswitch_plane

__all__ = ["KINDS", "flows", "plane_flows", "plane_efficiency", "supports", "switch_limited"]

KINDS = ("allreduce", "allgather", "reducescatter")


def supports(topo, group: Group) -> str | None:
    """NVLS needs one host (across hosts NCCL needs CollNet for it; see ``nvlstree``) whose
    participating GPUs are all on an NVSwitch gen3+ plane."""
    if group.kind not in KINDS:
        return f"nvls does not implement {group.kind}"
    if group.nodes > 1:
        return (f"nvls runs inside one host; the participants span {group.nodes} hosts "
                "(use nvlstree, or collnet with SHARP switches)")
    return group.nvls_gap(topo)


def _volumes(kind: str, size: float, m: int) -> tuple[float, float]:
    if kind == "allreduce":
        return size * (m + 1) / m, size * (m + 1) / m
    if kind == "allgather":
        return size / m, size
    return size, size / m


def plane_flows(topo, block: np.ndarray, up: float, down: float):
    """Flows of the GPUs of one host to and from its NVSwitch plane (``up``/``down`` bytes each)."""
    plane = nvswitch_plane(topo, block_key(topo, int(block[0])))[0]   # a host's, or an NVL72's
    hub = np.full(len(block), plane, dtype=np.int64)
    src = np.concatenate([block, hub])
    dst = np.concatenate([hub, block])
    size = np.concatenate([np.full(len(block), up), np.full(len(block), down)])
    return src, dst, size


def flows(topo, group: Group):
    """Every GPU to the NVSwitch plane and back."""
    if group.n < 2:
        return empty()
    up, down = _volumes(group.kind, group.size, group.n)
    return plane_flows(topo, group.blocks[0], up, down)


def plane_efficiency(topo, group: Group, algorithm: str, data_s: float) -> float:
    """The NVSwitch plane's efficiency for ``algorithm`` (``nvls`` or ``nvlstree``): the catalog's
    NVLS efficiency, and for NVLS also the plane's bus-bandwidth limit (:func:`switch_limited`)."""
    efficiency = group.nvls_efficiency(topo)
    if algorithm != "nvls":
        return efficiency
    return switch_limited(efficiency, data_s, group, group.nvls_bus_limit(topo))


def switch_limited(efficiency: float, data_s: float, group: Group, bus_gbytes: float | None) -> float:
    """The NVLS efficiency with the plane's bus-bandwidth limit: the data time ``data_s`` (the
    flows at the links' rates) over the returned efficiency is at least the all-reduce's bus
    bytes, S·2(m−1)/m, at ``bus_gbytes`` (None: no limit; other kinds than all-reduce: none)."""
    if not bus_gbytes or group.kind != "allreduce" or data_s <= 0 or group.n < 2:
        return efficiency
    floor_s = group.size * 2 * (group.n - 1) / group.n / (bus_gbytes * 1e9)
    return min(efficiency, data_s / floor_s)
