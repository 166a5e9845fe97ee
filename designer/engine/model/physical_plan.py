"""The physical plan of a design: racks, cable schedule, costed BOM and the checks a buyer needs.

:func:`plan` joins :mod:`.floorplan` (devices into racks and rows), :mod:`.cabling` (one row per
cable, its medium by reach) and the prices and watts of :mod:`designer.engine.catalog_physical`
(defaults, editable per design by the plan request, :mod:`.plan_request`). Rules in docs/ENGINE.md,
"Physical plan"; the result's fields in docs/FORMATS.md.

Power of a rack = its devices' watts (servers at their maximum, switches without optics) + the
watts of every cable end plugged into a device of the rack (a breakout leg: its share of the
cage's transceiver). A rack over its power budget or its units is flagged by name, as is a run
no allowed medium reaches, a device without a price and a port used twice: flags are listed in
the result (a plan of a design that does not fit is still useful), never dropped.
"""
from __future__ import annotations

from designer.engine.model.cabling import cable_schedule
from designer.engine.model.floorplan import SERVER_KINDS, devices, place
from designer.engine.model.placement_edits import apply_placements
from designer.engine.model.plan_request import plan_options

__all__ = ["PLAN_FORMAT", "plan"]

PLAN_FORMAT = "fabricscope.plan/1"
_TIER_ORDER = {"servers": 0, "storage": 1, "leaf": 2, "storage-leaf": 3, "spine": 4, "core": 5, "switch": 6}


def plan(topology, request: dict | None = None, *, saved_placements: dict | None = None) -> dict:
    """Floor plan, cable schedule and costed BOM of a topology document.

    Parameters
    ----------
    topology : dict, str or path
        A ``fabricscope.topology/1`` document.
    request : dict, optional
        The plan request (overrides; docs/FORMATS.md, "Physical plan"). Its ``placements``
        (devices moved by hand, :mod:`.placement_edits`) are checked strictly: one that does not
        fit raises.
    saved_placements : dict, optional
        Placements saved with the design, used when the request has none: each one that no
        longer fits (another revision, other rack options) stays automatic and is flagged.

    Returns
    -------
    dict
        ``format`` (``fabricscope.plan/1``); ``options`` (the checked request with defaults);
        ``racks`` (:func:`.floorplan.place` records, moved devices ``moved: True``, plus
        ``optics_w``, ``power_w``, ``power_kw``, ``over_power``, ``over_units``); ``cables`` (:func:`.cabling.cable_schedule` rows);
        ``bom`` ``{tiers: [{tier, item, count, usd, watts}], media: [{kind, medium, count,
        usd, watts}], total_usd, total_w, gpus, usd_per_gpu, w_per_gpu}``; ``flags``
        (``{path, message}``); ``notes``; ``placements`` (the edits applied, positions filled in).

    Raises
    ------
    InvalidTopology
        The document does not load or is not valid.
    InvalidScenario
        A bad plan request (every problem located, ``prices.switch:eth-51t2: must be …``,
        ``placements.h6.rack: rack R01-01 is full …``).
    """
    from designer.engine.document import check, load

    doc = load(topology)
    check(doc)
    templates = {g.get("template") for g in doc.get("groups") or () if g.get("kind") in SERVER_KINDS} - {None}
    opts = plan_options(request, templates=set(templates))
    devs, unit_of = devices(doc, opts)
    racks, where, notes = place(doc, devs, unit_of, opts)
    strict = (request or {}).get("placements") is not None
    edits = (request or {})["placements"] if strict else saved_placements
    applied, stale = apply_placements(racks, where, devs, edits, strict=strict)
    by_id = {r["id"]: r for r in racks}
    cables, flags = cable_schedule(doc, devs, unit_of, by_id, where, opts)
    flags += [{"path": p.path, "message": f"saved placement left automatic: {p.message}"} for p in stale]
    _rack_power(racks, cables, flags)
    bom = _costed_bom(devs, cables, flags)
    notes += sorted({n for d in devs.values() for n in d["notes"]})
    return {"format": PLAN_FORMAT, "name": doc.get("name"), "options": {**opts, "media": list(opts["media"])},
            "racks": racks, "cables": [{k: v for k, v in c.items() if k not in ("end_w", "a_unit", "b_unit")}
                                       for c in cables],
            "bom": bom, "flags": flags, "notes": notes, "placements": applied,
            "summary": {"racks": len(racks), "rows": 1 + max((r["row"] for r in racks), default=0),
                        "cables": len(cables), "over_budget": [r["id"] for r in racks if r["over_power"]],
                        "unreachable": sum(1 for c in cables if c["medium"] is None)}}


def _rack_power(racks: list[dict], cables: list[dict], flags: list) -> None:
    """Optics watts into the racks of their ends; totals and over-budget flags."""
    optics: dict[str, float] = {}
    for c in cables:
        for rack, watts in ((c["a_rack"], c["end_w"][0]), (c["b_rack"], c["end_w"][1])):
            optics[rack] = optics.get(rack, 0.0) + watts
    for r in racks:
        r["optics_w"] = round(optics.get(r["id"], 0.0), 3)
        r["power_w"] = round(r["device_w"] + r["optics_w"], 3)
        r["power_kw"] = round(r["power_w"] / 1000.0, 3)
        r["over_power"] = r["power_w"] > r["power_kw_budget"] * 1000.0 + 1e-9
        r["over_units"] = r["units_used"] > r["units"]
        if r["over_power"]:
            flags.append({"path": f"racks[{r['id']}]", "message": f"{r['power_kw']:g} kW, over the rack's "
                          f"{r['power_kw_budget']:g} kW budget ({', '.join(d['id'] for d in r['devices'][:4])}"
                          f"{' …' if len(r['devices']) > 4 else ''})"})
        if r["over_units"]:
            flags.append({"path": f"racks[{r['id']}]", "message": f"{r['units_used']} U used of {r['units']} U"})


def _costed_bom(devs: dict, cables: list[dict], flags: list) -> dict:
    """Per tier (servers, switches by tier, cables by link kind): count, US$, W; totals per GPU."""
    tiers: dict[tuple, dict] = {}
    for d in devs.values():
        row = tiers.setdefault((d["tier"], d["name"]), {"tier": d["tier"], "item": d["name"], "count": 0,
                                                          "usd": 0.0, "watts": 0.0, "estimate": False})
        row["count"] += 1
        row["estimate"] = row["estimate"] or d["estimate"]
        if d["usd"] is None or d["power_w"] is None:
            flags.append({"path": f"devices[{d['id']}]", "message": f"{d['kind']} {d['name']!r} has no catalog "
                          f"{'price' if d['usd'] is None else 'power'}: add it to the plan request"})
        row["usd"] += d["usd"] or 0.0
        row["watts"] += d["power_w"] or 0.0
    media: dict[tuple, dict] = {}
    for c in cables:
        row = media.setdefault((c["kind"], c["medium"]), {"kind": c["kind"], "medium": c["medium"], "count": 0,
                                                          "usd": 0.0, "watts": 0.0, "length_m": 0.0})
        row["count"] += 1
        row["usd"] += c["usd"] or 0.0
        row["watts"] += c["watts"] or 0.0
        row["length_m"] += c["length_m"]
    tier_rows = sorted(tiers.values(), key=lambda r: (_TIER_ORDER.get(r["tier"], 9), r["item"]))
    media_rows = sorted(media.values(), key=lambda r: (r["kind"], r["medium"] or "~"))
    total_usd = sum(r["usd"] for r in tier_rows) + sum(r["usd"] for r in media_rows)
    total_w = sum(r["watts"] for r in tier_rows) + sum(r["watts"] for r in media_rows)
    gpus = sum(d["gpus"] for d in devs.values())
    for r in tier_rows + media_rows:
        r["usd"], r["watts"] = round(r["usd"], 2), round(r["watts"], 3)
    return {"tiers": tier_rows, "media": media_rows, "total_usd": round(total_usd, 2), "total_w": round(total_w, 3),
            "gpus": gpus, "usd_per_gpu": round(total_usd / gpus, 2) if gpus else None,
            "w_per_gpu": round(total_w / gpus, 3) if gpus else None,
            "prices_are": "estimates unless given in the plan request (catalog_physical: editable defaults)"}
