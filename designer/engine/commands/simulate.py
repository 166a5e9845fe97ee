"""``simulate SCENARIO.json [-o RESULT.json] [--quiet]``: run a scenario, print/write the result.

Progress goes to stderr (``[ 20%] routing 8,192 flows``) so stdout stays pure JSON. A topology
given as a string in the scenario is read as a file path relative to the scenario file.
"""
from __future__ import annotations

import json
import os
import sys

from designer.engine.errors import InvalidScenario, Problem

__all__ = ["add_arguments", "run"]


def add_arguments(parser) -> None:
    parser.add_argument("scenario", help="scenario JSON file (fabricscope.scenario/1), or - for stdin")
    parser.add_argument("-o", "--output", help="write the result JSON here instead of stdout")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.add_argument("--max-flows-listed", type=int, default=None,
                        help="list at most this many flows in the result (summaries cover all)")


def _read_json(path: str, where: str):
    text = sys.stdin.read() if path == "-" else open(path, encoding="utf-8").read()
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidScenario("not JSON", [Problem(where, f"invalid JSON at line {exc.lineno} column "
                                                          f"{exc.colno}: {exc.msg}")]) from None


def run(args) -> int:
    from designer.engine.simulate import simulate

    scenario = _read_json(args.scenario, args.scenario)
    if not isinstance(scenario, dict):
        raise InvalidScenario("a scenario must be a JSON object", [Problem(args.scenario, "not an object")])
    base = os.path.dirname(os.path.abspath(args.scenario)) if args.scenario != "-" else os.getcwd()

    def loader(ref: str):
        return _read_json(os.path.join(base, ref), f"topology ({ref})")

    if args.max_flows_listed is not None:
        scenario = {**scenario, "options": {**(scenario.get("options") or {}),
                                            "max_flows_listed": args.max_flows_listed}}

    def progress(fraction: float, message: str) -> None:
        print(f"[{fraction * 100:3.0f}%] {message}", file=sys.stderr, flush=True)

    result = simulate(scenario, progress=None if args.quiet else progress, topology_loader=loader)
    text = json.dumps(result, indent=1, allow_nan=False)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as out:
            out.write(text + "\n")
    else:
        sys.stdout.write(text + "\n")
    return 0
