"""``plan``: floor plan, cable schedule and costed BOM of a topology (and its as-built check).

Examples::

    python -m designer.engine plan pod.json                        # racks, BOM, flags (a table)
    python -m designer.engine plan pod.json --request plan.json --json
    python -m designer.engine plan pod.json --csv cables.csv --netbox netbox/
    python -m designer.engine plan pod.json --device-type switch:eth-51t2=SN5600.yaml
    python -m designer.engine plan pod.json --lldp lldp.json       # {device: lldpctl -f json, ...}
    python -m designer.engine plan pod.json --lldp-table leaf0=leaf0.txt

Exit status 0 even when racks are over budget (they are listed): a plan is read, not enforced;
1 on bad input (located errors).
"""
from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

__all__ = ["add_arguments", "run", "schedule_csv"]


def add_arguments(parser) -> None:
    parser.add_argument("topology", help="topology document (JSON file)")
    parser.add_argument("--request", help="plan request JSON (prices, power, units, rack, row, spacing_m, media)")
    parser.add_argument("--device-type", action="append", default=[], metavar="KEY=FILE",
                        help="devicetype-library YAML setting the units and power of a catalog item "
                             "(switch:eth-51t2=SN5600.yaml); repeatable")
    parser.add_argument("--csv", help="write the cable schedule as CSV to this file")
    parser.add_argument("--netbox", help="write NetBox bulk-import CSV (devices, interfaces, cables) into this directory")
    parser.add_argument("--site", default="fabricscope", help="NetBox site of the devices")
    parser.add_argument("--lldp", help="lldpctl -f json output: {device: output, ...}")
    parser.add_argument("--lldp-table", action="append", default=[], metavar="DEVICE=FILE",
                        help="a plain 'show lldp neighbors' table of one device; repeatable")
    parser.add_argument("--json", action="store_true", help="print the whole plan as JSON")


def schedule_csv(cables: list[dict]) -> str:
    """The cable schedule as CSV (columns :data:`designer.engine.model.cabling.SCHEDULE_COLUMNS`)."""
    import io

    from designer.engine.model.cabling import SCHEDULE_COLUMNS

    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=SCHEDULE_COLUMNS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows(cables)
    return out.getvalue()


def _request(args) -> dict:
    from designer.engine.io.netbox_devicetype import device_type_overrides, read_device_type

    request = json.loads(Path(args.request).read_text()) if args.request else {}
    for spec in args.device_type:
        key, _, path = spec.partition("=")
        overrides = device_type_overrides(read_device_type(Path(path).read_text()), key)
        for section, values in overrides.items():
            request.setdefault(section, {}).update(values)
    return request


def _as_built(args, cables: list[dict]) -> dict | None:
    from designer.engine.io.lldp import as_built_diff, read_lldp_table, read_lldpctl_json

    observed = read_lldpctl_json(Path(args.lldp).read_text()) if args.lldp else []
    for spec in args.lldp_table:
        device, _, path = spec.partition("=")
        observed += read_lldp_table(Path(path).read_text(), device)
    return as_built_diff(cables, observed) if (args.lldp or args.lldp_table) else None


def _table(p: dict) -> str:
    lines = [f"racks ({p['summary']['racks']} in {p['summary']['rows']} rows)",
             f"  {'rack':<8} {'role':<8} {'U':>7} {'kW':>8} {'budget':>7}  devices"]
    for r in p["racks"]:
        flag = "  OVER" if r["over_power"] or r["over_units"] else ""
        names = ", ".join(d["id"] for d in r["devices"][:6]) + (" …" if len(r["devices"]) > 6 else "")
        lines.append(f"  {r['id']:<8} {r['role']:<8} {r['units_used']:>3}/{r['units']:<3} {r['power_kw']:>8.2f} "
                     f"{r['power_kw_budget']:>7g}  {names}{flag}")
    b = p["bom"]
    lines += ["bom", f"  {'tier':<14} {'item':<16} {'count':>6} {'US$':>14} {'W':>10}"]
    for r in b["tiers"]:
        lines.append(f"  {r['tier']:<14} {r['item']:<16} {r['count']:>6} {r['usd']:>14,.0f} {r['watts']:>10,.0f}")
    for r in b["media"]:
        lines.append(f"  {r['kind']:<14} {r['medium'] or 'UNREACHABLE':<16} {r['count']:>6} {r['usd']:>14,.0f} "
                     f"{r['watts']:>10,.0f}")
    per_gpu = f"{b['usd_per_gpu']:,.0f} US$/GPU, {b['w_per_gpu']:,.0f} W/GPU" if b["gpus"] else "no GPU"
    lines.append(f"total             {b['total_usd']:,.0f} US$, {b['total_w'] / 1000:,.1f} kW; {per_gpu} "
                 f"(prices are estimates)")
    lines += [f"flag              {f['path']}: {f['message']}" for f in p["flags"]]
    lines += [f"note              {n}" for n in p["notes"]]
    return "\n".join(lines) + "\n"


def run(args) -> int:
    from designer.engine.io.netbox_cables import netbox_csv
    from designer.engine.model.physical_plan import plan

    p = plan(args.topology, _request(args))
    as_built = _as_built(args, p["cables"])
    if args.csv:
        Path(args.csv).write_text(schedule_csv(p["cables"]))
    if args.netbox:
        folder = Path(args.netbox)
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in netbox_csv(p, site=args.site).items():
            (folder / name).write_text(text)
    if args.json:
        sys.stdout.write(json.dumps({**p, "as_built": as_built}, indent=1) + "\n")
        return 0
    sys.stdout.write(_table(p))
    if as_built is not None:
        sys.stdout.write(f"as built          {as_built['matched']} matched, {len(as_built['swapped'])} swaps, "
                         f"{len(as_built['missing'])} missing, {len(as_built['extra'])} extra, "
                         f"{as_built['unchecked']} unchecked\n")
        for s in as_built["swapped"]:
            sys.stdout.write(f"  swapped {' and '.join(s['cables'])}: seen {s['seen'][0]} and {s['seen'][1]}\n")
        for m in as_built["missing"]:
            sys.stdout.write(f"  missing {m['label']}: {m['a']} – {m['b']}\n")
        for e in as_built["extra"]:
            sys.stdout.write(f"  extra   {e['a']} – {e['b']}\n")
    return 0
