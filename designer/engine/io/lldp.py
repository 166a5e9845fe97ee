"""As-built check: LLDP neighbours read from the hall, compared with the planned cable schedule.

Readers
-------
- :func:`read_lldpctl_json`: the output of ``lldpctl -f json`` (lldpd; ``lldpcli(8)``): under
  ``lldp.interface`` one entry per local interface — a mapping ``{ifname: {...}}`` or, with
  several interfaces, a list of such mappings — each with ``chassis`` ``{sysname: {...}}`` and
  ``port`` ``{"id": {"type", "value"}, "descr"}``. The neighbour's port is its ``ifname`` id,
  else its description. lldpctl does not print the local system's name, so a file is either
  one device's output (``device`` given) or a collection ``{device: <lldpctl output>, ...}``.
- :func:`read_lldp_table`: a plain ``show lldp neighbors`` table of one device: a header line
  naming the local port and the neighbour columns (``Port  Neighbor Device ID  Neighbor Port
  ID  TTL`` as on Arista EOS, ``Local Intf  Device ID  Port ID`` …), a dashed rule optional,
  then one neighbour per line, whitespace-separated.

Check
-----
:func:`as_built_diff` pairs the observed links with the schedule's cables (ends compared as
``device:port``, case-insensitive; each observation in either direction counts once):

- **swapped**: two planned cables ``A–B`` and ``C–D`` seen as ``A–D`` and ``C–B`` (ends crossed);
- **missing**: a planned cable not seen, where a device at one end at least reported LLDP (a
  cable between two silent devices is *unchecked*, not missing);
- **extra**: a link seen that no planned cable explains (and that is not part of a swap).
"""
from __future__ import annotations

import json

from designer.engine.errors import ImportFormatError, Problem
from designer.engine.io.bounded_text import check_text_size

__all__ = ["read_lldpctl_json", "read_lldp_table", "as_built_diff", "MAX_LLDP_CHARS"]

#: Largest LLDP input read (all devices together).
MAX_LLDP_CHARS = 32 * 1024 * 1024


def _interfaces(lldp, where: str) -> list[tuple[str, dict]]:
    inner = lldp.get("lldp") if isinstance(lldp, dict) else None
    ifaces = inner.get("interface") if isinstance(inner, dict) else None
    if ifaces is None:
        return []  # lldpctl prints {"lldp": {}} when no neighbour is known
    items = ifaces if isinstance(ifaces, list) else [ifaces]
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise ImportFormatError("not lldpctl JSON", [Problem(f"{where}.lldp.interface[{i}]", "expected an object")])
        out += [(name, body) for name, body in item.items()]
    return out


def _neighbour(name: str, body, where: str) -> tuple[str, str]:
    chassis = body.get("chassis") if isinstance(body, dict) else None
    port = body.get("port") if isinstance(body, dict) else None
    if not isinstance(chassis, dict) or not chassis or not isinstance(port, dict):
        raise ImportFormatError("not lldpctl JSON", [Problem(f"{where}.{name}", "no chassis or port")])
    system = next(iter(chassis))
    pid = port.get("id") if isinstance(port.get("id"), dict) else {}
    remote = pid.get("value") if pid.get("type") == "ifname" else (port.get("descr") or pid.get("value"))
    if not isinstance(remote, str) or not remote:
        raise ImportFormatError("not lldpctl JSON", [Problem(f"{where}.{name}.port", "no port id or description")])
    return system, remote


def read_lldpctl_json(text: str, device: str | None = None) -> list[dict]:
    """Observed links ``{device, port, peer_device, peer_port}`` of ``lldpctl -f json`` output.

    Parameters
    ----------
    text : str
        One device's output (then ``device`` names it) or ``{device: output, ...}``.
    device : str, optional
        The local device of a single output.

    Raises
    ------
    ImportFormatError
        Too large, not JSON, or not lldpctl's shape — located (``leaf0.lldp.interface[2]``).
    """
    check_text_size(text, "LLDP JSON", max_chars=MAX_LLDP_CHARS)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ImportFormatError("not JSON", [Problem(f"line {exc.lineno}", exc.msg)]) from None
    if not isinstance(data, dict):
        raise ImportFormatError("not lldpctl JSON", [Problem("input", "expected an object")])
    if "lldp" in data:
        if not device:
            raise ImportFormatError("whose LLDP is this?", [Problem(
                "input", "one device's lldpctl output: name the device (or give {device: output, ...})")])
        outputs = {device: data}
    else:
        outputs = data
    links = []
    for dev, out in outputs.items():
        for name, body in _interfaces(out, dev):
            peer, peer_port = _neighbour(name, body, dev)
            links.append({"device": dev, "port": name, "peer_device": peer, "peer_port": peer_port})
    return links


def read_lldp_table(text: str, device: str) -> list[dict]:
    """Observed links of one device's plain ``show lldp neighbors`` table.

    Raises
    ------
    ImportFormatError
        Too large, no header, or a line with fewer than three columns (``line 5``).
    """
    check_text_size(text, "LLDP table", max_chars=MAX_LLDP_CHARS)
    lines = text.splitlines()
    header = next((i for i, line in enumerate(lines) if "neighbor" in line.lower() or "device id" in line.lower()),
                  None)
    if header is None:
        raise ImportFormatError("not an LLDP neighbours table", [Problem(
            "input", "no header line naming the neighbour columns (\"Neighbor Device ID\", \"Device ID\")")])
    links, problems = [], []
    for number, line in enumerate(lines[header + 1:], start=header + 2):
        cells = line.split()
        if not cells or set(line.strip()) <= set("-= ") or line.lower().startswith(("total", "capability")):
            continue
        if len(cells) < 3:
            problems.append(Problem(f"line {number}", f"expected local port, neighbour and its port (got {line!r})"))
            continue
        links.append({"device": device, "port": cells[0], "peer_device": cells[1], "peer_port": cells[2]})
    if problems:
        raise ImportFormatError("bad LLDP neighbours table", problems[:50])
    return links


def _end(device: str, port: str) -> tuple[str, str]:
    return device.strip().lower(), port.strip().lower()


def as_built_diff(cables: list[dict], observed: list[dict]) -> dict:
    """The cables that differ between a schedule and LLDP observations (see the module).

    Parameters
    ----------
    cables : list of dict
        Schedule rows (``label, a_device, a_port, b_device, b_port``).
    observed : list of dict
        :func:`read_lldpctl_json` / :func:`read_lldp_table` links.

    Returns
    -------
    dict
        ``{"swapped": [{"cables": [label, label], "seen": [[end, end], [end, end]]}],
        "missing": [{label, a, b}], "extra": [{a, b}], "matched": n, "unchecked": n,
        "reporting": [device, ...]}`` (an end is ``"device:port"``).
    """
    planned = {}
    for c in cables:
        planned[frozenset((_end(c["a_device"], c["a_port"]), _end(c["b_device"], c["b_port"])))] = c
    seen = {frozenset((_end(o["device"], o["port"]), _end(o["peer_device"], o["peer_port"]))) for o in observed}
    reporting = {o["device"].strip().lower() for o in observed}
    peer_of = {}
    for pair, c in planned.items():
        a, b = tuple(pair) if len(pair) == 2 else (next(iter(pair)),) * 2
        peer_of[a], peer_of[b] = (b, c), (a, c)
    unexplained = [p for p in seen if p not in planned]
    swapped, used = _swaps(unexplained, peer_of, seen)
    matched = sum(1 for p in planned if p in seen)
    missing, unchecked = [], 0
    swapped_labels = {label for s in swapped for label in s["cables"]}
    for pair, c in planned.items():
        if pair in seen or c["label"] in swapped_labels:
            continue
        if {e[0] for e in pair} & reporting:
            missing.append({"label": c["label"], "a": f"{c['a_device']}:{c['a_port']}",
                            "b": f"{c['b_device']}:{c['b_port']}"})
        else:
            unchecked += 1
    extra = [{"a": ":".join(sorted(p)[0]), "b": ":".join(sorted(p)[-1])} for p in unexplained if p not in used]
    return {"swapped": swapped, "missing": missing, "extra": sorted(extra, key=lambda e: (e["a"], e["b"])),
            "matched": matched, "unchecked": unchecked, "reporting": sorted(reporting)}


def _swaps(unexplained: list, peer_of: dict, seen: set) -> tuple[list[dict], set]:
    """Pairs of planned cables whose far ends are crossed: A–B, C–D seen as A–D and C–B."""
    swapped, used = [], set()
    for pair in sorted(unexplained, key=sorted):
        if pair in used or len(pair) != 2:
            continue
        x, y = sorted(pair)
        if x not in peer_of or y not in peer_of:
            continue
        (x_peer, cx), (y_peer, cy) = peer_of[x], peer_of[y]
        other = frozenset((x_peer, y_peer))
        if cx is not cy and other in seen and other not in used and other in unexplained:
            used |= {pair, other}
            swapped.append({"cables": sorted([cx["label"], cy["label"]]),
                            "seen": [[":".join(x), ":".join(y)], [":".join(e) for e in sorted(other)]]})
    return swapped, used
