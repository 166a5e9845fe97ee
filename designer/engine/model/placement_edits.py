"""Placement edits: devices moved by hand to another rack and unit, over the automatic floor plan.

The request's ``placements`` (docs/FORMATS.md, "Physical plan") name a device (a host group, a
switch or a storage server: the ids of the plan's racks) and where it goes::

    {"h6": {"rack": "R01-01", "position": 25}, "leaf0": {"rack": "R01-03"}}

Rules (docs/ENGINE.md, "Physical plan"):

- The automatic plan is made first with the same options, so rack ids are those it names; an
  edit takes its device out of its automatic rack (a gap is left) and puts it into ``rack`` at
  ``position`` (its lowest unit, 1-based, U1 at the bottom) or, without a position, at the
  lowest free run of its units. Explicit positions go first, then the others in document order,
  so the outcome does not depend on the order of the object's keys (a JSON object has none).
- Refused, located, all at once: an unknown device or rack, a position outside the rack, units
  taken by another device, a rack without a free run of the device's units (full).
- Not refused: a rack over its power budget after the move and a run longer than any medium
  reaches are flagged by the plan by name, as in an automatic plan (a hall may take a hotter
  rack; the user decides).

Strict (a request being checked or saved): any problem raises and nothing is applied. Lenient
(placements saved against an older revision or other rack options): each entry that no longer
fits is left automatic and returned as a problem for the plan's flags, the others are applied.
"""
from __future__ import annotations

from designer.engine.errors import InvalidScenario, Problem

__all__ = ["apply_placements", "MAX_PLACEMENTS"]

#: At most this many edits in one request (a design's devices are fewer than the plan's bound).
MAX_PLACEMENTS = 10_000
_KEYS = ("rack", "position")


def apply_placements(racks: list[dict], where: dict, devs: dict, placements, *,
                     strict: bool = True) -> tuple[dict, list[Problem]]:
    """Move the devices of ``placements`` within ``racks`` (in place; see the module's rules).

    Parameters
    ----------
    racks : list of dict
        :func:`designer.engine.model.floorplan.place` records; moved devices get ``moved: True``,
        each rack's ``devices`` (by position), ``units_used`` and ``device_w`` (W) are updated.
    where : dict
        Device id -> rack id, updated.
    devs : dict
        :func:`designer.engine.model.floorplan.devices` (document order).
    placements : dict or None
        Device id -> ``{rack, position (optional)}``.
    strict : bool
        Raise on any problem (True) or leave the entries that do not fit automatic (False).

    Returns
    -------
    applied : dict
        Device id -> ``{rack, position}`` of every edit applied, positions filled in.
    problems : list of Problem
        The entries left automatic (empty when ``strict``).

    Raises
    ------
    InvalidScenario
        ``strict`` and any bad entry (``placements.h6.rack: rack R01-01 is full: …``).
    """
    if not placements:
        return {}, []
    by_id = {r["id"]: r for r in racks}
    entries, problems = _parse(placements, devs, by_id)
    fitted, bad = _fit(by_id, devs, entries)
    while bad and not strict:  # a dropped entry returns to its automatic units: re-fit the rest
        problems += bad.values()
        entries = {d: e for d, e in entries.items() if d not in bad}
        fitted, bad = _fit(by_id, devs, entries)
    problems += bad.values()
    if strict and problems:
        raise InvalidScenario("invalid placements", problems)
    _commit(by_id, where, fitted)
    return {d: {"rack": r, "position": u} for d, (r, u) in fitted.items()}, problems


def _rack_names(by_id: dict) -> str:
    ids = list(by_id)
    return ", ".join(ids) if len(ids) <= 6 else f"{ids[0]} … {ids[-1]}"


def _parse(placements, devs: dict, by_id: dict) -> tuple[dict, list[Problem]]:
    """Well-formed entries ``{device: (rack, position or None)}`` and the problems of the others."""
    if not isinstance(placements, dict):
        return {}, [Problem("placements", "must be an object of device id -> {rack, position}")]
    if len(placements) > MAX_PLACEMENTS:
        return {}, [Problem("placements", f"{len(placements)} edits; at most {MAX_PLACEMENTS}")]
    entries, problems = {}, []
    for dev, value in placements.items():
        path = f"placements.{dev}"
        if dev not in devs:
            problems.append(Problem(path, f"no device {dev!r} in this design (a host group, switch or "
                                          f"storage server id, as the plan's racks list them)"))
        elif not isinstance(value, dict) or not isinstance(value.get("rack"), str):
            problems.append(Problem(path, "must be an object {\"rack\": \"R01-02\", \"position\": 12}"))
        elif set(value) - set(_KEYS):
            problems.extend(Problem(f"{path}.{k}", "unknown key (expected rack, position)")
                            for k in sorted(map(str, set(value) - set(_KEYS))))
        elif value["rack"] not in by_id:
            problems.append(Problem(f"{path}.rack", f"no rack {value['rack']!r} in this plan "
                                                    f"(racks {_rack_names(by_id)})"))
        else:
            why = _bad_position(value.get("position"), devs[dev]["units"], by_id[value["rack"]]["units"])
            if why:
                problems.append(Problem(f"{path}.position", why))
            else:
                entries[dev] = (value["rack"], value.get("position"))
    return entries, problems


def _bad_position(position, units: int, rack_units: int) -> str | None:
    """Why ``position`` cannot hold a device of ``units`` U in a rack of ``rack_units`` U."""
    if position is None:
        return None
    top = rack_units - units + 1
    if isinstance(position, bool) or not isinstance(position, int) or not 1 <= position <= max(top, 0):
        if top < 1:
            return f"a device of {units} U does not fit a rack of {rack_units} U"
        return f"must be a whole number from 1 to {top} (a device of {units} U in a rack of {rack_units} U; " \
               f"got {position!r})"
    return None


def _fit(by_id: dict, devs: dict, entries: dict) -> tuple[dict, dict]:
    """``{device: (rack, position)}`` of the entries that fit, ``{device: Problem}`` of the others."""
    taken = {rid: [(d["position"], d["position"] + d["units"] - 1, d["id"]) for d in r["devices"]
                   if d["id"] not in entries] for rid, r in by_id.items()}
    fitted, bad = {}, {}
    ordered = [d for d in devs if d in entries]
    for dev in [d for d in ordered if entries[d][1] is not None] + [d for d in ordered if entries[d][1] is None]:
        rid, lo = entries[dev]
        units, path = devs[dev]["units"], f"placements.{dev}"
        if lo is None:
            lo = _lowest_free(taken[rid], units, by_id[rid]["units"])
            if lo is None:
                used = sum(b - a + 1 for a, b, _ in taken[rid])
                bad[dev] = Problem(f"{path}.rack", f"rack {rid} is full: {dev} needs {units} U, its largest free "
                                                   f"run is {_largest_free(taken[rid], by_id[rid]['units'])} U "
                                                   f"({used} of {by_id[rid]['units']} U used)")
                continue
        hi = lo + units - 1
        clash = next((t for t in taken[rid] if t[0] <= hi and lo <= t[1]), None)
        if clash is not None:
            bad[dev] = Problem(f"{path}.position", f"U{lo}–U{hi} of {rid} overlap {clash[2]} (U{clash[0]}–U{clash[1]})")
            continue
        taken[rid].append((lo, hi, dev))
        fitted[dev] = (rid, lo)
    return fitted, bad


def _free_runs(taken: list, rack_units: int) -> list[tuple[int, int]]:
    """Free ``(lowest U, length)`` runs of a rack, bottom up."""
    runs, u = [], 1
    for lo, hi, _ in sorted(taken):
        if lo > u:
            runs.append((u, lo - u))
        u = max(u, hi + 1)
    if u <= rack_units:
        runs.append((u, rack_units - u + 1))
    return runs


def _lowest_free(taken: list, units: int, rack_units: int) -> int | None:
    return next((lo for lo, n in _free_runs(taken, rack_units) if n >= units), None)


def _largest_free(taken: list, rack_units: int) -> int:
    return max((n for _, n in _free_runs(taken, rack_units)), default=0)


def _commit(by_id: dict, where: dict, fitted: dict) -> None:
    """Move the fitted devices' records and recount each rack's units and device watts."""
    records = {d["id"]: d for r in by_id.values() for d in r["devices"] if d["id"] in fitted}
    for rack in by_id.values():
        rack["devices"] = [d for d in rack["devices"] if d["id"] not in fitted]
    for dev, (rid, lo) in fitted.items():
        by_id[rid]["devices"].append({**records[dev], "position": lo, "moved": True})
        where[dev] = rid
    for rack in by_id.values():
        rack["devices"].sort(key=lambda d: d["position"])
        rack["units_used"] = sum(d["units"] for d in rack["devices"])
        rack["device_w"] = sum(d["power_w"] or 0.0 for d in rack["devices"])
