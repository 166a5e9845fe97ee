"""``diagnose``: measured nccl-tests runs in, the faults of the design that explain them out.

Examples::

    python -m designer.engine diagnose --template dgx-h100 --hosts 16 --op all_reduce run.log
    python -m designer.engine diagnose --topology pod.json all.log pair01.log pair23.log \\
        --hosts-of pair01.log=h0,h1 --hosts-of pair23.log=h2,h3 --json

Each LOG is the stdout of one nccl-tests run (or its JSON result file); ``--hosts-of LOG=h0,h1``
says which hosts a run used (default: the whole design) — runs over subsets are what tell one
host's part from another's. The report lists each run (healthy or not: every size within ±10 %
of the healthy prediction) and the ranked explanations with their fit error (docs/ENGINE.md,
"Diagnosis"; the JSON shape in docs/FORMATS.md, "Diagnosis").
"""
from __future__ import annotations

import json
import sys

from designer.engine.commands._design_source import design_of

__all__ = ["add_arguments", "run", "format_report"]


def add_arguments(parser) -> None:
    from designer.engine.analysis.diagnose_input import DIAGNOSABLE_OPS
    from designer.engine.analysis.nccl_tests import PROTOCOL_CHOICES, TYPE_BYTES

    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--template", help="built-in host template (with --hosts)")
    source.add_argument("--topology", help="topology document JSON file")
    parser.add_argument("--hosts", type=int, default=1, help="hosts of the template (default 1)")
    parser.add_argument("--fabric", default="rail-optimized", help="fabric generator for --hosts > 1")
    parser.add_argument("--op", default=None, choices=list(DIAGNOSABLE_OPS),
                        help="collective of the runs (default: the binary the logs name, else all_reduce)")
    parser.add_argument("logs", metavar="LOG", nargs="+", help="nccl-tests stdout (or JSON result) of each run")
    parser.add_argument("--hosts-of", metavar="LOG=h0,h1", action="append", default=[],
                        help="the hosts a run used (repeat per run; default the whole design)")
    parser.add_argument("-d", "--dtype", default="float", choices=list(TYPE_BYTES), help="element type")
    parser.add_argument("--algorithm", default="auto", help="NCCL_ALGO of the runs (default auto)")
    parser.add_argument("--protocol", default="auto", choices=list(PROTOCOL_CHOICES), help="NCCL_PROTO of the runs")
    parser.add_argument("--channels", type=int, default=None, help="channels the runs were forced to")
    parser.add_argument("--nic-policy", default="affinity", help="NIC policy of the runs (pxn: PXN on)")
    parser.add_argument("--top", type=int, default=10, help="explanations listed at most")
    parser.add_argument("--json", action="store_true", help="print the diagnosis as JSON")


def _hosts_of(pairs: list[str], logs: list[str]) -> dict[str, list[str]]:
    from designer.engine.errors import InvalidScenario, Problem

    out, problems = {}, []
    for k, pair in enumerate(pairs):
        log, sep, hosts = pair.partition("=")
        if not sep or log not in logs or not hosts.strip():
            problems.append(Problem(f"--hosts-of[{k}]", f"{pair!r}: expected LOG=h0,h1 with LOG one of the logs given"))
            continue
        out[log] = [h.strip() for h in hosts.split(",") if h.strip()]
    if problems:
        raise InvalidScenario("bad --hosts-of", problems)
    return out


def _runs(args) -> list[dict]:
    from designer.engine.analysis.diagnose import runs_from_logs
    from designer.engine.io.nccl_tests_log import parse_log

    hosts = _hosts_of(args.hosts_of, args.logs)
    pairs = []
    for path in args.logs:
        with open(path, encoding="utf-8", errors="replace") as fh:
            pairs.append((path, parse_log(fh.read(), op=args.op)))
    if args.op is None:   # the logs say which binary ran; a mix of ops is refused by diagnose
        args.op = next((log.op for _, log in pairs if log.op), "all_reduce")
    return [{**run, "hosts": hosts.get(run["label"])} for run in runs_from_logs(pairs)]


def run(args) -> int:
    from designer.engine.analysis.diagnose import diagnose
    from designer.engine.analysis.nccl_tests import compile_topology

    runs = _runs(args)
    topo = compile_topology(design_of(args))
    options = {"algorithm": args.algorithm, "protocol": args.protocol, "channels": args.channels,
               "nic_policy": args.nic_policy}
    out = diagnose(topo, runs, op=args.op, dtype=args.dtype, options=options, top=args.top)
    sys.stdout.write((json.dumps(out, indent=1) if args.json else format_report(out)) + "\n")
    return 0


def format_report(out: dict) -> str:
    """The diagnosis as text: the summary, one line per run, one per explanation."""
    lines = [f"# diagnosis: {out['op']}, band ±{out['tolerance_pct']:g} % around the healthy prediction",
             out["summary"], "", "# runs"]
    for r in out["runs"]:
        where = ",".join(r["hosts"]) if r["hosts"] else "whole design"
        state = "healthy" if r["healthy"] else f"{len(r['outside'])} size(s) outside"
        lines.append(f"  {r['label']} ({where}): {state}; worst measured/expected {r['worst_ratio']:.2f}")
    if out["explanations"]:
        lines += ["", f"# explanations (fit error; healthy design {out['healthy_fit_error_pct']:.1f} %)"]
        for e in out["explanations"]:
            explained = f" — explains {', '.join(e['runs'])}" if e["runs"] else ""
            lines.append(f"  {e['rank']:>2}. {e['fit_error_pct']:6.1f} %  [{e['kind']}] {e['label']}{explained}")
    return "\n".join(lines)
