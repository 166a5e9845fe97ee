"""NetBox bulk-import CSV of the logical design: devices, interfaces and cables.

NetBox's bulk import (Devices / Interfaces / Cables → Import, or ``POST`` the same CSV; the
fields are those of NetBox's import forms, ``netbox/dcim/forms/bulk_import.py``:
``DeviceImportForm``, ``InterfaceImportForm``, ``CableImportForm``, NetBox 4.x) reads one CSV
per object type, the header row naming the fields:

- ``devices.csv``: ``name, role, manufacturer, device_type, site, rack, status`` (``role`` is
  NetBox 4's name of 3.x's ``device_role``);
- ``interfaces.csv``: ``device, name, type, speed, enabled`` (``speed`` in kb/s; ``type`` a
  NetBox interface type such as ``400gbase-x-osfp``, ``other`` when the rate has none);
- ``cables.csv``: ``side_a_device, side_a_type, side_a_name, side_b_device, side_b_type,
  side_b_name, status`` (both ends ``dcim.interface``).

Devices are the servers (host groups) and switches of the design with hostname-safe names;
interfaces and cables are those of :meth:`designer.engine.io.fabric_view.FabricView.cables`
(``swpN`` / ``ethN``, the same names the Air DOT export uses). NetBox must already hold the
site, the racks, the roles (``server``, ``leaf``, ``spine``, ``core``), the manufacturers and the
device types named (the design does not say who makes a device: ``manufacturer`` is the
design's ``attrs.manufacturer`` or ``Generic``). What is lost: the inside of servers, storage
nodes outside host groups, link latencies. The physical plan (cable lengths, positions in the
rack) is not in the logical design.
"""
from __future__ import annotations

import csv
import io

from designer.engine.io.fabric_view import FabricView, device_name, natural_key

__all__ = ["netbox_csv", "INTERFACE_TYPES", "ROLE_BY_TIER"]

#: NetBox interface type by port rate (Gb/s): NetBox's ``InterfaceTypeChoices`` values.
INTERFACE_TYPES = {100: "100gbase-x-qsfp28", 200: "200gbase-x-qsfp56", 400: "400gbase-x-osfp",
                   800: "800gbase-x-osfp"}
ROLE_BY_TIER = {0: "leaf", 1: "spine", 2: "core"}
DEVICE_FIELDS = ("name", "role", "manufacturer", "device_type", "site", "rack", "status")
INTERFACE_FIELDS = ("device", "name", "type", "speed", "enabled")
CABLE_FIELDS = ("side_a_device", "side_a_type", "side_a_name", "side_b_device", "side_b_type", "side_b_name",
                "status")


def _csv(fields: tuple, rows: list) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(fields)
    writer.writerows(rows)
    return out.getvalue()


def _cell(value) -> str:
    """A free-text cell: control characters dropped, and a leading ``= + - @`` quoted away so a
    spreadsheet opening the file does not read a formula."""
    text = "".join(ch for ch in str(value or "") if ch.isprintable())[:100]
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


def _rack_of(view: FabricView, group: str | None) -> str:
    groups = view.topo.groups
    seen = 0
    while group is not None and seen < 64:   # the depth is bounded by validation; belt and braces
        if groups.get(group, {}).get("kind") == "rack":
            return device_name(group)
        group, seen = groups.get(group, {}).get("parent"), seen + 1
    return ""


def _device_rows(view: FabricView, site: str) -> list:
    rows = []
    groups, topo = view.topo.groups, view.topo
    for host in view.servers:
        attrs = groups[host].get("attrs") or {}
        rows.append([device_name(host), "server", _cell(attrs.get("manufacturer") or "Generic"),
                     _cell(groups[host].get("template") or "server"), site, _rack_of(view, host), "planned"])
    for switch in view.switches:
        i = topo.node_index[switch]
        attrs = topo.node_attrs[i]
        rows.append([device_name(switch), ROLE_BY_TIER[view.tier[switch]],
                     _cell(attrs.get("manufacturer") or "Generic"), _cell(attrs.get("model") or "switch"), site,
                     _rack_of(view, topo.node_group[i]), "planned"])
    return rows


def netbox_csv(doc: dict, *, site: str | None = None) -> dict[str, str]:
    """The three CSV files NetBox's bulk import reads, by file name.

    Parameters
    ----------
    doc : dict
        Topology document.
    site : str, optional
        NetBox site of every device (default: the design's name, hostname-safe).

    Returns
    -------
    dict
        ``{"devices.csv": text, "interfaces.csv": text, "cables.csv": text}``.

    Raises
    ------
    InvalidTopology
        The document is invalid, a switch has no tier, or two ids map to one device name.
    """
    view = FabricView.of(doc)
    site = device_name(site or view.topo.name or "fabricscope")
    interfaces, cables = [], []
    for cable in view.cables():
        kind = INTERFACE_TYPES.get(round(cable.gbps), "other")
        speed_kbps = int(round(cable.gbps * 1e6))
        interfaces.append([cable.a_device, cable.a_port, kind, speed_kbps, "true"])
        interfaces.append([cable.b_device, cable.b_port, kind, speed_kbps, "true"])
        cables.append([cable.a_device, "dcim.interface", cable.a_port,
                       cable.b_device, "dcim.interface", cable.b_port, "planned"])
    return {"devices.csv": _csv(DEVICE_FIELDS, _device_rows(view, site)),
            "interfaces.csv": _csv(INTERFACE_FIELDS, sorted(interfaces, key=lambda r: (natural_key(r[0]),
                                                                                      natural_key(r[1])))),
            "cables.csv": _csv(CABLE_FIELDS, cables)}
