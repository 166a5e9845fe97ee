"""The design a command (``tuner``, ``acceptance``, ``nccl-tests``, ``diagnose``) is about: a built-in template of
N hosts (``--template``/``--hosts``/``--fabric``/``--switch``/``--sharp``) or a topology file
(``--topology``), turned into the ``{"build": ...}`` shorthand or the document."""
from __future__ import annotations

__all__ = ["add_design_arguments", "design_of", "design_label"]


def add_design_arguments(parser, *, required: bool = True) -> None:
    """The design options (one of ``--template``/``--topology``; ``required`` False lets a mode
    that needs no design, such as ``acceptance --check``, leave both out)."""
    source = parser.add_mutually_exclusive_group(required=required)
    source.add_argument("--template", help="built-in host template (with --hosts)")
    source.add_argument("--topology", help="topology document JSON file")
    parser.add_argument("--hosts", type=int, default=1, help="hosts of the template (default 1)")
    parser.add_argument("--fabric", default="rail-optimized", help="fabric generator for --hosts > 1")
    parser.add_argument("--switch", help="catalog switch model of the fabric (see: catalog --switches)")
    parser.add_argument("--sharp", action="store_true", help="SHARP (InfiniBand) switches: CollNet selectable")


def design_of(args):
    """The ``topology_or_build`` argument of the analysis functions."""
    if args.topology:
        from designer.engine.commands._scenario_io import read_json

        return read_json(args.topology, args.topology)
    build = {"template": args.template, "hosts": args.hosts}
    if args.hosts > 1:
        build["fabric"] = args.fabric
        if getattr(args, "switch", None):   # commands without the option (nccl-tests, diagnose)
            build["switch"] = args.switch
        if getattr(args, "sharp", False):
            build["sharp"] = True
    return {"build": build}


def design_label(args) -> str:
    """One line naming the design (for output headers)."""
    if args.topology:
        return f"topology {args.topology}"
    extra = f", {args.fabric}" if args.hosts > 1 else ""
    extra += f", switch {args.switch}" if args.switch and args.hosts > 1 else ""
    extra += ", SHARP" if args.sharp and args.hosts > 1 else ""
    return f"{args.template} x {args.hosts}{extra}"
