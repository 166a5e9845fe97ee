"""``bom``: bill of materials and fabric facts of a topology document.

Examples::

    python -m designer.engine bom pod.json            # a table
    python -m designer.engine bom pod.json --json     # the fabricscope.bom/1 object
"""
from __future__ import annotations

import json
import sys


def add_arguments(parser) -> None:
    parser.add_argument("topology", help="topology document (JSON file)")
    parser.add_argument("--json", action="store_true", help="print the BOM as JSON")


def _table(bom: dict) -> str:
    lines = ["switches", f"  {'tier':<15} {'model':<16} {'count':>6} {'ports':>11} {'used':>8} {'free':>8} {'power W':>10}"]
    for r in bom["switches"]:
        ports = f"{r['radix']}x{r['port_gbps']:g}G" if r["radix"] else "?"
        power = f"{r['power_w']:,.0f}" if r["power_w"] is not None else "?"
        free = r["ports_free"] if r["ports_free"] is not None else "?"
        tier = f"{r['tier']} (storage)" if r.get("network") == "storage" else r["tier"]
        lines.append(f"  {tier:<15} {r['model']:<16} {r['count']:>6} {ports:>11} {r['ports_used']:>8} "
                     f"{free:>8} {power:>10}")
    lines += ["links", f"  {'kind':<14} {'tech':<8} {'reach':<15} {'links':>7} {'ports':>7} {'cables':>7} {'xcvrs':>7}"]
    for r in bom["links"]:
        lines.append(f"  {r['kind']:<14} {r['tech']:<8} {r['reach']:<15} {r['links']:>7} {r['ports']:>7} "
                     f"{r['cables']:>7} {r['transceivers']:>7}")
    over = ", ".join(f"{t} {v:g}:1" for t, v in bom["oversubscription"].items()) or "none"
    p = bom["power"]
    per_gpu = f"{p['per_gpu_w']:.1f} W/GPU" if p["per_gpu_w"] is not None else "no GPU"
    lines += [f"oversubscription  {over}",
              f"bisection         {bom['bisection_gbps'] / 1000:,.1f} Tb/s (injection {bom['injection_gbps'] / 1000:,.1f} Tb/s)",
              f"switch power      {p['switch_w'] / 1000:,.1f} kW, {per_gpu} over {p['gpus']} GPUs"]
    lines += [f"note              {n}" for n in bom["notes"]]
    return "\n".join(lines) + "\n"


def run(args) -> int:
    from designer.engine.model.bom import fabric_bom

    bom = fabric_bom(args.topology)
    sys.stdout.write(json.dumps(bom, indent=2) + "\n" if args.json else _table(bom))
    return 0
