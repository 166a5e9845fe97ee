"""Fabric generators: N hosts of a template wired into a rail-optimized, leaf/spine or fat-tree fabric.

Ids and groups
--------------
- Hosts ``h{i}`` (host groups, parent ``rack{r}``, ``hosts_per_rack`` per rack); node ids
  ``h{i}/<local>`` as in ``templates.py``.
- Switches are kind ``switch`` with ``attrs.role`` and, from the switch model, ``attrs.tier``
  (``leaf``/``spine``/``core``), ``attrs.model``, ``attrs.radix`` (ports at ``attrs.port_gbps``):
  * rail-optimized: ``leaf{n}`` (role ``leaf``, ``attrs.rail``, ``attrs.index`` within the rail;
    ``n = rail * leaves_per_rail + index``), ``spine{s}`` (role ``spine``) and, with three tiers,
    ``core{c}`` (role ``core``); spines and cores carry ``attrs.plane`` (and ``attrs.pod``);
  * leaf-spine: ``tor{r}`` (role ``tor``, in group ``rack{r}``), ``spine{s}`` (``core{c}``);
  * fat-tree: ``edge{n}`` (role ``leaf``), ``agg{n}`` (role ``spine``) with ``attrs.pod``,
    ``core{n}`` (role ``core``) — always three tiers.
- Storage servers ``storage{i}`` (kind ``storage``): on a storage fabric of their own when the
  template has storage NICs (``sleaf{j}``, ``snleaf{j}``, ``sspine{k}``, all ``attrs.storage``;
  :mod:`.storage_fabric` has the rule and why), else on storage leaves ``sleaf{j}`` (role
  ``leaf``, ``attrs.storage``) uplinked without oversubscription into plane 0 (fat-tree: they
  take the edge ports after the hosts' NICs; a single-leaf fabric: on that leaf).
- Three tiers: ``pod{p}`` groups (kind ``pod``) hold a pod's spines, leaves, the racks with most
  of their host ports on those leaves (as ``parent``) and its storage servers; the super-spines are
  in group ``super-spines`` (kind ``other``). See :func:`.pods.group_pods`.
- Link ids: ``<a>-<b>`` (``h3/nic7-leaf7``, ``leaf7-spine2``).
- Compute NICs are wired into the compute fabric; storage NICs (one port each) only when there
  are storage servers, into the storage fabric; in-band management is not modelled.
- ``sharp=True`` marks every switch ``attrs.sharp: true`` (:data:`catalog.SHARP_ATTR`), which CollNet's
  support check reads (``traffic/collectives/collnet.py``); InfiniBand only (SHARP runs on Quantum
  switches: NVIDIA SHARP documentation, https://docs.nvidia.com/networking/display/sharpv300).

Ports, not bandwidth
--------------------
Every tier is built from one catalog switch model (``switch``, :data:`catalog.SWITCH_MODELS`) in
the port mode whose rate equals the NIC port rate (a 51.2 T switch serves 400G NICs as 128 ×
400G). Every host⇄leaf link is one port; every switch⇄switch link is a ``bundle`` of whole ports
with ``capacity_gbps = bundle × port rate`` (``clos.py`` has the rules). Leaves per rail, spines
and a third tier follow from the radix, the host count and ``oversubscription`` unless given;
the document's ``fabric.notes`` says every decision a user did not ask for (a single leaf with no
spine, a third tier, an oversubscription rounded to whole ports).
Documents stored before this (fractional ``capacity_gbps`` on ``bundle`` links) load as written.
"""
from __future__ import annotations

import math

from designer.engine.catalog import SHARP_ATTR, SWITCH_MODELS, SWITCH_PORT_TECH, TECHS
from designer.engine.model.clos import LeafPorts, SwitchSpec, max_down_ports, wire_three_tier, wire_two_tier
from designer.engine.document import LIMITS
from designer.engine.errors import InvalidTopology, LimitExceeded, Problem
from designer.engine.model.racks import rack_fabric_nics
from designer.engine.model.fabric_summary import fabric_summary  # re-exported: its callers import it here
from designer.engine.model.fabric_out import ClusterDoc as _Doc, ClusterTally as _Tally, add_hosts as _add_hosts
from designer.engine.model.pods import group_pods
from designer.engine.model.rail_only import rail_only_layout
from designer.engine.model.storage_fabric import (own_storage_fabric, shared_storage_leaves, storage_design,
                                                  storage_pods)
from designer.engine.model.templates import compute_nics, resolved_spec

__all__ = ["FABRICS", "MAX_HOSTS", "MAX_PLAN_HOSTS", "build_cluster", "plan_cluster", "fabric_summary",
           "default_nic_tech", "default_switch"]

FABRICS = ("rail-optimized", "rail-only", "leaf-spine", "fat-tree")
# 2,048 eight-GPU hosts = 16,384 GPUs: the most the pages and the API offer per build (a web
# request). The engine itself builds more (benchmark fabric_32k: 4,096 hosts, 32,768 GPUs).
MAX_HOSTS = 2048
# A plan (plan_cluster: the BOM preview) counts NIC ports instead of building hosts. 32,768
# eight-GPU hosts (262,144 GPUs, three tiers of 128-port switches) plan in about 1 s on this
# 2-core machine, 12,500 (100,000 GPUs) in 0.1 s (docs/PERFORMANCE.md). More is linear in the
# switch links: a web request should not wait longer.
MAX_PLAN_HOSTS = 32_768


def _fail(path: str, message: str):
    raise InvalidTopology(message, [Problem(path, message)])


def default_nic_tech(port_gbps: float) -> str:
    """Catalog tech of a NIC port speed: ``eth<speed>`` (``eth400`` for 400 Gb/s)."""
    name = f"eth{int(port_gbps)}"
    if name not in TECHS:
        _fail("nic_link_tech", f"no catalog Ethernet tech for a {port_gbps:g} Gb/s port; "
                               f"pass nic_link_tech")
    return name


def default_switch(family: str, port_gbps: float) -> str:
    """Catalog switch model used when none is asked: 51.2 T Ethernet, NDR or XDR InfiniBand."""
    if family == "infiniband":
        return "ib-ndr-64" if port_gbps <= 400 else "ib-xdr-144"
    return "eth-51t2"


def _tech(name: str, path: str):
    if name not in TECHS:
        _fail(path, f"unknown link technology {name!r}")
    return TECHS[name]


def build_cluster(template, hosts: int, *, fabric: str = "rail-optimized", rails: int | None = None,
                  leaves_per_rail: int | None = None, spines: int | None = None,
                  nic_link_tech: str | None = None, uplink_tech: str | None = None,
                  oversubscription: float = 1.0, hosts_per_rack: int = 4, k: int | None = None,
                  storage: int = 0, switch: str | None = None, tiers: int | None = None,
                  planes: int = 1, name: str | None = None, params: dict | None = None,
                  sharp: bool = False) -> dict:
    """A cluster document: ``hosts`` copies of a host template wired into a fabric.

    Parameters
    ----------
    template : str or dict
        Built-in template name or user template spec (see ``templates.py``).
    hosts : int
        Number of hosts (``h0`` … ``h{hosts-1}``).
    fabric : {"rail-optimized", "rail-only", "leaf-spine", "fat-tree"}
        Rail-optimized: one leaf group per rail, NIC i of every host to rail ``i % rails``; rail-only:
        the same, no spine joining rails (:mod:`.rail_only`); leaf-spine: one ToR per rack; fat-tree: three tiers.
    rails : int, optional
        Rails (default: compute NICs per host). Rail-optimized only.
    leaves_per_rail : int, optional
        Leaves per rail (default: the fewest whose ports hold the rail's hosts); hosts are split
        into equal contiguous blocks.
    spines : int, optional
        Compute-fabric spines (per pod with three tiers; default: the fewest whose ports hold the
        leaves' uplinks). 0 only for one leaf. A storage fabric's spines follow from its ports.
    nic_link_tech, uplink_tech : str, optional
        Catalog techs of host⇄leaf and switch⇄switch links (default the switch family's tech at
        the NIC port rate, ``eth400``); both must run at the switch port rate.
    oversubscription : float
        Host ports / uplink ports of every leaf (≥ 1); rounded to whole uplink ports.
    hosts_per_rack : int
        Hosts per rack group (and per ToR in leaf-spine).
    k : int, optional
        Fat-tree only: a generic ``k``-port switch instead of a catalog model (even).
    storage : int
        Storage servers: on a storage fabric of their own, wired to the hosts' storage NICs, when
        the template has them; else on storage leaves of the compute spines (:mod:`.storage_fabric`).
    switch : str, optional
        Catalog switch-model id (``catalog --switches``); default 51.2 T Ethernet for Ethernet
        NICs, NDR / XDR InfiniBand for InfiniBand ones.
    tiers : {2, 3}, optional
        Force two or three switch tiers (default: three only when two cannot hold the leaves).
    planes : int
        Rail-optimized: independent spine planes, rails split evenly (``planes = rails``: one
        plane per rail).
    name : str, optional
        Document name.
    params : dict, optional
        Template parameters.
    sharp : bool
        Mark every fabric switch SHARP-capable (``attrs.sharp``), so CollNet is selectable;
        InfiniBand switch models only (without ``switch`` and ``nic_link_tech``: the InfiniBand
        default for the NIC rate).

    Returns
    -------
    dict
        A valid ``fabricscope.topology/1`` document (not yet normalized) with a ``fabric`` block
        describing the generator's parameters and decisions (``notes``).

    Raises
    ------
    InvalidTopology
        Bad parameters or a request the switch ports cannot hold (located by parameter name,
        with the port counts).
    """
    return _generate(_Doc, **dict(locals()))


def plan_cluster(template, hosts: int, **options) -> dict:
    """What :func:`build_cluster` would build, without its hosts: for a bill of materials of a
    design too large to materialize (100,000 GPUs in well under a second; docs/PERFORMANCE.md).

    Parameters
    ----------
    template, hosts, **options
        As :func:`build_cluster` (same checks, same errors), except the document-size limit:
        ``hosts`` may be up to :data:`MAX_PLAN_HOSTS`.

    Returns
    -------
    dict
        ``document``: the fabric part of the document (switches, storage servers and their
        links, ``fabric`` block with its notes), no host; ``fabric_links``: the switch⇄switch
        links as rows ``(a, [b, ...], tech, ports, capacity_gbps)``, one link from ``a`` to
        each ``b``; ``host_ports``:
        ``{(switch id, tech): NIC ports}`` of the host⇄leaf links left out; ``per_host``:
        ``{"nodes", "links", "hosts", "gpus"}`` of one host instance (``hosts``: host groups,
        18 for an NVL72 rack).

    Raises
    ------
    InvalidTopology
        As :func:`build_cluster`; ``LimitExceeded`` (path ``hosts``) above :data:`MAX_PLAN_HOSTS`.
    """
    if isinstance(hosts, int) and not isinstance(hosts, bool) and hosts > MAX_PLAN_HOSTS:
        message = f"{hosts:,} hosts: a plan (BOM preview) takes at most {MAX_PLAN_HOSTS:,} (MAX_PLAN_HOSTS)"
        raise LimitExceeded(message, [Problem("hosts", message)])
    return _generate(_Tally, template, hosts, **options)


def _generate(out_cls, template, hosts: int, *, fabric: str = "rail-optimized", rails=None,
              leaves_per_rail=None, spines=None, nic_link_tech=None, uplink_tech=None,
              oversubscription: float = 1.0, hosts_per_rack: int = 4, k=None, storage: int = 0,
              switch=None, tiers=None, planes: int = 1, name=None, params=None, sharp: bool = False):
    """:func:`build_cluster` into ``out_cls`` (``_Doc``: the document; ``_Tally``: its plan)."""
    spec = resolved_spec(template, dict(params or {}))
    nics = compute_nics(spec)
    if spec.get("rack_scale"):  # a rack-scale system (racks.py) fills its rack; rails = NICs per tray
        nics, rails, hosts_per_rack = rack_fabric_nics(spec, nics, rails)
    _check_args(hosts, fabric, nics, rails, leaves_per_rail, oversubscription, hosts_per_rack, storage, k,
                tiers, planes)
    if spines is not None and (isinstance(spines, bool) or not isinstance(spines, int) or spines < 0):
        _fail("spines", f"must be an integer ≥ 0, got {spines!r}")
    if out_cls is _Doc:
        _check_size(spec, hosts)
    switch = _sharp_switch(sharp, switch, nic_link_tech, k, nics)
    sw, nic_tech = _switch_spec(nics, switch, k, nic_link_tech, uplink_tech)
    _check_sharp(sharp, sw)
    tname = spec.get("name", "custom")
    out = out_cls(name or f"{tname}-{hosts}x-{fabric}")
    # Looked up here at each call (tests check that a refused size instantiates no host).
    _add_hosts(out, spec, hosts, hosts_per_rack)
    info = {"kind": fabric, "template": tname, "hosts": hosts, "oversubscription": float(oversubscription),
            "nic_link_tech": nic_tech, "uplink_tech": sw.tech, "hosts_per_rack": hosts_per_rack,
            "storage": storage, "switch": sw.model, "radix": sw.radix, "port_gbps": sw.port_gbps}
    locals_ = [n["local"] for n in nics]
    own, why = storage_design(spec, sw, nic_tech, storage)  # storage_fabric.py: own fabric or shared
    args = _Args(hosts, locals_, nic_tech, sw, float(oversubscription), spines, 0 if own else storage, tiers)
    if fabric in ("rail-optimized", "rail-only"):
        info.update(_rail_optimized(out, args, rails or len(nics), leaves_per_rail, planes, fabric == "rail-only"))
    elif fabric == "leaf-spine":
        if planes != 1:
            _fail("planes", "planes apply to rail-optimized fabrics only")
        info.update(_leaf_spine(out, args, hosts_per_rack))
    else:
        info.update(_fat_tree(out, args))
    if own:
        sw_s, tech_s, nic_locals = own
        info["storage_fabric"] = own_storage_fabric(out, sw_s, tech_s, hosts, nic_locals, storage)
    elif storage:
        info["storage_fabric"] = {"kind": "shared"}
        out.notes.append(why)
    if info.get("pods") and out_cls is _Doc:
        group_pods(out.doc)
    _mark_sharp(out.doc["nodes"], info, sharp)
    info["notes"] = out.notes
    out.doc["fabric"] = info
    return out.result()


def _check_sharp(sharp, sw: SwitchSpec) -> None:
    """SHARP (CollNet's in-network reduction) is an InfiniBand Quantum feature: refuse it on an
    Ethernet fabric rather than promise a reduction its switches cannot do."""
    if not isinstance(sharp, bool):
        _fail("sharp", f"must be true or false, got {sharp!r}")
    if sharp and TECHS[sw.tech].family != "infiniband":
        _fail("sharp", f"SHARP in-network reduction needs InfiniBand switches; {sw.model} is "
                       f"{TECHS[sw.tech].family} (choose an ib-* switch model)")


def _sharp_switch(sharp, switch, nic_link_tech, k, nics):
    """The switch asked for; with SHARP and none named, InfiniBand's default (not Ethernet's)."""
    if sharp is True and switch is None and nic_link_tech is None and k is None:
        return default_switch("infiniband", float(nics[0]["attrs"].get("port_gbps", 100)))
    return switch


def _mark_sharp(nodes: list[dict], info: dict, sharp: bool) -> None:
    if not sharp:
        return
    info["sharp"] = True
    for node in nodes:
        if node.get("kind") == "switch":
            node.setdefault("attrs", {})[SHARP_ATTR] = True


class _Args:
    """What every fabric builder needs (keeps their signatures short)."""

    def __init__(self, hosts, nic_locals, nic_tech, sw, oversub, spines, storage, tiers):
        self.hosts, self.nic_locals, self.nic_tech, self.sw = hosts, nic_locals, nic_tech, sw
        self.oversub, self.spines, self.storage, self.tiers = oversub, spines, storage, tiers


def _check_args(hosts, fabric, nics, rails, lpr, oversub, hpr, storage, k, tiers, planes) -> None:
    def positive_int(path, v, minimum=1):
        if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
            _fail(path, f"must be an integer ≥ {minimum}, got {v!r}")

    positive_int("hosts", hosts)
    if lpr is not None:
        positive_int("leaves_per_rail", lpr)
    positive_int("hosts_per_rack", hpr)
    positive_int("storage", storage, 0)
    positive_int("planes", planes)
    if tiers is not None and tiers not in (2, 3):
        _fail("tiers", f"must be 2 or 3, got {tiers!r}")
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
        if fabric != "fat-tree":
            _fail("k", "k (a generic k-port switch) applies to the fat-tree fabric only")


def _switch_spec(nics, switch, k, nic_link_tech, uplink_tech) -> tuple[SwitchSpec, str]:
    """The switch model in the port mode of the NICs, and the host-link tech."""
    if nic_link_tech is not None:
        host = _tech(nic_link_tech, "nic_link_tech")
        rate, family = host.raw_gbps, host.family
    else:
        rate, family = float(nics[0]["attrs"].get("port_gbps", 100)), None
    if k is not None:
        family = family or "ethernet"
        model, radix = f"generic-{k}-port", k
    else:
        model_id = switch or default_switch(family or "ethernet", rate)
        if model_id not in SWITCH_MODELS:
            _fail("switch", f"unknown switch model {model_id!r} (choose from {', '.join(SWITCH_MODELS)})")
        m = SWITCH_MODELS[model_id]
        if family is not None and family != m.tech:
            _fail("switch", f"{model_id} is {m.tech} but nic_link_tech {nic_link_tech} is {family}")
        family = m.tech
        mode = m.mode_for(rate)
        if mode is None:
            modes = ", ".join(f"{p} × {g:g}G" for p, g in m.modes())
            _fail("switch", f"{model_id} has no {rate:g} Gb/s port mode for the NICs (modes: {modes})")
        model, radix = model_id, mode[0]
    port_tech = SWITCH_PORT_TECH.get((family, rate))
    if port_tech is None:
        _fail("switch", f"no catalog {family} tech for a {rate:g} Gb/s port")
    if uplink_tech is not None and _tech(uplink_tech, "uplink_tech").raw_gbps != rate:
        _fail("uplink_tech", f"{uplink_tech} runs at {TECHS[uplink_tech].raw_gbps:g} Gb/s but the switch "
                             f"ports run at {rate:g} Gb/s")
    return SwitchSpec(model, radix, rate, uplink_tech or port_tech), nic_link_tech or port_tech


def _check_size(spec: dict, hosts: int) -> None:
    """Refuse a cluster whose hosts alone exceed the document limits, before building any host
    (the limits are otherwise only checked on the finished document, after it is in memory)."""
    for key, limit in (("nodes", "max_nodes"), ("links", "max_links")):
        count = hosts * len(spec.get(key) or ())
        if count > LIMITS[limit]:
            message = (f"{hosts} hosts make {count:,} {key}, over the limit of {LIMITS[limit]:,} "
                       f"({limit})")
            raise LimitExceeded(message, [Problem("hosts", message)])


# ============================================================================ upper tiers
def _upper_tiers(out: _Doc, a: _Args, pods: list[list[LeafPorts]], *, plane: int | None = None,
                 names=("spine", "core")) -> dict:
    """Spines (and cores) above leaves grouped in pods: two tiers when they fit, else three."""
    leaves = [leaf for pod in pods for leaf in pod]
    extra = {} if plane is None else {"plane": plane}
    if len(leaves) == 1 and not a.spines and a.tiers != 3:
        return {"spines": [], "cores": [], "pods": 0}
    if a.spines == 0:
        _fail("spines", f"{len(leaves)} leaves need at least one spine")
    three = a.tiers == 3 or (a.tiers is None and len(leaves) > a.sw.radix and a.spines is None)
    if not three:
        return {"spines": wire_two_tier(out, leaves, a.sw, spines=a.spines, prefix=names[0], extra=extra),
                "cores": [], "pods": 0}
    if a.tiers is None:
        out.notes.append(f"{len(leaves)} leaves{_plane(plane)} exceed the {a.sw.radix} ports of a "
                         f"{a.sw.model} spine: built three tiers ({len(pods)} pods + super-spines)")
    return wire_three_tier(out, pods, a.sw, spines=a.spines, names=names, extra=extra)


def _plane(plane):
    return "" if plane is None else f" of plane {plane}"


def _chunks(items: list, size: int) -> list[list]:
    return [items[i:i + size] for i in range(0, len(items), size)]


def _leaf_capacity(a: _Args, path: str) -> int:
    down = max_down_ports(a.sw.radix, a.oversub)
    if down < 1:
        _fail(path, f"a {a.sw.radix}-port {a.sw.model} cannot hold a host port and its uplinks at "
                    f"oversubscription {a.oversub:g}")
    return down


def _note_rounding(out: _Doc, leaves: list[LeafPorts], oversub: float) -> None:
    """After wiring: the ratio a full compute leaf really got, when it is not the one asked
    (whole ports, and equal bundles to every spine that may add uplinks; ``clos.py``)."""
    compute = [leaf for leaf in leaves if not leaf.storage]
    if not compute:
        return
    full = max(compute, key=lambda leaf: leaf.down)
    up = out.ports_used.get(full.id, 0) - full.down
    if up <= 0:
        return
    actual = full.down / up
    if abs(actual - oversub) > 1e-9:
        why = "" if up == full.up else f" (equal bundles to every spine: {up} uplinks where {full.up} would do)"
        out.notes.append(f"oversubscription {oversub:g} asked; whole ports give {full.down}:{up} "
                         f"= {actual:.3g} on a full leaf{why}")


# ============================================================================ rail-optimized
def _rail_leaves(out: _Doc, a: _Args, rails: int, lpr: int | None, full: bool) -> tuple[int, list[list[str]], list]:
    per_rail = [sum(1 for i in range(len(a.nic_locals)) if i % rails == r) for r in range(rails)]
    cap = a.sw.radix if full else _leaf_capacity(a, "leaves_per_rail")  # full: nothing above the leaf
    if cap < max(per_rail):
        _fail("switch", f"one host has {max(per_rail)} NICs on a rail but a leaf holds {cap} host ports")
    hosts_per_leaf = cap // max(per_rail)
    if lpr is None:
        lpr = math.ceil(a.hosts / hosts_per_leaf)
        if lpr > 1:
            out.notes.append(f"{lpr} leaves per rail: a {a.sw.model} leaf holds {hosts_per_leaf} hosts "
                             f"per rail at oversubscription {a.oversub:g}")
    elif lpr > a.hosts:
        _fail("leaves_per_rail", f"{lpr} leaves per rail for only {a.hosts} hosts")
    elif math.ceil(a.hosts / lpr) > hosts_per_leaf:
        _fail("leaves_per_rail", f"{lpr} leaves per rail put {math.ceil(a.hosts / lpr)} hosts on a leaf; "
                                 f"a {a.sw.model} leaf holds {hosts_per_leaf} at oversubscription "
                                 f"{a.oversub:g} (use ≥ {math.ceil(a.hosts / hosts_per_leaf)})")
    ids = [[out.switch(f"leaf{r * lpr + j}", "leaf", rail=r, index=j, **a.sw.attrs("leaf"))
            for j in range(lpr)] for r in range(rails)]
    return lpr, ids, per_rail


def _rail_hosts(out: _Doc, a: _Args, rails: int, lpr: int, leaf_ids: list[list[str]]) -> list[list[int]]:
    """NIC ``i`` of host ``h`` to leaf ``(i % rails, h * lpr // hosts)``; host ports per leaf."""
    down = [[0] * lpr for _ in range(rails)]
    if isinstance(out, _Tally):  # a plan counts a block's NIC ports at once (100,000 at 100k GPUs)
        blocks = [0] * lpr
        for h in range(a.hosts):
            blocks[h * lpr // a.hosts] += 1
        for j, n in enumerate(blocks):
            for i in range(len(a.nic_locals)):
                out.host_ports_add(leaf_ids[i % rails][j], a.nic_tech, n)
                down[i % rails][j] += n
        return down
    for h in range(a.hosts):
        j = h * lpr // a.hosts
        for i, local in enumerate(a.nic_locals):
            out.link(f"h{h}/{local}", leaf_ids[i % rails][j], a.nic_tech)
            down[i % rails][j] += 1
    return down


def _rail_optimized(out: _Doc, a: _Args, rails: int, lpr: int | None, planes: int, only: bool = False) -> dict:
    full = False
    if only:  # rail-only (rail_only.py): one plane per rail, no switch joins two rails
        planes, lpr, full = rail_only_layout(a.hosts, rails, len(a.nic_locals), a.sw.radix, planes=planes,
                                             leaves_per_rail=lpr, spines=a.spines, tiers=a.tiers, storage=a.storage)
    if rails % planes:
        _fail("planes", f"{planes} planes do not split {rails} rails evenly")
    lpr, leaf_ids, _ = _rail_leaves(out, a, rails, lpr, full)
    down = _rail_hosts(out, a, rails, lpr, leaf_ids)
    single = rails * lpr == 1 and a.spines is None and a.tiers is None
    storage_leaves = shared_storage_leaves(out, a.sw, a.nic_tech, a.storage, leaf_ids[0][0] if single else None)
    leaves = [[LeafPorts(leaf_ids[r][j], down[r][j], a.oversub) for j in range(lpr)] for r in range(rails)]
    got = [_rail_plane(out, a, leaves, p, planes, storage_leaves if p == 0 else []) for p in range(planes)]
    spines, cores = sum(len(g["spines"]) for g in got), sum(len(g["cores"]) for g in got)
    return {"rails": rails, "leaves_per_rail": lpr, "planes": planes, "spines": spines, "cores": cores,
            "pods": sum(g["pods"] for g in got), "tiers": 3 if cores else (2 if spines else 1)}


def _rail_plane(out: _Doc, a: _Args, leaves: list[list[LeafPorts]], p: int, planes: int,
                storage_leaves: list[LeafPorts]) -> dict:
    """Upper tiers of plane ``p``: its rails' leaves in pods of whole host blocks (all its rails)."""
    per_plane = len(leaves) // planes
    rows = leaves[p * per_plane:(p + 1) * per_plane]
    blocks = [[row[j] for row in rows] for j in range(len(rows[0]))]
    pod_blocks = max(1, (a.sw.radix // 2) // per_plane)
    pods = [sum(chunk, []) for chunk in _chunks(blocks, pod_blocks)] + storage_pods(storage_leaves, a.sw.radix)
    got = _upper_tiers(out, a, pods, plane=p if planes > 1 else None)
    if p == 0:
        _note_rounding(out, [leaf for pod in pods for leaf in pod], a.oversub)
    if not got["spines"]:
        where = f"plane {p}" if planes > 1 else "the fabric"
        out.notes.append(f"{where}: one leaf holds all "
                         f"{pods[0][0].down} host ports ({a.sw.radix}-port {a.sw.model}), so no spine is "
                         f"needed (pass spines=N to add some)")
    return got


# ============================================================================ leaf-spine
def _leaf_spine(out: _Doc, a: _Args, hpr: int) -> dict:
    racks = (a.hosts + hpr - 1) // hpr
    tors = [out.switch(f"tor{r}", "tor", group=f"rack{r}", rack=r, **a.sw.attrs("leaf")) for r in range(racks)]
    down = [0] * racks
    for h in range(a.hosts):
        for local in a.nic_locals:
            out.link(f"h{h}/{local}", tors[h // hpr], a.nic_tech)
            down[h // hpr] += 1
    single = racks == 1 and a.spines is None and a.tiers is None
    cap = a.sw.radix if single else _leaf_capacity(a, "hosts_per_rack")
    if max(down) + (a.storage if single else 0) > cap:
        _fail("hosts_per_rack", f"a rack of {hpr} hosts has {max(down)} NIC ports; a {a.sw.model} ToR "
                                f"holds {cap} with its uplinks at oversubscription {a.oversub:g}")
    storage_leaves = shared_storage_leaves(out, a.sw, a.nic_tech, a.storage, tors[0] if single else None)
    leaves = [LeafPorts(t, d, a.oversub) for t, d in zip(tors, down)]
    pods = _chunks(leaves, a.sw.radix // 2) + storage_pods(storage_leaves, a.sw.radix)
    got = _upper_tiers(out, a, pods)
    if not single:
        _note_rounding(out, leaves, a.oversub)
    if single:
        out.notes.append(f"one rack: its ToR holds all {down[0]} host ports ({a.sw.radix}-port "
                         f"{a.sw.model}), so no spine is needed (pass spines=N to add some)")
    return {"racks": racks, "spines": len(got["spines"]), "cores": len(got["cores"]), "pods": got["pods"],
            "tiers": 3 if got["cores"] else (2 if got["spines"] else 1)}


# ============================================================================ fat-tree
def _fat_tree(out: _Doc, a: _Args) -> dict:
    """Three tiers always: edges take host NICs then storage ports in order, in pods of radix/2."""
    if a.tiers == 2:
        _fail("tiers", "a fat-tree has three tiers; use rail-optimized or leaf-spine for two")
    endpoints = [f"h{h}/{local}" for h in range(a.hosts) for local in a.nic_locals]
    gbps = TECHS[a.nic_tech].effective_gbps
    for i in range(a.storage):
        out.doc["nodes"].append({"id": f"storage{i}", "kind": "storage", "attrs": {"port_gbps": gbps}})
        endpoints.append(f"storage{i}")
    per_edge = _leaf_capacity(a, "oversubscription")
    half = a.sw.radix // 2
    edges = []
    for n, chunk in enumerate(_chunks(endpoints, per_edge)):
        edge = out.switch(f"edge{n}", "leaf", pod=n // half, **a.sw.attrs("leaf"))
        for endpoint in chunk:
            out.link(endpoint, edge, a.nic_tech)
        edges.append(LeafPorts(edge, len(chunk), a.oversub))
    got = wire_three_tier(out, _chunks(edges, half), a.sw, spines=a.spines, names=("agg", "core"))
    _note_rounding(out, edges, a.oversub)
    return {"k": a.sw.radix, "pods": got["pods"], "spines": len(got["spines"]), "cores": len(got["cores"]),
            "tiers": 3}
