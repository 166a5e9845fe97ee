"""``place SCENARIO.json --job NEW.json [--json] [-o OUT]``: where should the next job go?

Ranks candidate placements of the new job (``{"id", "job" | "patterns", "placement": {"gpus":
N, "free": [...]}}``) among the scenario's running ``jobs``
(:func:`designer.engine.analysis.place.rank_placements`): a table on stdout (rank, candidate,
step, harm to running jobs, why), or the ``fabricscope.place/1`` JSON with ``--json``
(docs/FORMATS.md, Place). ``--move JOB_ID`` ranks where a running job should go instead
(its current GPUs are the candidate ``current``); ``--policies`` compares the placement policies
for the scenario's own job mix.
"""
from __future__ import annotations

from designer.engine.commands._scenario_io import load_scenario, progress_printer, read_json, write

__all__ = ["FORMAT", "add_arguments", "run"]

FORMAT = "fabricscope.place/1"


def add_arguments(parser) -> None:
    parser.add_argument("scenario", help="scenario JSON file with the running jobs, or - for stdin")
    parser.add_argument("--job", help="the new job's JSON file (its placement gives the GPU count)")
    parser.add_argument("--move", metavar="JOB_ID", help="rank where a running job should move instead")
    parser.add_argument("--policies", action="store_true",
                        help="compare the placement policies for the scenario's job mix instead")
    parser.add_argument("--json", action="store_true", help="print the JSON document, not a table")
    parser.add_argument("-o", "--output", help="write the JSON here instead of stdout")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")


def run(args) -> int:
    from designer.engine.analysis.place import compare_policies, move_job, rank_placements
    from designer.engine.errors import InvalidScenario, Problem

    scenario, loader = load_scenario(args.scenario)
    if args.policies:
        doc = {"format": FORMAT, "kind": "policies", **compare_policies(scenario, topology_loader=loader)}
    elif args.move:
        doc = {"format": FORMAT, "kind": "ranking",
               **move_job(scenario, args.move, topology_loader=loader, progress=progress_printer(args.quiet))}
    else:
        if not args.job:
            raise InvalidScenario("no new job", [Problem("--job", "give the new job's JSON file (or --policies)")])
        new = read_json(args.job, "--job")
        doc = {"format": FORMAT, "kind": "ranking",
               **rank_placements(scenario, new, topology_loader=loader, progress=progress_printer(args.quiet))}
    if args.json or args.output:
        write(doc, args.output)
    else:
        print(_table(doc))
    return 0


def _table(doc: dict) -> str:
    if doc["kind"] == "policies":
        rows = [f"{p:<14} {'error: ' + v['error'] if 'error' in v else _policy_row(v)}"
                for p, v in doc["policies"].items()]
        return "\n".join(["policy         total slowdown  fragmentation", *rows, f"best: {doc['best']}"])
    lines = [f"placing {doc['job']} ({doc['gpus']} GPUs)", "rank  candidate                 step (ms)  harm    why"]
    for k, c in enumerate(doc["candidates"], 1):
        step = f"{c['step_time_s'] * 1e3:9.3f}" if c["step_time_s"] is not None else "    never"
        harm = f"{c['harm'] * 100:5.1f}%" if c["harm"] is not None else "    ?"
        name = c["candidate"] + (f" (= {', '.join(c['same_as'])})" if c["same_as"] else "")
        lines.append(f"{k:>4}  {name[:24]:<24}  {step}  {harm}  {c['why']}")
    lines.append(f"best: {doc['best']}")
    return "\n".join(lines)


def _policy_row(v: dict) -> str:
    return f"{v['slowdown_sum'] * 100:13.1f}%  {v['fragmentation']:13.3f}"
