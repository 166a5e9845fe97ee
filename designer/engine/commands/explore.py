"""``explore``: the design-space explorer — a grid of fabric options × a job mix, priced and simulated.

Examples::

    python -m designer.engine explore grid.json                   # table of points, frontier marked
    python -m designer.engine explore grid.json --json -o out.json
    python -m designer.engine explore grid.json --chunk 0/2 --json -o part0.json   # one block
    python -m designer.engine explore --merge part0.json part1.json --json

The grid request and the result are in docs/FORMATS.md, "Design-space explorer". Exit status 0
even when some points are infeasible (they are listed with their reason); 1 on a bad request.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

__all__ = ["add_arguments", "run"]


def add_arguments(parser) -> None:
    parser.add_argument("grid", nargs="?", help="grid request JSON (base, grid, jobs or workload, routing, plan)")
    parser.add_argument("--chunk", help="evaluate only block i of n (i/n); merge the parts with --merge")
    parser.add_argument("--merge", nargs="+", metavar="PART", help="merge chunk parts (JSON files) instead")
    parser.add_argument("--json", action="store_true", help="print the result document as JSON")
    parser.add_argument("-o", "--output", help="write the output here instead of stdout")


def _read(path: str):
    from designer.engine.errors import InvalidScenario, Problem

    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InvalidScenario(f"{path}: invalid JSON", [Problem(path, f"line {exc.lineno}: {exc.msg}")]) from None


def _money(v) -> str:
    return "-" if v is None else f"{v:,.0f}"


def _table(doc: dict) -> str:
    lines = [doc["summary"]["headline"] if "summary" in doc else f"part {doc['chunk']} of {doc['points_total']} points",
             f"{'#':>3} {'F':1} {'design':<58} {'$/GPU':>8} {'net$/GPU':>9} {'W/GPU':>7} {'step s':>9} "
             f"{'score':>6} {'bisect G/GPU':>12} {'blast':>6}"]
    for p in doc["points"]:
        if not p["feasible"]:
            lines.append(f"{p['index']:>3}   {p['label'][:58]:<58} infeasible ({p['stage']}): {p['error']}")
            continue
        step = "-" if p["step_s"] is None else f"{p['step_s']:.4g}"
        score = "-" if p.get("step_score") is None else f"{p['step_score']:.3f}"
        lines.append(f"{p['index']:>3} {'*' if p.get('frontier') else ' '} {p['label'][:58]:<58} "
                     f"{_money(p['usd_per_gpu']):>8} {_money(p['network_usd_per_gpu']):>9} {p['w_per_gpu']:>7.0f} "
                     f"{step:>9} {score:>6} {p['bisection_gbps_per_gpu']:>12.1f} {p['blast_radius']['fraction']:>6.1%}")
    if "summary" in doc:
        lines.append("* = on the Pareto frontier of ($/GPU, step score)")
    return "\n".join(lines) + "\n"


def run(args) -> int:
    from designer.engine.analysis.explore import explore, merge_explore
    from designer.engine.errors import InvalidScenario, Problem

    if args.merge:
        doc = merge_explore([_read(p) for p in args.merge])
    elif args.grid:
        def progress(fraction, message):
            print(f"\r{fraction:4.0%} {message[:90]:<90}", end="", file=sys.stderr, flush=True)
        doc = explore(_read(args.grid), chunk=args.chunk, progress=progress if sys.stderr.isatty() else None)
    else:
        raise InvalidScenario("nothing to explore", [Problem("grid", "give a grid request file or --merge PARTS")])
    text = json.dumps(doc, indent=1) + "\n" if args.json else _table(doc)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0
