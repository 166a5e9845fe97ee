"""``build``: a topology document from a host template, optionally N hosts wired into a fabric.

Examples::

    python -m designer.engine build --template dgx-a100 -o host.json
    python -m designer.engine build --template dgx-h100 --hosts 128 --fabric rail-optimized \\
        --spines 16 --oversubscription 2 -o pod.json
    python -m designer.engine build --template dgx-h100 --hosts 4096 --switch eth-51t2 \
        --oversubscription 1 --planes 1 -o 32k.json          # three tiers follow from the radix
    python -m designer.engine build --template pcie-commodity --param gpus=4 --param nics=2
    python -m designer.engine build --template my-template.json --hosts 4   # a saved user template
    python -m designer.engine build --template dgx-h100 --hosts 16 --sharp   # SHARP (CollNet) on IB
"""
from __future__ import annotations

import json
import os
import sys

from designer.engine.errors import InvalidTopology, Problem


def add_arguments(parser) -> None:
    from designer.engine.model.fabrics import FABRICS
    from designer.engine.model.templates import TEMPLATES

    parser.add_argument("--template", required=True,
                        help=f"built-in template ({', '.join(TEMPLATES)}) or a user template JSON file")
    parser.add_argument("--hosts", type=int, help="number of hosts; without it, a single host")
    parser.add_argument("--fabric", choices=FABRICS, default="rail-optimized", help="fabric generator")
    parser.add_argument("--rails", type=int, help="rails (default: compute NICs per host)")
    parser.add_argument("--spines", type=int, help="spine switches (two-tier fabrics)")
    parser.add_argument("--leaves-per-rail", type=int, help="leaves per rail (default: from the switch radix)")
    parser.add_argument("--switch", help="catalog switch-model id (see: catalog --switches)")
    parser.add_argument("--planes", type=int, default=1, help="independent spine planes (rail-optimized)")
    parser.add_argument("--tiers", type=int, choices=(2, 3), help="force two or three switch tiers")
    parser.add_argument("--oversubscription", type=float, default=1.0, help="downlink/uplink ratio (≥ 1)")
    parser.add_argument("--k", type=int, help="fat-tree radix (even)")
    parser.add_argument("--hosts-per-rack", type=int, default=4, help="hosts per rack")
    parser.add_argument("--storage", type=int, default=0,
                        help="storage servers (on a storage fabric of their own, wired to the hosts' "
                             "storage NICs, when the template has them)")
    parser.add_argument("--nic-link-tech", help="catalog tech of host-to-leaf links (default eth<port>)")
    parser.add_argument("--uplink-tech", help="catalog tech of switch-to-switch links")
    parser.add_argument("--sharp", action="store_true",
                        help="SHARP-capable (InfiniBand) switches: CollNet all-reduce becomes selectable")
    parser.add_argument("--name", help="document name")
    parser.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                        help="template parameter (value parsed as JSON when possible), repeatable")
    parser.add_argument("-o", "--output", help="write the document here instead of stdout")


def _params(pairs: list[str]) -> dict:
    params = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InvalidTopology(f"--param {pair!r}: expected KEY=VALUE",
                                  [Problem("--param", f"{pair!r}: expected KEY=VALUE")])
        try:
            params[key] = json.loads(value)
        except json.JSONDecodeError:
            params[key] = value
    return params


def _template(name: str):
    from designer.engine.model.templates import TEMPLATES

    if name not in TEMPLATES and (name.endswith(".json") or os.path.exists(name)):
        with open(name, encoding="utf-8") as fh:
            try:
                return json.load(fh)
            except json.JSONDecodeError as exc:
                raise InvalidTopology(f"{name}: invalid JSON at line {exc.lineno}: {exc.msg}") from None
    return name


def run(args) -> int:
    from designer.engine.collector import gc_paused
    from designer.engine.document import dump, normalize_handed_over, write_document

    # The collector paused: a 100,000-GPU build holds ~2 million dicts and makes no cycles.
    with gc_paused():
        doc = normalize_handed_over(_built(args))
        if args.output:
            with open(args.output, "wb") as fh:
                write_document(doc, fh)
            print(f"wrote {args.output}: {len(doc['nodes'])} nodes, {len(doc['links'])} links", file=sys.stderr)
        else:
            sys.stdout.write(dump(doc))
    return 0


def _built(args) -> dict:
    """The document the arguments describe, as built (not yet validated)."""
    from designer.engine.model.fabrics import build_cluster
    from designer.engine.model.templates import host_document

    template, params = _template(args.template), _params(args.param)
    if args.hosts is None:
        return host_document(template, name=args.name, **params)
    return build_cluster(template, args.hosts, fabric=args.fabric, rails=args.rails,
                         leaves_per_rail=args.leaves_per_rail, spines=args.spines,
                         nic_link_tech=args.nic_link_tech, uplink_tech=args.uplink_tech,
                         oversubscription=args.oversubscription, hosts_per_rack=args.hosts_per_rack,
                         k=args.k, storage=args.storage, switch=args.switch, planes=args.planes,
                         tiers=args.tiers, name=args.name, params=params, sharp=args.sharp)
