"""Cable schedule: one row per cable of a placed design — its ports, length, medium and breakout leg.

Rows are the cables :func:`designer.engine.model.bom.fabric_bom` counts (one per port of every
network link with a switch at one end at least; a ``bundle`` of n ports is n rows), so the
schedule's count equals the BOM's.

Ports
-----
- A switch's logical ports are numbered in link order. When its model's native port is faster
  than the port it runs (a 64 × 800G switch in 128 × 400G mode), two logical ports share a
  twin-port cage: ``p3/1`` and ``p3/2`` are the two legs of cage 3, and the row says which leg
  (``1/2``) — one 800G cage broken out to two 400G NICs. Otherwise ports are ``p1``, ``p2`` ….
- A NIC is one port: the device is its host group (``h0``; a GB200 tray ``h0/tray3``) and the
  port its local id (``nic0``). A storage server's ports are ``p1``, ``p2`` ….
- A port used twice, or a switch port beyond the switch's radix, is a flag, never a silent row.

Medium
------
The cheapest allowed medium (``media`` of the plan request) whose reach holds the run and that
exists at the rates of both ends (:mod:`designer.engine.catalog_physical`: a breakout leg pays
its share of the cage's end). A run no allowed medium reaches gets ``medium: null`` and a flag.
"""
from __future__ import annotations

from designer.engine.catalog import SWITCH_MODELS, TECHS
from designer.engine.catalog_physical import MEDIA, price_key
from designer.engine.model.floorplan import cable_length_m, network_links

__all__ = ["cable_schedule", "SCHEDULE_COLUMNS"]

SCHEDULE_COLUMNS = ("label", "a_device", "a_port", "a_rack", "b_device", "b_port", "b_rack", "kind", "rate_gbps",
                    "medium", "length_m", "breakout", "usd", "watts")
_RANK = {"storage": 0, "servers": 0, "leaf": 1, "storage-leaf": 1, "spine": 2, "core": 3}


class _Ports:
    """Port names handed out per device; a port asked for twice or beyond the radix is flagged."""

    def __init__(self):
        self.next: dict[str, int] = {}
        self.seen: set[tuple[str, str]] = set()
        self.flags: list[dict] = []

    def switch(self, node: dict, rate: float) -> tuple[str, str, str, float, int]:
        attrs = node.get("attrs") or {}
        p = self.next.get(node["id"], 0)
        self.next[node["id"]] = p + 1
        mode = float(attrs.get("port_gbps") or rate)  # a hand-drawn switch: the link's rate
        model = SWITCH_MODELS.get(attrs.get("model"))
        ratio = int(model.port_gbps // mode) if model and mode and model.port_gbps > mode else 1
        radix = attrs.get("radix")
        if radix and p >= radix:
            self.flags.append({"path": f"nodes[{node['id']}]",
                               "message": f"port {p + 1} asked for, beyond the switch's {radix} ports"})
        if ratio > 1:
            return node["id"], f"p{p // ratio + 1}/{p % ratio + 1}", f"{p % ratio + 1}/{ratio}", model.port_gbps, ratio
        return node["id"], f"p{p + 1}", "", mode, 1

    def endpoint(self, node: dict, device: str, rate: float) -> tuple[str, str, str, float, int]:
        if node["kind"] == "nic":
            gid = node.get("group") or ""
            port = node["id"][len(gid) + 1:] if gid and node["id"].startswith(gid + "/") else node["id"]
            if (gid or device, port) in self.seen:
                self.flags.append({"path": f"nodes[{node['id']}]", "message": "NIC port cabled more than once"})
            self.seen.add((gid or device, port))
            return gid or device, port, "", float((node.get("attrs") or {}).get("port_gbps") or rate), 1
        p = self.next.get(node["id"], 0)
        self.next[node["id"]] = p + 1
        return device, f"p{p + 1}", "", rate, 1


def _choose(ends, length: float, opts: dict):
    """(kind, usd, watts) of the cheapest allowed medium for a run of ``length`` m, or None."""
    best = None
    for kind in opts["media"]:
        pieces = [MEDIA.get((kind, float(rate))) for _, rate, _ in ends]
        if None in pieces or min(m.reach_m for m in pieces) < length:
            continue
        usd = watts = 0.0
        for m, (_, rate, share) in zip(pieces, ends):
            key = price_key("medium", f"{kind}:{rate:g}")
            usd += opts["prices"].get(key, m.end_usd) / share
            watts += opts["power"].get(key, m.end_w) / share
        usd += max(m.usd_per_m for m in pieces) * length
        if best is None or usd < best[1]:
            best = (kind, usd, watts, [opts["power"].get(price_key("medium", f"{kind}:{r:g}"), m.end_w) / s
                                       for m, (_, r, s) in zip(pieces, ends)])
    return best


def _why_none(a: tuple, b: tuple, length: float, opts: dict) -> str:
    """Why no medium was chosen: no catalog medium at these rates, or none reaches this far."""
    run = f"{a[0]}:{a[1]} – {b[0]}:{b[1]}"
    if not any((k, float(a[2])) in MEDIA and (k, float(b[2])) in MEDIA for k in opts["media"]):
        return (f"{run}: no allowed medium at {a[2]:g}G/{b[2]:g}G in the catalog (catalog_physical lists "
                f"400G and 800G media)")
    return f"{run} is {length:g} m, longer than any allowed medium ({', '.join(opts['media'])}) reaches"


def _kind(tier_a: str, tier_b: str, kinds: tuple[str, str]) -> str:
    if "switch" not in kinds or kinds == ("switch", "switch"):
        lo, hi = sorted((tier_a, tier_b), key=lambda t: _RANK.get(t, 9))
        return f"{lo}-{hi}"
    host = "storage" if "storage" in kinds else "host"
    return f"{host}-{tier_b if kinds[0] != 'switch' else tier_a}"


def cable_schedule(doc: dict, devs: dict, unit_of: dict, racks: dict, where: dict, opts: dict):
    """One row per cable of ``doc`` (see the module's rules).

    Parameters
    ----------
    doc : dict
        A checked topology document.
    devs, unit_of : dict
        :func:`designer.engine.model.floorplan.devices`.
    racks : dict
        Rack id -> rack record (:func:`designer.engine.model.floorplan.place`).
    where : dict
        Device id -> rack id.
    opts : dict
        :func:`designer.engine.model.plan_request.plan_options`.

    Returns
    -------
    rows : list of dict
        :data:`SCHEDULE_COLUMNS` (``length_m`` m, ``usd`` US$ and ``watts`` W of the run with
        its share of each end, ``medium`` None when nothing reaches), plus ``end_w`` (watts of
        the A and B ends, for the racks' power) and ``link`` (the document link id).
    flags : list of dict
        ``{path, message}``: ports used twice or beyond a radix, runs no medium reaches.
    """
    nodes = {n["id"]: n for n in doc["nodes"]}
    ports, rows, flags = _Ports(), [], []
    for link in network_links(doc):
        tech = TECHS[link["tech"]]
        a, b = nodes[link["a"]], nodes[link["b"]]
        if a["kind"] == "switch" and b["kind"] != "switch":
            a, b = b, a  # the server end first
        for _ in range(int(link.get("bundle") or 1)):
            rows.append(_row(link, (a, b), tech, ports, (devs, unit_of, racks, where), opts, len(rows) + 1, flags))
    return rows, ports.flags + flags


def _row(link, ends_nodes, tech, ports, placed, opts, number: int, flags: list) -> dict:
    devs, unit_of, racks, where = placed
    ends = []
    for node in ends_nodes:
        device = unit_of.get(node["id"], node["id"])
        if node["kind"] == "switch":
            ends.append(ports.switch(node, tech.raw_gbps) + (device,))
        else:
            ends.append(ports.endpoint(node, device, tech.raw_gbps) + (device,))
    (a_dev, a_port, a_leg, a_rate, a_share, a_unit), (b_dev, b_port, b_leg, b_rate, b_share, b_unit) = ends
    ra, rb = racks[where[a_unit]], racks[where[b_unit]]
    length = cable_length_m(ra, rb, opts["spacing_m"])
    label = f"C{number:05d}"
    choice = _choose([(a_dev, a_rate, a_share), (b_dev, b_rate, b_share)], length, opts)
    if choice is None:
        flags.append({"path": f"cables[{label}]", "message": _why_none((a_dev, a_port, a_rate), (b_dev, b_port, b_rate),
                                                                       length, opts)})
    kind = _kind(devs[a_unit]["tier"], devs[b_unit]["tier"], (ends_nodes[0]["kind"], ends_nodes[1]["kind"]))
    return {"label": label, "a_device": a_dev, "a_port": a_port, "a_rack": ra["id"], "b_device": b_dev,
            "b_port": b_port, "b_rack": rb["id"], "kind": kind,
            "rate_gbps": min(a_rate / a_share, b_rate / b_share), "medium": choice[0] if choice else None,
            "length_m": length, "breakout": a_leg or b_leg, "usd": round(choice[1], 2) if choice else None,
            "watts": round(choice[2], 3) if choice else None, "end_w": choice[3] if choice else [0.0, 0.0],
            "a_unit": a_unit, "b_unit": b_unit, "link": link.get("id")}
