"""Parallelism layout: ranks of a TP × CP × EP × DP × PP job mapped onto the topology's GPUs.

``{"tp": 8, "pp": 4, "dp": 32, "ep": 1, "cp": 1, "order": "tp-cp-ep-dp-pp"}``. Ranks are the
GPUs in host order (hosts as they first appear in the document, GPUs by ``attrs.index``), so
rank ``r`` is GPU ``r mod G`` of host ``r div G`` for ``G`` GPUs per host. The rank of a
coordinate follows Megatron-LM's ``RankGenerator`` (``megatron/core/parallel_state.py``,
``order="tp-cp-ep-dp-pp"``): the first dimension of ``order`` varies fastest, so with TP first
a TP group is ``tp`` consecutive ranks — inside one host, on NVLink — and a DP group strides by
``tp × cp`` (× ``ep``), one GPU per host on the same rail when ``tp`` is the host size.

Expert parallelism is carved out of data parallelism, as in Megatron-core: ``ep`` must divide
``dp``; the ``ep`` groups vary the EP coordinate, the ``dp`` groups (dense gradients) vary both
EP and the remaining ``dp / ep`` coordinate. The layout fits when ``tp × cp × dp × pp`` equals
the number of GPUs and ``tp`` divides the GPUs of one host (TP inside a host).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from designer.engine.traffic.collectives.common import host_blocks
from designer.engine.errors import InvalidWorkload, Problem

__all__ = ["DEFAULT_ORDER", "DIMENSIONS", "GROUP_NAMES", "Layout", "normalize_layout"]

DIMENSIONS = ("tp", "cp", "ep", "dp", "pp")
# "edp": expert data parallelism — the dp / ep ranks holding the same experts (Megatron-core's
# expert-data-parallel group; SimAI's DP_EP group).
GROUP_NAMES = DIMENSIONS + ("edp",)
DEFAULT_ORDER = "tp-cp-ep-dp-pp"


@dataclass
class Layout:
    """A fitted layout.

    Attributes
    ----------
    sizes : dict
        ``tp``, ``cp``, ``ep``, ``dp``, ``pp`` (``dp`` the full data-parallel size).
    order : list of str
        Dimensions, fastest first.
    ranks : ndarray of int64
        Node index of each rank.
    node_ids : list of str
        The topology's node ids (to write patterns by id).
    """

    sizes: dict
    order: list
    ranks: np.ndarray
    node_ids: list = field(default_factory=list)

    def _grid(self) -> tuple[np.ndarray, list[str]]:
        # Axis k of the grid is order[::-1][k], so the last axis (order[0]) varies fastest.
        dims = self.order[::-1]
        shape = [self.sizes["dp"] // self.sizes["ep"] if d == "dp" else self.sizes[d] for d in dims]
        return np.arange(len(self.ranks)).reshape(shape), dims

    def groups(self, name: str, where: str = "layout") -> list[np.ndarray]:
        """Node-index arrays of the ``name`` groups (``tp``, ``cp``, ``ep``, ``dp``, ``pp``,
        ``edp``), each in rank order.

        Raises
        ------
        InvalidWorkload
            Unknown group name.
        """
        if name not in GROUP_NAMES:
            raise InvalidWorkload("unknown layout group", [Problem(where, f"unknown layout group {name!r} "
                                                                   f"(choose from {', '.join(GROUP_NAMES)})")])
        grid, dims = self._grid()
        varying = {"dp": ["ep", "dp"], "edp": ["dp"]}.get(name, [name])
        # Move the varying axes last, the faster one (earlier in order) innermost.
        varying.sort(key=lambda d: -self.order.index(d))
        axes = [dims.index(d) for d in varying]
        rest = [a for a in range(grid.ndim) if a not in axes]
        size = int(np.prod([grid.shape[a] for a in axes]))
        table = np.transpose(grid, rest + axes).reshape(-1, size)
        return [self.ranks[row] for row in table]

    def stage_of(self) -> np.ndarray:
        """Pipeline stage of every rank."""
        grid, dims = self._grid()
        stage = np.indices(grid.shape)[dims.index("pp")]
        out = np.empty(len(self.ranks), dtype=np.int64)
        out[grid.ravel()] = stage.ravel()
        return out

    def node_stage(self) -> np.ndarray:
        """Pipeline stage by node index (−1 for a node that holds no rank); kept on the layout:
        every pipeline-stage pattern of a job asks it."""
        table = self.__dict__.get("_node_stage")
        if table is None:
            table = np.full(int(self.ranks.max()) + 1 if len(self.ranks) else 0, -1, dtype=np.int64)
            table[self.ranks] = self.stage_of()
            self.__dict__["_node_stage"] = table
        return table

    def as_dict(self) -> dict:
        return {**self.sizes, "order": "-".join(self.order), "gpus": len(self.ranks)}


def normalize_layout(topo, raw, where: str = "workload.job.layout", gpus: np.ndarray | None = None) -> Layout:
    """Check a layout against the topology and map its ranks onto GPUs.

    ``gpus`` (node indices) are a shared-cluster job's GPUs, its placement: the ranks are then
    those GPUs (grouped by host as above), not every GPU of the topology.

    Raises
    ------
    InvalidWorkload
        Unknown keys, sizes that are not integers >= 1, a bad ``order``, ``ep`` not dividing
        ``dp``, ``tp × cp × dp × pp`` different from the GPU count, or TP larger than a host.
    """
    if not isinstance(raw, dict):
        raise InvalidWorkload("bad layout", [Problem(where, "must be an object like {\"tp\": 8, \"pp\": 4, \"dp\": 32}")])
    problems = []
    extra = set(raw) - set(DIMENSIONS) - {"order"}
    if extra:
        problems.append(Problem(where, f"unknown field(s) {sorted(extra)}"))
    sizes = {}
    for d in DIMENSIONS:
        v = raw.get(d, 1)
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            problems.append(Problem(f"{where}.{d}", "must be an integer >= 1"))
            v = 1
        sizes[d] = v
    order = raw.get("order", DEFAULT_ORDER)
    parts = order.split("-") if isinstance(order, str) else []
    if sorted(parts) != sorted(DIMENSIONS):
        problems.append(Problem(f"{where}.order", f"must name each of {', '.join(DIMENSIONS)} once, "
                                f"like {DEFAULT_ORDER!r}"))
        parts = DEFAULT_ORDER.split("-")
    if sizes["dp"] % sizes["ep"]:
        problems.append(Problem(f"{where}.ep", f"ep {sizes['ep']} must divide dp {sizes['dp']} "
                                "(experts are parallelized across data-parallel ranks)"))
    if problems:
        raise InvalidWorkload("invalid layout", problems)
    holder = "the job's placement" if gpus is not None else "the topology"
    if gpus is None:
        gpus = np.array([i for i, k in enumerate(topo.node_kind) if k == "gpu"], dtype=np.int64)
    blocks = host_blocks(topo, gpus)
    _check_fit(sizes, blocks, where, holder)
    return Layout(sizes, parts, np.concatenate(blocks), list(topo.node_ids))


def _check_fit(sizes: dict, blocks: list[np.ndarray], where: str, holder: str = "the topology") -> None:
    total = sum(len(b) for b in blocks)
    need = sizes["tp"] * sizes["cp"] * sizes["dp"] * sizes["pp"]
    if need != total:
        raise InvalidWorkload("layout does not fit", [Problem(
            where, f"tp × cp × dp × pp = {sizes['tp']} × {sizes['cp']} × {sizes['dp']} × {sizes['pp']} = "
                   f"{need:,} ranks, but {holder} has {total:,} GPUs")])
    per_host = min(len(b) for b in blocks) if blocks else 0
    if sizes["tp"] > 1 and (per_host % sizes["tp"] or any(len(b) % sizes["tp"] for b in blocks)):
        raise InvalidWorkload("layout does not fit", [Problem(
            f"{where}.tp", f"tp {sizes['tp']} must divide the GPUs of every host ({per_host} in the smallest): "
                           "tensor parallelism stays inside a host (NVLink)")])
