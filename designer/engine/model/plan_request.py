"""The plan request: a design's overrides of the physical catalog, checked before anything is planned.

A request (docs/FORMATS.md, "Physical plan")::

    {"prices": {"switch:eth-51t2": 52000, "medium:dr:800": 1100},   # US$
     "power": {"server:dgx-h100": 10200},                          # W (a medium: per end)
     "units": {"switch:eth-51t2": 2},                              # rack units
     "rack": {"units": 48, "power_kw": 40}, "row": {"racks": 10, "network": "end"},
     "spacing_m": {"same_rack": 2, "rack_width": 0.6, "row_pitch": 2.4, "slack": 3},
     "media": ["dac", "acc", "aoc", "sr", "dr", "fr"]}

Every bad value is a located problem (``prices.switch:eth-51t2: must be > 0``), all of them at
once, and nothing is planned: a price or a power of 0, a negative one or one beyond
:data:`designer.engine.catalog_physical.LIMITS` (a $60 M switch, a 300 kW server) is refused,
never silently used.
"""
from __future__ import annotations

import math

from designer.engine.catalog_physical import (LIMITS, MEDIA, MEDIUM_KINDS, DEFAULT_MEDIA, NIC_PHYSICAL, RACK_DEFAULTS,
                                              ROW_DEFAULTS, SPACING_DEFAULTS, SWITCH_PHYSICAL)
from designer.engine.errors import InvalidScenario, Problem

__all__ = ["plan_options", "REQUEST_KEYS"]

REQUEST_KEYS = ("prices", "power", "units", "rack", "row", "spacing_m", "media", "placements")
_ITEM_KINDS = ("switch", "server", "nic", "medium", "storage")


def plan_options(request: dict | None, *, templates: set[str] = frozenset()) -> dict:
    """Checked options of a plan request, defaults filled in.

    Parameters
    ----------
    request : dict or None
        The plan request (keys :data:`REQUEST_KEYS`, all optional).
    templates : set of str
        Host templates of the design: a ``server:<template>`` key must name one of them.

    Returns
    -------
    dict
        ``rack`` ``{units, power_kw}``, ``row`` ``{racks, network}``, ``spacing_m``, ``media``
        (tuple of kinds), ``prices`` (US$), ``power`` (W), ``units`` (U) keyed as
        :func:`designer.engine.catalog_physical.price_key`.

    Raises
    ------
    InvalidScenario
        Every bad key or value, located (``rack.power_kw: must be > 0 and <= 500``).
    """
    request = request if request is not None else {}
    problems: list[Problem] = []
    if not isinstance(request, dict):
        raise InvalidScenario("invalid plan request", [Problem("", "the plan request must be an object")])
    for key in request:
        if key not in REQUEST_KEYS:
            problems.append(Problem(key, f"unknown key (expected one of {', '.join(REQUEST_KEYS)})"))
    out = {"rack": _section(request, "rack", RACK_DEFAULTS, problems),
           "row": _section(request, "row", ROW_DEFAULTS, problems),
           "spacing_m": _section(request, "spacing_m", SPACING_DEFAULTS, problems),
           "media": _media(request.get("media"), problems)}
    for name, bound in (("prices", LIMITS["usd"]), ("power", LIMITS["power_w"]), ("units", LIMITS["units"])):
        out[name] = _overrides(request.get(name), name, bound, templates, problems)
    if problems:
        raise InvalidScenario("invalid plan request", problems)
    return out


def _number(value, path: str, bound: float, problems: list, *, integer: bool = False):
    """``value`` when a finite number in (0, bound] (an int when ``integer``); else a problem."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if ok and integer and value != int(value):
        ok = False
    if not ok or value <= 0 or value > bound:
        what = "a whole number" if integer else "a number"
        problems.append(Problem(path, f"must be {what} > 0 and <= {bound:g} (got {value!r})"))
        return None
    return int(value) if integer else float(value)


_BOUNDS = {("rack", "units"): (LIMITS["units"], True), ("rack", "power_kw"): (LIMITS["power_kw"], False),
           ("row", "racks"): (LIMITS["row_racks"], True)}


def _section(request: dict, name: str, defaults: dict, problems: list) -> dict:
    given = request.get(name)
    if given is None:
        return dict(defaults)
    if not isinstance(given, dict):
        problems.append(Problem(name, "must be an object"))
        return dict(defaults)
    out = dict(defaults)
    for key, value in given.items():
        path = f"{name}.{key}"
        if key not in defaults:
            problems.append(Problem(path, f"unknown key (expected one of {', '.join(defaults)})"))
        elif name == "row" and key == "network":
            if value not in ("end", "middle"):
                problems.append(Problem(path, f"must be \"end\" or \"middle\" (got {value!r})"))
            else:
                out[key] = value
        else:
            bound, integer = _BOUNDS.get((name, key), (LIMITS["length_m"], False))
            out[key] = _number(value, path, bound, problems, integer=integer) or defaults[key]
    return out


def _media(given, problems: list) -> tuple:
    if given is None:
        return DEFAULT_MEDIA
    if not isinstance(given, list) or not given:
        problems.append(Problem("media", "must be a non-empty list of medium kinds"))
        return DEFAULT_MEDIA
    for i, kind in enumerate(given):
        if kind not in MEDIUM_KINDS:
            problems.append(Problem(f"media[{i}]", f"unknown medium {kind!r} (expected one of "
                                                   f"{', '.join(MEDIUM_KINDS)})"))
    return tuple(k for k in MEDIUM_KINDS if k in given)


def _known_item(key: str, templates: set[str]) -> str | None:
    """None when ``key`` names a catalog item of this design, else why not."""
    kind, _, name = key.partition(":")
    if kind not in _ITEM_KINDS:
        return f"unknown item kind {kind!r} (expected {', '.join(k + ':…' for k in _ITEM_KINDS[:4])} or storage)"
    if kind == "storage":
        return None if not name else "storage takes no name"
    known = {"switch": set(SWITCH_PHYSICAL), "nic": set(NIC_PHYSICAL), "server": set(templates),
             "medium": {f"{k}:{r:g}" for k, r in MEDIA}}[kind]
    if name not in known:
        return f"no {kind} {name!r} in {'this design' if kind == 'server' else 'the catalog'}" \
               f" (known: {', '.join(sorted(known)) or 'none'})"
    return None


def _overrides(given, name: str, bound: float, templates: set[str], problems: list) -> dict:
    if given is None:
        return {}
    if not isinstance(given, dict):
        problems.append(Problem(name, "must be an object of item key -> value"))
        return {}
    out = {}
    for key, value in given.items():
        path = f"{name}.{key}"
        why = _known_item(str(key), templates)
        if why:
            problems.append(Problem(path, why))
            continue
        number = _number(value, path, bound, problems, integer=(name == "units"))
        if number is not None:
            out[key] = number
    return out
