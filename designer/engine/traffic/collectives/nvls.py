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
pattern's data time by :mod:`designer.engine.analysis.completion`.
"""
from __future__ import annotations

import numpy as np

from designer.engine.traffic.collectives.common import Group, block_key, empty, nvswitch_plane

__all__ = ["KINDS", "flows", "plane_flows", "supports"]

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
