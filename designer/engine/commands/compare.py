"""``compare SCENARIO.json [--policies affinity,pxn,any] [-o OUT]``: NIC policies side by side.

Runs the scenario under each NIC policy, with and without its failures
(``fabricscope.compare/1``) and prints the headline on stderr: would unified intra/inter-host
routing (any NIC, or PXN through NVLink) have saved the job? For a job workload each policy's
summaries carry the step (``job``) and the best policy is the one with the shortest step.
"""
from __future__ import annotations

import sys

from designer.engine.commands._scenario_io import load_scenario, progress_printer, write

__all__ = ["add_arguments", "run"]


def add_arguments(parser) -> None:
    parser.add_argument("scenario", help="scenario JSON file (fabricscope.scenario/1), or - for stdin")
    parser.add_argument("--policies", default="affinity,pxn,any",
                        help="comma-separated NIC policies (affinity, pxn, any, static)")
    parser.add_argument("-o", "--output", help="write the JSON here instead of stdout")
    parser.add_argument("--quiet", action="store_true", help="no progress or headline on stderr")


def run(args) -> int:
    from designer.engine.analysis.whatif import compare_policies

    scenario, loader = load_scenario(args.scenario)
    doc = compare_policies(scenario, policies=args.policies, progress=progress_printer(args.quiet),
                           topology_loader=loader)
    if not args.quiet:
        print(doc["headline"], file=sys.stderr, flush=True)
    write(doc, args.output)
    return 0
