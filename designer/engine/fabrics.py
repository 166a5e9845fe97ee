"""Fabric generators: N hosts of a template wired into a rail-optimized, leaf/spine or fat-tree fabric.

Ids and groups
--------------
- Hosts ``h{i}`` (host groups, parent ``rack{r}``, ``hosts_per_rack`` per rack); node ids
  ``h{i}/<local>`` as in ``templates.py``.
- Switches are kind ``switch`` with ``attrs.role``:
  * rail-optimized: ``leaf{n}`` (role ``leaf``, ``attrs.rail``, ``attrs.index`` within the rail;
    ``n = rail * leaves_per_rail + index``) and ``spine{s}`` (role ``spine``);
  * leaf-spine: ``tor{r}`` (role ``tor``, in group ``rack{r}``) and ``spine{s}``;
  * fat-tree(k): ``edge{n}`` (role ``leaf``), ``agg{n}`` (role ``spine``), both with ``attrs.pod``,
    and ``core{n}`` (role ``core``).
- Storage servers ``storage{i}`` (kind ``storage``) hang off storage leaves ``sleaf{j}`` (role
  ``leaf``, ``attrs.storage``) that uplink to every spine without oversubscription (fat-tree: they
  take the edge ports after the hosts' NICs).
- Link ids: ``<a>-<b>`` (``h3/nic7-leaf7``, ``leaf7-spine2``).
- Only *compute* NICs are wired; storage/in-band NICs of a template stay unwired.

Capacities and oversubscription
-------------------------------
Host⇄leaf links take ``nic_link_tech`` (default ``eth<port speed>``). Each lower-tier switch's
uplinks total exactly its downlink capacity / ``oversubscription``, spread evenly: one link per
(leaf, spine) pair with explicit ``capacity_gbps`` and ``bundle`` = number of physical
``uplink_tech`` links it stands for. Hence the bisection bandwidth (half the capacity into the
top tier) is ``injection / (2 * oversubscription)`` for the two-tier fabrics, where injection =
hosts × compute NICs × NIC link speed, and ``k³/4 × speed / (2 * oversubscription)`` for a
fat-tree (oversubscription applied at both the edge and the aggregation tier).
"""
from __future__ import annotations

import math

from designer.engine.catalog import TECHS
from designer.engine.document import FORMAT, LIMITS
from designer.engine.errors import InvalidTopology, LimitExceeded, Problem
from designer.engine.templates import _instantiate, _spec, compute_nics

__all__ = ["FABRICS", "build_cluster", "fabric_summary", "default_nic_tech"]

FABRICS = ("rail-optimized", "leaf-spine", "fat-tree")
# 2,048 eight-GPU hosts = 16,384 GPUs, the largest cluster the engine is benchmarked on; the pages
# and the API both offer at most this many hosts per build.
MAX_HOSTS = 2048
_MAX_DEFAULT_SPINES = 64
_STORAGE_PER_LEAF = 32


def _fail(path: str, message: str):
    raise InvalidTopology(message, [Problem(path, message)])


def default_nic_tech(port_gbps: float) -> str:
    """Catalog tech of a NIC port speed: ``eth<speed>`` (``eth400`` for 400 Gb/s)."""
    name = f"eth{int(port_gbps)}"
    if name not in TECHS:
        _fail("nic_link_tech", f"no catalog Ethernet tech for a {port_gbps:g} Gb/s port; "
                               f"pass nic_link_tech")
    return name


def _tech(name: str, path: str):
    if name not in TECHS:
        _fail(path, f"unknown link technology {name!r}")
    return TECHS[name]


class _Doc:
    """Accumulates groups, nodes and links of a cluster document."""

    def __init__(self, name: str) -> None:
        self.doc = {"format": FORMAT, "name": name, "groups": [], "nodes": [], "links": []}
        self.links = self.doc["links"]

    def switch(self, sid: str, role: str, group: str | None = None, **attrs) -> str:
        node = {"id": sid, "kind": "switch", "attrs": {"role": role, **attrs}}
        if group is not None:
            node["group"] = group
        self.doc["nodes"].append(node)
        return sid

    def link(self, a: str, b: str, tech: str, capacity_gbps: float | None = None, bundle=None) -> None:
        link = {"id": f"{a}-{b}", "a": a, "b": b, "tech": tech}
        if capacity_gbps is not None:
            link["capacity_gbps"] = capacity_gbps
            link["capacity_basis"] = "explicit"
        if bundle is not None:
            link["bundle"] = bundle
        self.links.append(link)


def build_cluster(template, hosts: int, *, fabric: str = "rail-optimized", rails: int | None = None,
                  leaves_per_rail: int = 1, spines: int | None = None, nic_link_tech: str | None = None,
                  uplink_tech: str | None = None, oversubscription: float = 1.0,
                  hosts_per_rack: int = 4, k: int | None = None, storage: int = 0,
                  name: str | None = None, params: dict | None = None) -> dict:
    """A cluster document: ``hosts`` copies of a host template wired into a fabric.

    Parameters
    ----------
    template : str or dict
        Built-in template name or user template spec (see ``templates.py``).
    hosts : int
        Number of hosts (``h0`` … ``h{hosts-1}``).
    fabric : {"rail-optimized", "leaf-spine", "fat-tree"}
        Rail-optimized: one leaf group per rail, compute NIC i of every host to rail ``i % rails``;
        leaf-spine: one ToR per rack; fat-tree: k-ary three tiers, NICs fill edge ports in order.
    rails : int, optional
        Rails (default: compute NICs per host). Rail-optimized only.
    leaves_per_rail : int
        Leaves per rail; hosts are split into equal contiguous blocks.
    spines : int, optional
        Spines of the two-tier fabrics (default: enough for one full-speed uplink per spine,
        at most 64; 0 only when there is a single leaf).
    nic_link_tech, uplink_tech : str, optional
        Catalog techs of host⇄leaf and switch⇄switch links (default ``eth<NIC port speed>``).
    oversubscription : float
        Downlink / uplink capacity of every lower-tier switch (≥ 1).
    hosts_per_rack : int
        Hosts per rack group (and per ToR in leaf-spine).
    k : int, optional
        Fat-tree radix (even); default the smallest that fits every NIC and storage port.
    storage : int
        Storage servers attached to the fabric.
    name : str, optional
        Document name.
    params : dict, optional
        Template parameters.

    Returns
    -------
    dict
        A valid ``fabricscope.topology/1`` document (not yet normalized) with a ``fabric`` block
        describing the generator's parameters.

    Raises
    ------
    InvalidTopology
        Bad parameters (each located by parameter name).
    """
    spec = _spec(template, dict(params or {}))
    nics = compute_nics(spec)
    _check_args(hosts, fabric, nics, rails, leaves_per_rail, oversubscription, hosts_per_rack, storage, k)
    _check_size(spec, hosts)
    nic_tech = nic_link_tech or default_nic_tech(nics[0]["attrs"].get("port_gbps", 100))
    up_tech = uplink_tech or nic_tech
    _tech(nic_tech, "nic_link_tech"), _tech(up_tech, "uplink_tech")
    tname = spec.get("name", "custom")
    out = _Doc(name or f"{tname}-{hosts}x-{fabric}")
    _add_hosts(out, spec, hosts, hosts_per_rack)
    info = {"kind": fabric, "template": tname, "hosts": hosts, "oversubscription": float(oversubscription),
            "nic_link_tech": nic_tech, "uplink_tech": up_tech, "hosts_per_rack": hosts_per_rack,
            "storage": storage}
    locals_ = [n["local"] for n in nics]
    if fabric == "rail-optimized":
        info.update(_rail_optimized(out, hosts, locals_, rails or len(nics), leaves_per_rail, spines,
                                    nic_tech, up_tech, oversubscription, storage))
    elif fabric == "leaf-spine":
        info.update(_leaf_spine(out, hosts, locals_, hosts_per_rack, spines, nic_tech, up_tech,
                                oversubscription, storage))
    else:
        info.update(_fat_tree(out, hosts, locals_, k, nic_tech, up_tech, oversubscription, storage))
    out.doc["fabric"] = info
    return out.doc


def _check_args(hosts, fabric, nics, rails, lpr, oversub, hpr, storage, k) -> None:
    def positive_int(path, v, minimum=1):
        if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
            _fail(path, f"must be an integer ≥ {minimum}, got {v!r}")

    positive_int("hosts", hosts)
    positive_int("leaves_per_rail", lpr)
    positive_int("hosts_per_rack", hpr)
    positive_int("storage", storage, 0)
    if fabric not in FABRICS:
        _fail("fabric", f"unknown fabric {fabric!r} (choose from {', '.join(FABRICS)})")
    if not nics:
        _fail("template", "the template has no compute NIC to wire into a fabric")
    if rails is not None:
        positive_int("rails", rails)
        if rails > len(nics):
            _fail("rails", f"{rails} rails but only {len(nics)} compute NICs per host")
    if isinstance(oversub, bool) or not isinstance(oversub, (int, float)) or not (
            math.isfinite(oversub) and oversub >= 1):
        _fail("oversubscription", f"must be a finite number ≥ 1, got {oversub!r}")
    if k is not None:
        positive_int("k", k, 2)
        if k % 2:
            _fail("k", f"a fat-tree radix must be even, got {k}")


def _check_size(spec: dict, hosts: int) -> None:
    """Refuse a cluster whose hosts alone exceed the document limits, before building any host
    (the limits are otherwise only checked on the finished document, after it is in memory)."""
    for key, limit in (("nodes", "max_nodes"), ("links", "max_links")):
        count = hosts * len(spec.get(key) or ())
        if count > LIMITS[limit]:
            message = (f"{hosts} hosts make {count:,} {key}, over the limit of {LIMITS[limit]:,} "
                       f"({limit})")
            raise LimitExceeded(message, [Problem("hosts", message)])


def _add_hosts(out: _Doc, spec: dict, hosts: int, hpr: int) -> None:
    doc = out.doc
    for r in range((hosts + hpr - 1) // hpr):
        doc["groups"].append({"id": f"rack{r}", "kind": "rack"})
    for h in range(hosts):
        frag = _instantiate(spec, f"h{h}", f"rack{h // hpr}")
        doc["groups"] += frag["groups"]
        doc["nodes"] += frag["nodes"]
        doc["links"] += frag["links"]


def _spines(out: _Doc, count: int) -> list[str]:
    return [out.switch(f"spine{s}", "spine") for s in range(count)]


def _default_spines(down_gbps: float, oversub: float, up_gbps: float) -> int:
    return max(1, min(_MAX_DEFAULT_SPINES, math.ceil(down_gbps / oversub / up_gbps - 1e-9)))


def _uplinks(out: _Doc, lower: str, uppers: list[str], down_gbps: float, oversub: float, up_tech: str) -> None:
    """Uplinks of one switch: total down_gbps / oversub, split evenly over ``uppers``."""
    per_link = down_gbps / oversub / len(uppers)
    bundle = max(1, math.ceil(per_link / TECHS[up_tech].effective_gbps - 1e-9))
    for upper in uppers:
        out.link(lower, upper, up_tech, per_link, bundle)


def _two_tier_spines(out, leaves_down: list[float], spines, oversub, up_tech) -> list[str]:
    if spines is None:
        if len(leaves_down) <= 1:
            return []
        spines = _default_spines(max(leaves_down), oversub, TECHS[up_tech].effective_gbps)
    if isinstance(spines, bool) or not isinstance(spines, int) or spines < 0:
        _fail("spines", f"must be an integer ≥ 0, got {spines!r}")
    if spines == 0 and len(leaves_down) > 1:
        _fail("spines", "several leaves need at least one spine")
    return _spines(out, spines)


def _rail_optimized(out, hosts, nic_locals, rails, lpr, spines, nic_tech, up_tech, oversub, storage) -> dict:
    if lpr > hosts:
        _fail("leaves_per_rail", f"{lpr} leaves per rail for only {hosts} hosts")
    leaf_ids = [[out.switch(f"leaf{r * lpr + j}", "leaf", rail=r, index=j) for j in range(lpr)]
                for r in range(rails)]
    nic_gbps = TECHS[nic_tech].effective_gbps
    down = [[0.0] * lpr for _ in range(rails)]
    for h in range(hosts):
        j = h * lpr // hosts
        prefix = f"h{h}/"
        for i, local in enumerate(nic_locals):
            r = i % rails
            out.link(prefix + local, leaf_ids[r][j], nic_tech)
            down[r][j] += nic_gbps
    flat_leaves = [leaf for row in leaf_ids for leaf in row]
    flat_down = [d for row in down for d in row]
    spine_ids = _two_tier_spines(out, flat_down, spines, oversub, up_tech)
    if spine_ids:
        for leaf, d in zip(flat_leaves, flat_down):
            _uplinks(out, leaf, spine_ids, d, 1.0 * oversub, up_tech)
    _storage(out, storage, spine_ids, flat_leaves[0], nic_tech, up_tech)
    return {"rails": rails, "leaves_per_rail": lpr, "spines": len(spine_ids)}


def _leaf_spine(out, hosts, nic_locals, hpr, spines, nic_tech, up_tech, oversub, storage) -> dict:
    nic_gbps = TECHS[nic_tech].effective_gbps
    racks = (hosts + hpr - 1) // hpr
    tors = [out.switch(f"tor{r}", "tor", group=f"rack{r}", rack=r) for r in range(racks)]
    down = [0.0] * racks
    for h in range(hosts):
        r = h // hpr
        for local in nic_locals:
            out.link(f"h{h}/{local}", tors[r], nic_tech)
            down[r] += nic_gbps
    spine_ids = _two_tier_spines(out, down, spines, oversub, up_tech)
    if spine_ids:
        for tor, d in zip(tors, down):
            _uplinks(out, tor, spine_ids, d, oversub, up_tech)
    _storage(out, storage, spine_ids, tors[0], nic_tech, up_tech)
    return {"racks": racks, "spines": len(spine_ids)}


def _storage(out: _Doc, storage: int, spine_ids: list[str], only_leaf: str, nic_tech: str, up_tech: str) -> None:
    """Storage servers on their own leaves, uplinked without oversubscription (one-leaf fabric: on it)."""
    nic_gbps = TECHS[nic_tech].effective_gbps
    for j in range(math.ceil(storage / _STORAGE_PER_LEAF) if spine_ids else 0):
        out.switch(f"sleaf{j}", "leaf", storage=True)
    for i in range(storage):
        out.doc["nodes"].append({"id": f"storage{i}", "kind": "storage", "attrs": {"port_gbps": nic_gbps}})
        out.link(f"storage{i}", f"sleaf{i // _STORAGE_PER_LEAF}" if spine_ids else only_leaf, nic_tech)
    if spine_ids:
        for j in range(math.ceil(storage / _STORAGE_PER_LEAF)):
            count = min(_STORAGE_PER_LEAF, storage - j * _STORAGE_PER_LEAF)
            _uplinks(out, f"sleaf{j}", spine_ids, count * nic_gbps, 1.0, up_tech)


def _fat_tree(out, hosts, nic_locals, k, nic_tech, up_tech, oversub, storage) -> dict:
    ports = hosts * len(nic_locals) + storage
    if k is None:
        k = 2
        while k ** 3 // 4 < ports:
            k += 2
    if k ** 3 // 4 < ports:
        _fail("k", f"a k={k} fat-tree has {k ** 3 // 4} host ports; {ports} are needed")
    half = k // 2
    edges = [out.switch(f"edge{n}", "leaf", pod=n // half) for n in range(k * half)]
    aggs = [out.switch(f"agg{n}", "spine", pod=n // half) for n in range(k * half)]
    cores = [out.switch(f"core{n}", "core") for n in range(half * half)]
    endpoints = [f"h{h}/{local}" for h in range(hosts) for local in nic_locals]
    for i in range(storage):
        out.doc["nodes"].append({"id": f"storage{i}", "kind": "storage",
                                 "attrs": {"port_gbps": TECHS[nic_tech].effective_gbps}})
        endpoints.append(f"storage{i}")
    for t, endpoint in enumerate(endpoints):
        out.link(endpoint, edges[t // half], nic_tech)
    speed = TECHS[nic_tech].effective_gbps
    for n, edge in enumerate(edges):  # every edge to every agg of its pod
        pod = n // half
        _uplinks(out, edge, aggs[pod * half:(pod + 1) * half], half * speed, oversub, up_tech)
    for n, agg in enumerate(aggs):  # agg j of a pod to cores j*half .. j*half+half-1
        j = n % half
        _uplinks(out, agg, cores[j * half:(j + 1) * half], half * speed / oversub, 1.0, up_tech)
    return {"k": k, "pods": k, "cores": len(cores)}


def _link_gbps(link: dict) -> float:
    if link.get("capacity_gbps") is not None:
        return float(link["capacity_gbps"])
    tech = TECHS[link["tech"]]
    return tech.raw_gbps if link.get("capacity_basis") == "raw" else tech.effective_gbps


def fabric_summary(doc: dict) -> dict:
    """Counts and bandwidths of a cluster document.

    Returns
    -------
    dict
        ``hosts``, ``gpus``, ``nodes``, ``links``, ``switches`` (count per role),
        ``injection_gbps`` (capacity of all host⇄fabric links), ``bisection_gbps`` (half the
        capacity into the top switch tier from below, compute side only; half the injection
        when there is a single switch), ``fabric`` (the generator's parameters, if any).
    """
    kinds = {n["id"]: n["kind"] for n in doc["nodes"]}
    roles = {n["id"]: (n.get("attrs") or {}).get("role") for n in doc["nodes"] if n["kind"] == "switch"}
    storage_leaf = {n["id"] for n in doc["nodes"] if (n.get("attrs") or {}).get("storage")}
    switches: dict[str, int] = {}
    for role in roles.values():
        switches[role] = switches.get(role, 0) + 1
    top = next((r for r in ("core", "spine") if r in switches), None)
    injection = top_in = 0.0
    for link in doc["links"]:
        a, b = link["a"], link["b"]
        ka, kb = kinds[a], kinds[b]
        if (ka == "nic") != (kb == "nic") and "switch" in (ka, kb):
            injection += _link_gbps(link)
        elif ka == kb == "switch" and top and (roles[a] == top) != (roles[b] == top) \
                and a not in storage_leaf and b not in storage_leaf:
            top_in += _link_gbps(link)
    groups = doc.get("groups") or []
    return {"hosts": sum(1 for g in groups if g.get("kind") == "host"),
            "gpus": sum(1 for k in kinds.values() if k == "gpu"),
            "nodes": len(doc["nodes"]), "links": len(doc["links"]), "switches": switches,
            "injection_gbps": injection,
            "bisection_gbps": min(injection, top_in) / 2 if top else injection / 2,
            "fabric": doc.get("fabric")}
