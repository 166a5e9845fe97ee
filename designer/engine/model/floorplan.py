"""Floor plan: the devices of a design placed into racks and rows, and the cable length between two.

Rules (docs/ENGINE.md, "Physical plan"):

- **Devices.** A server is a top-level host group (kind ``host``) or a rack-scale system (kind
  ``nvlink_domain``, GB200 NVL72: its trays are racked together); a switch or a storage server is
  its node. Units, watts and price come from :mod:`designer.engine.catalog_physical` with the
  plan request's overrides.
- **Power while packing.** A device counts its watts plus a reserve for the optics of its
  ports (each port at the largest end an allowed medium has at its rate), so a rack of 64-port
  spines is not filled to the budget by switch watts alone; the check after cabling uses the
  real ends.
- **Compute racks.** Servers are packed in locality order — pod, then the first leaf they reach
  (the hosts of one leaf group stay together), then document order — into racks, a new rack
  when the next server would exceed the rack's units or power budget, or opens another pod. A
  server as large as a rack (an NVL72) gets a rack of its own. A document rack group that holds
  a switch (a leaf-spine ToR) is kept whole with its switch, never split: its hosts reach the
  ToR by in-rack copper.
- **Rows.** Compute racks fill rows of ``row.racks``; when the fabric has leaves outside the
  compute racks (rail-optimized), one slot per row is left for a network rack, at the end of
  the row or in its middle (``row.network``), holding the leaves whose hosts are mostly in
  that row (more network racks when they do not fit: the row is then longer than asked, and
  the plan notes it). Spines, cores, storage leaves and storage servers go to spine rows after
  the compute rows.
- **Length.** Same rack: ``spacing_m.same_rack``; otherwise ``|Δslot| × rack_width + |Δrow| ×
  row_pitch + slack``, rounded up to the next half metre (cables are sold in 0.5 m steps).
"""
from __future__ import annotations

import math

from designer.engine.catalog import SWITCH_MODELS, TECHS
from designer.engine.catalog_physical import (GENERIC_SERVER, MEDIA, NIC_PHYSICAL, SERVERS, STORAGE_SERVER,
                                              SWITCH_PHYSICAL, price_key)

__all__ = ["network_links", "devices", "place", "cable_length_m", "SERVER_KINDS"]

SERVER_KINDS = ("host", "nvlink_domain")
_NETWORK = ("ethernet", "infiniband")
_TIER_OF_ROLE = {"leaf": "leaf", "tor": "leaf", "edge": "leaf", "spine": "spine", "agg": "spine",
                 "core": "core", "superspine": "core"}


def network_links(doc: dict) -> list[dict]:
    """Links of an Ethernet or InfiniBand catalog tech with a switch at one end at least (the
    links :func:`designer.engine.model.bom.fabric_bom` counts as cables)."""
    kinds = {n["id"]: n["kind"] for n in doc["nodes"]}
    out = []
    for link in doc["links"]:
        tech = TECHS.get(link.get("tech"))
        if tech is not None and tech.family in _NETWORK and "switch" in (kinds[link["a"]], kinds[link["b"]]):
            out.append(link)
    return out


def _server_units(doc: dict) -> tuple[dict, dict]:
    """Top-level server groups ``{id: group}`` and ``unit_of``: node id -> its server group id."""
    groups = {g["id"]: g for g in doc.get("groups") or ()}
    servers = {gid: g for gid, g in groups.items() if g.get("kind") in SERVER_KINDS
               and groups.get(g.get("parent"), {}).get("kind") not in SERVER_KINDS}
    unit_of, memo = {}, {}
    for node in doc["nodes"]:
        gid, chain = node.get("group"), []
        while gid is not None and gid not in servers and gid not in memo:
            chain.append(gid)
            gid = groups.get(gid, {}).get("parent")
        top = memo.get(gid, gid) if gid is not None else None
        for c in chain:
            memo[c] = top
        if top is not None:
            unit_of[node["id"]] = top
    return servers, unit_of


def _tier(node: dict) -> str:
    attrs = node.get("attrs") or {}
    if attrs.get("storage"):
        return "storage-leaf"
    return attrs.get("tier") or _TIER_OF_ROLE.get(attrs.get("role"), "switch")


def _server_device(gid: str, group: dict, nodes: list[dict], opts: dict) -> dict:
    template = group.get("template") or "unspecified"
    gpus = sum(1 for n in nodes if n["kind"] == "gpu")
    key, spec, notes = price_key("server", template), SERVERS.get(template), []
    if spec is not None:
        units, power, usd = spec.units, spec.power_w, spec.usd
    else:
        scale = max(1, gpus)
        units = GENERIC_SERVER["units_per_8_gpus"] * max(1, math.ceil(gpus / 8))
        power, usd = GENERIC_SERVER["power_w_per_gpu"] * scale, GENERIC_SERVER["usd_per_gpu"] * scale
        notes.append(f"template {template!r} has no catalog entry: generic per-GPU estimate")
    if spec is None or not spec.nics_included:
        for n in nodes:
            nic = NIC_PHYSICAL.get((n.get("attrs") or {}).get("model")) if n["kind"] == "nic" else None
            if nic is not None:
                power, usd = power + nic["power_w"], usd + nic["usd"]
    return {"id": gid, "kind": "server", "key": key, "name": template, "tier": "servers", "gpus": gpus,
            "units": opts["units"].get(key, units), "power_w": opts["power"].get(key, power),
            "usd": opts["prices"].get(key, usd), "estimate": key not in opts["prices"], "notes": notes}


def _switch_device(node: dict, opts: dict) -> dict:
    attrs = node.get("attrs") or {}
    model = attrs.get("model") or "unspecified"
    key, phys, m = price_key("switch", model), SWITCH_PHYSICAL.get(model), SWITCH_MODELS.get(model)
    notes = [] if phys and m else [f"switch model {model!r} has no catalog price/power"]
    return {"id": node["id"], "kind": "switch", "key": key, "name": model, "tier": _tier(node), "gpus": 0,
            "units": opts["units"].get(key, phys.units if phys else 1),
            "power_w": opts["power"].get(key, m.power_w if m else None),
            "usd": opts["prices"].get(key, phys.usd if phys else None),
            "estimate": key not in opts["prices"], "notes": notes}


def devices(doc: dict, opts: dict) -> tuple[dict, dict]:
    """Every racked device of ``doc`` and ``unit_of`` (node id -> device id).

    Returns
    -------
    devices : dict
        ``{id: {id, kind (server|switch|storage), key, name, tier, gpus, units, power_w (W), usd
        (US$; None when unknown), estimate, notes}}`` in document order.
    unit_of : dict
        Node id -> the id of the device it is part of (a NIC -> its server; a switch -> itself).
    """
    servers, unit_of = _server_units(doc)
    members: dict[str, list[dict]] = {gid: [] for gid in servers}
    for node in doc["nodes"]:
        if node["id"] in unit_of:
            members[unit_of[node["id"]]].append(node)
    out = {gid: _server_device(gid, g, members[gid], opts) for gid, g in servers.items()}
    key = price_key("storage", "")
    for node in doc["nodes"]:
        if node["kind"] == "switch":
            out[node["id"]] = _switch_device(node, opts)
            unit_of[node["id"]] = node["id"]
        elif node["kind"] == "storage" and node["id"] not in unit_of:
            s = STORAGE_SERVER
            out[node["id"]] = {"id": node["id"], "kind": "storage", "key": key, "name": "storage", "tier": "storage",
                               "gpus": 0, "units": opts["units"].get(key, s.units),
                               "power_w": opts["power"].get(key, s.power_w), "usd": opts["prices"].get(key, s.usd),
                               "estimate": key not in opts["prices"], "notes": []}
            unit_of[node["id"]] = node["id"]
    _loose_endpoints(doc, out, unit_of)
    return out, unit_of


def _loose_endpoints(doc: dict, out: dict, unit_of: dict) -> None:
    """A cabled node outside any server group (a hand-drawn NIC): a 1U device of its own, with
    no price or power (the plan flags it) rather than a cable to nowhere."""
    for link in network_links(doc):
        for nid in (link["a"], link["b"]):
            if nid not in unit_of:
                unit_of[nid] = nid
                out[nid] = {"id": nid, "kind": "server", "key": "", "name": "ungrouped", "tier": "servers",
                            "gpus": 0, "units": 1, "power_w": None, "usd": None, "estimate": True,
                            "notes": [f"{nid} is in no host group: racked as a 1 U device of its own"]}


# --- placement --------------------------------------------------------------------------------

class _Rack:
    """A rack being filled: devices bottom-up, units and watts used."""

    def __init__(self, role: str, opts: dict):
        self.role, self.devices, self.units, self.power_w, self.packed_w = role, [], 0, 0.0, 0.0
        self.cap_u, self.cap_w = opts["rack"]["units"], opts["rack"]["power_kw"] * 1000.0

    def fits(self, dev: dict) -> bool:
        return (self.units + dev["units"] <= self.cap_u
                and self.packed_w + (dev["power_w"] or 0.0) + dev.get("reserve_w", 0.0) <= self.cap_w)

    def add(self, dev: dict) -> None:
        self.devices.append(dev)
        self.units += dev["units"]
        self.power_w += dev["power_w"] or 0.0
        self.packed_w += (dev["power_w"] or 0.0) + dev.get("reserve_w", 0.0)


def _pack(devs: list[dict], role: str, opts: dict, breaks=None) -> list[_Rack]:
    """Pack ``devs`` in order into racks; a new rack when one does not fit or ``breaks(prev, dev)``."""
    racks: list[_Rack] = []
    prev = None
    for dev in devs:
        if not racks or not racks[-1].fits(dev) or (breaks and prev is not None and breaks(prev, dev)):
            racks.append(_Rack(role, opts))
        racks[-1].add(dev)
        prev = dev
    return racks


def _links_by_device(doc: dict, devs: dict, unit_of: dict, opts: dict) -> dict:
    """Device id -> the set of device ids it has a network cable to. Sets each device's
    ``reserve_w``: the optics its ports will draw, at the most a port of its rate can (the
    largest end of an allowed medium), so packing leaves room for them before lengths are known."""
    peers: dict[str, set] = {}
    for link in network_links(doc):
        a, b = unit_of.get(link["a"], link["a"]), unit_of.get(link["b"], link["b"])
        peers.setdefault(a, set()).add(b)
        peers.setdefault(b, set()).add(a)
        rate, ports = TECHS[link["tech"]].raw_gbps, int(link.get("bundle") or 1)
        end_w = max((m.end_w for (kind, r), m in MEDIA.items() if kind in opts["media"] and r == rate), default=0.0)
        for dev in (a, b):
            devs[dev]["reserve_w"] = devs[dev].get("reserve_w", 0.0) + ports * end_w
    return peers


def _ancestor(groups: dict, gid, kind: str):
    """The nearest group of ``kind`` at or above ``gid`` (None when there is none)."""
    seen = set()
    while gid is not None and gid not in seen:
        seen.add(gid)
        if groups.get(gid, {}).get("kind") == kind:
            return gid
        gid = groups.get(gid, {}).get("parent")
    return None


def _locality(doc: dict, devs: dict, peers: dict, groups: dict) -> dict:
    """Server id -> its packing key: (pod, its ToR rack group when the fabric has ToRs, first
    leaf it reaches, document order)."""
    order = {d: i for i, d in enumerate(devs)}
    tors = any(_ancestor(groups, n.get("group"), "rack") for n in doc["nodes"] if n["kind"] == "switch")
    key = {}
    for d in devs.values():
        if d["kind"] != "server":
            continue
        parent = groups.get(d["id"], {}).get("parent")
        leaf = min((order[p] for p in peers.get(d["id"], ()) if devs[p]["kind"] == "switch"), default=-1)
        key[d["id"]] = (_ancestor(groups, parent, "pod") or "", _ancestor(groups, parent, "rack") if tors else "",
                        leaf, order[d["id"]])
    return key


def _compute_racks(doc: dict, devs: dict, peers: dict, opts: dict) -> list[_Rack]:
    """Servers (and ToR switches kept with their rack group) into compute racks, in locality order."""
    groups = {g["id"]: g for g in doc.get("groups") or ()}
    key = _locality(doc, devs, peers, groups)
    servers = sorted((d for d in devs.values() if d["kind"] == "server"), key=lambda d: key[d["id"]])
    whole = [d for d in servers if d["units"] >= opts["rack"]["units"]
             or groups.get(d["id"], {}).get("kind") == "nvlink_domain"]
    alone = {d["id"] for d in whole}
    rest = [d for d in servers if d["id"] not in alone]
    racks = _pack(rest, "compute", opts, breaks=lambda p, d: key[p["id"]][:2] != key[d["id"]][:2])
    for d in whole:  # a rack-scale system is its own rack: its units, the hall's power budget
        rack = _Rack("compute", opts)
        rack.cap_u = max(rack.cap_u, d["units"])
        rack.add(d)
        racks.append(rack)
    racks.sort(key=lambda r: min(key[d["id"]] for d in r.devices))
    _add_tors(doc, racks, devs, groups)
    return racks


def _add_tors(doc, racks, devs, groups) -> None:
    """Put each ToR switch (a switch in a rack group) into the compute rack of its rack group's hosts."""
    rack_of_group = {}
    for i, rack in enumerate(racks):
        for d in rack.devices:
            rack_of_group.setdefault(_ancestor(groups, groups.get(d["id"], {}).get("parent"), "rack"), i)
    for node in doc["nodes"]:
        rack = _ancestor(groups, node.get("group"), "rack") if node["kind"] == "switch" else None
        if rack is not None and rack in rack_of_group:
            racks[rack_of_group[rack]].add(devs[node["id"]])


def place(doc: dict, devs: dict, unit_of: dict, opts: dict) -> tuple[list[dict], dict, list[str]]:
    """Racks and rows of the design (see the module's rules).

    Returns
    -------
    racks : list of dict
        ``{id, row, slot, role (compute|network|spine), units, units_used, power_kw_budget,
        device_w (W, devices without optics), devices: [{id, kind, tier, name, units, position
        (lowest U, 1-based), power_w}]}``.
    where : dict
        Device id -> rack id.
    notes : list of str
        Decisions a user did not ask for (a row longer than ``row.racks``).
    """
    peers = _links_by_device(doc, devs, unit_of, opts)
    compute = _compute_racks(doc, devs, peers, opts)
    placed = {d["id"] for r in compute for d in r.devices}
    leaves = [d for d in devs.values() if d["kind"] == "switch" and d["tier"] == "leaf" and d["id"] not in placed]
    per_row = opts["row"]["racks"] - (1 if leaves and opts["row"]["racks"] > 1 else 0)
    rows = [compute[i:i + per_row] for i in range(0, len(compute), per_row)] or [[]]
    row_of = {d["id"]: r for r, racks in enumerate(rows) for rack in racks for d in rack.devices}
    net_rows = _network_racks(leaves, rows, row_of, peers, opts)
    left = {d["id"] for d in leaves} | placed
    spine = _pack([d for d in devs.values() if d["id"] not in left], "spine", opts)
    layout, notes = _lay_rows(rows, net_rows, opts)
    layout += [spine[i:i + opts["row"]["racks"]] for i in range(0, len(spine), opts["row"]["racks"])]
    return _records(layout, opts) + (notes,)


def _lay_rows(rows: list[list[_Rack]], net_rows: dict, opts: dict) -> tuple[list, list[str]]:
    """Each compute row with its network racks at the end or in the middle; a note per long row."""
    layout, notes = [], []
    for r, racks in enumerate(rows):
        net = net_rows.get(r, [])
        at = len(racks) // 2 if opts["row"]["network"] == "middle" else len(racks)
        layout.append(racks[:at] + net + racks[at:])
        if len(layout[-1]) > opts["row"]["racks"]:
            notes.append(f"row {r + 1}: {len(layout[-1])} racks, more than row.racks = {opts['row']['racks']} "
                         f"(its leaves need {len(net)} network racks)")
    return layout, notes


def _network_racks(leaves, rows, row_of, peers, opts) -> dict[int, list[_Rack]]:
    """Leaves into network racks of the row holding most of their servers."""
    by_row: dict[int, list] = {}
    for leaf in leaves:
        counts: dict[int, int] = {}
        for p in peers.get(leaf["id"], ()):
            if p in row_of:
                counts[row_of[p]] = counts.get(row_of[p], 0) + 1
        row = max(counts, key=lambda r: (counts[r], -r)) if counts else 0
        by_row.setdefault(row, []).append(leaf)
    return {r: _pack(devs, "network", opts) for r, devs in by_row.items()}


def _records(layout: list[list[_Rack]], opts: dict) -> tuple[list[dict], dict]:
    records, where = [], {}
    for r, racks in enumerate(layout):
        for s, rack in enumerate(racks):
            rid = f"R{r + 1:02d}-{s + 1:02d}"
            u, devices = 1, []
            for d in rack.devices:
                devices.append({"id": d["id"], "kind": d["kind"], "tier": d["tier"], "name": d["name"],
                                "units": d["units"], "position": u, "power_w": d["power_w"]})
                u += d["units"]
                where[d["id"]] = rid
            records.append({"id": rid, "row": r, "slot": s, "role": rack.role, "units": rack.cap_u,
                            "units_used": rack.units, "power_kw_budget": rack.cap_w / 1000.0,
                            "device_w": rack.power_w, "devices": devices})
    return records, where


def cable_length_m(rack_a: dict, rack_b: dict, spacing: dict) -> float:
    """Length of a run between two racks (``{row, slot}``), m: the module's rule."""
    if rack_a["id"] == rack_b["id"]:
        return float(spacing["same_rack"])
    run = (abs(rack_a["slot"] - rack_b["slot"]) * spacing["rack_width"]
           + abs(rack_a["row"] - rack_b["row"]) * spacing["row_pitch"] + spacing["slack"])
    return math.ceil(run * 2.0 - 1e-9) / 2.0

