"""Failure specs → what routing avoids and what the solver sees (docs/ENGINE.md,
"What-if"; docs/FORMATS.md, Scenario).

A scenario's ``failures`` list holds entries like::

    {"target": "h0/nic0", "mode": "down"}                          # a node
    {"target": "h1/gpu3-pcie1", "mode": "degrade", "factor": 0.5}  # a link trained x16 -> x8
    {"target": "h3", "mode": "down"}                               # a group: every node in it
    {"target": {"kind": "link", "tech": "pcie5x16", "group": "h3"}, "mode": "degrade", "factor": 0.5}
    {"target": {"kind": "nic", "group": "h0"}, "mode": "down"}     # a node selector

:func:`resolve_failures` turns them into a :class:`~designer.engine.routing.FailureSet` (``down``
elements: routing avoids them) and per-resource capacity *multipliers* (``degrade``).

Semantics
---------
- ``down`` on a node removes the node (and so every link touching it); on a group, every node
  whose enclosing groups include it; on a link, both directions.
- ``degrade`` on a link multiplies both directions by ``factor``. On a node: the node's own
  capacity when it has one (a root complex's peer-to-peer limit), otherwise every link touching
  it (a NIC port at half rate). Several nodes of one selector or group degrade each link *once*
  (a link between two degraded GPUs of a host is not slowed twice); separate failure entries
  compound (two halvings = a quarter).

Selectors
---------
``{"kind": K, ...}`` with ``K`` a node kind (``gpu``, ``nic``, ``switch``, …) takes the node keys
``group``, ``ids``, ``role`` (switch role), ``rail``, ``every``; ``{"kind": "link", ...}`` takes
``group`` (both ends inside the group), ``tech`` (catalog name, or a prefix ending in ``*`` like
``"pcie5*"``), ``tier`` (``leaf-spine``, ``nic-leaf``, ``pcie``, ``nvlink``, … as in results),
``node`` (links touching that node), ``touching`` (links with at least one end in that group,
e.g. ``{"kind": "link", "touching": "h0/tray3", "tech": "nvlink5*"}``: one NVL72 tray's NVLinks),
``ids``, ``every``.
"""
from __future__ import annotations

import difflib

import numpy as np

from designer.engine.errors import InvalidScenario, Problem
from designer.engine.routing import FailureSet
from designer.engine.model.tiers import TIERS, resource_tiers
from designer.engine.model.topology import Topology

__all__ = ["MODES", "resolve_failure", "normalize_failures", "resolve_failures", "failure_label",
           "failed_resources"]

MODES = ("down", "degrade")
_NODE_SELECTOR_KEYS = {"kind", "group", "ids", "role", "rail", "every"}
_LINK_SELECTOR_KEYS = {"kind", "group", "tech", "tier", "node", "touching", "ids", "every"}


# ======================================================================================== targets
def _unknown(where: str, target: str, topo: Topology) -> InvalidScenario:
    pool = list(topo.node_index) + list(topo.link_index) + list(topo.groups)
    close = difflib.get_close_matches(target, pool, n=1)
    hint = f' (did you mean "{close[0]}"?)' if close else ""
    return InvalidScenario("unknown failure target",
                           [Problem(where, f'unknown node or link "{target}"{hint}')])


def _bad(where: str, message: str) -> InvalidScenario:
    return InvalidScenario("bad failure target", [Problem(where, message)])


def _every(sel: dict, chosen: np.ndarray, where: str) -> np.ndarray:
    every = sel.get("every", 1)
    if not isinstance(every, int) or isinstance(every, bool) or every < 1:
        raise _bad(f"{where}.every", "must be an integer >= 1")
    return chosen[::every]


def _ids(sel: dict, index: dict, where: str, what: str) -> np.ndarray | None:
    if "ids" not in sel:
        return None
    ids = sel["ids"]
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise _bad(f"{where}.ids", f"must be a list of {what} ids")
    for k, i in enumerate(ids):
        if i not in index:
            raise _bad(f"{where}.ids[{k}]", f'unknown {what} "{i}"')
    return np.array([index[i] for i in ids], dtype=np.int64)


def _group_mask(topo: Topology, sel: dict, where: str) -> np.ndarray | None:
    if "group" not in sel:
        return None
    group = sel["group"]
    if group not in topo.groups:
        raise _bad(f"{where}.group", f'unknown group "{group}"')
    return topo.in_group_mask(group)


def _node_selector(topo: Topology, sel: dict, where: str) -> np.ndarray:
    extra = set(sel) - _NODE_SELECTOR_KEYS
    if extra:
        raise _bad(where, f"unknown selector key(s) {sorted(extra)} for a node selector")
    chosen = _ids(sel, topo.node_index, where, "node")
    if chosen is None:
        mask = np.ones(topo.num_nodes, dtype=bool)
        if "kind" in sel:
            mask &= np.array([k == sel["kind"] for k in topo.node_kind], dtype=bool)
        group = _group_mask(topo, sel, where)
        if group is not None:
            mask &= group
        if "role" in sel:
            mask &= np.array([r == sel["role"] for r in topo.node_role], dtype=bool)
        if "rail" in sel:
            mask &= np.array([a.get("rail") == sel["rail"] for a in topo.node_attrs], dtype=bool)
        chosen = np.flatnonzero(mask).astype(np.int64)
    return _every(sel, chosen, where)


def _tech_match(pattern: str, tech: str | None) -> bool:
    tech = tech or ""
    return tech.startswith(pattern[:-1]) if pattern.endswith("*") else tech == pattern


def _link_selector(topo: Topology, sel: dict, where: str) -> np.ndarray:
    extra = set(sel) - _LINK_SELECTOR_KEYS
    if extra:
        raise _bad(where, f"unknown selector key(s) {sorted(extra)} for a link selector")
    chosen = _ids(sel, topo.link_index, where, "link")
    if chosen is None:
        mask = np.ones(topo.num_links, dtype=bool)
        group = _group_mask(topo, sel, where)
        if group is not None:
            mask &= group[topo.link_a] & group[topo.link_b]
        if "tech" in sel:
            if not isinstance(sel["tech"], str):
                raise _bad(f"{where}.tech", "must be a technology name like \"pcie5x16\" or \"pcie5*\"")
            mask &= np.array([_tech_match(sel["tech"], t) for t in topo.link_tech], dtype=bool)
        if "tier" in sel:
            mask &= _tier_mask(topo, sel["tier"], f"{where}.tier")
        if "node" in sel:
            node = topo.node_index.get(sel["node"]) if isinstance(sel["node"], str) else None
            if node is None:
                raise _bad(f"{where}.node", f'unknown node "{sel["node"]}"')
            mask &= (topo.link_a == node) | (topo.link_b == node)
        if "touching" in sel:   # links with an end in the group: a GB200 tray's NVLinks to the switch trays
            if not isinstance(sel["touching"], str) or sel["touching"] not in topo.groups:
                raise _bad(f"{where}.touching", f'unknown group "{sel["touching"]}"')
            inside = topo.in_group_mask(sel["touching"])
            mask &= inside[topo.link_a] | inside[topo.link_b]
        chosen = np.flatnonzero(mask).astype(np.int64)
    return _every(sel, chosen, where)


def _tier_mask(topo: Topology, tier, where: str) -> np.ndarray:
    if tier not in TIERS:
        raise _bad(where, f"unknown tier {tier!r} (choose from {', '.join(TIERS)})")
    tiers = resource_tiers(topo)
    return np.array([tiers[2 * l] == tier for l in range(topo.num_links)], dtype=bool)


def resolve_failure(topo: Topology, target, where: str = "target") -> tuple[list[int], list[int]]:
    """Node and link indices named by one failure target.

    Parameters
    ----------
    topo : Topology
    target : str or dict
        A node, link or group id, or a selector (see the module docstring).
    where : str
        Location used in error messages (``failures[1].target``).

    Returns
    -------
    nodes, links : list of int
        Sorted node indices and link indices.

    Raises
    ------
    InvalidScenario
        Unknown id (``failures[1].target: unknown node or link "h9/nic0"``), bad selector, or a
        selector that matches nothing.
    """
    if isinstance(target, str):
        if target in topo.node_index:
            return [topo.node_index[target]], []
        if target in topo.link_index:
            return [], [topo.link_index[target]]
        if target in topo.groups:
            nodes = np.flatnonzero(topo.in_group_mask(target)).tolist()
            if not nodes:
                raise _bad(where, f'group "{target}" holds no node')
            return nodes, []
        raise _unknown(where, target, topo)
    if isinstance(target, dict) and target:
        if target.get("kind") == "link":
            links = _link_selector(topo, target, where)
            nodes = np.zeros(0, dtype=np.int64)
        else:
            nodes = _node_selector(topo, target, where)
            links = np.zeros(0, dtype=np.int64)
        if len(nodes) + len(links) == 0:
            raise _bad(where, "selector matches no node or link")
        return sorted(set(nodes.tolist())), sorted(set(links.tolist()))
    raise _bad(where, 'must be a node, link or group id, or a selector like {"kind": "nic", "group": "h0"}')


# ======================================================================================== lists
def failure_label(failure: dict) -> str:
    """Short human label: ``h0/nic0 down``, ``h1/gpu3-pcie1 ×0.5``, ``{kind=link,group=h3} ×0.5``."""
    target = failure.get("target")
    if isinstance(target, dict):
        target = "{" + ",".join(f"{k}={target[k]}" for k in sorted(target)) + "}"
    mode = failure.get("mode", "down")
    return f"{target} down" if mode == "down" else f"{target} ×{failure.get('factor')}"


def normalize_failures(topo: Topology, failures, where: str = "failures") -> list[dict]:
    """Validate a ``failures`` list and resolve every target.

    Returns
    -------
    list of dict
        Per entry: ``target`` (as given), ``mode``, ``factor`` (None for ``down``), ``nodes`` and
        ``links`` (indices), ``label``. Entries already resolved (with ``nodes``/``links``, as
        :func:`designer.engine.traffic.scenario.normalize_scenario` leaves them) are re-resolved from
        their target, so both kinds of input give the same result.

    Raises
    ------
    InvalidScenario
        With one located problem per bad entry.
    """
    if failures is None:
        return []
    if not isinstance(failures, list):
        raise InvalidScenario("bad failures", [Problem(where, "must be a list")])
    problems, out = [], []
    for k, item in enumerate(failures):
        here = f"{where}[{k}]"
        if not isinstance(item, dict):
            problems.append(Problem(here, "must be an object"))
            continue
        extra = set(item) - {"target", "mode", "factor", "nodes", "links", "label"}
        if extra:
            problems.append(Problem(here, f"unknown field(s) {sorted(extra)}"))
        mode = item.get("mode", "down")
        factor = item.get("factor")
        factor_ok = isinstance(factor, (int, float)) and not isinstance(factor, bool) and 0 < factor <= 1
        if mode not in MODES:
            problems.append(Problem(f"{here}.mode", f"unknown mode {mode!r} (down or degrade)"))
        elif mode == "degrade" and not factor_ok:
            problems.append(Problem(f"{here}.factor", "a degrade needs a factor in (0, 1]"))
        try:
            nodes, links = resolve_failure(topo, item.get("target"), f"{here}.target")
        except InvalidScenario as exc:
            problems.extend(exc.problems)
            continue
        entry = {"target": item.get("target"), "mode": mode,
                 "factor": float(factor) if mode == "degrade" and factor_ok else None,
                 "nodes": nodes, "links": links}
        entry["label"] = failure_label(entry)
        out.append(entry)
    if problems:
        raise InvalidScenario("invalid failures", problems)
    return out


def resolve_failures(topo: Topology, failures) -> tuple[FailureSet, np.ndarray]:
    """The routing failure set and per-resource capacity multipliers of a failures list.

    Parameters
    ----------
    topo : Topology
    failures : list of dict
        Raw (``{"target", "mode", "factor"}``) or already normalized entries.

    Returns
    -------
    failed : FailureSet
        Nodes and links that are ``down``.
    multiplier : ndarray of float64, shape (topo.num_resources,)
        Capacity factor per resource (1.0 where nothing is degraded); multiply
        ``topo.resource_capacity_gbps()`` by it.

    Raises
    ------
    InvalidScenario
        Located problems (``failures[1].target: unknown node or link "h9/nic0"``).

    Examples
    --------
    >>> failed, mult = resolve_failures(topo, [{"target": "h0/nic0", "mode": "down"}])
    """
    entries = failures if _normalized(failures) else normalize_failures(topo, failures)
    down_nodes, down_links = set(), set()
    multiplier = np.ones(topo.num_resources, dtype=np.float64)
    for f in entries:
        if f["mode"] == "down":
            down_nodes.update(f["nodes"])
            down_links.update(f["links"])
            continue
        resources = _degraded_resources(topo, f["nodes"], f["links"])
        multiplier[resources] *= f["factor"]
    return FailureSet(frozenset(down_nodes), frozenset(down_links)), multiplier


def _normalized(failures) -> bool:
    # Entries from normalize_failures (a scenario's, a sweep's candidates) are not resolved again:
    # a sweep combines thousands of them.
    return isinstance(failures, list) and all(
        isinstance(f, dict) and {"nodes", "links", "label"} <= f.keys() for f in failures)


def _degraded_resources(topo: Topology, nodes: list[int], links: list[int]) -> np.ndarray:
    chosen = set(int(l) for l in links)
    own = []
    for n in nodes:
        if topo.node_resource[n] >= 0:
            own.append(int(topo.node_resource[n]))
        else:
            chosen.update(l for _, l in topo.adjacency[n])
    link_arr = np.array(sorted(chosen), dtype=np.int64)
    return np.concatenate([2 * link_arr, 2 * link_arr + 1, np.array(own, dtype=np.int64)]).astype(np.int64)


def failed_resources(topo: Topology, failed: FailureSet) -> np.ndarray:
    """Every resource a path cannot cross once ``failed`` is down: both directions of failed links
    and of links touching failed nodes, and failed nodes' own resources (sorted, unique)."""
    links = set(int(l) for l in failed.links)
    own = []
    for n in failed.nodes:
        links.update(l for _, l in topo.adjacency[n])
        if topo.node_resource[n] >= 0:
            own.append(int(topo.node_resource[n]))
    arr = np.array(sorted(links), dtype=np.int64)
    return np.unique(np.concatenate([2 * arr, 2 * arr + 1, np.array(own, dtype=np.int64)]).astype(np.int64))
