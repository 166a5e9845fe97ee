"""``catalog``: what the engine knows — link technologies, or with ``--switches`` the switch models.

Examples::

    python -m designer.engine catalog --switches          # a table
    python -m designer.engine catalog --switches --json   # [{"id", "radix", "port_gbps", "tech", ...}]
    python -m designer.engine catalog --json              # link techs, node kinds, NIC models
"""
from __future__ import annotations

import json
import sys


def add_arguments(parser) -> None:
    parser.add_argument("--switches", action="store_true", help="list the fabric switch models")
    parser.add_argument("--json", action="store_true", help="print JSON")


def _switch_table(models: list[dict]) -> str:
    lines = [f"{'id':<12} {'tech':<11} {'ports':>10} {'breakouts':<26} {'power W':>8}  class"]
    for m in models:
        modes = ", ".join(f"{b['ports']}x{b['port_gbps']:g}G" for b in m["breakouts"])
        lines.append(f"{m['id']:<12} {m['tech']:<11} {m['radix']:>4}x{m['port_gbps']:g}G {modes:<26} "
                     f"{m['power_w']:>8,.0f}  {m['vendor_class']}")
    return "\n".join(lines) + "\n"


def run(args) -> int:
    from designer.engine.catalog import SWITCH_MODELS, catalog_as_dict

    if args.switches:
        models = [m.as_dict() for m in SWITCH_MODELS.values()]
        sys.stdout.write(json.dumps(models, indent=2) + "\n" if args.json else _switch_table(models))
        return 0
    data = catalog_as_dict()
    if args.json:
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    else:
        for name, t in data["techs"].items():
            print(f"{name:<14} {t['family']:<12} {t['effective_gbps']:>9.1f} Gb/s  {t['latency_ns']:>6.0f} ns")
    return 0
