"""``simulate SCENARIO.json [-o RESULT.json] [--quiet] [--full-resources]``: run a scenario, print/write the result.

From 100,000 loaded resources up, ``resources`` is written grouped by symmetry
(``fabricscope.resource-groups/1``, docs/FORMATS.md); such a result is written
as compact JSON. ``expand RESULT.json`` writes the records back (or one group's),
``--full-resources`` writes them from the start.

Progress goes to stderr (``[ 20%] routing 8,192 flows``) so stdout stays pure JSON. A topology
given as a string in the scenario is read as a file path relative to the scenario file.
"""
from __future__ import annotations

import sys

from designer.engine.commands._scenario_io import load_scenario, progress_printer, write

__all__ = ["add_arguments", "run"]


def add_arguments(parser) -> None:
    parser.add_argument("scenario", help="scenario JSON file (fabricscope.scenario/1), or - for stdin")
    parser.add_argument("-o", "--output", help="write the result JSON here instead of stdout")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.add_argument("--max-flows-listed", type=int, default=None,
                        help="list at most this many flows in the result (summaries cover all)")
    parser.add_argument("--full-resources", action="store_true",
                        help="one record per loaded resource even in a large result (default: grouped by "
                             "symmetry from 100,000 resources up; see the expand command)")


def run(args) -> int:
    from designer.engine.analysis.result_groups import GROUP_FROM, is_grouped
    from designer.engine.analysis.simulate import simulate

    scenario, loader = load_scenario(args.scenario, compiled_topology=True)
    if args.max_flows_listed is not None:
        scenario = {**scenario, "options": {**(scenario.get("options") or {}),
                                            "max_flows_listed": args.max_flows_listed}}

    result = simulate(scenario, progress=progress_printer(args.quiet), topology_loader=loader,
                      group_from=None if args.full_resources else GROUP_FROM)
    # A grouped (large) result is written compact: indentation would put each group's every
    # value on its own line (164 MB instead of 78 MB for a 100,000-GPU tree all-reduce).
    write(result, args.output, indent=None if is_grouped(result.get("resources")) else 2)
    if not args.quiet:
        print(f"result: {result['summary']['headline']}", file=sys.stderr)
        if "jobs" in result:   # a shared cluster: how much the jobs slow each other
            print(f"jobs: {result['jobs']['headline']}", file=sys.stderr)
    return 0
