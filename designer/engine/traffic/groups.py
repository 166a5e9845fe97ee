"""Communicator groups of a collective pattern: one pattern, many concurrent collectives.

``groups`` takes

- ``"per_host"`` — the pattern's participants split by host;
- ``"per_rail"`` — split by local GPU position (``attrs.index``: GPU k of every host is rail k,
  the rail-optimized fabric's plane);
- ``{"by": "<attr>"}`` — split by the value of a node attribute (``attrs[<attr>]``);
- ``{"layout": "tp" | "pp" | "dp" | "ep" | "cp"}`` — the job's parallelism groups
  (:mod:`designer.engine.traffic.jobs.layout`); ``{"layout": "tp", "stage": 2}`` keeps those of one
  pipeline stage (the TP all-reduces of stage 2 run while the other stages compute);
- ``[[ids], ...]`` — explicit lists of node ids.

Groups are disjoint; a node may not appear twice. Every problem is located
(``workload[0].groups[1][2]: unknown node 'h9/gpu0'``).
"""
from __future__ import annotations

import numpy as np

from designer.engine.errors import InvalidWorkload, Problem

__all__ = ["GROUP_MODES", "resolve_groups"]

GROUP_MODES = ("per_host", "per_rail")


def resolve_groups(topo, spec, participants: np.ndarray, where: str, *, layout=None,
                   explicit_participants: bool = False) -> list[np.ndarray]:
    """Node-index arrays, one per group.

    Parameters
    ----------
    topo : Topology
    spec : str, dict or list
        The pattern's ``groups`` (see the module docstring).
    participants : ndarray
        The pattern's participants (default every GPU): ``per_host``, ``per_rail`` and ``by``
        split them; explicit lists and layout groups must lie inside them when participants were
        given explicitly.
    where : str
        Location of ``groups`` in the scenario.
    layout : Layout, optional
        The job's layout, for ``{"layout": ...}``.

    Raises
    ------
    InvalidWorkload
        Unknown mode, attribute, layout group or node; a node in two groups; an empty group.
    """
    if isinstance(spec, str):
        if spec not in GROUP_MODES:
            raise _bad(where, f"unknown groups {spec!r} (per_host, per_rail, {{\"by\": attr}}, "
                              "{\"layout\": name} or a list of id lists)")
        key = _host_key if spec == "per_host" else _rail_key
        return _split(topo, participants, key, where)
    if isinstance(spec, dict):
        return _from_dict(topo, spec, participants, where, layout, explicit_participants)
    if isinstance(spec, list):
        return _explicit(topo, spec, participants, where, explicit_participants)
    raise _bad(where, "must be \"per_host\", \"per_rail\", {\"by\": attr}, {\"layout\": name} or a list of id lists")


def _bad(where: str, message: str) -> InvalidWorkload:
    return InvalidWorkload("bad groups", [Problem(where, message)])


def _host_key(topo, n, where):
    return topo.node_host[n] if topo.node_host[n] is not None else topo.node_ids[n]


def _rail_key(topo, n, where):
    index = topo.node_attrs[n].get("index")
    if not isinstance(index, int):
        raise _bad(where, f"{topo.node_ids[n]!r} has no attrs.index (its rail position)")
    return index


def _split(topo, nodes: np.ndarray, key, where: str) -> list[np.ndarray]:
    blocks: dict = {}
    for n in nodes.tolist():
        blocks.setdefault(key(topo, n, where), []).append(n)
    return [np.array(b, dtype=np.int64) for b in blocks.values()]


def _from_dict(topo, spec, participants, where, layout, explicit) -> list[np.ndarray]:
    if set(spec) == {"by"}:
        attr = spec["by"]
        if not isinstance(attr, str) or not attr:
            raise _bad(f"{where}.by", "must be an attribute name")

        def key(topo_, n, where_):
            value = topo_.node_attrs[n].get(attr)
            if value is None:
                raise _bad(f"{where}.by", f"{topo_.node_ids[n]!r} has no attrs.{attr}")
            return repr(value)

        return _split(topo, participants, key, where)
    if "layout" in spec and set(spec) <= {"layout", "stage"}:
        if layout is None:
            raise _bad(f"{where}.layout", "layout groups need a job with a layout")
        name = spec["layout"]
        groups = layout.groups(name, f"{where}.layout")
        if "stage" in spec:
            groups = _of_stage(layout, groups, spec["stage"], f"{where}.stage")
        if explicit:
            inside = set(participants.tolist())
            groups = [g for g in groups if set(g.tolist()) <= inside]
            if not groups:
                raise _bad(f"{where}.layout", f"no {name} group lies inside the participants")
        return groups
    raise _bad(where, f"unknown groups object keys {sorted(spec)} (use {{\"by\": attr}} or {{\"layout\": name}})")


def _of_stage(layout, groups, stage, where) -> list[np.ndarray]:
    pp = layout.sizes["pp"]
    if not isinstance(stage, int) or isinstance(stage, bool) or not 0 <= stage < pp:
        raise _bad(where, f"must be a pipeline stage 0..{pp - 1}")
    node_stage = layout.node_stage()
    kept = [g for g, inside in zip(groups, _all_in_stage(node_stage, groups, stage)) if inside]
    if not kept:
        raise _bad(where, f"no group lies inside stage {stage} (pp groups span stages)")
    return kept


def _all_in_stage(node_stage: np.ndarray, groups: list[np.ndarray], stage: int) -> list[bool]:
    """Per group: do all its members sit in ``stage``? (One array operation when the groups are
    of one size, as a layout's are: a pipeline's patterns ask it once per stage and phase.)"""
    if len({len(g) for g in groups}) == 1:
        return (node_stage[np.stack(groups)] == stage).all(axis=1).tolist()
    return [bool((node_stage[g] == stage).all()) for g in groups]


def _explicit(topo, spec, participants, where, explicit) -> list[np.ndarray]:
    problems, groups, seen = [], [], {}
    allowed = set(participants.tolist()) if explicit else None
    if not spec:
        raise _bad(where, "an empty list of groups")
    for g, ids in enumerate(spec):
        if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
            problems.append(Problem(f"{where}[{g}]", "must be a non-empty list of node ids"))
            continue
        members = []
        for k, i in enumerate(ids):
            n = topo.node_index.get(i)
            if n is None:
                problems.append(Problem(f"{where}[{g}][{k}]", f"unknown node {i!r}"))
            elif n in seen:
                problems.append(Problem(f"{where}[{g}][{k}]", f"{i!r} is already in group {seen[n]}"))
            elif allowed is not None and n not in allowed:
                problems.append(Problem(f"{where}[{g}][{k}]", f"{i!r} is not among the participants"))
            else:
                seen[n] = g
                members.append(n)
        groups.append(np.array(members, dtype=np.int64))
    if problems:
        raise InvalidWorkload("bad groups", problems)
    return groups
