"""Bill of materials and fabric facts of a topology document: what to buy and how to cable it.

Counted from the document as it is (generated or hand-drawn), so a stored design and a fresh
build give the same answer. Ports are *logical* ports at the fabric's port rate (a 51.2 T switch
in 128 × 400G mode counts 128 ports; its 64 twin-port cages are ``cages``); a link's ``bundle``
is its number of ports (1 when absent).

Reach classes (simple rules, stated so a reader can redo them)
--------------------------------------------------------------
- ``in-rack copper``: host⇄switch where the switch sits in the host's rack group (a ToR) —
  one passive copper cable (DAC) per port, no transceiver. 400G DAC reach is ~3 m, inside a rack
  (https://docs.nvidia.com/networking/display/MCP7Y00NXXX800pub).
- ``in-row``: host⇄switch where the switch is elsewhere (rail-optimized leaves and storage leaves
  sit in network racks of the row) — short-reach multimode optics, one fibre and two
  transceivers per port (400GBASE-SR8: 100 m over MMF, IEEE 802.3cm).
- ``optics``: switch⇄switch (leaf⇄spine, spine⇄core cross rows) — single-mode optics, one fibre
  and two transceivers per port (400GBASE-DR4: 500 m over SMF, IEEE 802.3bs).
Network links are the ones of an Ethernet or InfiniBand catalog tech; PCIe, NVLink, memory and
inter-socket links are inside a host and not counted.
"""
from __future__ import annotations

from designer.engine.catalog import SWITCH_MODELS, TECHS

__all__ = ["BOM_FORMAT", "REACH_CLASSES", "TALLIES_VERSION", "fabric_bom", "fabric_bom_tallied", "plan_bom",
           "compare_boms", "bom_reads", "switch_ports_used", "bom_after_switch_update", "bom_rows_ordered",
           "switch_groups", "capacities_integral", "link_rows", "switch_meta", "oversubscription", "power"]

BOM_FORMAT = "fabricscope.bom/1"
#: Version of :func:`fabric_bom`'s tallies (``model.bom_edit`` uses none of another version).
TALLIES_VERSION = 1
# reach class -> (cable kind, transceivers per port)
REACH_CLASSES = {"in-rack copper": ("passive copper (DAC)", 0), "in-row": ("multimode fibre", 2),
                 "optics": ("single-mode fibre", 2)}
_TIER_OF_ROLE = {"leaf": "leaf", "tor": "leaf", "edge": "leaf", "spine": "spine", "agg": "spine",
                 "core": "core", "superspine": "core"}
_TIER_RANK = {"leaf": 1, "spine": 2, "core": 3}
_NETWORK = ("ethernet", "infiniband")
# What the BOM (and the fabric summary it quotes) reads of a switch's attrs; of any other node
# only ``storage`` (a storage-marked endpoint's links are not compute injection).
_SWITCH_READS = ("tier", "role", "storage", "model", "radix", "port_gbps")
_LINK_READS = ("a", "b", "tech", "bundle", "capacity_gbps", "capacity_basis")


def bom_reads(key: str, item: dict) -> tuple:
    """Everything :func:`fabric_bom` reads of one node (``key`` "nodes") or link ("links"), besides
    its id. An item updated with the same answer leaves the BOM as it was (a GPU's or NIC's
    attrs, a switch's label, a cable's latency): a 100,000-GPU design's save keeps its stored
    BOM instead of counting the whole document again. Adding or removing an item of the fabric
    always changes it. ``tests/engine/test_bom_reads.py`` checks the claim over random edits."""
    if key == "links":
        return tuple(item.get(f) for f in _LINK_READS)
    attrs = item.get("attrs") or {}
    fields = _SWITCH_READS if item.get("kind") == "switch" else ("storage",)
    return (item.get("kind"), item.get("group"), *(attrs.get(f) for f in fields))


def fabric_bom(topology) -> dict:
    """Switches, ports, cables, transceivers, oversubscription, bisection and power of a fabric.

    Parameters
    ----------
    topology : dict, str or path
        A ``fabricscope.topology/1`` document.

    Returns
    -------
    dict
        ``format`` (``fabricscope.bom/1``); ``switches``: rows ``{model, tier, count, radix,
        port_gbps, ports_used, ports_free, cages, power_w}``; ``ports`` ``{used, free, total}``;
        ``links``: rows ``{kind, tech, reach, links, ports, cables, transceivers}``; ``cables``
        and ``transceivers`` totals by reach class; ``oversubscription`` per tier (worst switch,
        down / up capacity); ``injection_gbps``, ``bisection_gbps``; ``power`` ``{switch_w,
        per_gpu_w, gpus, unknown_models}`` (W, switches without optics); ``notes``.

    Raises
    ------
    InvalidTopology
        When the document does not load or is not valid (every problem located).
    """
    return fabric_bom_tallied(topology)[0]


def fabric_bom_tallied(topology) -> tuple[dict, dict]:
    """:func:`fabric_bom` and its **tallies**, what a saved edit adds its fabric items to or takes
    them from (``model.bom_edit``): ``version``, ``integral`` (:func:`capacities_integral`),
    per switch id ``used`` (ports), ``down`` and ``up`` (Gb/s) and ``switches``
    (:func:`switch_meta`), and ``injection``, ``top_in`` and ``top`` (``fabric_summary_parts``)."""
    from designer.engine.document import check, load
    from designer.engine.model.fabric_summary import fabric_summary_parts

    doc = load(topology)
    check(doc)  # a link to an unknown node would otherwise be a KeyError deep in the count
    nodes = {n["id"]: n for n in doc["nodes"]}
    parents = {g["id"]: g.get("parent") for g in doc.get("groups") or ()}
    # Only a switch in a *rack* group is in the host's rack (a pod group holds racks and the
    # pod's leaves, which still sit in network racks of the row).
    racks = {g["id"] for g in doc.get("groups") or () if g.get("kind") == "rack"}
    used, down, up, rows = {}, {}, {}, {}
    for link in doc["links"]:
        tech = TECHS.get(link.get("tech"))
        if tech is None or tech.family not in _NETWORK:
            continue
        _count_link(link, tech, nodes, (parents, racks), (used, down, up), rows)
    switches = _switch_rows(nodes, used)
    summary, top_in, top = fabric_summary_parts(doc)
    meta = switch_meta(nodes)
    bom = {"format": BOM_FORMAT, "switches": switches,
           "ports": _port_totals(switches),
           "links": link_rows(rows),
           "cables": _totals(rows, "cables"), "transceivers": _totals(rows, "transceivers"),
           "oversubscription": oversubscription(meta, down, up),
           "injection_gbps": summary["injection_gbps"], "bisection_gbps": summary["bisection_gbps"],
           "power": power(switches, summary["gpus"]), "notes": list((doc.get("fabric") or {}).get("notes") or [])}
    return bom, {"version": TALLIES_VERSION, "integral": capacities_integral(doc["links"], nodes), "used": used,
                 "down": down, "up": up, "switches": meta, "injection": summary["injection_gbps"],
                 "top_in": top_in, "top": top}


def plan_bom(template, hosts: int, **options) -> dict:
    """:func:`fabric_bom` and ``fabric_summary`` of ``build_cluster(template, hosts, **options)``
    without building its hosts (``fabrics.plan_cluster``): the same numbers, from the fabric part
    and a count of NIC ports per leaf, so a 100,000-GPU design is previewed in well under a
    second (docs/PERFORMANCE.md).

    Parameters
    ----------
    template : str or dict
        Host template, as ``build_cluster``.
    hosts : int
        Hosts (up to ``fabrics.MAX_PLAN_HOSTS``).
    **options
        ``build_cluster`` keyword arguments.

    Returns
    -------
    dict
        ``{"summary": <fabric_summary>, "bom": <fabricscope.bom/1>}``.

    Raises
    ------
    InvalidTopology
        As ``build_cluster``.
    """
    from designer.engine.model.fabrics import plan_cluster

    plan = plan_cluster(template, hosts, **options)
    doc = plan["document"]
    nodes = {n["id"]: n for n in doc["nodes"]}
    used, down, up, rows = {}, {}, {}, {}
    for link in doc["links"]:  # switch⇄switch and storage⇄leaf: as fabric_bom counts them
        tech = TECHS.get(link.get("tech"))
        if tech is not None and tech.family in _NETWORK:
            _count_link(link, tech, nodes, ({}, set()), (used, down, up), rows)
    top_in = _count_fabric_links(plan["fabric_links"], nodes, (used, down, up), rows)
    injection = 0.0
    for (sid, tech_name), ports in plan["host_ports"].items():
        injection += _count_host_ports(nodes[sid], TECHS[tech_name], ports, (used, down), rows)
    switches = _switch_rows(nodes, used)
    summary = _plan_summary(plan, hosts, injection, top_in)
    return {"summary": summary,
            "bom": {"format": BOM_FORMAT, "switches": switches, "ports": _port_totals(switches),
                    "links": link_rows(rows),
                    "cables": _totals(rows, "cables"), "transceivers": _totals(rows, "transceivers"),
                    "oversubscription": oversubscription(switch_meta(nodes), down, up),
                    "injection_gbps": summary["injection_gbps"], "bisection_gbps": summary["bisection_gbps"],
                    "power": power(switches, summary["gpus"]),
                    "notes": list(doc["fabric"].get("notes") or [])}}


def _count_host_ports(switch: dict, tech, ports: int, tallies, rows) -> float:
    """Count ``ports`` host⇄switch links of ``tech`` as :func:`_count_link` does one by one;
    their capacity (Gb/s). A generated switch with a group is a ToR in its hosts' rack."""
    used, down = tallies
    capacity = ports * tech.effective_gbps
    used[switch["id"]] = used.get(switch["id"], 0) + ports
    down[switch["id"]] = down.get(switch["id"], 0.0) + capacity
    reach = "in-rack copper" if switch.get("group") else "in-row"
    _add_row(rows, f"host-{_tier(switch) or 'switch'}", tech.name, reach, ports, ports)
    # Storage NICs on a storage fabric's leaf are not compute injection (fabric_summary's rule).
    return 0.0 if (switch.get("attrs") or {}).get("storage") else capacity


def _count_fabric_links(links: list[tuple], nodes: dict, tallies, rows) -> float:
    """Count switch⇄switch links, rows ``(a, [b, ...], tech, ports, capacity_gbps)`` of one link
    from ``a`` to each ``b`` (every ``b`` of a row in one tier and role: a bundle to every spine
    or super-spine of a group), as :func:`_count_link` counts them one by one; returns the
    compute-side capacity into the top tier (``fabric_summary``'s bisection input, Gb/s)."""
    used, down, up = tallies
    tier, rank, into_top = _switch_facts(nodes)
    top_in = 0.0
    for a, uppers, tech, ports, capacity in links:
        n, b = len(uppers), uppers[0]
        used[a] = used.get(a, 0) + ports * n
        for u in uppers:
            used[u] = used.get(u, 0) + ports
        _count_updown(a, uppers, capacity, rank, (up, down))
        lo, hi = (a, b) if rank[a] <= rank[b] else (b, a)  # sorted() is stable: a first on a tie
        _add_row(rows, f"{tier[lo] or 'switch'}-{tier[hi] or 'switch'}", tech, "optics", n, ports * n)
        if into_top(a, b):
            top_in += capacity * n
    return top_in


def _switch_facts(nodes: dict):
    """Tier and tier rank per switch id, and ``into_top(a, b)``: is a link between two switches a
    compute-side link into the top tier (``fabric_summary``'s rule: storage leaves left out)."""
    tier = {sid: _tier(n) for sid, n in nodes.items() if n["kind"] == "switch"}
    rank = {sid: _TIER_RANK.get(t, 0) for sid, t in tier.items()}
    roles = {sid: (n.get("attrs") or {}).get("role") for sid, n in nodes.items() if sid in tier}
    storage = {sid for sid, n in nodes.items() if (n.get("attrs") or {}).get("storage")}
    top = next((r for r in ("core", "spine") if r in {roles[s] for s in roles if s not in storage}), None)

    def into_top(a: str, b: str) -> bool:
        return bool(top) and (roles[a] == top) != (roles[b] == top) and not {a, b} & storage

    return tier, rank, into_top


def _add_row(rows: dict, kind: str, tech: str, reach: str, links: int, ports: int) -> None:
    """``links`` links of ``ports`` ports in all (one cable per port) into their BOM row."""
    row = rows.get((kind, tech, reach))
    if row is None:
        row = rows[(kind, tech, reach)] = {"kind": kind, "tech": tech, "reach": reach, "links": 0,
                                           "ports": 0, "cables": 0, "transceivers": 0}
    row["links"] += links
    row["ports"] += ports
    row["cables"] += ports
    row["transceivers"] += ports * REACH_CLASSES[reach][1]


def _count_updown(a: str, uppers: list[str], capacity: float, rank: dict, tallies) -> None:
    """Uplink capacity of the lower end and downlink capacity of the upper end of each link."""
    up, down = tallies
    rank_b = rank[uppers[0]]
    if rank[a] < rank_b:
        up[a] = up.get(a, 0.0) + capacity * len(uppers)
        for u in uppers:
            down[u] = down.get(u, 0.0) + capacity
    elif rank_b < rank[a]:
        down[a] = down.get(a, 0.0) + capacity * len(uppers)
        for u in uppers:
            up[u] = up.get(u, 0.0) + capacity


def _plan_summary(plan: dict, hosts: int, injection: float, top_in: float) -> dict:
    """``fabric_summary`` of the built document, from the plan (hosts counted, not built)."""
    from designer.engine.model.fabric_summary import bisection_gbps, fabric_summary, top_role

    doc, per = plan["document"], plan["per_host"]
    fabric = fabric_summary(doc)  # switches per role; its links are only the storage servers'
    compute = {(n.get("attrs") or {}).get("role") for n in doc["nodes"]
               if n["kind"] == "switch" and not (n.get("attrs") or {}).get("storage")}
    top = top_role(compute)
    return {**fabric, "hosts": hosts * per["hosts"], "gpus": hosts * per["gpus"],
            "nodes": len(doc["nodes"]) + hosts * per["nodes"],
            "links": (len(doc["links"]) + sum(len(row[1]) for row in plan["fabric_links"]) + hosts * per["links"]
                      + sum(plan["host_ports"].values())),
            "injection_gbps": injection,
            "bisection_gbps": bisection_gbps(injection, top_in, top)}


def _tier(node: dict) -> str | None:
    attrs = node.get("attrs") or {}
    return attrs.get("tier") or _TIER_OF_ROLE.get(attrs.get("role"))


def _count_link(link, tech, nodes, parents, tallies, rows, sign: int = 1) -> None:
    """Count one network link (``sign`` 1) or take it out (-1): its switches' ports, their down
    and up capacity, its row (dropped when it counts no link)."""
    used, down, up = tallies
    a, b = nodes[link["a"]], nodes[link["b"]]
    ports = int(link.get("bundle") or 1) * sign
    capacity = (float(link["capacity_gbps"]) if link.get("capacity_gbps") is not None else tech.effective_gbps) * sign
    sw = [n for n in (a, b) if n["kind"] == "switch"]
    for n in sw:
        used[n["id"]] = used.get(n["id"], 0) + ports
    if len(sw) == 2:
        lo, hi = sorted(sw, key=lambda n: _TIER_RANK.get(_tier(n), 0))
        kind = f"{_tier(lo) or 'switch'}-{_tier(hi) or 'switch'}"
        reach = "optics"
        if _TIER_RANK.get(_tier(lo), 0) < _TIER_RANK.get(_tier(hi), 0):
            up[lo["id"]] = up.get(lo["id"], 0.0) + capacity
            down[hi["id"]] = down.get(hi["id"], 0.0) + capacity
    elif len(sw) == 1:
        other = b if sw[0] is a else a
        kind = f"{'storage' if other['kind'] == 'storage' else 'host'}-{_tier(sw[0]) or 'switch'}"
        reach = "in-rack copper" if _same_rack(other, sw[0], *parents) else "in-row"
        down[sw[0]["id"]] = down.get(sw[0]["id"], 0.0) + capacity
    else:
        return  # a host-to-host network cable (back to back): not a fabric link
    row = rows.setdefault((kind, tech.name, reach), {"kind": kind, "tech": tech.name, "reach": reach,
                                                     "links": 0, "ports": 0, "cables": 0, "transceivers": 0})
    row["links"] += sign
    row["ports"] += ports
    row["cables"] += ports
    row["transceivers"] += ports * REACH_CLASSES[reach][1]
    if row["links"] == 0:
        del rows[(kind, tech.name, reach)]


def _same_rack(endpoint: dict, switch: dict, parents: dict, racks: set) -> bool:
    """True when the switch's group is a rack that holds the endpoint, directly or through its host group."""
    rack, group, seen = switch.get("group"), endpoint.get("group"), set()
    if rack not in racks:
        return False
    while group is not None and group not in seen:
        if group == rack:
            return True
        seen.add(group)
        group = parents.get(group)
    return False


def _switch_rows(nodes: dict, used: dict) -> list[dict]:
    groups: dict[tuple, dict] = {}
    for node in nodes.values():
        if node["kind"] == "switch":
            _add_switch(groups, node, used.get(node["id"], 0), 1)
    return _finished_rows(groups)


def _row_key(node: dict) -> tuple:
    attrs = node.get("attrs") or {}
    # A storage fabric's switches are their own rows: a buyer orders (and a reviewer checks)
    # the compute spines apart from the storage network's (storage_fabric.py).
    network = "storage" if attrs.get("storage") else "compute"
    return (attrs.get("model") or "unspecified", _tier(node) or "unknown", attrs.get("radix"),
            attrs.get("port_gbps"), network)


def _add_switch(groups: dict, node: dict, ports: int, sign: int) -> None:
    """Count one switch (``sign`` 1) or take it out (-1) of its row, with the ports it uses."""
    key = _row_key(node)
    row = groups.setdefault(key, {"model": key[0], "tier": key[1], "network": key[4], "count": 0,
                                  "radix": key[2], "port_gbps": key[3], "ports_used": 0,
                                  "ports_free": None, "cages": None, "power_w": None})
    row["count"] += sign
    row["ports_used"] += sign * ports
    if row["count"] == 0:
        del groups[key]


def _finished_rows(groups: dict) -> list[dict]:
    """The rows with their free ports, cages and power, in the BOM's order."""
    for row in groups.values():
        row["ports_free"] = row["count"] * row["radix"] - row["ports_used"] if row["radix"] else None
        m = SWITCH_MODELS.get(row["model"])
        row["power_w"] = row["count"] * m.power_w if m is not None else None
        # breakout: several logical ports share one native cage
        row["cages"] = row["count"] * m.radix if m is not None and row["radix"] else None
    return sorted(groups.values(), key=_row_order)


def _row_order(row: dict) -> tuple:
    """A total order of switch rows (not the switches' order in the document), so that a row
    moved by :func:`bom_after_switch_update` lands where counting the whole document puts it."""
    return (row["network"] == "storage", _TIER_RANK.get(row["tier"], 9), str(row["tier"]), str(row["model"]),
            _sortable(row["radix"]), _sortable(row["port_gbps"]))


def _sortable(value) -> tuple:
    return (value is None, value if isinstance(value, (int, float)) else 0, str(value))


def bom_rows_ordered(bom: dict) -> bool:
    """Whether a stored BOM has today's fields and orders — switch rows, cable rows, the
    oversubscription's tiers, the reach classes of the totals (a BOM counted before each order
    was total may hold ties in another order: then it is counted again, once)."""
    rows = bom.get("switches") or []
    fields = ("model", "tier", "network", "radix", "port_gbps")
    if not (all(isinstance(r, dict) and all(f in r for f in fields) for r in rows) and rows == sorted(rows, key=_row_order)):
        return False
    cables = bom.get("links") or []
    tiers = list(bom.get("oversubscription") or {})
    reaches = [list(bom.get(k) or {}) for k in ("cables", "transceivers")]
    return (cables == sorted(cables, key=_link_order) and tiers == sorted(tiers, key=_tier_order)
            and all(r == [c for c in REACH_CLASSES if c in r] for r in reaches))


def switch_groups(bom: dict) -> dict:
    """A BOM's switch rows keyed as :func:`_add_switch` keys them (copies, to count into)."""
    return {(r["model"], r["tier"], r["radix"], r["port_gbps"], r["network"]): dict(r) for r in bom["switches"]}


def switch_ports_used(switch_id: str, links) -> int:
    """Logical ports a switch's fabric cables use (``links``: at least every link at it)."""
    ports = 0
    for link in links:
        tech = TECHS.get(link.get("tech"))
        if tech is not None and tech.family in _NETWORK:
            ports += int(link.get("bundle") or 1) * ((link["a"] == switch_id) + (link["b"] == switch_id))
    return ports


def bom_after_switch_update(bom: dict, old: dict, new: dict, ports: int) -> dict | None:
    """``bom`` (of a document) after one switch's model, radix or port speed changed; ``ports``:
    what :func:`switch_ports_used` counts for it. Only the switch rows, port totals and power
    depend on those three, so the rest of ``bom`` stays. None when anything else the BOM reads
    of it changed (its tier, role, storage mark or group: then count the whole document)."""
    before, after = _row_key(old), _row_key(new)
    unchanged = (old.get("kind") == new.get("kind") == "switch" and old.get("group") == new.get("group")
                 and (old.get("attrs") or {}).get("role") == (new.get("attrs") or {}).get("role")
                 and (before[1], before[4]) == (after[1], after[4]))   # tier, storage or compute
    if not unchanged or not bom_rows_ordered(bom):
        return None
    groups = switch_groups(bom)
    if before not in groups:
        return None   # (a BOM without the switch's row is not this document's)
    _add_switch(groups, old, ports, -1)
    _add_switch(groups, new, ports, 1)
    switches = _finished_rows(groups)
    return {**bom, "switches": switches, "ports": _port_totals(switches),
            "power": power(switches, bom["power"]["gpus"])}


def _port_totals(switches: list[dict]) -> dict:
    used = sum(r["ports_used"] for r in switches)
    total = sum(r["count"] * r["radix"] for r in switches if r["radix"])
    return {"used": used, "total": total or None, "free": (total - used) if total else None}


def _totals(rows: dict, key: str) -> dict:
    """Per reach class, in :data:`REACH_CLASSES` order (whatever order the rows were counted in)."""
    out = {}
    for reach in REACH_CLASSES:
        counts = [r[key] for r in rows.values() if r["reach"] == reach]
        if counts:
            out[reach] = sum(counts)
    return out


def capacities_integral(links, nodes=None) -> bool:
    """Whether every capacity the BOM sums of ``links`` is a whole number of Gb/s, so that the
    sums are exact in any order (``model.bom_edit`` adds and takes out one link at a time): a
    network cable's, and with ``nodes`` (id → node) any link's at a switch (the injection reads
    those whatever their tech); without ``nodes`` every link's."""
    fractional = {name for name, t in TECHS.items()
                  if not (float(t.effective_gbps).is_integer() and float(t.raw_gbps).is_integer())}
    network = {name for name, t in TECHS.items() if t.family in _NETWORK}
    try:
        for link in links:
            if nodes is not None and link.get("tech") not in network and "switch" not in (
                    nodes[link["a"]]["kind"], nodes[link["b"]]["kind"]):
                continue   # a link inside a host: no sum reads it
            capacity = link.get("capacity_gbps")
            if capacity is None:
                if link.get("tech") in fractional:
                    return False
            elif not float(capacity).is_integer():
                return False
    except (TypeError, ValueError):   # a capacity the count itself would refuse
        return False
    return True


def link_rows(rows: dict) -> list[dict]:
    """The cable rows in the BOM's order (a total order: kind, tech, reach)."""
    return sorted(rows.values(), key=_link_order)


def _link_order(row: dict) -> tuple:
    return row["kind"], row["tech"], row["reach"]


def _tier_order(tier: str) -> tuple:
    """Tiers by rank (leaf, spine, core), others after them by name: a total order."""
    return _TIER_RANK.get(tier, 9), tier


def switch_meta(nodes: dict) -> dict:
    """Per switch id: ``[tier, storage-marked, role]`` — what the oversubscription and the top
    tier read of it (``tier`` None when its attrs name none)."""
    return {sid: [_tier(n), bool((n.get("attrs") or {}).get("storage")), (n.get("attrs") or {}).get("role")]
            for sid, n in nodes.items() if n["kind"] == "switch"}


def oversubscription(meta: dict, down: dict, up: dict) -> dict:
    """Worst (largest) down/up capacity ratio per tier over compute switches that have uplinks
    (``meta``: :func:`switch_meta`); tiers in rank order, then by name."""
    worst: dict[str, float] = {}
    for sid, up_gbps in up.items():
        tier, storage, _ = meta[sid]
        if storage or up_gbps <= 0:
            continue
        tier = tier or "unknown"
        worst[tier] = max(worst.get(tier, 0.0), down.get(sid, 0.0) / up_gbps)
    return {tier: round(worst[tier], 6) for tier in sorted(worst, key=_tier_order)}


def power(switches: list[dict], gpus: int) -> dict:
    known = sum(r["power_w"] for r in switches if r["power_w"] is not None)
    unknown = sorted({r["model"] for r in switches if r["power_w"] is None})
    return {"switch_w": known, "per_gpu_w": known / gpus if gpus else None, "gpus": gpus,
            "unknown_models": unknown,
            "source": "catalog.SWITCH_MODELS power_w (typical, without optics)"}


# --- Two designs side by side (the compare page) -----------------------------------------------

# Which way is better for a figure (None: neither, e.g. a count of one switch model).
_LOWER, _HIGHER = "lower", "higher"


def compare_boms(a: dict | None, b: dict | None) -> list[dict]:
    """Rows comparing two bills of materials (:func:`fabric_bom`), A then B.

    Parameters
    ----------
    a, b : dict or None
        ``fabricscope.bom/1`` results; None (a design without switches) counts as empty.

    Returns
    -------
    list of dict
        ``{section, label, unit, a, b, delta, differs, better}`` per figure, in this order:
        switches by tier and model (count, ports used, ports free), cables and transceivers by
        reach class, oversubscription per tier (``x:1``), bisection (Tb/s), total switch power
        (kW) and switch power per GPU (W). ``a``/``b`` are None where a design lacks the item;
        ``better`` is ``"A"``, ``"B"`` or None (equal, or no better direction: a count of one
        switch model is neither).
    """
    a, b = a or {}, b or {}
    rows = _switch_compare(a, b)
    for key, title in (("cables", "Cables"), ("transceivers", "Transceivers")):
        for reach in _union(a.get(key), b.get(key)):
            rows.append(_row(title, reach, "", (a.get(key) or {}).get(reach),
                             (b.get(key) or {}).get(reach), _LOWER))
    for tier in sorted(_union(a.get("oversubscription"), b.get("oversubscription")),
                       key=lambda t: _TIER_RANK.get(t, 9)):
        rows.append(_row("Oversubscription", f"{tier} tier", ":1", (a.get("oversubscription") or {}).get(tier),
                         (b.get("oversubscription") or {}).get(tier), _LOWER))
    rows.append(_row("Fabric", "bisection bandwidth", "Tb/s", _scaled(a.get("bisection_gbps"), 1e-3),
                     _scaled(b.get("bisection_gbps"), 1e-3), _HIGHER))
    pa, pb = a.get("power") or {}, b.get("power") or {}
    rows.append(_row("Fabric", "switch power", "kW", _scaled(pa.get("switch_w"), 1e-3),
                     _scaled(pb.get("switch_w"), 1e-3), _LOWER))
    rows.append(_row("Fabric", "switch power per GPU", "W", pa.get("per_gpu_w"), pb.get("per_gpu_w"),
                     _LOWER))
    rows.append(_row("Fabric", "GPUs", "", pa.get("gpus"), pb.get("gpus"), None))
    return rows


def _switch_compare(a: dict, b: dict) -> list[dict]:
    ia, ib = _by_tier_model(a), _by_tier_model(b)
    keys = sorted(set(ia) | set(ib), key=lambda k: (k[2] == "storage", _TIER_RANK.get(k[0], 9), k[1]))
    rows = []
    for key in keys:
        ra, rb = ia.get(key) or {}, ib.get(key) or {}
        tier, model, network = key
        label = f"{tier} · {model}" + (" · storage" if network == "storage" else "")
        for field, what, better in (("count", "switches", None), ("ports_used", "ports used", None),
                                    ("ports_free", "ports free", None)):
            rows.append(_row("Switches", f"{label} · {what}", "", ra.get(field), rb.get(field), better))
    return rows


def _by_tier_model(bom: dict) -> dict:
    return {(r["tier"], r["model"], r.get("network", "compute")): r for r in bom.get("switches") or []}


def _scaled(value, factor: float):
    return None if value is None else value * factor


def _union(x: dict | None, y: dict | None) -> list:
    return list(dict.fromkeys([*(x or {}), *(y or {})]))


def _row(section: str, label: str, unit: str, a, b, better_when: str | None) -> dict:
    both = a is not None and b is not None
    differs = (a is None) != (b is None) or (both and abs(a - b) > 1e-9 * max(1.0, abs(a), abs(b)))
    better = None
    if both and differs and better_when:
        b_wins = b < a if better_when == _LOWER else b > a
        better = "B" if b_wins else "A"
    return {"section": section, "label": label, "unit": unit, "a": a, "b": b,
            "delta": (b - a) if both else None, "differs": bool(differs), "better": better}
