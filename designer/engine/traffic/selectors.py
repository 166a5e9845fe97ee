"""Node selectors of a workload pattern: ``{"ids": [...]}``, ``{"kind": "gpu", "group": "rack3",
"every": 2}``, resolved to node indices in document order (within a shared cluster's job, only
its own GPUs: ``scope``). :func:`resolve_selector` is what every pattern field naming nodes reads
(:mod:`designer.engine.traffic.workloads`), and the nccl-tests, tuner and acceptance readers too.
"""
from __future__ import annotations

import numpy as np

from designer.engine.errors import InvalidWorkload, Problem
from designer.engine.model.topology import Topology, kind_nodes

__all__ = ["resolve_selector"]

_SELECTOR_KEYS = {"ids", "kind", "group", "every"}


def resolve_selector(topo: Topology, selector, where: str, scope: np.ndarray | None = None) -> np.ndarray:
    """Node indices chosen by a selector, in document order (``ids``: in the order given).

    Parameters
    ----------
    selector : dict or str or list
        ``{"ids": [...]}`` or any of ``{"kind", "group", "every"}`` combined; a bare node id or a
        list of ids is accepted as shorthand for ``{"ids": ...}``.
    where : str
        Location of the selector in the scenario, used in error messages.
    scope : ndarray of int64, optional
        A shared-cluster job's GPUs in rank order (docs/FORMATS.md, Jobs with placements): GPUs
        are then chosen among them only (``kind``/``group`` selectors give them in scope order;
        ``ids`` naming another GPU is an error); other nodes (storage, NVMe) are not scoped.

    Raises
    ------
    InvalidWorkload
        Unknown node or group, bad ``every``, or a selector that matches no node.
    """
    selector = _selector_dict(selector, where)
    chosen = _by_ids(topo, selector["ids"], where) if "ids" in selector else _by_kind_and_group(topo, selector, where)
    if scope is not None:
        chosen = _scoped(topo, chosen, scope, where, by_ids="ids" in selector)
    if "every" in selector:
        every = selector["every"]
        if not isinstance(every, int) or isinstance(every, bool) or every < 1:
            raise InvalidWorkload("bad selector", [Problem(f"{where}.every", "must be an integer >= 1")])
        chosen = chosen[::every]
    if len(chosen) == 0:
        raise InvalidWorkload("empty selector", [Problem(where, "selector matches no node")])
    return chosen


def _scoped(topo: Topology, chosen: np.ndarray, scope: np.ndarray, where: str, by_ids: bool) -> np.ndarray:
    """``chosen`` restricted to a job's GPUs ``scope`` (other nodes kept); GPUs only: in scope order."""
    is_gpu = np.array([topo.node_kind[n] == "gpu" for n in chosen.tolist()], dtype=bool)
    inside = np.isin(chosen, scope)
    if by_ids:
        outside = np.flatnonzero(is_gpu & ~inside)
        if len(outside):
            raise InvalidWorkload("GPU outside the job", [Problem(
                f"{where}.ids[{int(k)}]", f"{topo.node_ids[int(chosen[k])]!r} is not one of the job's GPUs "
                "(its placement)") for k in outside[:20]])
        return chosen
    if is_gpu.all():
        return scope[np.isin(scope, chosen)]
    return chosen[~is_gpu | inside]


def _selector_dict(selector, where: str) -> dict:
    """The selector as an object (a bare node id or a list of ids is ``{"ids": ...}``), with no
    unknown key."""
    if isinstance(selector, str):
        selector = {"ids": [selector]}
    elif isinstance(selector, list):
        selector = {"ids": selector}
    if not isinstance(selector, dict) or not selector:
        raise InvalidWorkload("bad selector", [Problem(where, "selector must be an object like "
                                                              '{"kind": "gpu"} or {"ids": [...]}')])
    unknown = set(selector) - _SELECTOR_KEYS
    if unknown:
        raise InvalidWorkload("bad selector", [Problem(where, f"unknown selector key(s) {sorted(unknown)}")])
    return selector


def _by_ids(topo: Topology, ids, where: str) -> np.ndarray:
    """The nodes of ``ids``, in the order given (every unknown id located)."""
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise InvalidWorkload("bad selector", [Problem(f"{where}.ids", "must be a list of node ids")])
    missing = [Problem(f"{where}.ids[{k}]", f"unknown node {i!r}")
               for k, i in enumerate(ids) if i not in topo.node_index]
    if missing:
        raise InvalidWorkload("unknown node in selector", missing)
    return np.array([topo.node_index[i] for i in ids], dtype=np.int64)


def _by_kind_and_group(topo: Topology, selector: dict, where: str) -> np.ndarray:
    """The nodes of the selector's ``kind`` inside its ``group`` (either optional), in document order."""
    mask = np.ones(topo.num_nodes, dtype=bool)
    if "kind" in selector:
        mask = np.zeros(topo.num_nodes, dtype=bool)
        mask[kind_nodes(topo, selector["kind"])] = True
    if "group" in selector:
        group = selector["group"]
        if group not in topo.groups:
            raise InvalidWorkload("unknown group", [Problem(f"{where}.group", f"unknown group {group!r}")])
        mask &= topo.in_group_mask(group)
    return np.flatnonzero(mask).astype(np.int64)
