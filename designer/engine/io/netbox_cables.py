"""NetBox bulk import of a physical plan's cable schedule: devices, interfaces and cables as CSV,
and the reader that reads those cables back (the round trip).

NetBox's bulk import (Devices, Interfaces, Cables → Import) takes CSV whose header names the
form fields. The columns written here are the fields of NetBox's import forms
(``netbox/dcim/forms/bulk_import.py`` in netbox-community/netbox: ``DeviceImportForm``,
``InterfaceImportForm``, ``CableImportForm``):

- ``devices.csv``: ``name, role, manufacturer, device_type, site, rack, position, face, status``
  (device type = the catalog model or host template; role = the tier; position = lowest U);
- ``interfaces.csv``: ``device, name, type, speed`` (``type`` a NetBox interface type such as
  ``400gbase-x-osfp``; ``speed`` in Kbps, as NetBox stores it);
- ``cables.csv``: ``side_a_device, side_a_type, side_a_name, side_b_device, side_b_type,
  side_b_name, type, status, label, length, length_unit`` (``side_*_type`` ``dcim.interface``;
  ``type`` a NetBox cable type: ``dac-passive``, ``dac-active``, ``aoc``, ``mmf-om4``,
  ``smf-os2``).

The site (``site``) is a parameter; NetBox must already hold the site, the racks, the device
roles and device types named here (import the device types from devicetype-library first:
:mod:`.netbox_devicetype`).
"""
from __future__ import annotations

import csv
import io

from designer.engine.catalog_physical import MEDIA
from designer.engine.errors import ImportFormatError, Problem
from designer.engine.io.bounded_text import check_text_size

__all__ = ["DEVICE_COLUMNS", "INTERFACE_COLUMNS", "CABLE_COLUMNS", "netbox_csv", "read_netbox_cables",
           "MAX_CSV_CHARS"]

DEVICE_COLUMNS = ("name", "role", "manufacturer", "device_type", "site", "rack", "position", "face", "status")
INTERFACE_COLUMNS = ("device", "name", "type", "speed")
CABLE_COLUMNS = ("side_a_device", "side_a_type", "side_a_name", "side_b_device", "side_b_type", "side_b_name",
                 "type", "status", "label", "length", "length_unit")
#: Largest cables CSV read back (a 100,000-cable hall is ~10 MB).
MAX_CSV_CHARS = 32 * 1024 * 1024
_IFACE_TYPE = {100.0: "100gbase-x-qsfp28", 200.0: "200gbase-x-qsfp56", 400.0: "400gbase-x-osfp",
               800.0: "800gbase-x-osfp"}


def _csv(columns: tuple, rows: list[dict]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow(row)
    return out.getvalue()


def netbox_csv(plan: dict, *, site: str = "fabricscope", manufacturer: str = "Generic") -> dict[str, str]:
    """The three NetBox bulk-import CSV files of a ``fabricscope.plan/1`` result.

    Parameters
    ----------
    plan : dict
        :func:`designer.engine.model.physical_plan.plan`.
    site, manufacturer : str
        NetBox site of every device; manufacturer of the device types.

    Returns
    -------
    dict
        ``{"devices.csv": text, "interfaces.csv": text, "cables.csv": text}``.
    """
    devices, placed = [], {}
    for rack in plan["racks"]:
        for d in rack["devices"]:
            placed[d["id"]] = rack["id"]
            devices.append({"name": d["id"], "role": d["tier"], "manufacturer": manufacturer, "device_type": d["name"],
                            "site": site, "rack": rack["id"], "position": d["position"], "face": "front",
                            "status": "planned"})
    interfaces, cables, seen = [], [], set()
    for c in plan["cables"]:
        for side in ("a", "b"):
            key = (c[f"{side}_device"], c[f"{side}_port"])
            if key not in seen:
                seen.add(key)
                if key[0] not in placed:  # a NIC's device inside a racked system (a GB200 tray)
                    placed[key[0]] = c[f"{side}_rack"]
                    devices.append({"name": key[0], "role": "servers", "manufacturer": manufacturer,
                                    "device_type": "tray", "site": site, "rack": c[f"{side}_rack"], "position": "",
                                    "face": "", "status": "planned"})
                interfaces.append({"device": key[0], "name": key[1], "type": _IFACE_TYPE.get(c["rate_gbps"], "other"),
                                   "speed": int(c["rate_gbps"] * 1_000_000)})
        medium = MEDIA.get((c["medium"], 400.0)) if c["medium"] else None
        cables.append({"side_a_device": c["a_device"], "side_a_type": "dcim.interface", "side_a_name": c["a_port"],
                       "side_b_device": c["b_device"], "side_b_type": "dcim.interface", "side_b_name": c["b_port"],
                       "type": medium.netbox_type if medium else "", "status": "planned", "label": c["label"],
                       "length": f"{c['length_m']:g}", "length_unit": "m"})
    return {"devices.csv": _csv(DEVICE_COLUMNS, devices), "interfaces.csv": _csv(INTERFACE_COLUMNS, interfaces),
            "cables.csv": _csv(CABLE_COLUMNS, cables)}


def read_netbox_cables(text: str) -> list[dict]:
    """Cables of a NetBox cables CSV (:data:`CABLE_COLUMNS`; a NetBox cable export with these
    columns reads the same).

    Returns
    -------
    list of dict
        ``{a_device, a_port, b_device, b_port, type, label, length_m}`` per data line.

    Raises
    ------
    ImportFormatError
        Too large, a required column missing, an empty end, a non-interface end or a bad
        length — each located (``line 4: side_b_name: empty``).
    """
    check_text_size(text, "NetBox cables CSV", max_chars=MAX_CSV_CHARS)
    reader = csv.DictReader(io.StringIO(text))
    required = ("side_a_device", "side_a_name", "side_b_device", "side_b_name")
    missing = [c for c in required if c not in (reader.fieldnames or ())]
    if missing:
        raise ImportFormatError("not a NetBox cables CSV", [Problem("line 1", f"missing column {c}") for c in missing])
    out, problems = [], []
    for number, row in enumerate(reader, start=2):
        cable = _cable(row, number, problems)
        if cable is not None:
            out.append(cable)
    if problems:
        raise ImportFormatError("bad NetBox cables CSV", problems[:50])
    return out


def _cable(row: dict, number: int, problems: list) -> dict | None:
    bad = False
    for key in ("side_a_device", "side_a_name", "side_b_device", "side_b_name"):
        if not (row.get(key) or "").strip():
            problems.append(Problem(f"line {number}", f"{key}: empty"))
            bad = True
    for key in ("side_a_type", "side_b_type"):
        if (row.get(key) or "dcim.interface").strip() != "dcim.interface":
            problems.append(Problem(f"line {number}", f"{key}: {row[key]!r} is not dcim.interface"))
            bad = True
    length = None
    if (row.get("length") or "").strip():
        try:
            length = float(row["length"])
        except ValueError:
            length = -1.0
        if not 0 < length < 1e6:
            problems.append(Problem(f"line {number}", f"length: {row['length']!r} is not a positive number"))
            bad = True
    if bad:
        return None
    return {"a_device": row["side_a_device"].strip(), "a_port": row["side_a_name"].strip(),
            "b_device": row["side_b_device"].strip(), "b_port": row["side_b_name"].strip(),
            "type": (row.get("type") or "").strip(), "label": (row.get("label") or "").strip(), "length_m": length}
