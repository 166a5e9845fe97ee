"""``nccl-log``: read ``NCCL_DEBUG=INFO`` output and check it against a design.

Examples::

    python -m designer.engine nccl-log rank*.log
    python -m designer.engine nccl-log run.log --template dgx-h100 --hosts 2
    python -m designer.engine nccl-log run.log --topology pod.json --graph-dump graph.xml --json
    python -m designer.engine nccl-log run.log --template dgx-h100 --topo-dump topo.xml

Prints the summary (NCCL version, hosts × ranks, the NICs NCCL lists, a table of connections by
transport, rings and trees per channel, NCCL's TUNING choices) and, with a design, every mismatch
as one sentence (``NCCL sees 4 NICs on host node1 (…), the design has 8 on h0``). Exit status 0
whether or not mismatches were found (they are findings, not errors); a log that cannot be read
is a located error (status 1, one ``error: where: what`` line per problem).
"""
from __future__ import annotations

import json
import sys

__all__ = ["add_arguments", "run", "format_report"]


def add_arguments(parser) -> None:
    parser.add_argument("logs", metavar="LOG", nargs="+",
                        help="NCCL_DEBUG=INFO output: one file per rank, or one for all")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--template", help="built-in host template (with --hosts) to check against")
    source.add_argument("--topology", help="topology document JSON file to check against")
    parser.add_argument("--hosts", type=int, default=1, help="hosts of the template (default 1)")
    parser.add_argument("--fabric", default="rail-optimized", help="fabric generator for --hosts > 1")
    parser.add_argument("--graph-dump", metavar="XML", help="NCCL_GRAPH_DUMP_FILE output of one host")
    parser.add_argument("--topo-dump", metavar="XML", help="NCCL_TOPO_DUMP_FILE output of one host")
    parser.add_argument("--json", action="store_true", help="print the whole report as JSON")


def _design(args):
    from designer.engine.analysis.nccl_tests import compile_topology

    if args.topology:
        from designer.engine.commands._scenario_io import read_json

        return compile_topology(read_json(args.topology, args.topology))
    if args.template:
        build = {"template": args.template, "hosts": args.hosts}
        if args.hosts > 1:
            build["fabric"] = args.fabric
        return compile_topology({"build": build})
    return None


def run(args) -> int:
    from designer.engine.analysis.nccl_log_check import check_log
    from designer.engine.io.nccl_debug_log import parse_logs
    from designer.engine.io.nccl_graph_dump import parse_graph_dump

    files = []
    for path in args.logs:
        with open(path, encoding="utf-8", errors="replace") as fh:
            files.append((path, fh.read()))
    log = parse_logs(files)
    graphs = None
    if args.graph_dump:
        with open(args.graph_dump, "rb") as fh:
            graphs = parse_graph_dump(fh.read())
    topo_dump = None
    if args.topo_dump:
        from designer.engine.io.nccl_xml import parse_nccl_xml

        with open(args.topo_dump, "rb") as fh:
            topo_dump = parse_nccl_xml(fh.read())
    report = check_log(log, _design(args), graphs, topo_dump)
    sys.stdout.write((json.dumps(report, indent=1) if args.json else format_report(report)) + "\n")
    return 0


def format_report(report: dict) -> str:
    """The report as text: summary, transports table, rings and trees, graphs, mismatches."""
    s = report["summary"]
    lines = [f"NCCL {s['version'] or '(version not in the log)'}: {s['nranks'] or '?'} ranks"
             + (f" on {s['nodes']} nodes" if s["nodes"] else "")
             + (f", network {s['network']}" if s["network"] else "")]
    for h in s["hosts"]:
        lines.append(f"  host {h['host']}: ranks {_ranges(h['ranks'])}; NICs {', '.join(h['nics']) or '-'}")
    if s["channels"]:
        lines.append("  channels: " + ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in s["channels"].items()
                                                if v is not None))
    lines += _transports(s["transports"])
    lines += _rings(report["log"])
    for label, calls in s["algorithms"].items():
        lines.append(f"  tuning: {label} x{calls}")
    for g in report["graphs"]:
        lines.append(f"  graph {g['id']} ({g['kind']}): {g['nchannels']} channels, intra {g['type_intra']}, "
                     f"inter {g['type_inter']}, {g['speed_intra_gbs']} GB/s per channel")
    lines += [f"note: {n}" for n in report["notes"]]
    if report["design"]:
        d = report["design"]
        lines.append(f"design {d['name'] or '(unnamed)'}: {d['hosts']} hosts, {d['gpus']} GPUs — "
                     f"{len(report['mismatches'])} mismatch(es)")
        lines += [f"  {m['where']}: {m['message']}" for m in report["mismatches"]]
    return "\n".join(lines)


def _transports(table: dict) -> list[str]:
    if not table:
        return []
    width = max(len(k) for k in table)
    return ["  connections by transport:"] + [f"    {k:<{width}}  {v:>5}" for k, v in sorted(table.items())]


def _rings(log: dict) -> list[str]:
    out = [f"  ring {int(c):02d}: {' '.join(map(str, ring))}" for c, ring in log["rings"].items()]
    for c, ranks in log["trees"].items():
        parts = [f"{r}->{t['up']}" + (f" (down {','.join(map(str, t['down']))})" if t["down"] else "")
                 for r, t in ranks.items()]
        out.append(f"  tree {int(c):02d}: {'; '.join(parts)}")
    return out


def _ranges(ranks: list[int]) -> str:
    """``[0, 1, 2, 5]`` → ``0-2,5``."""
    out, start = [], None
    for i, r in enumerate(ranks):
        if start is None:
            start = r
        if i + 1 == len(ranks) or ranks[i + 1] != r + 1:
            out.append(f"{start}-{r}" if r != start else f"{r}")
            start = None
    return ",".join(out) or "-"
