"""``sweep SCENARIO.json --over nic,pcie_switch [--chunk i/n] [--degrade F] [--top N] [-o OUT]``.

Ranks every single failure of the chosen classes by impact (``fabricscope.sweep/1``, most harmful
first). Progress goes to stderr (``[ 40%] failure 812/2,048: h50/nic3 down``) so stdout stays pure
JSON. ``--chunk i/n`` (0 <= i < n) evaluates one block of candidates; ``--merge PART.json ...``
merges chunk outputs into the unchunked sweep. When the workload is a job (``{"job": ...}``)
each failure's ``impact.job`` holds the step before/after and the ranking is by **step time** (a
step that no longer completes first).
"""
from __future__ import annotations

from designer.engine.commands._scenario_io import load_scenario, progress_printer, read_json, write
from designer.engine.errors import InvalidScenario, Problem

__all__ = ["add_arguments", "run"]


def add_arguments(parser) -> None:
    parser.add_argument("scenario", nargs="?", help="scenario JSON file (fabricscope.scenario/1), or - for stdin")
    parser.add_argument("--over", help="failure classes, comma-separated: nic, pcie_switch, nvswitch, gpu, cpu, "
                                       "leaf-spine, nic-leaf, spine-core, host, switch, leaf, spine")
    parser.add_argument("--failures", help="JSON file with an explicit list of candidate failures")
    parser.add_argument("--degrade", type=float, default=None,
                        help="degrade each candidate by this factor (0-1] instead of taking it down")
    parser.add_argument("--chunk", help="evaluate only block i of n (i/n, 0 <= i < n)")
    parser.add_argument("--top", type=int, default=None, help="keep only the N most harmful failures")
    parser.add_argument("--merge", nargs="+", metavar="PART", help="merge chunked sweep outputs instead")
    parser.add_argument("-o", "--output", help="write the JSON here instead of stdout")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")


def run(args) -> int:
    from designer.engine.analysis.whatif import merge_sweeps, sweep

    if args.merge:
        doc = merge_sweeps([read_json(p, p) for p in args.merge])
    else:
        if not args.scenario:
            raise InvalidScenario("missing scenario", [Problem("scenario", "give a scenario file (or --merge)")])
        if not args.over and not args.failures:
            raise InvalidScenario("nothing to sweep", [Problem("--over", "give failure classes or --failures")])
        scenario, loader = load_scenario(args.scenario)
        failures = read_json(args.failures, args.failures) if args.failures else None
        doc = sweep(scenario, over=args.over, failures=failures, degrade=args.degrade, chunk=args.chunk,
                    progress=progress_printer(args.quiet), topology_loader=loader)
    if args.top is not None:
        doc = {**doc, "ranking": doc["ranking"][:max(args.top, 0)], "top": args.top}
    write(doc, args.output)
    return 0
