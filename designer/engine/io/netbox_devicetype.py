"""NetBox device types (netbox-community/devicetype-library YAML) → rack units, ports and power.

A devicetype-library file (``device-types/<Manufacturer>/<Model>.yaml``; schema in that
repository's ``schema/devicetype.json``) names ``manufacturer``, ``model``, ``u_height``,
``interfaces`` (``name``, ``type`` such as ``800gbase-x-osfp``) and ``power-ports``
(``maximum_draw`` / ``allocated_draw``, W). :func:`read_device_type` reads one;
:func:`device_type_overrides` turns it into plan-request overrides of a catalog item
(``units`` and ``power``), so a user's own switch or server file sets its rack space and watts.

The file is untrusted: its size is bounded, it is read with ``yaml.safe_load`` (no Python
objects) after a pass over the parser's events that refuses aliases (an alias can expand a small
file into a huge tree: the "billion laughs" pattern), and every bad field is a located error.
"""
from __future__ import annotations

import math
import re

from designer.engine.errors import ImportFormatError, Problem

__all__ = ["read_device_type", "device_type_overrides", "MAX_YAML_CHARS"]

#: Largest device-type file read (the library's biggest chassis files are ~100 kB).
MAX_YAML_CHARS = 1024 * 1024
_SPEED = re.compile(r"^(\d+)gbase")


def _load(text: str):
    import yaml

    if len(text) > MAX_YAML_CHARS:
        raise ImportFormatError("device type file is too large", [Problem(
            "input", f"{len(text):,} characters, over the limit of {MAX_YAML_CHARS:,}")])
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.AliasEvent):
                mark = event.start_mark
                raise ImportFormatError("device type file uses YAML aliases", [Problem(
                    f"line {mark.line + 1}", "aliases are not accepted (devicetype-library files use none)")])
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "input"
        raise ImportFormatError("not valid YAML", [Problem(where, str(getattr(exc, "problem", None) or exc))]) from None


def read_device_type(text: str) -> dict:
    """One devicetype-library YAML file.

    Returns
    -------
    dict
        ``{manufacturer, model, slug, u_height (U), ports: {gbps: count}, power_w (W: the sum of
        the power ports' ``allocated_draw``, else of ``maximum_draw``; None when neither)}``.

    Raises
    ------
    ImportFormatError
        Too large, not YAML, aliases, or a bad field, located (``interfaces[3].type``).
    """
    data = _load(text)
    if not isinstance(data, dict):
        raise ImportFormatError("not a device type", [Problem("input", "expected a mapping at the top level")])
    problems = [Problem(k, "required") for k in ("manufacturer", "model") if not isinstance(data.get(k), str)]
    u = data.get("u_height", 1)
    if isinstance(u, bool) or not isinstance(u, (int, float)) or not math.isfinite(u) or not 0 <= u <= 60:
        problems.append(Problem("u_height", f"must be a number of rack units in [0, 60] (got {u!r})"))
    ports = _ports(data.get("interfaces"), problems)
    power = _power(data.get("power-ports"), problems)
    if problems:
        raise ImportFormatError("bad device type", problems)
    return {"manufacturer": data["manufacturer"], "model": data["model"], "slug": data.get("slug"),
            "u_height": float(u), "ports": ports, "power_w": power}


def _ports(interfaces, problems: list) -> dict:
    if interfaces is None:
        return {}
    if not isinstance(interfaces, list):
        problems.append(Problem("interfaces", "must be a list"))
        return {}
    ports: dict[int, int] = {}
    for i, iface in enumerate(interfaces):
        kind = iface.get("type") if isinstance(iface, dict) else None
        if not isinstance(kind, str):
            problems.append(Problem(f"interfaces[{i}].type", "required"))
            continue
        m = _SPEED.match(kind)
        if m:
            ports[int(m.group(1))] = ports.get(int(m.group(1)), 0) + 1
    return ports


def _power(power_ports, problems: list) -> float | None:
    if power_ports is None:
        return None
    if not isinstance(power_ports, list):
        problems.append(Problem("power-ports", "must be a list"))
        return None
    total = {"allocated_draw": 0.0, "maximum_draw": 0.0}
    for i, port in enumerate(power_ports):
        for key in total:
            value = port.get(key) if isinstance(port, dict) else None
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 250_000:
                problems.append(Problem(f"power-ports[{i}].{key}", f"must be watts in (0, 250000] (got {value!r})"))
                continue
            total[key] += value
    return total["allocated_draw"] or total["maximum_draw"] or None


def device_type_overrides(device_type: dict, key: str) -> dict:
    """Plan-request overrides from a device type for the catalog item ``key`` (``switch:eth-51t2``).

    Returns
    -------
    dict
        ``{"units": {key: U}, "power": {key: W}}`` with what the file gives (units rounded up
        to whole U; a 0 U device type is refused by the plan request's check, as it should be).
    """
    out: dict = {"units": {key: int(math.ceil(device_type["u_height"]))}}
    if device_type["power_w"] is not None:
        out["power"] = {key: device_type["power_w"]}
    return out
