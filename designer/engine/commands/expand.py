"""``expand RESULT.json [--group K] [-o OUT.json]``: a result's grouped resources as records.

``simulate`` writes a large result's ``resources`` grouped by symmetry
(``fabricscope.resource-groups/1``, docs/FORMATS.md "Results"). This writes the whole result
with one record per resource — the document ``simulate --full-resources`` writes — or, with
``--group K``, only group K's records (a JSON list). A result that is not grouped is written as
it is.
"""
from __future__ import annotations

from designer.engine.commands._scenario_io import read_json, write
from designer.engine.errors import InvalidScenario, Problem

__all__ = ["add_arguments", "run"]


def add_arguments(parser) -> None:
    parser.add_argument("result", help="result JSON file (fabricscope.result/1), or - for stdin")
    parser.add_argument("--group", type=int, help="only this group's records (0-based), as a JSON list")
    parser.add_argument("-o", "--output", help="write here instead of stdout")


def run(args) -> int:
    from designer.engine.analysis.result_groups import expand_resources, expand_result, is_grouped

    result = read_json(args.result, args.result)
    resources = result.get("resources") if isinstance(result, dict) else None
    if args.group is None:
        write(expand_result(result) if isinstance(result, dict) else result, args.output)
        return 0
    if not is_grouped(resources):
        raise InvalidScenario("not grouped", [Problem(f"{args.result}: resources",
                                                      "not grouped by symmetry: no group to expand")])
    try:
        records = expand_resources(resources, args.group)
    except ValueError as exc:
        raise InvalidScenario("no such group", [Problem("--group", str(exc))]) from None
    write(records, args.output)
    return 0
