"""``goodput PLAN.json [--topology FILE] [--against FILE] [-o OUT] [--table]``: failures × the
design → interruptions per day, blast radius, checkpoint interval, ETTR, spares, Monte Carlo.

Examples::

    python -m designer.engine goodput plan.json                    # fabricscope.goodput/1 JSON
    python -m designer.engine goodput plan.json --table            # a summary table
    python -m designer.engine goodput plan.json --against b.json   # two designs side by side
                                                                   # (--compare is the same)

A topology given as a string in the plan is read as a path relative to the plan file;
``--topology`` replaces the plan's. ``--against`` runs the same plan on a second topology and
writes ``{"format": "fabricscope.goodput-compare/1", "a": …, "b": …}`` (docs/FORMATS.md,
"Goodput plan").
"""
from __future__ import annotations

import sys

from designer.engine.commands._scenario_io import load_scenario, read_json, write

__all__ = ["add_arguments", "run", "COMPARE_FORMAT"]

COMPARE_FORMAT = "fabricscope.goodput-compare/1"


def add_arguments(parser) -> None:
    parser.add_argument("plan", help="goodput plan JSON (fabricscope.goodput-plan/1), or - for stdin")
    parser.add_argument("--topology", help="topology document to plan on (replaces the plan's)")
    parser.add_argument("--against", "--compare", dest="against",
                        help="a second topology: the same plan on both, side by side")
    parser.add_argument("-o", "--output", help="write the JSON here instead of stdout")
    parser.add_argument("--table", action="store_true", help="print a summary table instead of JSON")


def _topology(plan: dict, loader, path: str | None):
    if path:
        return read_json(path, path)
    ref = plan.get("topology")
    return loader(ref) if isinstance(ref, str) else ref


def _row(label: str, values: list, fmt: str) -> str:
    cells = [("—" if v is None else format(v, fmt)) for v in values]
    return f"  {label:<34}" + "".join(f"{c:>16}" for c in cells)


def _table(results: list[dict]) -> str:
    lines = [_row("", [f"design {'AB'[i]}" for i in range(len(results))], "")]
    pick = [("GPUs (job)", lambda r: r["design"]["job_gpus"], ",d"),
            ("interruptions per day (job)", lambda r: r["job"]["interruptions_per_day"], ".3f"),
            ("job MTTF (hours)", lambda r: r["job"]["mttf_hours"], ".2f"),
            ("checkpoint write (s)", lambda r: r["checkpoint"]["write_s"], ".2f"),
            ("restart (s)", lambda r: r["checkpoint"]["restart_s"], ".1f"),
            ("Young interval (s)", lambda r: r["checkpoint"]["young_interval_s"], ",.0f"),
            ("Daly interval (s)", lambda r: r["checkpoint"]["daly_interval_s"], ",.0f"),
            ("ETTR", lambda r: r["checkpoint"]["ettr"], ".4f"),
            ("goodput", lambda r: r["goodput"], ".4f")]
    lines += [_row(label, [f(r) for r in results], fmt) for label, f, fmt in pick]
    lines.append("  interruptions per day by class (job)")
    for i, cls in enumerate(results[0]["classes"]):
        values = [r["classes"][i]["job_per_day"] for r in results]
        if any(values):
            lines.append(_row(f"    {cls['class']} ({cls['effect']})", values, ".4f"))
    lines.append("  blast radius by class: effect, throughput lost while degraded (source)")
    for i, cls in enumerate(results[0]["classes"]):
        cells = [_blast_cell(r["classes"][i]) for r in results]
        lines.append(f"    {cls['class']:<32}" + "".join(f"{c:>16}" for c in cells))
    return "\n".join(lines) + "\n"


def _blast_cell(row: dict) -> str:
    """``interrupt (sim)`` or ``2.7% (sim)``: the effect, and where it comes from."""
    source = {"simulated": "sim", "rule": "rule", "given": "given"}[row["blast"]["source"]]
    what = "interrupt" if row["effect"] == "interrupt" else f"{row['slowdown']:.2%}"
    return f"{what} ({source})"


def run(args) -> int:
    from designer.engine.analysis.goodput import plan_goodput

    plan, loader = load_scenario(args.plan)
    results = [plan_goodput({**plan, "topology": _topology(plan, loader, args.topology)})]
    if args.against:
        results.append(plan_goodput({**plan, "topology": read_json(args.against, args.against)}))
    if args.table:
        sys.stdout.write(_table(results))
        return 0
    doc = results[0] if len(results) == 1 else {"format": COMPARE_FORMAT, "a": results[0], "b": results[1]}
    write(doc, args.output)
    return 0
